/**
 * The partition state item: the one item every commit updates. It holds the leader epoch that fences
 * writers, the next offset (assigned atomically by the commit's update expression), the log start, the
 * recent tail of committed batches (not yet in the batch index), and idempotent-producer state.
 * Attribute names are short on purpose: the item is billed per KiB on every commit.
 */
import type { AttributeValue, Item } from '../../ports/metadata-store.js';
import { keys } from '../keys.js';

/** A committed batch (one or more RecordBatches stored contiguously in one object). */
export interface TailEntry {
  /** Object key. */
  o: string;
  /** Byte range in the object. */
  b: number;
  l: number;
  /** Offsets the entry spans (sum of each batch's lastOffsetDelta + 1). */
  n: number;
  /** Records in the entry (may be fewer than n after compaction). */
  c: number;
  /** Max and first record timestamps. */
  t: number;
  f: number;
  /** Idempotent producer id, epoch, first and last sequence. */
  p?: number;
  e?: number;
  q?: number;
  z?: number;
  /** Idempotency-Key hash of a JSON produce. */
  k?: string;
}

export interface ProducerState {
  /** Epoch, last sequence, last append time. */
  e: number;
  s: number;
  t: number;
}

export interface PartitionState {
  topic: string;
  partition: number;
  leader: string;
  leaderEpoch: number;
  replicas: string[];
  isr: string[];
  nextOffset: number;
  logStartOffset: number;
  /** Offset of the first tail entry. */
  tailBase: number;
  tail: TailEntry[];
  /** Producer id → state. */
  pr: Record<string, ProducerState>;
  /** Idempotency-Key hashes of tail entries, for the commit condition. */
  ik: string[];
  /** Bumped whenever `ik` is trimmed: committers with a key condition on it. */
  ikGen: number;
  /** Running max timestamp of everything in the batch index (for the sparse time index). */
  tsMax: number;
}

export const initialPartitionState = (
  topicId: string,
  topic: string,
  partition: number,
  replicas: string[],
): Item => {
  const state: PartitionState = {
    topic,
    partition,
    leader: replicas[0] ?? 's0',
    leaderEpoch: 0,
    replicas,
    isr: [...replicas],
    nextOffset: 0,
    logStartOffset: 0,
    tailBase: 0,
    tail: [],
    pr: {},
    ik: [],
    ikGen: 0,
    tsMax: -1,
  };
  return {
    ...keys.partitionState(topicId, partition),
    ...(state as unknown as Record<string, AttributeValue>),
  };
};

export const asPartitionState = (item: Item): PartitionState => item as unknown as PartitionState;

/** Base offsets of the tail entries, from tailBase and each entry's span. */
export const tailOffsets = (state: Pick<PartitionState, 'tailBase' | 'tail'>): number[] => {
  const out: number[] = [];
  let next = state.tailBase;
  for (const entry of state.tail) {
    out.push(next);
    next += entry.n;
  }
  return out;
};
