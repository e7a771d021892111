/**
 * The event AWS Lambda's Kafka event source mapping hands a function, built from sink records, and the
 * reading of what the function answers. The shape follows AWS's (and @types/aws-lambda's MSKEvent /
 * SelfManagedKafkaEvent): records grouped under `"{topic}-{partition}"`, key and value base64, each
 * header a one-entry object whose value is the header's bytes as an array of numbers. As in AWS's
 * events, a null key or value is left out. The partial batch response is the ESM's for Kafka:
 * `{"batchItemFailures": [{"itemIdentifier": {"topic-partition": "t-0", "offset": 7}}]}`.
 */
import type { SinkRecord } from '../plugin.js';

export type KafkaEventSource = 'aws:kafka' | 'SelfManagedKafka';

export interface KafkaEventRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  timestampType: 'CREATE_TIME' | 'LOG_APPEND_TIME';
  key?: string;
  value?: string;
  headers: Record<string, number[]>[];
}

export interface KafkaEvent {
  eventSource: KafkaEventSource;
  eventSourceArn?: string;
  bootstrapServers: string;
  records: Record<string, KafkaEventRecord[]>;
}

export interface EventSettings {
  eventSource: KafkaEventSource;
  /** Only in `aws:kafka` events. */
  eventSourceArn: string;
  bootstrapServers: string;
}

/** A record ready for an event: its entry and the bytes the entry adds to the payload (an upper bound). */
export interface EventEntry {
  record: SinkRecord;
  entry: KafkaEventRecord;
  bytes: number;
}

export const topicPartitionOf = (topic: string, partition: number): string => `${topic}-${partition}`;

const base64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64');

export const eventEntryOf = (
  record: SinkRecord,
  key: Uint8Array | null,
  value: Uint8Array | null,
  headers: readonly { key: string; value: Uint8Array | null }[],
): EventEntry => {
  const entry: KafkaEventRecord = {
    topic: record.topic,
    partition: record.kafkaPartition,
    offset: record.kafkaOffset,
    timestamp: record.timestamp,
    timestampType: 'CREATE_TIME',
    ...(key === null ? {} : { key: base64(key) }),
    ...(value === null ? {} : { value: base64(value) }),
    headers: headers.map((h) => ({ [h.key]: h.value === null ? [] : [...h.value] })),
  };
  const tp = topicPartitionOf(record.topic, record.kafkaPartition);
  // The entry, its comma, and (at most once per partition, counted for every entry to stay an upper
  // bound without tracking which partitions a batch already has) the `"t-0":[]` that opens its group.
  return {
    record,
    entry,
    bytes: Buffer.byteLength(JSON.stringify(entry)) + Buffer.byteLength(JSON.stringify(tp)) + 4,
  };
};

/** Bytes of an event with no records, to add entries' bytes to. */
export const eventOverhead = (settings: EventSettings): number =>
  Buffer.byteLength(JSON.stringify(buildEvent(settings, [])));

/** The event for `entries`, grouped by topic-partition in the order the partitions first appear. */
export const buildEvent = (settings: EventSettings, entries: readonly EventEntry[]): KafkaEvent => {
  const records: Record<string, KafkaEventRecord[]> = {};
  for (const { entry } of entries)
    (records[topicPartitionOf(entry.topic, entry.partition)] ??= []).push(entry);
  return {
    eventSource: settings.eventSource,
    ...(settings.eventSource === 'aws:kafka' ? { eventSourceArn: settings.eventSourceArn } : {}),
    bootstrapServers: settings.bootstrapServers,
    records,
  };
};

/** What the function's answer says about a batch. */
export type BatchOutcome =
  | { kind: 'success' }
  /** Per topic-partition, the lowest offset the function reported failed. */
  | { kind: 'partial'; failed: Map<string, number> }
  /** The function failed (its error), or its partial response could not be read: the whole batch failed. */
  | { kind: 'failed'; error: FunctionFailure };

/** The function's own failure, named as the function reported it (Lambda's errorType and errorMessage). */
export class FunctionFailure extends Error {
  constructor(errorType: string, message: string, trace?: readonly string[]) {
    super(message);
    this.name = errorType;
    this.stack = trace && trace.length > 0 ? trace.join('\n') : `${errorType}: ${message}`;
  }
}

const UTF8 = new TextDecoder();

const parseJson = (payload: Uint8Array): unknown => {
  try {
    return JSON.parse(UTF8.decode(payload));
  } catch {
    return undefined;
  }
};

/** Lambda's error object of a failed invocation (`{errorType, errorMessage, trace|stackTrace}`). */
export const functionFailureOf = (functionError: string, payload: Uint8Array): FunctionFailure => {
  const body = parseJson(payload) as
    { errorType?: unknown; errorMessage?: unknown; trace?: unknown; stackTrace?: unknown } | undefined;
  const errorType = typeof body?.errorType === 'string' ? body.errorType : functionError;
  const message =
    typeof body?.errorMessage === 'string' ? body.errorMessage : `function error ${functionError}`;
  const trace = Array.isArray(body?.trace)
    ? body.trace
    : Array.isArray(body?.stackTrace)
      ? body.stackTrace
      : [];
  return new FunctionFailure(
    errorType,
    message,
    trace.filter((t): t is string => typeof t === 'string'),
  );
};

const invalid = (why: string): BatchOutcome => ({
  kind: 'failed',
  error: new FunctionFailure('InvalidBatchItemFailures', `the partial batch response ${why}`),
});

/**
 * Reads a successful invocation's answer. Like the ESM: no `batchItemFailures` (or an empty or null
 * list) is a full success; an item without a readable identifier, or one naming a record that was not
 * in the batch, fails the whole batch.
 */
export const batchOutcomeOf = (
  payload: Uint8Array,
  batch: readonly EventEntry[],
  reportBatchItemFailures: boolean,
): BatchOutcome => {
  if (!reportBatchItemFailures) return { kind: 'success' };
  const body = parseJson(payload);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { kind: 'success' };
  const failures = (body as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return { kind: 'success' };
  if (!Array.isArray(failures)) return invalid('has a batchItemFailures that is not a list');
  const inBatch = new Set(
    batch.map((e) => `${topicPartitionOf(e.entry.topic, e.entry.partition)}@${e.entry.offset}`),
  );
  const failed = new Map<string, number>();
  for (const item of failures) {
    const id = (item as { itemIdentifier?: unknown } | null)?.itemIdentifier as
      { 'topic-partition'?: unknown; offset?: unknown } | null | undefined;
    const tp = id?.['topic-partition'];
    const offset = id?.offset;
    if (typeof tp !== 'string' || tp === '' || typeof offset !== 'number' || !Number.isSafeInteger(offset))
      return invalid('has an item without a topic-partition and offset');
    if (!inBatch.has(`${tp}@${offset}`))
      return invalid(`names ${tp} offset ${offset}, which was not in the batch`);
    failed.set(tp, Math.min(failed.get(tp) ?? offset, offset));
  }
  return failed.size === 0 ? { kind: 'success' } : { kind: 'partial', failed };
};
