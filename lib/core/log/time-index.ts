/**
 * The sparse time index (T# items), for ListOffsets by timestamp. A mark (ts, o) covers a run of at
 * most MARK_SPAN consecutive batches in which the partition's running max timestamp rose to ts, the
 * first rise at batch o; every batch before o is at most the ts of an earlier mark. So for a timestamp
 * X, the first mark at or above X says where to start: no batch before o reaches X, and the first batch
 * from o on that does is Kafka's answer. It lies within the run, unless compaction has since lowered
 * the run's timestamps: the scan then goes on, so a stale mark costs reads but never exactness.
 *
 * Materialization writes one mark per pass (Kafka's index.interval.bytes keeps its index sparse the
 * same way), not one per batch that raises the max: with rising timestamps that is every batch.
 */
import type { Item, MetadataStore } from '../../ports/metadata-store.js';
import { keys, pad } from '../keys.js';
import type { PartitionState } from './partition-state.js';
import { tailOffsets } from './partition-state.js';
import type { LocatedEntry } from './reader.js';
import { indexEntries } from './reader.js';

/** Batches one mark covers at most: as many as a materialization pass moves. */
export const MARK_SPAN = 64;

export interface TimeMark {
  ts: number;
  baseOffset: number;
}

/** The marks of batches in offset order, continuing a running max (-1 from the log start). */
export const timeMarks = (
  batches: readonly { baseOffset: number; t: number }[],
  runningMax: number,
): { marks: TimeMark[]; runningMax: number } => {
  const marks: TimeMark[] = [];
  let max = runningMax;
  for (let i = 0; i < batches.length; i += MARK_SPAN) {
    let mark: TimeMark | undefined;
    for (const { baseOffset, t } of batches.slice(i, i + MARK_SPAN)) {
      if (t <= max) continue;
      max = t;
      mark = { ts: t, baseOffset: mark?.baseOffset ?? baseOffset };
    }
    if (mark) marks.push(mark);
  }
  return { marks, runningMax: max };
};

export const timeMarkItem = (topicId: string, partition: number, mark: TimeMark): Item => ({
  ...keys.timeIndex(topicId, partition, mark.ts, mark.baseOffset),
  o: mark.baseOffset,
});

/** The first entry at or after the log start whose max timestamp reaches `timestamp`: index, then tail. */
export const firstEntryReaching = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  timestamp: number,
): Promise<LocatedEntry | undefined> => {
  const hit = await store.query({
    pk: keys.partitionPk(topicId, partition),
    sk: { between: [`${keys.timePrefix}${pad(Math.max(0, timestamp), 15)}`, `${keys.timePrefix}~`] },
    limit: 1,
    consistent: true,
  });
  const mark = hit.items[0];
  // Without a mark at or above the timestamp, no indexed batch reaches it.
  const from = Math.max(mark ? (mark['o'] as number) : state.tailBase, state.logStartOffset);
  for await (const located of indexEntries(store, topicId, partition, from, state.tailBase)) {
    if (located.entry.t >= timestamp) return located;
  }
  const offsets = tailOffsets(state);
  const i = state.tail.findIndex((entry, k) => offsets[k]! >= from && entry.t >= timestamp);
  return i < 0 ? undefined : { baseOffset: offsets[i]!, entry: state.tail[i]! };
};
