/**
 * Retention for `cleanup.policy=delete`: drops the oldest committed data past `retention.ms` or
 * beyond `retention.bytes`, Kafka's way: whole segments from the start of the log (by a segment's
 * largest timestamp), then, past the segment index, whole batches not yet rolled, never the newest
 * ones still in the partition item's tail. `logStartOffset` advances first, monotonically, with a
 * conditional update; then the index pages wholly below it are retired, the time index repaired and
 * the aborted-transactions index items below it deleted.
 * Objects are left to the orphan collector, which deletes them once nothing references them and
 * readers in flight are done.
 */
import type { Condition, MetadataStore, UpdateAction } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { keys } from '../keys.js';
import { queryAll, queryPages } from '../../ports/query-all.js';
import type { TopicConfig } from '../topics/configs.js';
import type { Item } from '../../ports/metadata-store.js';
import { isRetired, pageEnd, pageEntries, retiredPageItem } from './batch-index.js';
import type { PartitionState } from './partition-state.js';
import { asPartitionState } from './partition-state.js';
import { logEntries, segmentEndOf } from './segments/segment-index.js';
import type { OldestRetained } from './log-size.js';
import {
  bytesOf,
  forgetFirstLocal,
  LOG_SIZE_ATTR,
  logSizeChange,
  noCleanerSwapSince,
  oldestRetainedAction,
  oldestRetainedOf,
  sameOldestRetained,
  storedLogSize,
  UNKNOWN_LOG_SIZE,
} from './log-size.js';
import { timeMarkItem, timeMarks } from './time-index.js';
import { dropAbortedBelow } from '../transactions/lso.js';

export interface RetentionResult {
  logStartOffset: number;
  batchesDeleted: number;
}

type RetentionConfig = Pick<TopicConfig, 'cleanup.policy' | 'retention.ms' | 'retention.bytes'>;

interface Limits {
  ms: number;
  bytes: number;
}

/**
 * Applies retention to one partition. `read`: the partition item as a consistent read just returned it
 * (the maintenance run reads it once for all its steps); without it the item is read.
 */
export const applyRetention = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  config: RetentionConfig,
  now: number,
  read?: PartitionState,
): Promise<RetentionResult> => {
  const key = keys.partitionState(topicId, partition);
  let state = read;
  if (!state) {
    const item = await store.get(key, { consistent: true });
    if (!item) return { logStartOffset: 0, batchesDeleted: 0 };
    state = asPartitionState(item);
  }
  const none = { logStartOffset: state.logStartOffset, batchesDeleted: 0 };
  const limits: Limits = { ms: config['retention.ms'], bytes: config['retention.bytes'] };
  if (!config['cleanup.policy'].includes('delete') || (limits.ms < 0 && limits.bytes < 0)) return none;
  // Retention never deletes from the tail: with nothing indexed past the log start, nothing can go.
  if (state.tailBase <= state.logStartOffset) return none;

  const size = state.logSizeBytes;
  const counted = limits.bytes < 0 || size !== undefined;
  // What the last walk kept is still kept: nothing is due, and nothing but the item was read.
  const known = oldestRetainedOf(state);
  if (counted && known && !due(known, size ?? 0, limits, now)) return none;

  const walked = counted
    ? await fromLogStart(store, topicId, partition, state, limits, size ?? 0, now)
    : await countingAll(store, topicId, partition, state, limits, now);
  const { live, units, doomed, batchesDeleted, kept } = walked;
  // Items wholly below the log start are leftovers of a run that failed after it moved the start:
  // retire them now (else their objects are never collected).
  const leftovers = live.filter((item) => pageEnd(item) <= state.logStartOffset);
  if (leftovers.length > 0) {
    await store.batchWrite({ puts: leftovers.map((p) => retiredPageItem(p, now)) });
    await dropAbortedBelow(store, topicId, partition, state.logStartOffset);
  }
  const deleted = units.slice(0, doomed);
  const logStartOffset = deleted.at(-1)?.end ?? state.logStartOffset;
  // An item that did not know its total learns it from this walk's count: the difference between the
  // count and what the item held when read is added, so commits since then stay counted.
  const correction =
    walked.total === undefined ? 0 : walked.total - (storedLogSize(state) ?? UNKNOWN_LOG_SIZE);
  const moved = logStartOffset > state.logStartOffset;
  if (!moved && correction === 0 && sameOldestRetained(kept, known)) return none;
  const conditions: Condition[] = [
    // Equal, not below: two runs must never both subtract the same units.
    { path: 'logStartOffset', op: '=', value: state.logStartOffset },
    { path: 'tailBase', op: '>=', value: logStartOffset },
    noCleanerSwapSince(state),
  ];
  if (correction !== 0)
    conditions.push({ or: [{ notExists: LOG_SIZE_ATTR }, { path: LOG_SIZE_ATTR, op: '<', value: 0 }] });
  const actions: UpdateAction[] = [oldestRetainedAction(kept)];
  const change = correction - deleted.reduce((sum, u) => sum + u.bytes, 0);
  if (change !== 0) actions.push(logSizeChange(change));
  if (moved) actions.push({ set: 'logStartOffset', value: logStartOffset }, forgetFirstLocal);
  try {
    await store.update(key, actions, { condition: { and: conditions } });
  } catch (error) {
    if (error instanceof ConditionFailedError) return none;
    throw error;
  }
  if (!moved) return none;
  try {
    // An item that still holds batches at or past the new start stays until the start passes its end.
    const retired = live.filter(
      (item) => pageEnd(item) > state.logStartOffset && pageEnd(item) <= logStartOffset,
    );
    await store.batchWrite({ puts: retired.map((item) => retiredPageItem(item, now)) });
    await repairTimeIndex(store, topicId, partition, logStartOffset);
    // The aborted-transactions index below the new start: never read again.
    await dropAbortedBelow(store, topicId, partition, logStartOffset);
  } catch (error) {
    // The next run must walk to find what this one left (a run that dies here leaves it to the next
    // walk, when retention is due again).
    await store.update(key, [oldestRetainedAction(undefined)]).catch(() => undefined);
    throw error;
  }
  return { logStartOffset, batchesDeleted };
};

