import { Decompress } from 'fzstd';
import { SluiceError } from '../errors.js';
import { concatBytes } from './bytes.js';
import { corrupt, viewOf } from './header.js';
import { xxh64 } from './xxh64.js';

/**
 * Zstandard decoding via fzstd (Node 20 has no zstd compressor, so Sluice only reads zstd batches).
 *
 * fzstd allocates each frame's declared window up front and, in one-shot mode, all output before
 * returning. So the frames are first walked here (RFC 8878 headers and block headers, nothing decoded),
 * refusing windows above the output limit and dictionaries, and then fzstd decodes each frame in
 * streaming mode while the output is counted, so a batch that inflates past the limit stops as soon as
 * it does. fzstd trusts what it decodes; libzstd (so zstd-jni, so Kafka) does not, so each frame's
 * blocks are held to Block_Maximum_Size, its content to Frame_Content_Size and its Content_Checksum
 * verified here, and a frame that fails any of them is CORRUPT_MESSAGE, as Kafka would refuse it.
 */

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const MAX_BLOCK = 128 * 1024;
/**
 * The largest window accepted whatever the output limit: libzstd's streaming compressor declares a
 * window from its level, not from the input (2 MiB at librdkafka's default level 3, with no content
 * size), so holding the window to max.message.bytes (about 1 MiB) refused every zstd batch librdkafka
 * sends. 8 MiB (windowLog 23) bounds what fzstd allocates; the output stays held to the limit.
 */
export const MAX_ZSTD_WINDOW = 8 * 1024 * 1024;

export function decompressZstd(data: Uint8Array, maxBytes: number): Uint8Array {
  const frames = checkFrames(data, maxBytes);
  const contents: Uint8Array[] = [];
  let total = 0;
  for (const frame of frames) {
    const content = decodeFrame(data, frame, maxBytes, total);
    contents.push(content);
    total += content.length;
  }
  return concatBytes(contents, total);
}

/** What the frame walk learnt of one Zstandard frame, for checking what fzstd makes of it. */
interface Frame {
  /** Byte position of the frame's magic. */
  start: number;
  /** Byte position after the frame, its checksum included. */
  end: number;
  /** Frame_Content_Size, when the header has one. */
  contentSize: number | undefined;
  /** min(Window_Size, 128 KiB): no block may decode to more. */
  blockMaximumSize: number;
  /** Byte position of Content_Checksum, when the frame has one. */
  checksumAt: number | undefined;
}

/**
 * Decodes one frame and checks its blocks' sizes, its declared content size and its checksum, as libzstd
 * (so zstd-jni, so Kafka) does. `before` bytes of earlier frames count against `maxBytes` too.
 */
function decodeFrame(data: Uint8Array, frame: Frame, maxBytes: number, before: number): Uint8Array {
  const blocks: Uint8Array[] = [];
  let size = 0;
  // fzstd calls this once per block, then once more with an empty chunk when the frame ends.
  const stream = new Decompress((block) => {
    if (block.length > frame.blockMaximumSize) {
      throw corrupt(
        `zstd: a block of the frame at byte ${frame.start} decodes to more than its ` +
          `${frame.blockMaximumSize}-byte Block_Maximum_Size`,
      );
    }
    size += block.length;
    if (before + size > maxBytes) throw corrupt(`zstd: inflates past the ${maxBytes}-byte limit`);
    blocks.push(block);
  });
  widenBlockOutput(stream);
  try {
    stream.push(data.subarray(frame.start, frame.end), true);
  } catch (e) {
    if (e instanceof SluiceError) throw e;
    throw corrupt(`zstd: ${e instanceof Error ? e.message : String(e)}`);
  }
  const content = concatBytes(blocks, size);
  if (frame.contentSize !== undefined && size !== frame.contentSize) {
    throw corrupt(
      `zstd: the frame at byte ${frame.start} declares ${frame.contentSize} content bytes but decodes to ${size}`,
    );
  }
  if (frame.checksumAt !== undefined) {
    const stored = viewOf(data).getUint32(frame.checksumAt, true);
    const computed = Number(BigInt.asUintN(32, xxh64(content)));
    if (stored !== computed) {
      throw corrupt(
        `zstd: content checksum of the frame at byte ${frame.start} is ${hex32(stored)}, ` +
          `but its content hashes to ${hex32(computed)}`,
      );
    }
  }
  return content;
}

