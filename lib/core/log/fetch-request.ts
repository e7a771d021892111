/**
 * What a fetch asks for and answers (Kafka's Fetch request and FetchResponse partition data), the
 * limits on it, and the partition bounds every answer carries: the high watermark, the log start and,
 * under read_committed, the last stable offset where the read stops.
 */
import { SluiceError } from '../../../protocol/errors.js';
import type { Record as KafkaRecord } from '../../../protocol/record-batch/index.js';
import type { Topic } from '../topics/model.js';
import type { PartitionState } from './partition-state.js';
import { highWatermarkOf } from '../replication/replica-state.js';
import type { AbortedTransaction, IsolationLevel } from '../transactions/lso.js';
import { lastStableOffset } from '../transactions/lso.js';

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
  /** With `wait`: where an earlier answer registered the partition on the connection (waiters.ts). */
  waitingAt?: number;
}

/** The wait socket connection a fetch registers its caught-up partitions on (waiters.ts). */
export interface WaitConnection {
  connectionId: string;
  token: string;
}

/** Kafka's Fetch: partitions, the answer's byte budget (fetch.max.bytes), the wait (fetch.max.wait.ms). */
export interface MultiFetchRequest {
  partitions: readonly PartitionFetch[];
  maxBytes: number;
  maxWaitMs: number;
  /** Kafka's isolation.level, for every partition of the fetch (default read_uncommitted). */
  isolationLevel?: IsolationLevel;
  /** Register the partitions this fetch leaves caught up on this connection (waiters.ts). */
  wait?: WaitConnection;
}

/** A partition's answer: its batches and bounds, or its error. */
export type PartitionFetchResult = { topic: string; partition: number } & (
  FetchedBatches | { error: SluiceError }
);

export const outOfRange = (
  topic: Topic,
  partition: number,
  offset: number,
  state: PartitionState,
): SluiceError =>
  new SluiceError(
    'OFFSET_OUT_OF_RANGE',
    `offset ${offset} is outside ${topic.name}-${partition}'s log [${state.logStartOffset}, ${highWatermarkOf(state)}]`,
    { details: { ...boundsOf(state) } },
  );

export const boundsOf = (
  state: PartitionState,
  request?: Pick<FetchRequest, 'isolationLevel'>,
): PartitionBounds => ({
  highWatermark: highWatermarkOf(state),
  logStartOffset: state.logStartOffset,
  ...(request?.isolationLevel === 'read_committed' ? { lastStableOffset: lastStableOffset(state) } : {}),
});

/** Where a fetch stops: the high watermark, or the last stable offset under read_committed. */
export const readLimit = (state: PartitionState, request: Pick<FetchRequest, 'isolationLevel'>): number =>
  request.isolationLevel === 'read_committed' ? lastStableOffset(state) : highWatermarkOf(state);