/** Kafka's rule for the oldest unit: past `retention.ms`, or the log without it still holds `retention.bytes`. */
const due = (unit: OldestRetained, size: number, limits: Limits, now: number): boolean =>
  (limits.ms >= 0 && unit.maxTimestamp < now - limits.ms) ||
  (limits.bytes >= 0 && size - unit.sizeInBytes >= limits.bytes);

interface Walked {
  /** The live (not retired) index items read, in the order read. */
  live: Item[];
  units: RetentionUnit[];
  /** How many of `units`, from the first, retention deletes. */
  doomed: number;
  batchesDeleted: number;
  /** The first unit kept, when one was (not when the walk reached the tail). */
  kept?: OldestRetained;
  /** The log's bytes as counted, when the walk counted all of them. */
  total?: number;
}

/** Items per query page of the walk: a partition with nothing to expire reads one page. */
const WALK_PAGE = 4;

/**
 * Only the oldest units can be due, so the walk reads the segment index from the log start and stops at
 * the first unit it keeps; past the segment index it reads the batch pages from the one holding the
 * segment index's end. `size`, the log's byte total from the partition item, decides
 * `retention.bytes`. What it reads grows with what it deletes, not with the data retained.
 */
const fromLogStart = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  limits: Limits,
  size: number,
  now: number,
): Promise<Walked> => {
  const pk = keys.partitionPk(topicId, partition);
  const live: Item[] = [];
  const units: RetentionUnit[] = [];
  let batchesDeleted = 0;
  let remaining = size;
  const done = (kept?: RetentionUnit): Walked => ({
    live,
    units,
    doomed: units.length,
    batchesDeleted,
    ...(kept ? { kept: { maxTimestamp: kept.t, sizeInBytes: kept.bytes } } : {}),
  });
  /** Takes the unit if it is due; false when it is kept (the walk stops there). */
  const take = (unit: RetentionUnit): boolean => {
    if (!due({ maxTimestamp: unit.t, sizeInBytes: unit.bytes }, remaining, limits, now)) return false;
    units.push(unit);
    batchesDeleted += unit.batches;
    remaining -= unit.bytes;
    return true;
  };
  let indexedThrough = state.logStartOffset;
  for await (const segment of queryPages(store, {
    pk,
    sk: { beginsWith: keys.segmentPrefix },
    consistent: true,
    limit: WALK_PAGE,
  })) {
    if (isRetired(segment)) continue;
    live.push(segment);
    if (pageEnd(segment) <= state.logStartOffset) continue;
    const unit = segmentUnit(segment);
    indexedThrough = unit.end;
    if (!take(unit)) return done(unit);
  }
  // Every segment went: the batches past the segment index, from the page holding its end (a page is
  // keyed by its first offset, so the last one starting at or before it). Pages below the segment
  // index's end are local retention's; those between it and the log start are a failed run's leftovers.
  const walkFrom = Math.min(segmentEndOf(state), indexedThrough);
  const [holding] = (
    await store.query({
      pk,
      sk: { between: [keys.batchPrefix, keys.batch(topicId, partition, walkFrom).sk] },
      reverse: true,
      limit: 1,
      consistent: true,
    })
  ).items;
  const from = holding?.sk ?? keys.batchPrefix;
  for await (const page of queryPages(store, {
    pk,
    sk: { between: [from, `${keys.batchPrefix}~`] },
    consistent: true,
    limit: WALK_PAGE,
  })) {
    if (isRetired(page)) continue;
    live.push(page);
    for (const { baseOffset, entry } of pageEntries(page)) {
      if (baseOffset < indexedThrough) continue;
      // Never the newest batches, still in the partition item's tail (the active segment).
      if (baseOffset >= state.tailBase) return done();
      const unit = { end: baseOffset + entry.n, bytes: entry.l, t: entry.t, batches: 1 };
      if (!take(unit)) return done(unit);
    }
  }
  return done();
};

