/**
 * Fetch and ListOffsets. Reads the partition item with a consistent read (high watermark, log start,
 * tail), never returns anything at or above the high watermark (the smallest LEO in the ISR, not the
 * leader's LEO: lib/core/replication), and long-polls by re-reading it.
 */
import { SluiceError, isSluiceError } from '../../../protocol/errors.js';
import type { Record as KafkaRecord } from '../../../protocol/record-batch/index.js';
import { decodeRecordBatch, recordSize } from '../../../protocol/record-batch/index.js';
import type { Topic } from '../topics/model.js';
import type { LogContext } from './context.js';
import { readPartitionState, withCurrentTopic } from './context.js';
import type { PartitionState } from './partition-state.js';
import type { StoredBatch } from './reader.js';
import { locateEntries, readBatches, storedDataError } from './reader.js';
import { SegmentItemCache } from './segments/segment-cache.js';
import type { SegmentLookup } from './segments/segment-index.js';
import { segmentEndOf, tieredStores } from './segments/segment-index.js';
import type { LocatedEntry } from './batch-index.js';
import { indexEntries } from './batch-index.js';
import { firstEntryReaching } from './time-index.js';
import { highWatermarkOf } from '../replication/replica-state.js';
import type { AbortedTransaction, IsolationLevel } from '../transactions/lso.js';
import { AbortedFilter, abortedTransactions, lastStableOffset } from '../transactions/lso.js';
import { MAX_WAIT_MS } from '../../../protocol/fetch-limits.js';

export { MAX_FETCH_BYTES, MAX_FETCH_PARTITIONS, MAX_WAIT_MS } from '../../../protocol/fetch-limits.js';

export interface FetchRequest {
  offset: number;
  maxBytes: number;
  maxWaitMs: number;
  /** Store id to read from (fetch-from-follower); default the leader. */
  replica?: string;
  /** Kafka's isolation.level: read_committed stops at the last stable offset (default read_uncommitted). */
  isolationLevel?: IsolationLevel;
}

export interface PartitionBounds {
  highWatermark: number;
  logStartOffset: number;
  /** Under read_committed: where the read stopped (Kafka's LSO). */
  lastStableOffset?: number;
}

export interface FetchedRecords extends PartitionBounds {
  records: KafkaRecord[];
  nextOffset: number;
}

export interface FetchedBatches extends PartitionBounds {
  batches: Uint8Array[];
  nextOffset: number;
  /** read_committed: the aborted transactions in the batches' range, for the client to drop (Kafka's rule). */
  abortedTransactions?: AbortedTransaction[];
}

/** One partition of a multi-partition fetch: Kafka's FetchPartition (offset, partition max bytes). */
export interface PartitionFetch {
  topic: string;
  partition: number;
  offset: number;
  maxBytes: number;
}

/** Kafka's Fetch: partitions, the answer's byte budget (fetch.max.bytes), the wait (fetch.max.wait.ms). */
export interface MultiFetchRequest {
  partitions: readonly PartitionFetch[];
  maxBytes: number;
  maxWaitMs: number;
  /** Kafka's isolation.level, for every partition of the fetch (default read_uncommitted). */
  isolationLevel?: IsolationLevel;
}

/** A partition's answer: its batches and bounds, or its error. */
export type PartitionFetchResult = { topic: string; partition: number } & (
  FetchedBatches | { error: SluiceError }
);

type PartitionLookup = { topic: Topic; state: PartitionState } | { error: SluiceError };

/** A stored batch's records; one that does not decode is the store's fault, never the reader's (503). */
const decodeStored = (batch: StoredBatch): KafkaRecord[] => {
  try {
    return decodeRecordBatch(batch.bytes, { verifyCrc: false }).records;
  } catch (error) {
    throw storedDataError(`stored batch at offset ${batch.baseOffset} does not decode`, error);
  }
};

export class Fetcher {
  /** Segment index items this process read lately (see segment-cache.ts). */
  private readonly segmentItems = new SegmentItemCache();

  constructor(private readonly ctx: LogContext) {}

