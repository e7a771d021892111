import lz4 from 'lz4js';
import xxh32 from 'lz4js/xxh32.js';
import { corrupt } from './header.js';

/**
 * LZ4 as Kafka frames it (KafkaLZ4BlockOutputStream / InputStream): the standard LZ4 frame, version 1,
 * independent blocks, 64 KiB maximum block size, no checksums on write. Kafka's reader decodes every
 * block on its own into a block-sized buffer, so it rejects dependent-block frames, and so does this.
 *
 * lz4js supplies the block codec only. Its frame writer marks blocks as dependent (Kafka rejects that)
 * and its frame reader trusts block sizes (a corrupt one loops over two billion bytes), so the frame is
 * written and read here, and every block is checked before lz4js decodes it.
 */

const MAGIC = 0x184d2204;
const FLG_VERSION_MASK = 0xc0;
const FLG_VERSION_1 = 0x40;
const FLG_INDEPENDENT_BLOCKS = 0x20;
const FLG_BLOCK_CHECKSUM = 0x10;
const FLG_CONTENT_SIZE = 0x08;
const FLG_CONTENT_CHECKSUM = 0x04;
const FLG_RESERVED = 0x03;
const BD_RESERVED = 0x8f;
const BLOCK_SIZE_64KB = 4;
const BLOCK_SIZE = 64 * 1024;
const UNCOMPRESSED_BIT = 0x80000000;
/** The LZ4 block format's end rules: a match may not start within the last 12 bytes nor end within the last 5. */
const MATCH_START_MARGIN = 12;
const LAST_LITERALS = 5;

const HASH_TABLE = new Uint32Array(1 << 16);
const SCRATCH = new Uint8Array(lz4.compressBound(BLOCK_SIZE));

export function compressLz4(data: Uint8Array): Uint8Array {
  const blocks = Math.ceil(data.length / BLOCK_SIZE);
  const out = new Uint8Array(7 + data.length + 4 * blocks + 4);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  out[4] = FLG_VERSION_1 | FLG_INDEPENDENT_BLOCKS;
  out[5] = BLOCK_SIZE_64KB << 4;
  out[6] = (xxh32.hash(0, out, 4, 2) >>> 8) & 0xff;
  let pos = 7;
  for (let at = 0; at < data.length; at += BLOCK_SIZE) {
    const block = data.subarray(at, at + BLOCK_SIZE);
    // Each block is compressed as its own array, so no match can reach into the previous one (Kafka
    // needs independent blocks, and `conforms` re-checks it). Clearing drops the previous block's
    // positions, which would only be wasted probes.
    HASH_TABLE.fill(0);
    const size = lz4.compressBlock(block, SCRATCH, 0, block.length, HASH_TABLE);
    if (size > 0 && size < block.length && conforms(SCRATCH, size, block.length)) {
      view.setUint32(pos, size, true);
      out.set(SCRATCH.subarray(0, size), pos + 4);
      pos += 4 + size;
    } else {
      // Incompressible (or a block strict decoders could refuse): store it, as Kafka does.
      view.setUint32(pos, (block.length | UNCOMPRESSED_BIT) >>> 0, true);
      out.set(block, pos + 4);
      pos += 4 + block.length;
    }
  }
  view.setUint32(pos, 0, true);
  return out.subarray(0, pos + 4);
}

/** lz4js can put a block's last match closer to the end than the format allows; such blocks are stored raw. */
function conforms(block: Uint8Array, size: number, expected: number): boolean {
  try {
    const scan = scanBlock(block, 0, size, expected);
    // A block with no match at all is never smaller than its input, so it never gets here.
    return (
      scan.length === expected &&
      scan.lastMatchStart <= expected - MATCH_START_MARGIN &&
      scan.lastMatchEnd <= expected - LAST_LITERALS
    );
  } catch {
    return false;
  }
}

interface Block {
  start: number;
  size: number;
  compressed: boolean;
  length: number;
}