/**
 * An item that does not know its byte total (written before it was kept): every live unit is read and
 * counted once, and the count corrects the item (see applyRetention).
 */
const countingAll = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  limits: Limits,
  now: number,
): Promise<Walked> => {
  const [segments, pages] = await Promise.all(
    [keys.segmentPrefix, keys.batchPrefix].map(async (prefix) =>
      (
        await queryAll(store, {
          pk: keys.partitionPk(topicId, partition),
          sk: { beginsWith: prefix },
          consistent: true,
        })
      ).filter((item) => !isRetired(item)),
    ),
  );
  const units = retentionUnits(segments!, pages!, state.logStartOffset, state.tailBase);
  const total = units.reduce((sum, u) => sum + u.bytes, 0) + bytesOf(state.tail);
  let remaining = total;
  let doomed = 0;
  let batchesDeleted = 0;
  for (const unit of units) {
    if (!due({ maxTimestamp: unit.t, sizeInBytes: unit.bytes }, remaining, limits, now)) break;
    doomed++;
    batchesDeleted += unit.batches;
    remaining -= unit.bytes;
  }
  const first = units[doomed];
  return {
    live: [...segments!, ...pages!],
    units,
    doomed,
    batchesDeleted,
    total,
    ...(first ? { kept: { maxTimestamp: first.t, sizeInBytes: first.bytes } } : {}),
  };
};

/** A segment as one unit: its end, bytes, largest timestamp (Kafka ages a segment by it), batches. */
const segmentUnit = (segment: Item): RetentionUnit => {
  const chunks = pageEntries(segment);
  return {
    end: pageEnd(segment),
    bytes: chunks.reduce((sum, x) => sum + x.entry.l, 0),
    t: Math.max(-1, ...chunks.map((x) => x.entry.t)),
    batches: chunks.length,
  };
};

interface RetentionUnit {
  end: number;
  bytes: number;
  /** Largest timestamp (Kafka ages a segment by it). */
  t: number;
  batches: number;
}

/**
 * What retention deletes whole, in offset order from the log start: each segment, then each batch past
 * the segment index (the batch pages below it are the local tier's copies of the same offsets).
 */
const retentionUnits = (
  segments: readonly Item[],
  pages: readonly Item[],
  logStartOffset: number,
  tailBase: number,
): RetentionUnit[] => {
  const units: RetentionUnit[] = [];
  let indexedThrough = logStartOffset;
  for (const segment of segments) {
    if (pageEnd(segment) <= logStartOffset) continue;
    units.push(segmentUnit(segment));
    indexedThrough = pageEnd(segment);
  }
  for (const { baseOffset, entry } of pages.flatMap(pageEntries)) {
    if (baseOffset < indexedThrough || baseOffset >= tailBase) continue;
    units.push({ end: baseOffset + entry.n, bytes: entry.l, t: entry.t, batches: 1 });
  }
  return units;
};

/**
 * The time index records where the running max timestamp rose (see time-index.ts), a max that ran from
 * offset 0. Once the log starts later, the marks before the first surviving one are recomputed from the
 * new start so ListOffsets by timestamp stays exact; when none survives, the partition's running max
 * (which the materializer continues from) is reset too, conditioned on the tail not having moved.
 */
const repairTimeIndex = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  logStartOffset: number,
) => {
  for (let attempt = 0; attempt < 3; attempt++) {
    const item = await store.get(keys.partitionState(topicId, partition), { consistent: true });
    if (!item) return;
    const state = asPartitionState(item);
    const { tailBase } = state;
    // Marks are keyed by the running max, which rises with the offset: those below the new start come
    // first, and the first one at or past it ends the read.
    const marks: Item[] = [];
    let firstKept: Item | undefined;
    for await (const mark of queryPages(store, {
      pk: keys.partitionPk(topicId, partition),
      sk: { beginsWith: keys.timePrefix },
      consistent: true,
      limit: WALK_PAGE,
    })) {
      if ((mark['o'] as number) >= logStartOffset) {
        firstKept = mark;
        break;
      }
      marks.push(mark);
    }
    const survivors: { baseOffset: number; t: number }[] = [];
    const until = firstKept ? (firstKept['o'] as number) : tailBase;
    const segmentEnd = segmentEndOf(state);
    for await (const { baseOffset, entry } of logEntries(
      store,
      topicId,
      partition,
      segmentEnd,
      logStartOffset,
      until,
    ))
      survivors.push({ baseOffset, t: entry.t });
    const { marks: repaired, runningMax } = timeMarks(survivors, -1);
    const puts = repaired.map((mark) => timeMarkItem(topicId, partition, mark));
    const keep = new Set(puts.map((p) => p.sk));
    const stale = marks.filter((m) => (m['o'] as number) < logStartOffset && !keep.has(m.sk));
    await store.batchWrite({ puts, deletes: stale.map(({ pk, sk }) => ({ pk, sk })) });
    if (firstKept) return;
    try {
      await store.update(keys.partitionState(topicId, partition), [{ set: 'tsMax', value: runningMax }], {
        condition: { path: 'tailBase', op: '=', value: tailBase },
      });
      return;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }
};
