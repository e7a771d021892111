/**
 * Workload generators shared by the simulations and the soak test: concurrent producers of three kinds
 * and polling consumers, each a sequential client that records every attempt in the history.
 *
 * - idempotent: Kafka idempotent producer over the binary route (producer id, epoch, sequence); retries
 *   the same batch bytes on any retriable or ambiguous failure, so duplicates must never appear.
 * - keyed: JSON produce with an Idempotency-Key, retried with the same key: exactly once.
 * - plain: JSON produce without a key; an ambiguous failure is retried a couple of times, which may
 *   legitimately duplicate (the checker allows at most one copy per non-failed attempt).
 */
import { encodeRecordBatch } from '../../protocol/record-batch/index.js';
import type { Random } from '../../lib/adapters/fault/random.js';
import { randomInt } from '../../lib/adapters/fault/random.js';
import type { SluiceClient, BytesRecord } from './client.js';
import { renderRecord } from './client.js';
import type { HistoryRecorder, Outcome, PollOp, SendOp } from './history.js';
import { errorName, outcomeOfCode, outcomeOfError } from './history.js';

export type ProducerKind = 'idempotent' | 'keyed' | 'plain';

export interface WorkloadContext {
  client: SluiceClient;
  recorder: HistoryRecorder;
  random: Random;
  sleep: (ms: number) => Promise<void>;
  topic: string;
  partitions: number;
  /** True once the workload should wind down (checked between writes). */
  stopped: () => boolean;
  /** The clock the records' timestamps come from (retention goes by them). */
  now: () => number;
  /** Errors that should never happen (e.g. OUT_OF_ORDER_SEQUENCE_NUMBER from a sequential producer). */
  unexpected: string[];
}

export interface ProducerOptions {
  kind: ProducerKind;
  name: string;
  /** Logical writes to make (default: until stopped). */
  writes?: number;
  maxRecordsPerWrite?: number;
  /** Milliseconds between writes, uniformly in [0, thinkMs]. */
  thinkMs?: number;
  /** Chance of a long pause (longPauseMs) between writes, so time passes under a running workload. */
  longPause?: { chance: number; ms: number };
  /** Attempts per logical write before giving up. */
  maxAttempts?: number;
  /** Only write to this partition (default: any). */
  partition?: number;
  /** Draw keys from this many distinct keys (for compacted topics); default unique or null keys. */
  keySpace?: number;
}

/** Codes a well-behaved sequential client should never see. */
const UNEXPECTED = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'INVALID_PRODUCER_EPOCH',
  'CORRUPT_MESSAGE',
  'INVALID_REQUEST',
  'INVALID_RECORD',
  'UNKNOWN_SERVER_ERROR',
]);

const retriableCode = (code: string): boolean =>
  [
    'THROTTLING_QUOTA_EXCEEDED',
    'FENCED_LEADER_EPOCH',
    'KAFKA_STORAGE_ERROR',
    'NOT_ENOUGH_REPLICAS',
    'NOT_LEADER_OR_FOLLOWER',
    'REQUEST_TIMED_OUT',
    'COORDINATOR_NOT_AVAILABLE',
  ].includes(code);

const codeOf = (error: unknown): string => errorName(error);

/** Records with unique, partly binary content: key, value and a header all derive from the tag. */
export const makeRecords = (random: Random, tag: string, count: number, keySpace?: number): BytesRecord[] =>
  Array.from({ length: count }, (_, i) => {
    const id = `${tag}.${i}`;
    const noise = Uint8Array.from({ length: randomInt(random, 0, 24) }, () => randomInt(random, 0, 255));
    const value = new Uint8Array([...new TextEncoder().encode(id), 0, ...noise]);
    return {
      // With a key space (compacted topics), keys repeat and are never null.
      key:
        keySpace !== undefined
          ? new TextEncoder().encode(`key-${randomInt(random, 0, keySpace - 1)}`)
          : random() < 0.2
            ? null
            : new TextEncoder().encode(`k-${id}`),
      value,
      headers:
        random() < 0.5
          ? []
          : [{ key: 'h', value: random() < 0.2 ? null : new TextEncoder().encode(`hv-${id}`) }],
    };
  });

