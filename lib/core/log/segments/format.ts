/**
 * The segment object: one partition's RecordBatches back to back with their true base offsets written
 * in (the bytes of a Kafka `.log` file), then a footer that is the segment's own offset index and time
 * index (Kafka's `.index` and `.timeindex`): one entry per chunk, a run of whole batches of about
 * `chunkBytes`. The segment index item in DynamoDB holds the same chunks, so a fetch finds its byte
 * range with one index read and reads it with one ranged GET; the footer makes the object
 * self-describing, so a segment can be verified and its index rebuilt without the table.
 *
 * Footer, big-endian: per chunk `relativeOffset u32, position u32, span u32, records u32,
 * maxTimestamp i64, firstTimestamp i64` (32 bytes), then a 32-byte trailer `baseOffset i64,
 * chunkCount u32, dataBytes u32, span u32, reserved u32, crc32c u32 (of the chunk entries and the
 * trailer's first 24 bytes), magic u32`.
 */
import { SluiceError } from '../../../../protocol/errors.js';
import { crc32c } from '../../../../protocol/record-batch/index.js';

/** One chunk: whole batches [baseOffset, baseOffset + n) at bytes [b, b + l) of the segment. */
export interface SegmentChunk {
  baseOffset: number;
  position: number;
  sizeInBytes: number;
  offsetCount: number;
  /** Records (fewer than n after compaction). */
  recordCount: number;
  /** Max and first record timestamps (-1 when the chunk has no record). */
  maxTimestamp: number;
  firstTimestamp: number;
}

export interface SegmentFooter {
  baseOffset: number;
  /** Offsets the segment spans. */
  span: number;
  dataBytes: number;
  chunks: SegmentChunk[];
}

const CHUNK_ENTRY = 32;
const TRAILER = 32;
/** 'SLG1'. */
const MAGIC = 0x534c4731;

/** The segment's bytes: data, then footer. Chunks must tile the data from offset 0 and byte 0. */
export const encodeSegment = (data: Uint8Array, chunks: readonly SegmentChunk[]): Uint8Array => {
  const first = chunks[0];
  if (!first) throw new Error('a segment needs at least one chunk');
  const footerBytes = chunks.length * CHUNK_ENTRY + TRAILER;
  const out = new Uint8Array(data.length + footerBytes);
  out.set(data, 0);
  const view = new DataView(out.buffer, data.length, footerBytes);
  let expectedOffset = first.baseOffset;
  let expectedByte = 0;
  chunks.forEach((chunk, i) => {
    if (chunk.baseOffset !== expectedOffset || chunk.position !== expectedByte)
      throw new Error(
        `segment chunk ${i} at offset ${chunk.baseOffset}, byte ${chunk.position} leaves a gap`,
      );
    const at = i * CHUNK_ENTRY;
    view.setUint32(at, chunk.baseOffset - first.baseOffset);
    view.setUint32(at + 4, chunk.position);
    view.setUint32(at + 8, chunk.offsetCount);
    view.setUint32(at + 12, chunk.recordCount);
    view.setBigInt64(at + 16, BigInt(chunk.maxTimestamp));
    view.setBigInt64(at + 24, BigInt(chunk.firstTimestamp));
    expectedOffset += chunk.offsetCount;
    expectedByte += chunk.sizeInBytes;
  });
  if (expectedByte !== data.length)
    throw new Error(`segment chunks cover ${expectedByte} of ${data.length} data bytes`);
  const t = chunks.length * CHUNK_ENTRY;
  view.setBigInt64(t, BigInt(first.baseOffset));
  view.setUint32(t + 8, chunks.length);
  view.setUint32(t + 12, data.length);
  view.setUint32(t + 16, expectedOffset - first.baseOffset);
  view.setUint32(t + 20, 0);
  view.setUint32(t + 24, crc32c(out, data.length, data.length + t + 24));
  view.setUint32(t + 28, MAGIC);
  return out;
};

/** Bytes at the end of a segment that always hold the trailer (read them first, then the chunks). */
export const SEGMENT_TRAILER_BYTES = TRAILER;

/** Decodes a segment's footer from the whole object (or any suffix of it that holds the footer). */
export const decodeSegmentFooter = (tail: Uint8Array, objectSize: number): SegmentFooter => {
  if (tail.length < TRAILER) throw corrupt(`${tail.length} bytes cannot hold a segment trailer`);
  const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  const t = tail.length - TRAILER;
  if (view.getUint32(t + 28) !== MAGIC) throw corrupt('the object does not end in a segment trailer');
  const count = view.getUint32(t + 8);
  const dataBytes = view.getUint32(t + 12);
  const start = t - count * CHUNK_ENTRY;
  if (start < 0 || dataBytes + count * CHUNK_ENTRY + TRAILER !== objectSize)
    throw corrupt(`the trailer's ${count} chunks and ${dataBytes} data bytes do not fit ${objectSize} bytes`);
  if (crc32c(tail, start, t + 24) !== view.getUint32(t + 24)) throw corrupt('the footer fails its CRC-32C');
  const baseOffset = Number(view.getBigInt64(t));
  const chunks: SegmentChunk[] = [];
  for (let i = 0; i < count; i++) {
    const at = start + i * CHUNK_ENTRY;
    const b = view.getUint32(at + 4);
    const next = i + 1 < count ? view.getUint32(at + CHUNK_ENTRY + 4) : dataBytes;
    chunks.push({
      baseOffset: baseOffset + view.getUint32(at),
      position: b,
      sizeInBytes: next - b,
      offsetCount: view.getUint32(at + 8),
      recordCount: view.getUint32(at + 12),
      maxTimestamp: Number(view.getBigInt64(at + 16)),
      firstTimestamp: Number(view.getBigInt64(at + 24)),
    });
  }
  return { baseOffset, span: view.getUint32(t + 16), dataBytes, chunks };
};

/** The footer's size from its trailer, so a reader can fetch exactly the footer with a second ranged GET. */
export const footerBytes = (trailer: Uint8Array): number => {
  const view = new DataView(trailer.buffer, trailer.byteOffset, trailer.byteLength);
  if (trailer.length < TRAILER || view.getUint32(trailer.length - 4) !== MAGIC)
    throw corrupt('the object does not end in a segment trailer');
  return view.getUint32(trailer.length - TRAILER + 8) * CHUNK_ENTRY + TRAILER;
};

const corrupt = (message: string): SluiceError =>
  new SluiceError('KAFKA_STORAGE_ERROR', `segment footer: ${message}`, { retriable: false });
