import snappy from 'snappyjs';
import { concatBytes } from './bytes.js';
import { corrupt } from './header.js';

/**
 * Snappy as Kafka's Java client writes it: snappy-java's "xerial" framing (a 16-byte header, then
 * chunks of a 4-byte big-endian length and one raw Snappy block). Some clients send a bare raw block,
 * so reading accepts both.
 */

// 0x82 'SNAPPY' 0, then version 1 and minimum compatible version 1 (int32 big-endian).
const XERIAL_MAGIC = [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00];
const XERIAL_HEADER = Uint8Array.of(...XERIAL_MAGIC, 0, 0, 0, 1, 0, 0, 0, 1);
/** snappy-java's default block size, so chunks look like the Java client's. */
const XERIAL_CHUNK = 32 * 1024;

export function compressSnappy(data: Uint8Array): Uint8Array {
  const chunks: Uint8Array[] = [];
  let size = XERIAL_HEADER.length;
  for (let at = 0; at < data.length; at += XERIAL_CHUNK) {
    const block = snappy.compress(toPlain(data.subarray(at, at + XERIAL_CHUNK)));
    chunks.push(block);
    size += 4 + block.length;
  }
  const out = new Uint8Array(size);
  out.set(XERIAL_HEADER, 0);
  const view = new DataView(out.buffer);
  let pos = XERIAL_HEADER.length;
  for (const block of chunks) {
    view.setUint32(pos, block.length);
    out.set(block, pos + 4);
    pos += 4 + block.length;
  }
  return out;
}

export function decompressSnappy(data: Uint8Array, maxBytes: number): Uint8Array {
  if (!startsWithXerialMagic(data, 0)) return uncompressBlock(data, maxBytes);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const blocks: Uint8Array[] = [];
  let total = 0;
  let pos = 0;
  while (pos < data.length) {
    // snappy-java also reads streams concatenated with their headers.
    if (startsWithXerialMagic(data, pos)) {
      if (data.length - pos < XERIAL_HEADER.length) throw corrupt('snappy: truncated xerial header');
      pos += XERIAL_HEADER.length;
      continue;
    }
    if (data.length - pos < 4) throw corrupt('snappy: truncated xerial chunk length');
    const length = view.getInt32(pos);
    pos += 4;
    if (length < 0 || length > data.length - pos) {
      throw corrupt(`snappy: xerial chunk of ${length} bytes overruns`);
    }
    const block = uncompressBlock(data.subarray(pos, pos + length), maxBytes - total);
    blocks.push(block);
    total += block.length;
    pos += length;
  }
  return concatBytes(blocks, total);
}

// Past the end data[at + i] is undefined, which matches no magic byte.
const startsWithXerialMagic = (data: Uint8Array, at: number): boolean =>
  XERIAL_MAGIC.every((b, i) => data[at + i] === b);

/**
 * snappyjs trusts its input: a literal length with the top bit set sends its cursor backwards (a
 * near-endless loop), and out-of-range copies silently write nothing. So every block is first walked
 * here, checking each element against the input and output bounds, before snappyjs decodes it.
 */
function uncompressBlock(block: Uint8Array, maxBytes: number): Uint8Array {
  const length = validatedLength(block);
  if (length > maxBytes) throw corrupt(`snappy: inflates past the ${maxBytes}-byte limit`);
  try {
    return snappy.uncompress(toPlain(block), length);
  } catch (e) {
    throw corrupt(`snappy: ${(e as Error).message}`);
  }
}

function validatedLength(block: Uint8Array): number {
  const end = block.length;
  let pos = 0;
  let declared = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= end || shift > 28) throw corrupt('snappy: bad uncompressed length');
    const b = block[pos++]!;
    declared += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  let out = 0;
  while (pos < end) {
    const tag = block[pos++]!;
    let length: number;
    let offset = 0;
    switch (tag & 3) {
      case 0: {
        length = tag >>> 2;
        if (length >= 60) {
          const extra = length - 59;
          if (end - pos < extra) throw corrupt('snappy: truncated literal length');
          length = 0;
          for (let k = 0; k < extra; k++) length += block[pos + k]! * 2 ** (8 * k);
          pos += extra;
        }
        length += 1;
        if (length > end - pos) throw corrupt('snappy: literal overruns the block');
        pos += length;
        break;
      }
      case 1:
        if (end - pos < 1) throw corrupt('snappy: truncated copy');
        length = ((tag >>> 2) & 7) + 4;
        offset = ((tag >>> 5) << 8) | block[pos]!;
        pos += 1;
        break;
      case 2:
        if (end - pos < 2) throw corrupt('snappy: truncated copy');
        length = (tag >>> 2) + 1;
        offset = block[pos]! | (block[pos + 1]! << 8);
        pos += 2;
        break;
      default:
        if (end - pos < 4) throw corrupt('snappy: truncated copy');
        length = (tag >>> 2) + 1;
        offset =
          (block[pos]! | (block[pos + 1]! << 8) | (block[pos + 2]! << 16) | (block[pos + 3]! << 24)) >>> 0;
        pos += 4;
    }
    if ((tag & 3) !== 0 && (offset === 0 || offset > out)) {
      throw corrupt('snappy: copy reaches before the output');
    }
    out += length;
    if (out > declared) throw corrupt('snappy: output longer than declared');
  }
  if (out !== declared) throw corrupt(`snappy: ${out} bytes decoded, ${declared} declared`);
  return declared;
}

// snappyjs returns a Buffer for a Buffer; a plain view keeps results uniform (and copies nothing).
const toPlain = (bytes: Uint8Array): Uint8Array =>
  new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
