/**
 * A JSON produce request's records, grouped by partition and built into RecordBatches (kafkajs's
 * groupMessagesPerPartition and createTopicData): each step returns its result, and the later steps
 * (replica writes, the commit) fill in where the data went.
 */
import { SluiceError } from '../../../protocol/errors.js';
import { partitionForKey } from '../../../protocol/partitioner.js';
import type { RecordHeader, RecordInput } from '../../../protocol/record-batch/index.js';
import {
  BATCH_SIZE_OVERHEAD,
  encodeRecordBatch,
  estimateRecordSize,
} from '../../../protocol/record-batch/index.js';
import type { ReplicatedWrite } from '../replication/replica-writes.js';
import type { TopicConfig } from '../topics/configs.js';
import type { Topic } from '../topics/model.js';
import { checkPartition } from './context.js';

export interface ProduceRecord {
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
  partition?: number;
  timestamp?: number;
}

/** One partition's share of a produce request, from its records to its commit. */
export interface PartitionWrite extends ReplicatedWrite {
  /**
   * The original commit of this request (Idempotency-Key): its base offset, request time and largest
   * timestamp (its tail entry's `maxTimestamp`, kept in the K# item too).
   */
  duplicate?: { baseOffset: number; requestTime: number; maxTimestamp: number };
  /** With an Idempotency-Key: this request's fingerprint. */
  fingerprint?: string;
  ikGeneration?: number;
}

/**
 * The partition of each record: its own, its key's (Kafka's murmur2 partitioner), or for keyless
 * records of one request one `sticky` partition (Kafka's sticky partitioner).
 */
export const assignPartitions = (
  topic: Topic,
  records: readonly ProduceRecord[],
  sticky: number,
): Map<number, PartitionWrite> => {
  const writes = new Map<number, PartitionWrite>();
  records.forEach((record, i) => {
    let partition: number;
    if (record.partition !== undefined) {
      checkPartition(topic, record.partition);
      partition = record.partition;
    } else if (record.key !== null) partition = partitionForKey(record.key, topic.partitions);
    else partition = sticky;
    let write = writes.get(partition);
    if (!write) writes.set(partition, (write = { partition, indexes: [], batches: [], timestamps: [] }));
    write.indexes.push(i);
  });
  return writes;
};

/**
 * One partition's records as RecordBatches of at most max.message.bytes (by protocol/'s batch size
 * estimate), with each record's timestamp; a record that fits no batch is MESSAGE_TOO_LARGE.
 */
export const buildBatches = (
  indexes: readonly number[],
  records: readonly ProduceRecord[],
  config: TopicConfig,
  now: number,
): { batches: Uint8Array[]; timestamps: number[] } => {
  const logAppend = config['message.timestamp.type'] === 'LogAppendTime';
  const limit = config['max.message.bytes'];
  const batches: Uint8Array[] = [];
  const timestamps: number[] = [];
  let chunk: RecordInput[] = [];
  let chunkBytes = BATCH_SIZE_OVERHEAD;
  // Never called with an empty chunk: a write has at least one record, and a record that does not
  // fit an empty batch is refused before it is added.
  const flush = () => {
    batches.push(
      encodeRecordBatch(chunk, logAppend ? { timestampType: 'LogAppendTime', logAppendTime: now } : {}),
    );
    chunk = [];
    chunkBytes = BATCH_SIZE_OVERHEAD;
  };
  for (const i of indexes) {
    const r = records[i]!;
    const timestamp = logAppend ? now : (r.timestamp ?? now);
    timestamps.push(timestamp);
    const size = estimateRecordSize(r.key, r.value, r.headers);
    if (BATCH_SIZE_OVERHEAD + size > limit) {
      throw new SluiceError(
        'MESSAGE_TOO_LARGE',
        `record ${i} is about ${size} bytes; topic allows max.message.bytes=${limit} per batch`,
      );
    }
    if (chunkBytes + size > limit) flush();
    chunk.push({ key: r.key, value: r.value, headers: r.headers, timestamp });
    chunkBytes += size;
  }
  flush();
  return { batches, timestamps };
};

/** Kafka's broker refuses these too: the log cleaner could only ever drop them. */
export const keyRequired = (topic: Topic, what: string): SluiceError =>
  new SluiceError(
    'INVALID_RECORD',
    `compacted topic ${topic.name} cannot accept a record without a key (${what} has none)`,
  );