  async fetchRecords(topicName: string, partition: number, request: FetchRequest): Promise<FetchedRecords> {
    const { topic, state } = await this.waitForData(topicName, partition, request);
    const bounds = boundsOf(state, request);
    const limit = readLimit(state, request);
    const filter =
      request.isolationLevel === 'read_committed'
        ? new AbortedFilter(
            await abortedTransactions(this.ctx.store, topic.topicId, partition, state, request.offset, limit),
          )
        : undefined;
    const records: KafkaRecord[] = [];
    let bytes = 0;
    let nextOffset = request.offset;
    outer: for await (const batch of this.batchesFrom(topic, partition, state, request)) {
      if (batch.baseOffset >= limit) break;
      // Markers and aborted records are never records to a consumer: move past them.
      // The filter sees every batch: a marker ends an aborted run.
      const kept = filter ? filter.keeps(batch.header, batch.baseOffset) : true;
      if (batch.header.isControl || !kept) {
        nextOffset = Math.max(
          nextOffset,
          Math.min(batch.baseOffset + batch.header.lastOffsetDelta + 1, limit),
        );
        continue;
      }
      let decoded: KafkaRecord[];
      try {
        decoded = decodeStored(batch);
      } catch (error) {
        // A stored batch that does not decode ends the answer; the records before it stay readable.
        if (records.length > 0) break;
        throw error;
      }
      for (const record of decoded) {
        if (record.offset < request.offset) continue;
        if (record.offset >= limit) break outer;
        const size = recordSize(record);
        if (records.length > 0 && bytes + size > request.maxBytes) break outer;
        records.push(record);
        bytes += size;
        nextOffset = record.offset + 1;
      }
      // Offsets past the last record of a batch (compaction) are skipped, not refetched.
      nextOffset = Math.max(nextOffset, Math.min(batch.baseOffset + batch.header.lastOffsetDelta + 1, limit));
    }
    this.countOut(topic, bytes);
    return { records, nextOffset, ...bounds };
  }

  /** Whole stored batches with their true base offsets (Kafka's fetch: the first batch even if over maxBytes). */
  async fetchBatches(topicName: string, partition: number, request: FetchRequest): Promise<FetchedBatches> {
    const { topic, state } = await this.waitForData(topicName, partition, request);
    const bounds = boundsOf(state, request);
    const limit = readLimit(state, request);
    const batches: Uint8Array[] = [];
    let bytes = 0;
    let nextOffset = request.offset;
    for await (const batch of this.batchesFrom(topic, partition, state, request)) {
      if (batch.baseOffset >= limit) break;
      if (batches.length > 0 && bytes + batch.bytes.length > request.maxBytes) break;
      batches.push(batch.bytes);
      bytes += batch.bytes.length;
      nextOffset = batch.baseOffset + batch.header.lastOffsetDelta + 1;
    }
    this.countOut(topic, bytes);
    if (request.isolationLevel !== 'read_committed') return { batches, nextOffset, ...bounds };
    const aborted = await abortedTransactions(
      this.ctx.store,
      topic.topicId,
      partition,
      state,
      request.offset,
      nextOffset,
    );
    return { batches, nextOffset, ...bounds, abortedTransactions: aborted };
  }