export const runProducer = async (ctx: WorkloadContext, options: ProducerOptions): Promise<void> => {
  const { random } = ctx;
  let producer: { producerId: number; producerEpoch: number; sequence: Map<number, number> } | undefined;
  for (let n = 0; options.writes === undefined ? !ctx.stopped() : n < options.writes && !ctx.stopped(); n++) {
    const partition = options.partition ?? randomInt(random, 0, ctx.partitions - 1);
    const count = randomInt(random, 1, options.maxRecordsPerWrite ?? 4);
    const tag = `${options.name}.w${n}`;
    const records = makeRecords(random, tag, count, options.keySpace);
    const values = records.map(renderRecord);
    const write = `${tag}@${partition}`;
    const maxAttempts = options.maxAttempts ?? 40;
    if (options.kind === 'idempotent') {
      producer ??= await initProducer(ctx, options.name);
      if (!producer) continue;
      const sequence = producer.sequence.get(partition) ?? 0;
      const bytes = encodeRecordBatch(
        records.map((r) => ({ ...r, timestamp: ctx.now() })),
        { producerId: producer.producerId, producerEpoch: producer.producerEpoch, baseSequence: sequence },
      );
      let done = false;
      for (let attempt = 0; attempt < maxAttempts && !done; attempt++) {
        const { op, value, error } = await ctx.recorder.run<SendOp, { baseOffset: number }>(
          'send',
          options.name,
          { write, idempotent: true, partition, values },
          () => ctx.client.produceBatches(ctx.topic, partition, bytes),
          (r) => ({ offsets: values.map((_, i) => r.baseOffset + i) }),
        );
        if (value) {
          producer.sequence.set(partition, sequence + count);
          done = true;
        } else if (!shouldRetry(ctx, op, error)) {
          // The sequence is now unusable; start over as a new producer (Kafka would bump the epoch).
          producer = undefined;
          break;
        } else await ctx.sleep(backoff(random, attempt));
      }
      if (!done) producer = undefined;
    } else {
      const idempotencyKey = options.kind === 'keyed' ? `${tag}-${randomInt(random, 0, 1e9)}` : undefined;
      const attempts = options.kind === 'keyed' ? maxAttempts : 3;
      for (let attempt = 0; attempt < attempts; attempt++) {
        const complete = ctx.recorder.invoke<SendOp>('send', options.name, {
          write,
          idempotent: idempotencyKey !== undefined,
          partition,
          values,
        });
        let outcome: Outcome;
        let error: unknown;
        try {
          const results = await ctx.client.produce(
            ctx.topic,
            records.map((r) => ({ ...r, partition })),
            idempotencyKey !== undefined ? { idempotencyKey } : {},
          );
          const failed = results.find((r) => 'error' in r);
          if (failed && 'error' in failed) {
            outcome = outcomeOfCode(failed.error.code);
            error = { code: failed.error.code };
            complete(outcome, {}, failed.error.code);
          } else {
            outcome = 'ok';
            complete('ok', { offsets: results.map((r) => ('offset' in r ? r.offset : -1)) });
          }
        } catch (e) {
          error = e;
          outcome = outcomeOfError(e);
          complete(outcome, {}, codeOf(e));
        }
        if (outcome === 'ok') break;
        if (UNEXPECTED.has(codeOf(error))) ctx.unexpected.push(`${options.name} ${write}: ${codeOf(error)}`);
        if (outcome === 'fail' && !retriableCode(codeOf(error))) break;
        await ctx.sleep(backoff(random, attempt));
      }
    }
    await ctx.sleep(randomInt(random, 0, options.thinkMs ?? 20));
    if (options.longPause && random() < options.longPause.chance) await ctx.sleep(options.longPause.ms);
  }
};

const initProducer = async (ctx: WorkloadContext, name: string) => {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const { producerId, producerEpoch } = await ctx.client.initProducerId();
      return { producerId, producerEpoch, sequence: new Map<number, number>() };
    } catch {
      await ctx.sleep(backoff(ctx.random, attempt));
    }
  }
  ctx.unexpected.push(`${name}: InitProducerId kept failing`);
  return undefined;
};

const shouldRetry = (ctx: WorkloadContext, op: SendOp, error: unknown): boolean => {
  const code = codeOf(error);
  if (UNEXPECTED.has(code)) ctx.unexpected.push(`${op.process} ${op.write}: ${code}`);
  return op.outcome === 'info' || retriableCode(code);
};

