/**
 * Kafka's LogValidator for a binary produce: every RecordBatch of the body is decoded and checked in
 * full before anything is written, and the result says what the append will be (its batches, with
 * LogAppendTime stamped where the topic keeps it, its producer, offset span, record count and
 * timestamps: what Kafka's LogAppendInfo carries).
 */
import { SluiceError } from '../../../protocol/errors.js';
import {
  splitBatches,
  validateProducerBatch,
  withLogAppendTime,
} from '../../../protocol/record-batch/index.js';
import type { TopicConfig } from '../topics/configs.js';
import type { Topic } from '../topics/model.js';
import type { ProducerBatchInfo } from './commit.js';
import { keyRequired } from './partition-writes.js';
import { chainProducer } from './producer-state.js';

/** What a validated body will append (Kafka's LogAppendInfo, before offsets are assigned). */
export interface ValidatedAppend {
  batches: Uint8Array[];
  producer: ProducerBatchInfo | undefined;
  /** The batches are part of a transaction (all of them: a body may not mix). */
  transactional: boolean;
  /** Offsets the batches take (their lastOffsetDelta + 1 summed). */
  span: number;
  records: number;
  maxTimestamp: number;
  firstTimestamp: number;
  logAppend: boolean;
}

export const validateBatches = (
  topic: Topic,
  config: TopicConfig,
  body: Uint8Array,
  now: number,
): ValidatedAppend => {
  if (body.length === 0) throw new SluiceError('CORRUPT_MESSAGE', 'the body holds no RecordBatch');
  const parts = splitBatches(body);
  const logAppend = config['message.timestamp.type'] === 'LogAppendTime';
  let producer: ProducerBatchInfo | undefined;
  let transactional = false;
  let span = 0;
  let records = 0;
  let maxTimestamp = -1;
  let firstTimestamp = Number.MAX_SAFE_INTEGER;
  const limits = { maxMessageBytes: config['max.message.bytes'] };
  const batches = parts.map(({ start, end, header }, i) => {
    const decoded = validateProducerBatch(body.subarray(start, end), header, limits, i);
    if (config['cleanup.policy'] !== 'delete' && decoded.some((r) => r.key === null))
      throw keyRequired(topic, `batch ${i}`);
    producer = chainProducer(producer, header, i);
    if (i > 0 && header.isTransactional !== transactional)
      throw new SluiceError('INVALID_RECORD', 'batches of one request must all be transactional or all not');
    transactional = header.isTransactional;
    span += header.lastOffsetDelta + 1;
    records += header.recordCount;
    maxTimestamp = Math.max(maxTimestamp, logAppend ? now : header.maxTimestamp);
    firstTimestamp = Math.min(firstTimestamp, logAppend ? now : header.baseTimestamp);
    const bytes = body.subarray(start, end);
    return logAppend ? withLogAppendTime(bytes, now) : bytes;
  });
  return { batches, producer, transactional, span, records, maxTimestamp, firstTimestamp, logAppend };
};
