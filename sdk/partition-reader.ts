/**
 * Reads partitions from their offsets over the consumer's fetch, outside any group: until the end of
 * the log, or (following) by long polls until stopped. `readPartitions` polls all of them in one fetch
 * (Kafka's Fetch, POST /v1/fetch), so a tool following N partitions holds one long poll, not N: the
 * command line's `consume`. `readPartition` walks one partition (benchmarks that time a single one).
 */
import type { Consumer, FetchedBatch, PartitionFetchOutcome } from './consumer.js';
import { EDGE_LIMITS } from '../lib/http/limits.js';
import { SluiceError } from './errors.js';

/** How long one long poll waits for new records when following (the API allows up to 20000). */
export const FOLLOW_WAIT_MS = 10_000;

export interface PartitionReadOptions {
  topic: string;
  partition: number;
  offset: number;
  /** Keep polling at the end of the log instead of returning there. */
  follow: boolean;
  signal: AbortSignal;
  /**
   * Where to continue when the offset is outside [logStartOffset, highWatermark] (retention moved the
   * log start past a committed offset); undefined fails with OFFSET_OUT_OF_RANGE.
   */
  onOutOfRange?: (bounds: { offset: number; logStartOffset: number; highWatermark: number }) => number;
  /** Takes a fetch's records (never an empty batch); false stops reading (e.g. a record limit reached). */
  deliver(batch: FetchedBatch): Promise<boolean>;
}

/** Resolves `caught-up` at the end of the log (without `follow`), `stopped` when aborted or told to stop. */
export const readPartition = async (
  consumer: Pick<Consumer, 'fetch'>,
  options: PartitionReadOptions,
): Promise<'caught-up' | 'stopped'> => {
  const { topic, partition, follow, signal } = options;
  let offset = options.offset;
  while (!signal.aborted) {
    let batch;
    try {
      batch = await consumer.fetch(topic, partition, offset, {
        maxWaitMs: follow ? FOLLOW_WAIT_MS : 0,
        signal,
      });
    } catch (error) {
      if (error instanceof SluiceError && error.code === 'ABORTED') return 'stopped';
      const bounds = outOfRange(error);
      if (bounds && options.onOutOfRange) {
        offset = options.onOutOfRange({ offset, ...bounds });
        continue;
      }
      throw error;
    }
    if (batch.records.length > 0 && !(await options.deliver(batch))) return 'stopped';
    offset = batch.nextOffset;
    if (!follow && (batch.records.length === 0 || offset >= batch.highWatermark)) return 'caught-up';
  }
  return 'stopped';
};

const outOfRange = (error: unknown): { logStartOffset: number; highWatermark: number } | undefined => {
  if (!(error instanceof SluiceError) || error.code !== 'OFFSET_OUT_OF_RANGE') return undefined;
  const { logStartOffset, highWatermark } = error.details;
  return typeof logStartOffset === 'number' && typeof highWatermark === 'number'
    ? { logStartOffset, highWatermark }
    : undefined;
};

export interface PartitionsReadOptions {
  topic: string;
  /** Where each partition starts. */
  partitions: { partition: number; offset: number }[];
  /** Keep polling at the end of the log instead of returning once every partition reached it. */
  follow: boolean;
  signal: AbortSignal;
  /** Takes one partition's fetched records (never an empty batch), in partition order within a poll;
   * false stops reading (e.g. a record limit reached). */
  deliver(batch: FetchedBatch): Promise<boolean>;
  /** How long to leave a poll whose partitions all failed retriably (default 200 ms). */
  retryBackoffMs?: number;
  /** Polls a partition may fail retriably in a row before its error ends the read (default 4). */
  maxAttempts?: number;
}

/**
 * Reads every partition in one fetch per poll (up to the API's maxFetchPartitions; more are read by
 * as many polls side by side): a partition that reached its end (the high watermark, or the last stable
 * offset under read_committed) leaves the poll when not following. Resolves `caught-up` once none is
 * left, `stopped` when aborted or told to stop. A partition's error other than a retriable one ends
 * the read with that error; a retriable one is asked again, a few times.
 */
export const readPartitions = async (
  consumer: Pick<Consumer, 'fetchMany'>,
  options: PartitionsReadOptions,
): Promise<'caught-up' | 'stopped'> => {
  const most = EDGE_LIMITS.maxFetchPartitions;
  if (options.partitions.length <= most) return pollPartitions(consumer, options);
  // One failing share stops the others, or their long polls would keep the read going.
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  const shares: PartitionsReadOptions['partitions'][] = [];
  for (let i = 0; i < options.partitions.length; i += most)
    shares.push(options.partitions.slice(i, i + most));
  const ends = await Promise.all(
    shares.map((partitions) =>
      pollPartitions(consumer, { ...options, partitions, signal }).then(
        (end) => {
          if (end === 'stopped') stop.abort();
          return end;
        },
        (error: unknown) => {
          stop.abort();
          throw error;
        },
      ),
    ),
  );
  return ends.every((end) => end === 'caught-up') ? 'caught-up' : 'stopped';
};

const pollPartitions = async (
  consumer: Pick<Consumer, 'fetchMany'>,
  options: PartitionsReadOptions,
): Promise<'caught-up' | 'stopped'> => {
  const { topic, follow, signal, retryBackoffMs = 200, maxAttempts = 4 } = options;
  let reading = options.partitions.map((p) => ({ ...p, failures: 0 }));
  let rotation = 0;
  while (reading.length > 0) {
    if (signal.aborted) return 'stopped';
    // The answer's byte budget goes to the first partitions with data: each poll starts one further
    // along (as Kafka's consumer rotates its fetch), so no partition waits behind busy ones for ever.
    const start = rotation++ % reading.length;
    const asked = [...reading.slice(start), ...reading.slice(0, start)];
    let outcomes: PartitionFetchOutcome[];
    try {
      outcomes = await consumer.fetchMany(
        asked.map(({ partition, offset }) => ({ topic, partition, offset })),
        { maxWaitMs: follow ? FOLLOW_WAIT_MS : 0, signal },
      );
    } catch (error) {
      if (error instanceof SluiceError && error.code === 'ABORTED') return 'stopped';
      throw error;
    }
    const caughtUp = new Set<number>();
    let failed = 0;
    // A partition left empty while others brought records may only have found the budget spent.
    const anyProgress = outcomes.some((o, i) => !('error' in o) && o.nextOffset > asked[i]!.offset);
    for (const [i, outcome] of outcomes.entries()) {
      const read = asked[i]!;
      if ('error' in outcome) {
        if (!outcome.error.retriable || ++read.failures >= maxAttempts) throw outcome.error;
        failed += 1;
        continue;
      }
      read.failures = 0;
      if (outcome.records.length > 0 && !(await options.deliver(outcome))) return 'stopped';
      // The end is the high watermark (the LSO under read_committed); an answer of markers or aborted
      // records only moves the offset, and one that moves nothing when no partition moved is all there is.
      const progressed = outcome.nextOffset > read.offset;
      read.offset = outcome.nextOffset;
      const end = outcome.lastStableOffset ?? outcome.highWatermark;
      if (!follow && (read.offset >= end || (!progressed && !anyProgress))) caughtUp.add(read.partition);
    }
    reading = reading.filter((r) => !caughtUp.has(r.partition));
    // Only failures came back: without a pause the next poll would answer the same at once.
    if (failed > 0 && failed === outcomes.length) await pause(retryBackoffMs, signal);
  }
  return signal.aborted ? 'stopped' : 'caught-up';
};

const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
