import { SluiceError } from '../errors.js';
import { assertCanCompress, compressRecords } from './compression.js';
import { crc32c } from './crc32c.js';
import {
  ATTRIBUTES,
  BASE_OFFSET,
  BASE_SEQUENCE,
  BASE_TIMESTAMP,
  BATCH_LENGTH,
  COMPRESSIONS,
  CONTROL_BIT,
  CRC,
  CURRENT_MAGIC,
  LAST_OFFSET_DELTA,
  LOG_OVERHEAD,
  MAGIC,
  MAX_TIMESTAMP,
  PARTITION_LEADER_EPOCH,
  PRODUCER_EPOCH,
  PRODUCER_ID,
  RECORD_BATCH_OVERHEAD,
  RECORD_COUNT,
  TIMESTAMP_TYPE_BIT,
  TRANSACTIONAL_BIT,
  checkBatchFrame,
  corrupt,
  readBatchHeader,
  verifyBatchCrc,
  viewOf,
} from './header.js';
import type { BatchHeader, EncodeOptions, RecordInput } from './types.js';
import { sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from './varint.js';

const INT32_MAX = 0x7fffffff;
const INT32_MIN = -0x80000000;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Kafka's RecordBatch.NO_TIMESTAMP: the timestamps of a batch without records. */
const NO_TIMESTAMP = -1;
const UTF8 = new TextEncoder();

const invalid = (message: string): SluiceError => new SluiceError('INVALID_RECORD', message);

function checkInteger(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${field} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

function checkBytes(field: string, value: unknown): Uint8Array | null {
  if (value === null || value instanceof Uint8Array) return value;
  throw invalid(`${field} must be a Uint8Array or null`);
}

/** Size of a varint-length-prefixed byte field, where null is length -1. */
const sizeOfField = (bytes: Uint8Array | null): number =>
  bytes === null ? 1 : sizeOfVarint(bytes.length) + bytes.length;

function writeField(buf: Uint8Array, pos: number, bytes: Uint8Array | null): number {
  if (bytes === null) return writeVarint(buf, pos, -1);
  pos = writeVarint(buf, pos, bytes.length);
  buf.set(bytes, pos);
  return pos + bytes.length;
}

interface Prepared {
  key: Uint8Array | null;
  value: Uint8Array | null;
  timestampDelta: number;
  offsetDelta: number;
  headers: { key: Uint8Array; value: Uint8Array | null }[];
  bodySize: number;
}

/**
 * Encodes records as one RecordBatch v2, as Kafka's Java producer would: offset deltas 0…n-1,
 * baseTimestamp = the first record's timestamp, maxTimestamp = the largest (or `logAppendTime`).
 * Explicit `offsetDelta`s and `lastOffsetDelta` re-encode a compacted batch with its offsets kept.
 */
export function encodeRecordBatch(records: readonly RecordInput[], options: EncodeOptions = {}): Uint8Array {
  const {
    baseOffset = 0,
    partitionLeaderEpoch = -1,
    producerId = -1,
    producerEpoch = -1,
    baseSequence = -1,
    compression = 'none',
    timestampType = 'CreateTime',
    isTransactional = false,
    isControl = false,
  } = options;
  checkInteger('baseOffset', baseOffset, 0, MAX_SAFE);
  checkInteger('partitionLeaderEpoch', partitionLeaderEpoch, INT32_MIN, INT32_MAX);
  checkInteger('producerId', producerId, -MAX_SAFE, MAX_SAFE);
  checkInteger('producerEpoch', producerEpoch, -0x8000, 0x7fff);
  checkInteger('baseSequence', baseSequence, INT32_MIN, INT32_MAX);
  assertCanCompress(compression);
  const empty = records.length === 0;
  if (empty && options.lastOffsetDelta === undefined) {
    throw invalid('a record batch needs at least one record');
  }
  if (records.length > INT32_MAX) throw invalid('too many records for one batch');
  const codec = COMPRESSIONS.indexOf(empty ? 'none' : compression);

  const first = records[0];
  const baseTimestamp =
    first === undefined ? NO_TIMESTAMP : checkInteger('timestamp', first.timestamp, -MAX_SAFE, MAX_SAFE);
  let maxTimestamp = baseTimestamp;
  let recordsSize = 0;
  let previousDelta = -1;
  const prepared: Prepared[] = records.map((record, i) => {
    const offsetDelta =
      record.offsetDelta === undefined
        ? previousDelta + 1
        : checkInteger('offsetDelta', record.offsetDelta, 0, INT32_MAX);
    if (offsetDelta <= previousDelta) {
      throw invalid(`offset deltas must increase: record ${i} has ${offsetDelta} after ${previousDelta}`);
    }
    previousDelta = offsetDelta;
    const timestamp = checkInteger('timestamp', record.timestamp, -MAX_SAFE, MAX_SAFE);
    if (timestamp > maxTimestamp) maxTimestamp = timestamp;
    const timestampDelta = timestamp - baseTimestamp;
    // The decoder holds deltas as exact JavaScript numbers too; refuse what it could not read back.
    if (!Number.isSafeInteger(timestampDelta)) {
      throw invalid('timestamps in one batch are more than 2^53 ms apart');
    }
    const key = checkBytes('key', record.key);
    const value = checkBytes('value', record.value);
    const headers = (record.headers ?? []).map((h) => {
      if (typeof h.key !== 'string') throw invalid('header keys must be strings');
      return { key: UTF8.encode(h.key), value: checkBytes('header value', h.value) };
    });
    let bodySize =
      1 + // attributes, unused by Kafka
      sizeOfVarlong(timestampDelta) +
      sizeOfVarint(offsetDelta) +
      sizeOfField(key) +
      sizeOfField(value) +
      sizeOfVarint(headers.length);
    for (const h of headers) bodySize += sizeOfField(h.key) + sizeOfField(h.value);
    if (bodySize > INT32_MAX) throw invalid('record larger than 2 GiB');
    recordsSize += sizeOfVarint(bodySize) + bodySize;
    return { key, value, timestampDelta, offsetDelta, headers, bodySize };
  });
  const lastOffsetDelta =
    options.lastOffsetDelta === undefined
      ? previousDelta
      : checkInteger('lastOffsetDelta', options.lastOffsetDelta, Math.max(0, previousDelta), INT32_MAX);
  if (lastOffsetDelta > MAX_SAFE - baseOffset) throw invalid('too many records for one batch');
  if (timestampType === 'LogAppendTime') {
    maxTimestamp = checkInteger('logAppendTime', options.logAppendTime, -MAX_SAFE, MAX_SAFE);
  }

  let batch: Uint8Array;
  if (compression === 'none' || empty) {
    batch = new Uint8Array(RECORD_BATCH_OVERHEAD + recordsSize);
    writeRecords(batch, RECORD_BATCH_OVERHEAD, prepared);
  } else {
    const plain = new Uint8Array(recordsSize);
    writeRecords(plain, 0, prepared);
    const compressed = compressRecords(compression, plain);
    batch = new Uint8Array(RECORD_BATCH_OVERHEAD + compressed.length);
    batch.set(compressed, RECORD_BATCH_OVERHEAD);
  }
  if (batch.length - LOG_OVERHEAD > INT32_MAX) throw invalid('batch larger than 2 GiB');

  const view = viewOf(batch);
  view.setBigInt64(BASE_OFFSET, BigInt(baseOffset));
  view.setInt32(BATCH_LENGTH, batch.length - LOG_OVERHEAD);
  view.setInt32(PARTITION_LEADER_EPOCH, partitionLeaderEpoch);
  view.setInt8(MAGIC, CURRENT_MAGIC);
  view.setInt16(
    ATTRIBUTES,
    codec |
      (timestampType === 'LogAppendTime' ? TIMESTAMP_TYPE_BIT : 0) |
      (isTransactional ? TRANSACTIONAL_BIT : 0) |
      (isControl ? CONTROL_BIT : 0),
  );
  view.setInt32(LAST_OFFSET_DELTA, lastOffsetDelta);
  view.setBigInt64(BASE_TIMESTAMP, BigInt(baseTimestamp));
  view.setBigInt64(MAX_TIMESTAMP, BigInt(maxTimestamp));
  view.setBigInt64(PRODUCER_ID, BigInt(producerId));
  view.setInt16(PRODUCER_EPOCH, producerEpoch);
  view.setInt32(BASE_SEQUENCE, baseSequence);
  view.setInt32(RECORD_COUNT, records.length);
  view.setUint32(CRC, crc32c(batch, ATTRIBUTES));
  return batch;
}

function writeRecords(buf: Uint8Array, pos: number, records: readonly Prepared[]): void {
  for (const r of records) {
    pos = writeVarint(buf, pos, r.bodySize);
    buf[pos++] = 0;
    pos = writeVarlong(buf, pos, r.timestampDelta);
    pos = writeVarint(buf, pos, r.offsetDelta);
    pos = writeField(buf, pos, r.key);
    pos = writeField(buf, pos, r.value);
    pos = writeVarint(buf, pos, r.headers.length);
    for (const h of r.headers) {
      pos = writeField(buf, pos, h.key);
      pos = writeField(buf, pos, h.value);
    }
  }
}

/** Reads the header of a buffer that must hold exactly one batch. */
function readSingleBatch(batch: Uint8Array): BatchHeader {
  const batchLength = checkBatchFrame(batch, 0);
  if (batch.length !== LOG_OVERHEAD + batchLength) {
    throw corrupt(`expected one batch of ${LOG_OVERHEAD + batchLength} bytes, got ${batch.length}`);
  }
  return readBatchHeader(batch, 0);
}

/** Returns a copy with baseOffset rewritten. The CRC does not cover baseOffset, so it stays valid. */
export function withBaseOffset(batch: Uint8Array, baseOffset: number): Uint8Array {
  const header = readSingleBatch(batch);
  checkInteger('baseOffset', baseOffset, 0, MAX_SAFE - Math.max(0, header.lastOffsetDelta));
  const copy = new Uint8Array(batch); // a copy even for a Buffer, whose slice() would share memory
  viewOf(copy).setBigInt64(BASE_OFFSET, BigInt(baseOffset));
  return copy;
}

/**
 * Writes the leader epoch that appends the batch into its header, in place (Kafka's broker stamps
 * PartitionLeaderEpoch the same way). The CRC does not cover the field, so it stays valid.
 */
export function stampPartitionLeaderEpoch(batch: Uint8Array, epoch: number): void {
  readSingleBatch(batch);
  checkInteger('partitionLeaderEpoch', epoch, 0, INT32_MAX);
  viewOf(batch).setInt32(PARTITION_LEADER_EPOCH, epoch);
}

/**
 * Returns a copy with timestampType=LogAppendTime and maxTimestamp=time, CRC recomputed: what a broker
 * does to batches for a LogAppendTime topic. The old CRC is verified first, so that corrupt input is
 * never re-sealed with a valid checksum.
 */
export function withLogAppendTime(batch: Uint8Array, time: number): Uint8Array {
  checkInteger('logAppendTime', time, -MAX_SAFE, MAX_SAFE);
  const batchLength = checkBatchFrame(batch, 0);
  verifyBatchCrc(batch, 0, batchLength);
  readSingleBatch(batch);
  const copy = new Uint8Array(batch);
  const view = viewOf(copy);
  view.setInt16(ATTRIBUTES, view.getInt16(ATTRIBUTES) | TIMESTAMP_TYPE_BIT);
  view.setBigInt64(MAX_TIMESTAMP, BigInt(time));
  view.setUint32(CRC, crc32c(copy, ATTRIBUTES));
  return copy;
}