export function decompressLz4(data: Uint8Array, maxBytes: number): Uint8Array {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (data.length < 7 || view.getUint32(0, true) !== MAGIC) throw corrupt('lz4: not an LZ4 frame');
  const flg = data[4]!;
  const bd = data[5]!;
  if ((flg & FLG_VERSION_MASK) !== FLG_VERSION_1 || (flg & FLG_RESERVED) !== 0 || (bd & BD_RESERVED) !== 0) {
    throw corrupt('lz4: unsupported frame descriptor');
  }
  if ((flg & FLG_INDEPENDENT_BLOCKS) === 0) {
    throw corrupt('lz4: dependent blocks are unsupported (as in Kafka)');
  }
  const blockSizeId = (bd >>> 4) & 7;
  if (blockSizeId < 4) throw corrupt(`lz4: invalid block size id ${blockSizeId}`);
  const maxBlock = 1 << (2 * blockSizeId + 8);
  let pos = 6 + (flg & FLG_CONTENT_SIZE ? 8 : 0);
  if (data.length < pos + 1) throw corrupt('lz4: truncated frame descriptor');
  if (data[pos] !== ((xxh32.hash(0, data, 4, pos - 4) >>> 8) & 0xff)) {
    throw corrupt('lz4: frame descriptor checksum');
  }
  pos += 1;

  // First pass: check every block and size the output, so nothing is decoded from an unchecked block.
  const blocks: Block[] = [];
  let total = 0;
  for (;;) {
    if (data.length - pos < 4) throw corrupt('lz4: truncated block size');
    const word = view.getUint32(pos, true);
    pos += 4;
    if (word === 0) break;
    const size = word & ~UNCOMPRESSED_BIT;
    const compressed = (word & UNCOMPRESSED_BIT) === 0;
    if (size > maxBlock) throw corrupt(`lz4: block of ${size} bytes exceeds the ${maxBlock}-byte maximum`);
    if (data.length - pos < size) throw corrupt('lz4: truncated block');
    const length = compressed ? scanBlock(data, pos, pos + size, maxBlock).length : size;
    total += length;
    if (total > maxBytes) throw corrupt(`lz4: inflates past the ${maxBytes}-byte limit`);
    blocks.push({ start: pos, size, compressed, length });
    pos += size;
    if (flg & FLG_BLOCK_CHECKSUM) {
      if (data.length - pos < 4) throw corrupt('lz4: truncated block checksum');
      if (view.getUint32(pos, true) !== xxh32.hash(0, data, pos - size, size)) {
        throw corrupt('lz4: block checksum');
      }
      pos += 4;
    }
  }
  // Kafka skips the content checksum without verifying it; the batch CRC already covers these bytes.
  if (flg & FLG_CONTENT_CHECKSUM) {
    if (data.length - pos < 4) throw corrupt('lz4: truncated content checksum');
    pos += 4;
  }
  if (pos !== data.length) throw corrupt('lz4: bytes after the end of the frame');

  const out = new Uint8Array(total);
  let at = 0;
  for (const block of blocks) {
    if (block.compressed) {
      const next = lz4.decompressBlock(data, out, block.start, block.size, at);
      if (next !== at + block.length) throw corrupt('lz4: block decoded to an unexpected length');
    } else {
      out.set(data.subarray(block.start, block.start + block.size), at);
    }
    at += block.length;
  }
  return out;
}

/**
 * Walks one LZ4 block (sequences of token, literals, 2-byte offset, match) without decoding it and
 * returns its decoded length, throwing if any length overruns the input or `maxLength`, or any match
 * reaches before the start of the block.
 */
function scanBlock(
  src: Uint8Array,
  start: number,
  end: number,
  maxLength: number,
): { length: number; lastMatchStart: number; lastMatchEnd: number } {
  let pos = start;
  let out = 0;
  let lastMatchStart = 0;
  let lastMatchEnd = 0;
  for (;;) {
    if (pos >= end) throw corrupt('lz4: block ends without a final literal run');
    const token = src[pos++]!;
    let literals = token >>> 4;
    if (literals === 15) {
      let b: number;
      do {
        if (pos >= end) throw corrupt('lz4: truncated literal length');
        b = src[pos++]!;
        literals += b;
      } while (b === 255);
    }
    if (literals > end - pos) throw corrupt('lz4: literals overrun the block');
    pos += literals;
    out += literals;
    if (out > maxLength) throw corrupt('lz4: block inflates past its maximum size');
    if (pos === end) return { length: out, lastMatchStart, lastMatchEnd };
    if (end - pos < 2) throw corrupt('lz4: truncated match offset');
    const offset = src[pos]! | (src[pos + 1]! << 8);
    pos += 2;
    if (offset === 0 || offset > out) throw corrupt('lz4: match reaches before the block');
    let matchLength = token & 15;
    if (matchLength === 15) {
      let b: number;
      do {
        if (pos >= end) throw corrupt('lz4: truncated match length');
        b = src[pos++]!;
        matchLength += b;
      } while (b === 255);
    }
    lastMatchStart = out;
    out += matchLength + 4;
    lastMatchEnd = out;
    if (out > maxLength) throw corrupt('lz4: block inflates past its maximum size');
  }
}
