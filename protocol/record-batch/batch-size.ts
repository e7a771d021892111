/**
 * The batch size estimate: an upper bound of the bytes records take in an uncompressed RecordBatch
 * v2, before it is encoded. The producer (sdk/) closes a batch by it (Kafka's batch.size) and the
 * server splits JSON records into batches of at most max.message.bytes by it: one estimate, so the
 * two agree on what fits.
 */
import { RECORD_BATCH_OVERHEAD } from './header.js';
import { utf8Length } from './record-size.js';

/** A batch's fixed part: the 61 bytes of the v2 header before its first record. */
export const BATCH_SIZE_OVERHEAD = RECORD_BATCH_OVERHEAD;

/**
 * An upper bound of one record's framing: its length, attributes, timestamp and offset deltas, key
 * and value lengths and header count, each a varint at its widest.
 */
export const RECORD_FRAMING_BOUND = 21;

/** An upper bound of one header's framing: its key length and value length varints. */
export const HEADER_FRAMING_BOUND = 10;

/** Bytes, or text that the record carries as UTF-8. */
export type SizedBytes = Uint8Array | string | null | undefined;

const byteLength = (b: SizedBytes): number =>
  b === null || b === undefined ? 0 : typeof b === 'string' ? utf8Length(b) : b.length;

/** An upper bound of the bytes one record adds to a batch. */
export const estimateRecordSize = (
  key: SizedBytes,
  value: SizedBytes,
  headers: readonly { key: string; value: SizedBytes }[] = [],
): number => {
  let size = RECORD_FRAMING_BOUND + byteLength(key) + byteLength(value);
  for (const h of headers) size += HEADER_FRAMING_BOUND + utf8Length(h.key) + byteLength(h.value);
  return size;
};
