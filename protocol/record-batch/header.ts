import { SluiceError } from '../errors.js';
import { crc32c } from './crc32c.js';
import type { BatchHeader, Compression, TimestampType } from './types.js';

/** Byte positions of RecordBatch v2 fields (Kafka's DefaultRecordBatch). */
export const BASE_OFFSET = 0;
export const BATCH_LENGTH = 8;
export const PARTITION_LEADER_EPOCH = 12;
export const MAGIC = 16;
export const CRC = 17;
/** The CRC covers everything from here to the end of the batch. */
export const ATTRIBUTES = 21;
export const LAST_OFFSET_DELTA = 23;
export const BASE_TIMESTAMP = 27;
export const MAX_TIMESTAMP = 35;
export const PRODUCER_ID = 43;
export const PRODUCER_EPOCH = 51;
export const BASE_SEQUENCE = 53;
export const RECORD_COUNT = 57;
export const RECORDS = 61;

/** baseOffset + batchLength: the part of a batch that batchLength does not count. */
export const LOG_OVERHEAD = 12;
export const RECORD_BATCH_OVERHEAD = RECORDS;
export const CURRENT_MAGIC = 2;

export const COMPRESSION_MASK = 0x07;
export const TIMESTAMP_TYPE_BIT = 0x08;
export const TRANSACTIONAL_BIT = 0x10;
export const CONTROL_BIT = 0x20;

/** Codec names by their attribute value. */
export const COMPRESSIONS: readonly Compression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

export const corrupt = (message: string): SluiceError => new SluiceError('CORRUPT_MESSAGE', message);

export const viewOf = (bytes: Uint8Array): DataView =>
  new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Reads an int64 that must be a safe integer within [min, MAX_SAFE_INTEGER]. */
function readInt64(view: DataView, pos: number, field: string, min = -Number.MAX_SAFE_INTEGER): number {
  const big = view.getBigInt64(pos);
  const n = Number(big);
  if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < BigInt(min)) {
    throw corrupt(`${field} ${big} is outside [${min}, 2^53-1]`);
  }
  return n;
}

/**
 * Checks the frame of the batch starting at `at` (enough bytes for a header, magic 2, a batchLength that
 * covers the header and fits in `bytes`) and returns its batchLength. This is all that must hold before
 * the CRC can be checked; everything else in the header is covered by the CRC.
 */
export function checkBatchFrame(bytes: Uint8Array, at: number): number {
  if (!Number.isInteger(at) || at < 0 || at > bytes.length) {
    throw corrupt(`batch position ${at} is outside the ${bytes.length}-byte buffer`);
  }
  if (bytes.length - at < RECORD_BATCH_OVERHEAD) {
    throw corrupt(
      `truncated batch header at byte ${at}: ${bytes.length - at} of ${RECORD_BATCH_OVERHEAD} bytes`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + at, RECORD_BATCH_OVERHEAD);
  const magic = view.getInt8(MAGIC);
  if (magic !== CURRENT_MAGIC) throw corrupt(`unsupported magic ${magic} at byte ${at}: only RecordBatch v2`);
  const batchLength = view.getInt32(BATCH_LENGTH);
  if (batchLength < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) {
    throw corrupt(`batchLength ${batchLength} at byte ${at} is shorter than a batch header`);
  }
  if (batchLength > bytes.length - at - LOG_OVERHEAD) {
    throw corrupt(
      `batch at byte ${at} declares ${batchLength} bytes, ${bytes.length - at - LOG_OVERHEAD} present`,
    );
  }
  return batchLength;
}

/** Verifies the CRC-32C of the batch at `at` whose frame `checkBatchFrame` accepted. */
export function verifyBatchCrc(bytes: Uint8Array, at: number, batchLength: number): void {
  const stored = new DataView(bytes.buffer, bytes.byteOffset + at, RECORD_BATCH_OVERHEAD).getUint32(CRC);
  const actual = crc32c(bytes, at + ATTRIBUTES, at + LOG_OVERHEAD + batchLength);
  if (actual !== stored) {
    throw corrupt(`batch at byte ${at} is corrupt: stored CRC ${stored}, computed ${actual}`);
  }
}

/**
 * Reads and checks the header of the batch starting at `at`: its frame (see `checkBatchFrame`), a known
 * codec, a non-negative record count and 64-bit fields JavaScript can hold exactly. Does not verify the CRC.
 */
export function readBatchHeader(bytes: Uint8Array, at = 0): BatchHeader {
  const batchLength = checkBatchFrame(bytes, at);
  const view = new DataView(bytes.buffer, bytes.byteOffset + at, RECORD_BATCH_OVERHEAD);
  const attributes = view.getInt16(ATTRIBUTES);
  const compression = COMPRESSIONS[attributes & COMPRESSION_MASK];
  if (compression === undefined) {
    throw new SluiceError(
      'UNSUPPORTED_COMPRESSION_TYPE',
      `unknown compression codec ${attributes & COMPRESSION_MASK} at byte ${at}`,
    );
  }
  const recordCount = view.getInt32(RECORD_COUNT);
  if (recordCount < 0) throw corrupt(`negative record count ${recordCount} at byte ${at}`);
  const baseOffset = readInt64(view, BASE_OFFSET, 'baseOffset', 0);
  const lastOffsetDelta = view.getInt32(LAST_OFFSET_DELTA);
  if (!Number.isSafeInteger(baseOffset + lastOffsetDelta)) {
    throw corrupt(`last offset ${baseOffset} + ${lastOffsetDelta} is beyond 2^53-1`);
  }
  const timestampType: TimestampType = attributes & TIMESTAMP_TYPE_BIT ? 'LogAppendTime' : 'CreateTime';
  return {
    baseOffset,
    batchLength,
    partitionLeaderEpoch: view.getInt32(PARTITION_LEADER_EPOCH),
    magic: CURRENT_MAGIC,
    crc: view.getUint32(CRC),
    compression,
    timestampType,
    isTransactional: (attributes & TRANSACTIONAL_BIT) !== 0,
    isControl: (attributes & CONTROL_BIT) !== 0,
    lastOffsetDelta,
    baseTimestamp: readInt64(view, BASE_TIMESTAMP, 'baseTimestamp'),
    maxTimestamp: readInt64(view, MAX_TIMESTAMP, 'maxTimestamp'),
    producerId: readInt64(view, PRODUCER_ID, 'producerId'),
    producerEpoch: view.getInt16(PRODUCER_EPOCH),
    baseSequence: view.getInt32(BASE_SEQUENCE),
    recordCount,
  };
}
