/**
 * Hand-made hostile RecordBatches for tests: a valid batch with header fields or its records section
 * replaced and the CRC re-sealed, so the batch passes the checksum and only validation can refuse it.
 */
import { crc32c } from '../../protocol/record-batch/crc32c.js';
import {
  ATTRIBUTES,
  BASE_TIMESTAMP,
  BATCH_LENGTH,
  CRC,
  LAST_OFFSET_DELTA,
  LOG_OVERHEAD,
  MAX_TIMESTAMP,
  PRODUCER_ID,
  RECORDS,
  RECORD_COUNT,
  viewOf,
} from '../../protocol/record-batch/header.js';

export interface HeaderEdits {
  attributes?: number;
  lastOffsetDelta?: number;
  baseTimestamp?: number;
  maxTimestamp?: number;
  producerId?: number;
  recordCount?: number;
}

/** Recomputes batchLength and the CRC-32C of a single batch in place; returns it. */
export const reseal = (batch: Uint8Array): Uint8Array => {
  if (batch.length < RECORDS) return batch; // no header to seal: leave the fragment as it is
  const view = viewOf(batch);
  view.setInt32(BATCH_LENGTH, batch.length - LOG_OVERHEAD);
  view.setUint32(CRC, crc32c(batch, ATTRIBUTES));
  return batch;
};

/** A copy of `batch` with the given header fields overwritten, re-sealed. */
export const editHeader = (batch: Uint8Array, edits: HeaderEdits): Uint8Array => {
  const copy = new Uint8Array(batch);
  const view = viewOf(copy);
  if (edits.attributes !== undefined) view.setInt16(ATTRIBUTES, edits.attributes);
  if (edits.lastOffsetDelta !== undefined) view.setInt32(LAST_OFFSET_DELTA, edits.lastOffsetDelta);
  if (edits.baseTimestamp !== undefined) view.setBigInt64(BASE_TIMESTAMP, BigInt(edits.baseTimestamp));
  if (edits.maxTimestamp !== undefined) view.setBigInt64(MAX_TIMESTAMP, BigInt(edits.maxTimestamp));
  if (edits.producerId !== undefined) view.setBigInt64(PRODUCER_ID, BigInt(edits.producerId));
  if (edits.recordCount !== undefined) view.setInt32(RECORD_COUNT, edits.recordCount);
  return reseal(copy);
};

/** A copy of `batch` whose records section is `records` (and attributes, if given), re-sealed. */
export const withRecordsSection = (
  batch: Uint8Array,
  records: Uint8Array,
  attributes?: number,
): Uint8Array => {
  const copy = new Uint8Array(RECORDS + records.length);
  copy.set(batch.subarray(0, RECORDS));
  copy.set(records, RECORDS);
  if (attributes !== undefined) viewOf(copy).setInt16(ATTRIBUTES, attributes);
  return reseal(copy);
};
