/**
 * A partition's log as Kafka's tools show it (kafka-log-dirs --describe, kafka-dump-log over a log
 * directory): its segments with their base offsets, sizes and timestamps, and the partition's size.
 * The rolled segments come from the segment index (`G#` items, the remote tier); the active segment
 * is everything from the segment index's end up to the log end: batch index pages and the partition
 * item's tail. Batch pages below `segEnd` are the local copies of rolled segments and are not counted
 * again. Entries wholly below the log start offset are gone for readers and are left out (a rolled
 * segment that still holds live offsets counts whole, as Kafka's does until retention deletes it).
 */
import type { MetadataStore } from '../../../ports/metadata-store.js';
import { queryPages } from '../../../ports/query-all.js';
import { keys, offsetFromBatchSk, pad } from '../../keys.js';
import type { LocatedEntry } from '../batch-index.js';
import { indexEntries, pageEntries } from '../batch-index.js';
import type { PartitionState } from '../partition-state.js';
import { tailOffsets } from '../partition-state.js';
import { segmentEndOf } from './segment-index.js';

export interface LogSegmentInfo {
  baseOffset: number;
  /** The offset after the segment's last batch. */
  endOffset: number;
  /** Bytes of the RecordBatches the segment holds (the footer index of a segment object not counted). */
  sizeBytes: number;
  batches: number;
  records: number;
  /** Smallest first-record timestamp and largest record timestamp of its batches; -1 when empty. */
  firstTimestamp: number;
  maxTimestamp: number;
  /** `remote`: a rolled segment object in the segment store; `local`: the active segment, in the replica stores. */
  tier: 'remote' | 'local';
  /** When the maintenance run rolled it (remote segments only). */
  rolledAt?: number;
}

export interface PartitionSegments {
  partition: number;
  logStartOffset: number;
  logEndOffset: number;
  /** The sum of the segments' sizes: Kafka's partition size (DescribeLogDirs). */
  sizeBytes: number;
  segments: LogSegmentInfo[];
}

/** Folds index entries into one segment's figures. */
const summarize = (
  entries: readonly LocatedEntry[],
  base: Pick<LogSegmentInfo, 'baseOffset' | 'tier' | 'rolledAt'>,
  endOffset: number,
): LogSegmentInfo => {
  let sizeBytes = 0;
  let records = 0;
  let firstTimestamp = -1;
  let maxTimestamp = -1;
  for (const { entry } of entries) {
    sizeBytes += entry.l;
    records += entry.c;
    if (entry.f >= 0 && (firstTimestamp < 0 || entry.f < firstTimestamp)) firstTimestamp = entry.f;
    if (entry.t > maxTimestamp) maxTimestamp = entry.t;
  }
  return {
    baseOffset: base.baseOffset,
    endOffset,
    sizeBytes,
    batches: entries.length,
    records,
    firstTimestamp,
    maxTimestamp,
    tier: base.tier,
    ...(base.rolledAt !== undefined ? { rolledAt: base.rolledAt } : {}),
  };
};

export const describeSegments = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
): Promise<PartitionSegments> => {
  const logStart = state.logStartOffset;
  const segEnd = segmentEndOf(state);
  const live = (e: LocatedEntry) => e.baseOffset + e.entry.n > logStart;
  const segments: LogSegmentInfo[] = [];
  if (segEnd > logStart) {
    const items = queryPages(store, {
      pk: keys.partitionPk(topicId, partition),
      sk: { between: [keys.segmentPrefix, `${keys.segmentPrefix}${pad(segEnd - 1)}`] },
      consistent: true,
    });
    for await (const item of items) {
      // A segment goes whole (retention deletes segments), so one that reaches past the log start counts whole.
      const entries = pageEntries(item);
      const end = typeof item['end'] === 'number' ? item['end'] : undefined;
      if (!entries.some(live) || end === undefined) continue;
      segments.push(
        summarize(
          entries,
          {
            baseOffset: offsetFromBatchSk(item.sk),
            tier: 'remote',
            ...(typeof item['rolledAt'] === 'number' ? { rolledAt: item['rolledAt'] } : {}),
          },
          end,
        ),
      );
    }
  }
  // The active segment: the batch index from the segment index's end, then the tail.
  const activeFrom = Math.max(segEnd, logStart);
  const active: LocatedEntry[] = [];
  for await (const e of indexEntries(store, topicId, partition, activeFrom, state.tailBase))
    if (live(e)) active.push(e);
  const offsets = tailOffsets(state);
  state.tail.forEach((entry, i) => {
    const located = { baseOffset: offsets[i]!, entry };
    if (live(located)) active.push(located);
  });
  if (active.length > 0)
    segments.push(summarize(active, { baseOffset: active[0]!.baseOffset, tier: 'local' }, state.nextOffset));
  return {
    partition,
    logStartOffset: logStart,
    logEndOffset: state.nextOffset,
    sizeBytes: segments.reduce((n, s) => n + s.sizeBytes, 0),
    segments,
  };
};
