/**
 * The AWS Lambda sink task: records go to a function in the event of Lambda's Kafka event source
 * mapping (lambda-sink-event.ts), `aws.lambda.batch.size` at a time and below the invocation payload
 * limit, in offset order per partition, one invocation after another.
 *
 * Failures are handled as the event source mapping handles them, then handed to Connect's error
 * handling instead of an on-failure destination:
 * - a function error (the invocation answered with X-Amz-Function-Error) fails the batch; a partial
 *   batch response fails, per partition, the lowest offset it names and every later record of that
 *   partition in the batch (the records before it are done);
 * - the failed records are sent again, split in two halves while bisection is on (a split does not
 *   count as a retry), and a batch that cannot be split any more is retried
 *   `aws.lambda.maximum.retry.attempts` times;
 * - what still fails is reported errant record by record: errors.tolerance=none fails the task (its
 *   offsets stay uncommitted, so the records come again after a restart), all dead-letters each one
 *   with Connect's error headers and goes on.
 * A throttled or unreachable Lambda is a retriable failure (errors.retry.timeout); the task remembers
 * what it delivered, so a put retried by the runtime does not send those records again. Delivery is at
 * least once, as with the event source mapping: a crash before the commit sends records again.
 */
import { createLambdaInvoker } from '../../lib/adapters/aws/lambda-invoker.js';
import type { FunctionInvoker, InvocationType } from '../../lib/ports/function-invoker.js';
import { InvokeFailure } from '../../lib/ports/function-invoker.js';
import type { Converter } from '../converters.js';
import { JSON_CONVERTER, STRING_CONVERTER, createConverter } from '../converters.js';
import type { SinkRecord, SinkTask, TaskContext, TopicPartitionOffset } from '../plugin.js';
import { RetriableConnectError } from '../plugin.js';
import type { BatchOutcome, EventEntry, EventSettings, KafkaEventSource } from './lambda-sink-event.js';
import {
  FunctionFailure,
  batchOutcomeOf,
  buildEvent,
  eventEntryOf,
  eventOverhead,
  functionFailureOf,
  topicPartitionOf,
} from './lambda-sink-event.js';

/** Lambda's invocation payload limits: 6 MB synchronous, 1 MB asynchronous (in bytes). */
export const PAYLOAD_LIMITS: Record<InvocationType, number> = {
  RequestResponse: 6_291_456,
  Event: 1_048_576,
};

const UTF8 = new TextEncoder();

export interface LambdaSinkSettings {
  functionName: string;
  invocationType: InvocationType;
  batchSize: number;
  event: EventSettings;
  reportBatchItemFailures: boolean;
  bisect: boolean;
  maxRetries: number;
}

export const lambdaSinkSettingsOf = (
  config: Record<string, string>,
  connector: string,
): LambdaSinkSettings => {
  const region = config['aws.lambda.region'] || process.env.AWS_REGION || 'us-east-1';
  return {
    functionName: config['aws.lambda.function.name'] ?? '',
    invocationType: config['aws.lambda.invocation.type'] === 'async' ? 'Event' : 'RequestResponse',
    batchSize: Number(config['aws.lambda.batch.size'] ?? '20'),
    event: {
      eventSource: (config['aws.lambda.event.source'] || 'aws:kafka') as KafkaEventSource,
      eventSourceArn:
        config['aws.lambda.event.source.arn'] || `arn:aws:kafka:${region}::cluster/sluice/${connector}`,
      bootstrapServers: config['aws.lambda.bootstrap.servers'] ?? '',
    },
    reportBatchItemFailures:
      (config['aws.lambda.function.response.types'] ?? 'ReportBatchItemFailures') ===
      'ReportBatchItemFailures',
    bisect: (config['aws.lambda.bisect.batch.on.function.error'] ?? 'true') === 'true',
    maxRetries: Number(config['aws.lambda.maximum.retry.attempts'] ?? '2'),
  };
};

class RecordTooLargeException extends Error {
  constructor(bytes: number, limit: number) {
    super(`the record's event entry is ${bytes} bytes; an invocation takes at most ${limit}`);
    this.name = 'RecordTooLargeException';
  }
}

const partitionKey = (r: SinkRecord): string => topicPartitionOf(r.topic, r.kafkaPartition);

export class LambdaSinkTask implements SinkTask {
  /** Per topic-partition, the last offset delivered or reported errant in this task's life. */
  private readonly handled = new Map<string, number>();
  private readonly limit: number;
  private readonly overhead: number;
  /** Invocations made, for tests and logs. */
  invocations = 0;

  constructor(
    private readonly invoker: FunctionInvoker,
    private readonly settings: LambdaSinkSettings,
    private readonly context: TaskContext,
    private readonly converters: { key: Converter; value: Converter },
  ) {
    this.limit = PAYLOAD_LIMITS[settings.invocationType];
    this.overhead = eventOverhead(settings.event);
  }

