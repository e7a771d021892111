/**
 * Kafka RecordBatch v2 (magic 2): the byte format of every partition's log in Sluice, so that stored
 * data is byte-compatible with Kafka's. Pure code: no I/O, no clocks.
 */
export type {
  BatchHeader,
  Compression,
  DecodeOptions,
  EncodeOptions,
  Record,
  RecordHeader,
  RecordInput,
  TimestampType,
} from './types.js';
export { AbortedFilter } from './aborted-filter.js';
export type { AbortedTransaction } from './aborted-filter.js';
export { BATCH_SIZE_OVERHEAD, estimateRecordSize } from './batch-size.js';
export type { SizedBytes } from './batch-size.js';
export { MAX_DECOMPRESSED_BYTES } from './compression.js';
export { controlTypeOf, encodeControlBatch } from './control.js';
export type { ControlBatchInput, ControlType } from './control.js';
export { crc32c } from './crc32c.js';
export { decodeRecordBatch, splitBatches } from './decode.js';
export { encodeRecordBatch, stampPartitionLeaderEpoch, withBaseOffset, withLogAppendTime } from './encode.js';
export { RECORD_BATCH_OVERHEAD, readBatchHeader } from './header.js';
export { recordSize } from './record-size.js';
export { validateProducerBatch } from './validate.js';
export type { ValidateOptions } from './validate.js';
