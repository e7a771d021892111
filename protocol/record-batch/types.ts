/** Kafka's compression codecs, in attribute-bit order (0 = none … 4 = zstd). */
export type Compression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
export type TimestampType = 'CreateTime' | 'LogAppendTime';

export interface RecordHeader {
  key: string;
  value: Uint8Array | null;
}

/**
 * A decoded record with absolute offset and timestamp. `key`, `value` and header values are views into
 * the batch (or its decompressed payload), not copies: copy them if the underlying buffer is reused.
 */
export interface Record {
  offset: number;
  timestamp: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
}

export interface RecordInput {
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers?: RecordHeader[];
  timestamp: number;
  /**
   * Offset relative to the batch's base offset. Default: one past the previous record's (0 for the
   * first). Given explicitly by the log cleaner, which keeps each surviving record at its offset.
   */
  offsetDelta?: number;
}

/** The 61-byte RecordBatch v2 header, field for field (`crc` unsigned, `batchLength` excludes the first 12 bytes). */
export interface BatchHeader {
  baseOffset: number;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: 2;
  crc: number;
  compression: Compression;
  timestampType: TimestampType;
  isTransactional: boolean;
  isControl: boolean;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

export interface EncodeOptions {
  /** Default 0: producers send 0 and the log assigns the real offset (see `withBaseOffset`). */
  baseOffset?: number;
  /** Default -1, Kafka's NO_PARTITION_LEADER_EPOCH, which is what producers send. */
  partitionLeaderEpoch?: number;
  /** Default -1 (not idempotent). */
  producerId?: number;
  /** Default -1. */
  producerEpoch?: number;
  /** Default -1. */
  baseSequence?: number;
  /** Default 'none'. 'zstd' is decode-only and throws UNSUPPORTED_COMPRESSION_TYPE. */
  compression?: Compression;
  /** Default 'CreateTime'. */
  timestampType?: TimestampType;
  /** With LogAppendTime: the broker time to stamp into maxTimestamp (required then). */
  logAppendTime?: number;
  /** Default false. */
  isTransactional?: boolean;
  /** Default false. */
  isControl?: boolean;
  /**
   * Default: the last record's offset delta. A compacted batch keeps its original span, so this may
   * exceed it; with it, `records` may even be empty (the header-only batch Kafka's cleaner keeps,
   * uncompressed, with NO_TIMESTAMP or the `logAppendTime` as its timestamps).
   */
  lastOffsetDelta?: number;
}

export interface DecodeOptions {
  /** Default true. Skip only when the same bytes were just verified (e.g. by `splitBatches`). */
  verifyCrc?: boolean;
  /** Cap on a compressed batch's inflated size (default MAX_DECOMPRESSED_BYTES); beyond it → CORRUPT_MESSAGE. */
  maxDecompressedBytes?: number;
}
