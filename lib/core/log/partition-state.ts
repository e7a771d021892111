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

/**
 * The item as read: tail entries are stored as compact strings (see `encodeTailEntry`) and decoded here,
 * the one place every reader of the item goes through.
 */
export const asPartitionState = (item: Item): PartitionState => {
  const tail = item['tail'];
  if (!Array.isArray(tail) || tail.every((e) => typeof e !== 'string'))
    return item as unknown as PartitionState;
  return {
    ...(item as unknown as PartitionState),
    tail: tail.map((e) => (typeof e === 'string' ? decodeTailEntry(e) : (e as unknown as TailEntry))),
  };
};

/**
 * A tail entry as the partition item stores it: one string, numbers in a fixed order separated by `|`
 * (absent optional fields empty), the object key last so it may hold any character. Every commit
 * rewrites the whole item, and DynamoDB parses, evaluates and bills a list of strings far more cheaply
 * than a list of maps that repeat eleven attribute names per entry (measured on DynamoDB Local: 3.6 ms
 * against 9.8 ms of its CPU per commit with 32 entries in the tail).
 */
export const encodeTailEntry = (e: TailEntry): string =>
  [e.b, e.l, e.n, e.c, e.t, e.f, e.p ?? '', e.e ?? '', e.q ?? '', e.z ?? '', e.k ?? '', e.o].join('|');

const TAIL_FIELDS = 12;

export const decodeTailEntry = (s: string): TailEntry => {
  const parts = s.split('|');
  if (parts.length < TAIL_FIELDS) throw new Error(`malformed tail entry: ${s.slice(0, 80)}`);
  const num = (i: number): number => Number(parts[i]);
  const entry: TailEntry = {
    o: parts.slice(TAIL_FIELDS - 1).join('|'),
    b: num(0),
    l: num(1),
    n: num(2),
    c: num(3),
    t: num(4),
    f: num(5),
  };
  if (parts[6] !== '') Object.assign(entry, { p: num(6), e: num(7), q: num(8), z: num(9) });
  if (parts[10] !== '') entry.k = parts[10]!;
  return entry;
};

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