const hex32 = (n: number): string => `0x${n.toString(16).padStart(8, '0')}`;

/**
 * fzstd decodes each compressed block into a buffer of exactly Block_Maximum_Size (`m` in the frame
 * state it keeps as `s`; fzstd is pinned at 0.1.1) and silently drops whatever the block writes past
 * it. One byte more lets an oversized block show itself as longer than the maximum, so it can be
 * refused. (Literals are checked against the maximum before decoding, in `checkLiterals`.)
 */
function widenBlockOutput(stream: Decompress): void {
  let state: unknown;
  Object.defineProperty(stream, 's', {
    get: () => state,
    set: (value: unknown) => {
      // A frame's state is an object; between frames fzstd keeps a number (bytes left to skip).
      if (typeof value === 'object') (value as { m: number }).m += 1;
      state = value;
    },
  });
}

/** Walks the frames (skippable ones are skipped) and returns the Zstandard ones. */
function checkFrames(data: Uint8Array, maxBytes: number): Frame[] {
  const view = viewOf(data);
  const frames: Frame[] = [];
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
    const frame = checkFrame(data, pos, maxBytes);
    frames.push(frame);
    pos = frame.end;
  }
  return frames;
}

/** Checks the headers of the frame whose magic is at `start`. */
function checkFrame(data: Uint8Array, start: number, maxBytes: number): Frame {
  let pos = start + 4;
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
  if ((!singleSegment && window > Math.max(maxBytes, MAX_ZSTD_WINDOW)) || contentSize > maxBytes) {
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
    if (type === 2) checkLiterals(data, pos, size, maxBlock);
    pos += stored;
  }
  const checksumAt = hasChecksum ? pos : undefined;
  if (hasChecksum) {
    if (data.length - pos < 4) throw corrupt('zstd: truncated content checksum');
    pos += 4;
  }
  const hasContentSize = contentSizeBytes > 0;
  return {
    start,
    end: pos,
    contentSize: hasContentSize ? contentSize : undefined,
    blockMaximumSize: maxBlock,
    checksumAt,
  };
}

/**
 * Refuses a compressed block (at `pos`, `size` bytes) whose Literals_Section_Header regenerates more
 * than Block_Maximum_Size: fzstd would place those literals partly outside its block buffer and
 * return a shorter block instead of failing (libzstd refuses it as corruption).
 */
function checkLiterals(data: Uint8Array, pos: number, size: number, maxBlock: number): void {
  const b0 = data[pos]!;
  const type = b0 & 3; // 0 raw, 1 RLE: the sizes below count one stream; 2 and 3: Huffman-coded
  const sizeFormat = (b0 >>> 2) & 3;
  // Raw and RLE: 1, 2 or 3 header bytes for a 5-, 12- or 20-bit size. Huffman: 3, 3, 4 or 5 bytes.
  const headerBytes = type < 2 ? [1, 2, 1, 3][sizeFormat]! : [3, 3, 4, 5][sizeFormat]!;
  if (size < headerBytes) throw corrupt('zstd: compressed block shorter than its literals header');
  const b1 = data[pos + 1]!;
  const b2 = data[pos + 2]!;
  let literals: number;
  if (type < 2) {
    if (headerBytes === 1) literals = b0 >>> 3;
    else if (headerBytes === 2) literals = (b0 >>> 4) | (b1 << 4);
    else literals = (b0 >>> 4) | (b1 << 4) | (b2 << 12);
  } else if (headerBytes === 3) literals = (b0 >>> 4) | ((b1 & 0x3f) << 4);
  else if (headerBytes === 4) literals = (b0 >>> 4) | (b1 << 4) | ((b2 & 0x03) << 12);
  else literals = (b0 >>> 4) | (b1 << 4) | ((b2 & 0x3f) << 12);
  if (literals > maxBlock) {
    throw corrupt(
      `zstd: a block at byte ${pos - 3} has ${literals} literal bytes, more than its ${maxBlock}-byte Block_Maximum_Size`,
    );
  }
}
