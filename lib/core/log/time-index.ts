/**
 * The sparse time index (T# items), for ListOffsets by timestamp. A mark covers a run of at most
 * MARK_SPAN consecutive batches in which the partition's running max timestamp rose from p to ts, first
 * passing p at batch o: no batch before o is above p. So for a timestamp X, a mark with ts >= X and
 * p < X says where to start: no batch before o reaches X, and the first batch from o on that does is
 * Kafka's answer, usually within the run (further on if compaction has since lowered its timestamps).
 *
 * Timestamps only go down (compaction) and batches only go away (retention), so a mark, once true,
 * stays true however late a stalled materializer writes it; but a late mark may be of no use for X
 * (p >= X) while sorting first. The lookup takes the first of the marks at or above X that is of use,
 * and when none is although the partition's running max says an indexed batch may reach X (the marks
 * in between were dropped by a compaction rebuild that raced the pass), it scans from the log start:
 * slower, still exact.
 *
 * Materialization writes one mark per pass (Kafka's index.interval.bytes keeps its index sparse the
 * same way), not one per batch that raises the max: with rising timestamps that is every batch.
 */
import type { Item, MetadataStore } from '../../ports/metadata-store.js';
import { keys, pad } from '../keys.js';
import type { PartitionState } from './partition-state.js';
import { tailOffsets } from './partition-state.js';
import type { LocatedEntry } from './batch-index.js';
import { logEntries, segmentEndOf } from './segments/segment-index.js';

/** Batches one mark covers at most: as many as a materialization pass moves. */
export const MARK_SPAN = 64;

export interface TimeMark {
  maxTimestamp: number;
  baseOffset: number;
  /** The running max before the run: no batch before `baseOffset` is above it. */
  prev: number;
}

/** Marks looked at for one lookup before falling back to a scan from the log start. */
const CANDIDATES = 8;

/** The marks of batches in offset order, continuing a running max (-1 from the log start). */
export const timeMarks = (
  batches: readonly { baseOffset: number; maxTimestamp: number }[],
  runningMax: number,
): { marks: TimeMark[]; runningMax: number } => {
  const marks: TimeMark[] = [];
  let max = runningMax;
  for (let i = 0; i < batches.length; i += MARK_SPAN) {
    let mark: TimeMark | undefined;
    for (const { baseOffset, maxTimestamp } of batches.slice(i, i + MARK_SPAN)) {
      if (maxTimestamp <= max) continue;
      mark = mark ? { ...mark, maxTimestamp } : { maxTimestamp, baseOffset, prev: max };
      max = maxTimestamp;
    }
    if (mark) marks.push(mark);
  }
  return { marks, runningMax: max };
};

export const timeMarkItem = (topicId: string, partition: number, mark: TimeMark): Item => ({
  ...keys.timeIndex(topicId, partition, mark.maxTimestamp, mark.baseOffset),
  o: mark.baseOffset,
  p: mark.prev,
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
    limit: CANDIDATES,
    consistent: true,
  });
  const mark = hit.items.find((m) => (m['p'] as number) < timestamp);
  // No indexed batch is above the partition's running max: past it, only the tail may reach the timestamp.
  const start = mark ? (mark['o'] as number) : timestamp > state.maxTimestampSoFar ? state.tailBase : 0;
  const from = Math.max(start, state.logStartOffset);
  for await (const located of logEntries(
    store,
    topicId,
    partition,
    segmentEndOf(state),
    from,
    state.tailBase,
  )) {
    if (located.entry.maxTimestamp >= timestamp) return located;
  }
  const offsets = tailOffsets(state);
  const i = state.tail.findIndex((entry, k) => offsets[k]! >= from && entry.maxTimestamp >= timestamp);
  return i < 0 ? undefined : { baseOffset: offsets[i]!, entry: state.tail[i]! };
};