  /**
   * Kafka's Fetch over many partitions: one long poll that answers as soon as any partition has
   * committed data past its offset or an error, or when `maxWaitMs` ends. Whole stored batches per
   * partition (as fetchBatches), at most `maxBytes` per partition and `maxBytes` over the answer,
   * except that the first batch of the first partition with data is returned even when larger (so a
   * consumer always progresses). A partition's error is its own answer; the others still answer.
   */
  async fetchMany(request: MultiFetchRequest): Promise<PartitionFetchResult[]> {
    const wanted = request.partitions;
    const deadline = this.ctx.clock.now() + Math.min(request.maxWaitMs, MAX_WAIT_MS);
    const isolation = { isolationLevel: request.isolationLevel ?? 'read_uncommitted' } as const;
    let states: PartitionLookup[];
    for (;;) {
      states = await Promise.all(wanted.map((p) => this.lookup(p)));
      const ready = states.some((s, i) => 'error' in s || wanted[i]!.offset < readLimit(s.state, isolation));
      const remaining = deadline - this.ctx.clock.now();
      if (ready || remaining <= 0) break;
      await this.ctx.clock.sleep(Math.min(this.ctx.pollIntervalMs, remaining));
    }
    let budget = request.maxBytes;
    let first = true;
    const results: PartitionFetchResult[] = [];
    for (const [i, p] of wanted.entries()) {
      const found = states[i]!;
      const id = { topic: p.topic, partition: p.partition };
      if ('error' in found) {
        results.push({ ...id, error: found.error });
        continue;
      }
      const { topic, state } = found;
      const bounds = boundsOf(state, isolation);
      const stable = readLimit(state, isolation);
      const batches: Uint8Array[] = [];
      let bytes = 0;
      let nextOffset = p.offset;
      const limit = Math.min(p.maxBytes, budget);
      let aborted: AbortedTransaction[] | undefined;
      try {
        if (p.offset < stable && (limit > 0 || first)) {
          const read = { offset: p.offset, maxBytes: Math.max(limit, 1), maxWaitMs: 0 };
          for await (const batch of this.batchesFrom(topic, p.partition, state, read)) {
            if (batch.baseOffset >= stable) break;
            if (!first && bytes + batch.bytes.length > limit) break;
            first = false;
            batches.push(batch.bytes);
            bytes += batch.bytes.length;
            nextOffset = batch.baseOffset + batch.header.lastOffsetDelta + 1;
          }
        }
        if (isolation.isolationLevel === 'read_committed')
          aborted = await abortedTransactions(
            this.ctx.store,
            topic.topicId,
            p.partition,
            state,
            p.offset,
            nextOffset,
          );
      } catch (error) {
        if (!isSluiceError(error)) throw error;
        results.push({ ...id, error });
        continue;
      }
      budget = Math.max(0, budget - bytes);
      this.countOut(topic, bytes);
      results.push({
        ...id,
        batches,
        nextOffset,
        ...bounds,
        ...(aborted ? { abortedTransactions: aborted } : {}),
      });
    }
    return results;
  }

  /** Kafka's BytesOutPerSec: the bytes a fetch returns (an empty answer counts nothing). */
  private countOut(topic: Topic, bytes: number): void {
    if (bytes > 0) this.ctx.telemetry.metric('BytesOutPerSec', bytes, { topic: topic.name });
  }

  /** One partition's topic and state for fetchMany, or the error that is its answer. */
  private async lookup(p: PartitionFetch): Promise<PartitionLookup> {
    try {
      return await withCurrentTopic(this.ctx, p.topic, async (topic) => {
        const state = await readPartitionState(this.ctx.store, topic, p.partition);
        const hw = highWatermarkOf(state);
        if (p.offset < state.logStartOffset || p.offset > hw)
          throw outOfRange(topic, p.partition, p.offset, state);
        return { topic, state };
      });
    } catch (error) {
      if (isSluiceError(error)) return { error };
      throw error;
    }
  }

  /** Kafka ListOffsets: earliest, latest, or the first offset whose timestamp is ≥ the given one. */
  async listOffsets(
    topicName: string,
    partition: number,
    at: 'earliest' | 'latest' | number,
    isolationLevel: IsolationLevel = 'read_uncommitted',
  ): Promise<{ offset: number | null; timestamp: number | null }> {
    const { topic, state } = await withCurrentTopic(this.ctx, topicName, async (topic) => ({
      topic,
      state: await readPartitionState(this.ctx.store, topic, partition),
    }));
    if (at === 'earliest') return { offset: state.logStartOffset, timestamp: -1 };
    if (at === 'latest')
      return {
        offset: isolationLevel === 'read_committed' ? lastStableOffset(state) : highWatermarkOf(state),
        timestamp: -1,
      };
    const entry = await firstEntryReaching(this.ctx.store, topic.topicId, partition, state, at);
    if (!entry) return { offset: null, timestamp: null };
    const batches = await this.readEntry(topic, partition, state, entry);
    for (const batch of batches) {
      for (const record of decodeStored(batch)) {
        if (record.offset >= highWatermarkOf(state)) break;
        if (record.offset >= state.logStartOffset && record.timestamp >= at) {
          return { offset: record.offset, timestamp: record.timestamp };
        }
      }
    }
    return { offset: null, timestamp: null };
  }

