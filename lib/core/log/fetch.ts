/**
 * Fetch and ListOffsets. Reads the partition item with a consistent read (high watermark, log start,
 * tail), never returns anything at or above the high watermark (the smallest LEO in the ISR, not the
 * leader's LEO: lib/core/replication), and long-polls by re-reading it.
 */
import { SluiceError } from '../../errors.js';
import type { Record as KafkaRecord } from '../record-batch/index.js';
import { decodeRecordBatch, recordSize } from '../record-batch/index.js';
import type { Topic } from '../topics/model.js';
import type { LogContext } from './context.js';
import { readPartitionState } from './context.js';
import type { PartitionState } from './partition-state.js';
import type { StoredBatch } from './reader.js';
import { locateEntries, readBatches } from './reader.js';
import { firstEntryReaching } from './time-index.js';
import { highWatermarkOf } from '../replication/replica-state.js';

export const MAX_WAIT_MS = 20_000;
export const MAX_FETCH_BYTES = 4 * 1024 * 1024;

export interface FetchRequest {
  offset: number;
  maxBytes: number;
  maxWaitMs: number;
  /** Store id to read from (fetch-from-follower); default the leader. */
  replica?: string;
}

export interface PartitionBounds {
  highWatermark: number;
  logStartOffset: number;
}

export interface FetchedRecords extends PartitionBounds {
  records: KafkaRecord[];
  nextOffset: number;
}

export interface FetchedBatches extends PartitionBounds {
  batches: Uint8Array[];
  nextOffset: number;
}

export class Fetcher {
  constructor(private readonly ctx: LogContext) {}

  async fetchRecords(topicName: string, partition: number, request: FetchRequest): Promise<FetchedRecords> {
    const { topic, state } = await this.waitForData(topicName, partition, request);
    const bounds = boundsOf(state);
    if (request.offset >= bounds.highWatermark) return { records: [], nextOffset: request.offset, ...bounds };
    const batches = await this.read(topic, partition, state, request);
    const records: KafkaRecord[] = [];
    let bytes = 0;
    let nextOffset = request.offset;
    outer: for (const batch of batches) {
      for (const record of decodeRecordBatch(batch.bytes, { verifyCrc: false }).records) {
        if (record.offset < request.offset) continue;
        if (record.offset >= bounds.highWatermark) break outer;
        const size = recordSize(record);
        if (records.length > 0 && bytes + size > request.maxBytes) break outer;
        records.push(record);
        bytes += size;
        nextOffset = record.offset + 1;
      }
      // Offsets past the last record of a batch (compaction) are skipped, not refetched.
      nextOffset = Math.max(
        nextOffset,
        Math.min(batch.baseOffset + batch.header.lastOffsetDelta + 1, bounds.highWatermark),
      );
    }
    return { records, nextOffset, ...bounds };
  }

  /** Whole stored batches with their true base offsets (Kafka's fetch: the first batch even if over maxBytes). */
  async fetchBatches(topicName: string, partition: number, request: FetchRequest): Promise<FetchedBatches> {
    const { topic, state } = await this.waitForData(topicName, partition, request);
    const bounds = boundsOf(state);
    if (request.offset >= bounds.highWatermark) return { batches: [], nextOffset: request.offset, ...bounds };
    const stored = await this.read(topic, partition, state, request);
    const batches: Uint8Array[] = [];
    let bytes = 0;
    let nextOffset = request.offset;
    for (const batch of stored) {
      if (batch.baseOffset + batch.header.lastOffsetDelta < request.offset) continue;
      if (batch.baseOffset >= bounds.highWatermark) break;
      if (batches.length > 0 && bytes + batch.bytes.length > request.maxBytes) break;
      batches.push(batch.bytes);
      bytes += batch.bytes.length;
      nextOffset = batch.baseOffset + batch.header.lastOffsetDelta + 1;
    }
    return { batches, nextOffset, ...bounds };
  }

  /** Kafka ListOffsets: earliest, latest, or the first offset whose timestamp is ≥ the given one. */
  async listOffsets(
    topicName: string,
    partition: number,
    at: 'earliest' | 'latest' | number,
  ): Promise<{ offset: number | null; timestamp: number | null }> {
    const topic = await this.ctx.catalog.get(topicName);
    const state = await readPartitionState(this.ctx.store, topic, partition);
    if (at === 'earliest') return { offset: state.logStartOffset, timestamp: -1 };
    if (at === 'latest') return { offset: highWatermarkOf(state), timestamp: -1 };
    const entry = await firstEntryReaching(this.ctx.store, topic.topicId, partition, state, at);
    if (!entry) return { offset: null, timestamp: null };
    const batches = await readBatches(this.leaderStore(state), [entry]);
    for (const batch of batches) {
      for (const record of decodeRecordBatch(batch.bytes, { verifyCrc: false }).records) {
        if (record.offset >= highWatermarkOf(state)) break;
        if (record.offset >= state.logStartOffset && record.timestamp >= at) {
          return { offset: record.offset, timestamp: record.timestamp };
        }
      }
    }
    return { offset: null, timestamp: null };
  }

  private async waitForData(
    topicName: string,
    partition: number,
    request: FetchRequest,
  ): Promise<{ topic: Topic; state: PartitionState }> {
    const topic = await this.ctx.catalog.get(topicName);
    const deadline = this.ctx.clock.now() + Math.min(request.maxWaitMs, MAX_WAIT_MS);
    for (;;) {
      const state = await readPartitionState(this.ctx.store, topic, partition);
      const hw = highWatermarkOf(state);
      if (request.offset < state.logStartOffset || request.offset > hw) {
        throw outOfRange(topic, partition, request.offset, state);
      }
      const remaining = deadline - this.ctx.clock.now();
      if (request.offset < hw || remaining <= 0) return { topic, state };
      await this.ctx.clock.sleep(Math.min(this.ctx.pollIntervalMs, remaining));
    }
  }

  private async read(
    topic: Topic,
    partition: number,
    state: PartitionState,
    request: FetchRequest,
  ): Promise<StoredBatch[]> {
    const entries = await locateEntries(
      this.ctx.store,
      topic.topicId,
      partition,
      state,
      request.offset,
      request.maxBytes,
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
    return readBatches(this.storeFor(state, request.replica), entries);
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

const boundsOf = (state: PartitionState): PartitionBounds => ({
  highWatermark: highWatermarkOf(state),
  logStartOffset: state.logStartOffset,
});