  async put(records: readonly SinkRecord[]): Promise<void> {
    const entries: EventEntry[] = [];
    for (const r of records) {
      if (r.kafkaOffset <= (this.handled.get(partitionKey(r)) ?? -1)) continue;
      let entry: EventEntry;
      try {
        entry = eventEntryOf(
          r,
          this.converters.key.fromConnect(r.key),
          this.converters.value.fromConnect(r.value),
          r.headers.map((h) => ({
            key: h.key,
            value: h.bytes ?? (h.value === null ? null : UTF8.encode(h.value)),
          })),
        );
      } catch (error) {
        await this.errant([r], error);
        continue;
      }
      if (this.overhead + entry.bytes > this.limit)
        await this.errant([r], new RecordTooLargeException(entry.bytes, this.limit));
      else entries.push(entry);
    }
    for (const batch of this.batches(entries)) await this.deliver(batch, 0);
  }

  async flush(): Promise<TopicPartitionOffset[]> {
    return []; // put returns only once every record was delivered or reported errant
  }

  async close(): Promise<void> {
    this.handled.clear();
  }

  /** Consecutive batches of at most batch.size entries whose event stays within the payload limit. */
  private batches(entries: readonly EventEntry[]): EventEntry[][] {
    const out: EventEntry[][] = [];
    let current: EventEntry[] = [];
    let bytes = this.overhead;
    for (const e of entries) {
      if (current.length > 0 && (current.length >= this.settings.batchSize || bytes + e.bytes > this.limit)) {
        out.push(current);
        current = [];
        bytes = this.overhead;
      }
      current.push(e);
      bytes += e.bytes;
    }
    if (current.length > 0) out.push(current);
    return out;
  }

  private async deliver(batch: readonly EventEntry[], retries: number): Promise<void> {
    const outcome = await this.invoke(batch);
    if (outcome.kind === 'success') return this.done(batch);
    let failed: EventEntry[];
    let error: Error;
    if (outcome.kind === 'partial') {
      const from = (e: EventEntry) => outcome.failed.get(topicPartitionOf(e.entry.topic, e.entry.partition));
      this.done(batch.filter((e) => e.entry.offset < (from(e) ?? Infinity)));
      failed = batch.filter((e) => e.entry.offset >= (from(e) ?? Infinity));
      const named = [...outcome.failed].map(([tp, offset]) => `${tp} offset ${offset}`).join(', ');
      error = new FunctionFailure('BatchItemFailure', `the function reported ${named} failed`);
    } else {
      failed = [...batch];
      error = outcome.error;
    }
    this.context.log({
      level: 'warn',
      msg: 'Lambda batch failed',
      connector: this.context.connector,
      task: this.context.task,
      records: failed.length,
      error: `${error.name}: ${error.message}`,
    });
    if (this.settings.bisect && failed.length > 1) {
      const half = Math.ceil(failed.length / 2);
      await this.deliver(failed.slice(0, half), 0);
      await this.deliver(failed.slice(half), 0);
    } else if (retries < this.settings.maxRetries) {
      await this.deliver(failed, retries + 1);
    } else {
      await this.errant(
        failed.map((e) => e.record),
        error,
      );
    }
  }

  private async invoke(batch: readonly EventEntry[]): Promise<BatchOutcome> {
    const payload = UTF8.encode(JSON.stringify(buildEvent(this.settings.event, batch)));
    this.invocations += 1;
    let result;
    try {
      result = await this.invoker.invoke({
        functionName: this.settings.functionName,
        invocationType: this.settings.invocationType,
        payload,
      });
    } catch (error) {
      if (error instanceof InvokeFailure && error.retriable) throw new RetriableConnectError(error.message);
      throw error;
    }
    if (result.functionError)
      return { kind: 'failed', error: functionFailureOf(result.functionError, result.payload) };
    if (this.settings.invocationType === 'Event') return { kind: 'success' };
    return batchOutcomeOf(result.payload, batch, this.settings.reportBatchItemFailures);
  }

  private done(entries: readonly EventEntry[]): void {
    for (const e of entries) this.mark(e.record);
  }

  private mark(r: SinkRecord): void {
    const k = partitionKey(r);
    this.handled.set(k, Math.max(this.handled.get(k) ?? -1, r.kafkaOffset));
  }

  private async errant(records: readonly SinkRecord[], error: unknown): Promise<void> {
    for (const r of records) {
      await this.context.reportErrant(r, error);
      this.mark(r);
    }
  }
}

export const createLambdaSinkTask = async (
  config: Record<string, string>,
  context: TaskContext,
): Promise<SinkTask> => {
  const settings = lambdaSinkSettingsOf(config, context.connector);
  return new LambdaSinkTask(
    createLambdaInvoker(config['aws.lambda.region'] ? { region: config['aws.lambda.region'] } : {}),
    settings,
    context,
    {
      key: createConverter(config['key.converter'] ?? STRING_CONVERTER),
      value: createConverter(config['value.converter'] ?? JSON_CONVERTER),
    },
  );
};