  /** One entry's batches, from the replica stores' copy when its segment cannot be read (see read). */
  private async readEntry(
    topic: Topic,
    partition: number,
    state: PartitionState,
    entry: LocatedEntry,
  ): Promise<StoredBatch[]> {
    const stores = tieredStores(this.leaderStore(state), this.ctx.segmentStore);
    try {
      return await readBatches(stores, [entry]);
    } catch (error) {
      // readBatches fails only with KAFKA_STORAGE_ERROR (storedDataError).
      const end = entry.baseOffset + entry.entry.n;
      const local: LocatedEntry[] = [];
      for await (const x of indexEntries(this.ctx.store, topic.topicId, partition, entry.baseOffset, end))
        local.push(x);
      const tiles = local.every(
        (x, i) =>
          x.baseOffset === (i === 0 ? entry.baseOffset : local[i - 1]!.baseOffset + local[i - 1]!.entry.n),
      );
      const last = local.at(-1);
      if (!tiles || !last || last.baseOffset + last.entry.n !== end) throw error;
      return readBatches(stores, local);
    }
  }

  private async waitForData(
    topicName: string,
    partition: number,
    request: FetchRequest,
  ): Promise<{ topic: Topic; state: PartitionState }> {
    return withCurrentTopic(this.ctx, topicName, (topic) => this.poll(topic, partition, request));
  }

  private async poll(
    topic: Topic,
    partition: number,
    request: FetchRequest,
  ): Promise<{ topic: Topic; state: PartitionState }> {
    const deadline = this.ctx.clock.now() + Math.min(request.maxWaitMs, MAX_WAIT_MS);
    for (;;) {
      const state = await readPartitionState(this.ctx.store, topic, partition);
      // Kafka answers a fetch from a broker that is not a replica NOT_LEADER_OR_FOLLOWER whatever the
      // offset: checked before the offset, so an empty answer at the HW never hides it.
      if (request.replica !== undefined) this.storeFor(state, request.replica);
      const hw = highWatermarkOf(state);
      if (request.offset < state.logStartOffset || request.offset > hw) {
        throw outOfRange(topic, partition, request.offset, state);
      }
      const remaining = deadline - this.ctx.clock.now();
      if (request.offset < readLimit(state, request) || remaining <= 0) return { topic, state };
      await this.ctx.clock.sleep(Math.min(this.ctx.pollIntervalMs, remaining));
    }
  }

  /**
   * The stored batches from the one holding `request.offset` up to the high watermark, read as the
   * caller consumes them (it stops once its maxBytes is reached). So a fetch returns the same batches
   * and records however the log is laid out: a read of the index entries covering maxBytes usually
   * suffices, and a segment chunk that starts before the offset is not counted against it. A later
   * read that fails (retention passed the offset meanwhile) ends the fetch with what it has.
   */
  private async *batchesFrom(
    topic: Topic,
    partition: number,
    state: PartitionState,
    request: FetchRequest,
  ): AsyncGenerator<StoredBatch> {
    const hw = highWatermarkOf(state);
    let next = request.offset;
    for (let round = 0; next < hw; round++) {
      let batches: StoredBatch[];
      try {
        batches = await this.read(topic, partition, state, { ...request, offset: next });
      } catch (error) {
        if (round === 0) throw error;
        return;
      }
      const before = next;
      for (const batch of batches) {
        const end = batch.baseOffset + batch.header.lastOffsetDelta + 1;
        if (end <= next) continue;
        yield batch;
        next = end;
      }
      if (next <= before) return;
    }
  }

