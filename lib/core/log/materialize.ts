/**
 * Moves committed tail entries out of the partition item into the batch index (one item per batch), the
 * time index (one mark per pass) and the idempotent producers' history (one item per producer epoch per
 * pass), so the hot item stays small. Index items are written first and are idempotent; the trim is one
 * update conditioned on `tailBase`, so concurrent materializers cannot trim twice and commits that
 * append meanwhile are untouched (they only ever add to the end of the list).
 */
import type { Condition, Item, MetadataStore, UpdateAction } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { keys } from '../keys.js';
import type { PartitionState } from './partition-state.js';
import { asPartitionState, tailOffsets } from './partition-state.js';
import { producerHistoryItems } from './producer-history.js';
import { timeMarkItem, timeMarks } from './time-index.js';

/** How long an Idempotency-Key keeps answering with the original offsets (API.md: at least 10 minutes). */
export const IDEMPOTENCY_WINDOW_MS = 15 * 60_000;
const MAX_ENTRIES_PER_PASS = 64;

export interface MaterializeOptions {
  now: number;
  /** Producers idle longer than this lose their state (Kafka's producer.id.expiration.ms). */
  producerExpirationMs: number;
}

/** Returns the number of entries moved (0 when there was nothing to do or another materializer won). */
export const materializeTail = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  options: MaterializeOptions,
): Promise<number> => {
  const key = keys.partitionState(topicId, partition);
  const item = await store.get(key, { consistent: true });
  if (!item) return 0;
  const state = asPartitionState(item);
  const count = Math.min(state.tail.length, MAX_ENTRIES_PER_PASS);
  const expired = Object.entries(state.pr)
    .filter(
      ([pid, p]) =>
        options.now - p.t > options.producerExpirationMs && !state.tail.some((e) => e.p === Number(pid)),
    )
    .map(([pid]) => pid);
  if (count === 0 && expired.length === 0) return 0;

  const moved = state.tail.slice(0, count);
  const offsets = tailOffsets(state);
  const passEnd = state.tailBase + moved.reduce((sum, e) => sum + e.n, 0);
  const indexed: Item[] = [];
  const remembered: Item[] = [];
  moved.forEach((entry, i) => {
    const baseOffset = offsets[i]!;
    indexed.push({ ...keys.batch(topicId, partition, baseOffset), ...entry });
    if (entry.k !== undefined) {
      remembered.push({
        ...keys.idempotencyKey(topicId, partition, entry.k),
        o: baseOffset,
        n: entry.n,
        t: entry.t,
        expiresAt: Math.ceil((options.now + IDEMPOTENCY_WINDOW_MS) / 1000),
      });
    }
  });
  const time = timeMarks(
    moved.map((entry, i) => ({ baseOffset: offsets[i]!, t: entry.t })),
    state.tsMax,
  );
  indexed.push(...time.marks.map((mark) => timeMarkItem(topicId, partition, mark)));
  remembered.push(
    ...producerHistoryItems(
      topicId,
      partition,
      moved.map((entry, i) => ({ baseOffset: offsets[i]!, entry })),
      passEnd,
      Math.ceil((options.now + options.producerExpirationMs) / 1000),
    ),
  );
  await Promise.all([
    // Only-if-absent: a materializer that stalled after reading the tail must not put back an index item
    // that compaction or retention has since rewritten or removed (another materializer wrote it first).
    ...indexed.map((item) =>
      store.put(item, { condition: { notExists: 'pk' } }).catch((error: unknown) => {
        if (!(error instanceof ConditionFailedError)) throw error;
      }),
    ),
    // Idempotency-Keys and producer history hold only facts about committed batches, so rewriting them
    // is harmless: unconditional, they go in as few requests as the store allows.
    remembered.length > 0 ? store.batchWrite({ puts: remembered }) : undefined,
  ]);

  const keyCount = moved.filter((e) => e.k !== undefined).length;
  const actions: UpdateAction[] = [];
  if (count > 0) {
    actions.push(
      { removeHead: 'tail', count },
      { set: 'tailBase', value: passEnd },
      { set: 'tsMax', value: time.runningMax },
    );
  }
  if (keyCount > 0) actions.push({ removeHead: 'ik', count: keyCount }, { set: 'ikGen', add: 1 });
  for (const pid of expired) actions.push({ remove: ['pr', pid] });
  try {
    // An expired producer that wrote meanwhile keeps its state: the trim then fails and runs again later.
    const unchanged: Condition[] = [
      { path: 'tailBase', op: '=', value: state.tailBase },
      { path: 'ikGen', op: '=', value: state.ikGen },
      ...expired.map((pid): Condition => ({ path: ['pr', pid, 't'], op: '=', value: state.pr[pid]!.t })),
    ];
    await store.update(key, actions, { condition: { and: unchanged } });
  } catch (error) {
    if (error instanceof ConditionFailedError) return 0;
    throw error;
  }
  return count;
};

export type { PartitionState };