const backoff = (random: Random, attempt: number): number =>
  randomInt(random, 1, Math.min(200, 5 * 2 ** attempt));

export interface ConsumerOptions {
  name: string;
  /** Partitions to follow (default all). */
  partitions?: number[];
  /** Milliseconds between polls, uniformly in [0, thinkMs]. */
  thinkMs?: number;
  /** Largest long-poll wait. */
  maxWaitMs?: number;
  /** Longest wait after a poll that found the consumer caught up. */
  idleMs?: number;
  /** Keep polling until this is true (checked between polls). */
  until: () => boolean;
}

/** Follows partitions from offset 0, recording every poll; alternates JSON and binary fetches. */
export const runConsumer = async (ctx: WorkloadContext, options: ConsumerOptions): Promise<void> => {
  const { random } = ctx;
  const partitions = options.partitions ?? Array.from({ length: ctx.partitions }, (_, p) => p);
  const position = new Map(partitions.map((p) => [p, 0]));
  let turn = 0;
  while (!options.until()) {
    const partition = partitions[turn++ % partitions.length]!;
    const offset = position.get(partition)!;
    const binary = random() < 0.3;
    const maxBytes = random() < 0.5 ? randomInt(random, 1, 200) : 1_048_576;
    const maxWaitMs = random() < 0.3 ? randomInt(random, 0, options.maxWaitMs ?? 500) : 0;
    const { value, error } = await ctx.recorder.run<PollOp, Awaited<ReturnType<SluiceClient['fetch']>>>(
      'poll',
      options.name,
      { partition, offset, records: [] },
      () => ctx.client.fetch(ctx.topic, partition, offset, { maxBytes, maxWaitMs, binary }),
      (r) => ({
        records: r.records.map((rec) => ({ offset: rec.offset, value: renderRecord(rec) })),
        nextOffset: r.nextOffset,
        highWatermark: r.highWatermark,
        logStartOffset: r.logStartOffset,
      }),
    );
    if (value) position.set(partition, value.nextOffset);
    else if (error !== undefined && errorName(error) === 'OFFSET_OUT_OF_RANGE') {
      // Retention moved the log start past us: carry on from the earliest offset, as auto.offset.reset does.
      position.set(partition, await ctx.client.offsets(ctx.topic, partition, 'earliest').catch(() => offset));
    }
    // Caught up (or failed): wait a while; behind: poll again soon.
    const caughtUp = !value || value.nextOffset >= value.highWatermark;
    await ctx.sleep(
      caughtUp ? randomInt(random, 50, options.idleMs ?? 1_000) : randomInt(random, 1, options.thinkMs ?? 20),
    );
  }
};

/**
 * Reads every partition from its log start to its high watermark (faults should be off) and records
 * it as the final read. Returns the number of records read.
 */
export const finalRead = async (
  ctx: Pick<WorkloadContext, 'client' | 'recorder' | 'topic' | 'partitions'>,
): Promise<number> => {
  let total = 0;
  for (let partition = 0; partition < ctx.partitions; partition++) {
    const records: { offset: number; value: string }[] = [];
    let logStartOffset = 0;
    let highWatermark = 0;
    let offset = 0;
    let error: string | undefined;
    try {
      logStartOffset = await ctx.client.offsets(ctx.topic, partition, 'earliest');
      highWatermark = await ctx.client.offsets(ctx.topic, partition, 'latest');
      offset = logStartOffset;
      while (offset < highWatermark) {
        const r = await ctx.client.fetch(ctx.topic, partition, offset, { maxBytes: 1_048_576 });
        highWatermark = Math.max(highWatermark, r.highWatermark);
        for (const rec of r.records) records.push({ offset: rec.offset, value: renderRecord(rec) });
        if (r.nextOffset <= offset) throw new Error(`fetch at ${offset} made no progress`);
        offset = r.nextOffset;
      }
    } catch (e) {
      error = `final read stopped at offset ${offset}: ${errorName(e)}`;
    }
    total += records.length;
    ctx.recorder.final({
      partition,
      highWatermark,
      logStartOffset,
      records,
      ...(error !== undefined ? { error } : {}),
    });
  }
  return total;
};