  private async read(
    topic: Topic,
    partition: number,
    state: PartitionState,
    request: FetchRequest,
  ): Promise<StoredBatch[]> {
    const key = `${topic.topicId}#${partition}`;
    const generation = (state as PartitionState & { cleanedThrough?: number }).cleanedThrough ?? -1;
    const now = this.ctx.clock.now();
    let cached = false;
    const lookup: SegmentLookup = {
      holding: (offset) => {
        const item = this.segmentItems.holding(key, offset, generation, now);
        cached ||= item !== undefined;
        return item;
      },
      remember: (item) => this.segmentItems.remember(key, item, generation, now),
    };
    let failure: unknown;
    try {
      return await this.readFrom(topic, partition, state, request, lookup);
    } catch (error) {
      failure = error;
    }
    // A cached segment item may name an object since rewritten and collected: read the index afresh.
    if (cached) {
      this.segmentItems.forget(key);
      try {
        return await this.readFrom(topic, partition, state, request, undefined);
      } catch (error) {
        failure = error;
      }
    }
    // The segment store failed to answer: the replica stores' copy serves while local retention keeps
    // it (KIP-405's local log); once it is retired, the segment store's error stands.
    const segmentEnd = segmentEndOf(state);
    if (request.offset < segmentEnd && isSluiceError(failure) && failure.code === 'KAFKA_STORAGE_ERROR') {
      try {
        return await this.readFrom(
          topic,
          partition,
          { ...state, segEnd: 0 } as PartitionState,
          request,
          undefined,
        );
      } catch {
        // The local copy failed too: the segment store's error stands.
      }
    }
    throw failure;
  }

  private async readFrom(
    topic: Topic,
    partition: number,
    state: PartitionState,
    request: FetchRequest,
    cache: SegmentLookup | undefined,
  ): Promise<StoredBatch[]> {
    const entries = await locateEntries(
      this.ctx.store,
      topic.topicId,
      partition,
      state,
      request.offset,
      request.maxBytes,
      cache,
    );
    // Retention may have dropped the start of the range since the state was read: answer as Kafka does
    // when the log start passed the offset, rather than skip to what is left.
    if ((entries[0]?.baseOffset ?? Number.POSITIVE_INFINITY) > request.offset) {
      const now = await readPartitionState(this.ctx.store, topic, partition);
      if (request.offset < now.logStartOffset) throw outOfRange(topic, partition, request.offset, now);
      throw new SluiceError(
        'KAFKA_STORAGE_ERROR',
        `the batch index of ${topic.name}-${partition} has no entry for offset ${request.offset}`,
      );
    }
    // Entries at or past the HW may not be on every ISR store yet (acks=1), nor kept (an election may
    // truncate them): never read them.
    const hw = highWatermarkOf(state);
    const committed = entries.filter((e) => e.baseOffset < hw);
    return readBatches(
      tieredStores(this.storeFor(state, request.replica), this.ctx.segmentStore),
      committed,
      { partial: true },
    );
  }

  private leaderStore(state: PartitionState) {
    return this.ctx.objectStore(state.leader);
  }

  private storeFor(state: PartitionState, replica: string | undefined) {
    if (replica === undefined) return this.leaderStore(state);
    if (!state.isr.includes(replica)) {
      throw new SluiceError(
        'NOT_LEADER_OR_FOLLOWER',
        `store ${replica} is not an in-sync replica of this partition; in-sync: ${state.isr.join(', ')}`,
      );
    }
    return this.ctx.objectStore(replica);
  }
}

const outOfRange = (topic: Topic, partition: number, offset: number, state: PartitionState): SluiceError =>
  new SluiceError(
    'OFFSET_OUT_OF_RANGE',
    `offset ${offset} is outside ${topic.name}-${partition}'s log [${state.logStartOffset}, ${highWatermarkOf(state)}]`,
    { details: { ...boundsOf(state) } },
  );

const boundsOf = (
  state: PartitionState,
  request?: Pick<FetchRequest, 'isolationLevel'>,
): PartitionBounds => ({
  highWatermark: highWatermarkOf(state),
  logStartOffset: state.logStartOffset,
  ...(request?.isolationLevel === 'read_committed' ? { lastStableOffset: lastStableOffset(state) } : {}),
});

/** Where a fetch stops: the high watermark, or the last stable offset under read_committed. */
const readLimit = (state: PartitionState, request: Pick<FetchRequest, 'isolationLevel'>): number =>
  request.isolationLevel === 'read_committed' ? lastStableOffset(state) : highWatermarkOf(state);
