import { Decompress } from 'fzstd';
import { SluiceError } from '../../errors.js';
import { concatBytes } from './bytes.js';
import { corrupt } from './header.js';

/**
 * Zstandard decoding via fzstd (Node 20 has no zstd compressor, so Sluice only reads zstd batches).
 *
 * fzstd allocates each frame's declared window up front and, in one-shot mode, all output before
 * returning. So the frames are first walked here (RFC 8878 headers and block headers, nothing decoded),
 * refusing windows above the output limit and dictionaries, and then fzstd decodes in streaming mode
 * while the output is counted, so a batch that inflates past the limit stops as soon as it does.
 */

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const MAX_BLOCK = 128 * 1024;

export function decompressZstd(data: Uint8Array, maxBytes: number): Uint8Array {
  checkFrames(data, maxBytes);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const stream = new Decompress((chunk) => {
    total += chunk.length;
    if (total > maxBytes) throw corrupt(`zstd: inflates past the ${maxBytes}-byte limit`);
    chunks.push(chunk);
  });
  try {
    stream.push(data, true);
  } catch (e) {
    if (e instanceof SluiceError) throw e;
    throw corrupt(`zstd: ${e instanceof Error ? e.message : String(e)}`);
  }
  return concatBytes(chunks, total);
}

function checkFrames(data: Uint8Array, maxBytes: number): void {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let pos = 0;
  if (data.length === 0) throw corrupt('zstd: empty payload');
  while (pos < data.length) {
    if (data.length - pos < 8) throw corrupt('zstd: truncated frame');
    const magic = view.getUint32(pos, true);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      const size = view.getUint32(pos + 4, true);
      if (size > data.length - pos - 8) throw corrupt('zstd: truncated skippable frame');
      pos += 8 + size;
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw corrupt('zstd: bad frame magic');
    pos = checkFrame(data, pos + 4, maxBytes);
  }
}

/** Checks one frame whose header starts at `pos`; returns the position after the frame. */
function checkFrame(data: Uint8Array, pos: number, maxBytes: number): number {
  const descriptor = data[pos++]!;
  const contentSizeFlag = descriptor >>> 6;
  const singleSegment = (descriptor & 0x20) !== 0;
  const hasChecksum = (descriptor & 0x04) !== 0;
  if (descriptor & 0x08) throw corrupt('zstd: reserved frame header bit set');
  if (descriptor & 0x03) throw corrupt('zstd: dictionaries are not supported');
  let window = 0;
  if (!singleSegment) {
    // No bounds check: checkFrames left at least 8 bytes from the magic, so this byte (the 6th) is there.
    const w = data[pos++]!;
    const base = 2 ** (10 + (w >>> 3));
    window = base + (base / 8) * (w & 7);
  }
  const contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][contentSizeFlag]!;
  if (data.length - pos < contentSizeBytes) throw corrupt('zstd: truncated frame header');
  let contentSize = 0;
  for (let k = contentSizeBytes - 1; k >= 0; k--) contentSize = contentSize * 256 + data[pos + k]!;
  if (contentSizeBytes === 2) contentSize += 256;
  pos += contentSizeBytes;
  if (singleSegment) window = contentSize;
  if (window > maxBytes || contentSize > maxBytes) {
    throw corrupt(`zstd: frame window or content size exceeds the ${maxBytes}-byte limit`);
  }
  const maxBlock = Math.min(window, MAX_BLOCK);
  for (let last = false; !last;) {
    if (data.length - pos < 3) throw corrupt('zstd: truncated block header');
    const header = data[pos]! | (data[pos + 1]! << 8) | (data[pos + 2]! << 16);
    pos += 3;
    last = (header & 1) === 1;
    const type = (header >>> 1) & 3;
    const size = header >>> 3;
    if (type === 3) throw corrupt('zstd: reserved block type');
    if (size > maxBlock) throw corrupt('zstd: block larger than the frame allows');
    const stored = type === 1 ? 1 : size; // an RLE block stores one byte, repeated `size` times
    if (data.length - pos < stored) throw corrupt('zstd: truncated block');
    pos += stored;
  }
  if (hasChecksum) {
    if (data.length - pos < 4) throw corrupt('zstd: truncated content checksum');
    pos += 4;
  }
  return pos;
}
