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
import type { MetadataStore } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { keys } from '../keys.js';
import { queryAll, queryPages } from '../../ports/query-all.js';
import type { TopicConfig } from '../topics/configs.js';
import type { Item } from '../../ports/metadata-store.js';
import { isRetired, pageEnd, pageEntries, retiredPageItem } from './batch-index.js';
import type { PartitionState } from './partition-state.js';
import { asPartitionState } from './partition-state.js';
import { logEntries, segmentEndOf } from './segments/segment-index.js';
import { timeMarkItem, timeMarks } from './time-index.js';
import { dropAbortedBelow } from '../transactions/lso.js';

export interface RetentionResult {
  logStartOffset: number;
  batchesDeleted: number;
}

export const applyRetention = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  config: Pick<TopicConfig, 'cleanup.policy' | 'retention.ms' | 'retention.bytes'>,
  now: number,
): Promise<RetentionResult> => {
  const key = keys.partitionState(topicId, partition);
  const item = await store.get(key, { consistent: true });
  if (!item) return { logStartOffset: 0, batchesDeleted: 0 };
  const state = asPartitionState(item);
  const none = { logStartOffset: state.logStartOffset, batchesDeleted: 0 };
  const retentionMs = config['retention.ms'];
  const retentionBytes = config['retention.bytes'];
  if (!config['cleanup.policy'].includes('delete') || (retentionMs < 0 && retentionBytes < 0)) return none;

  const walked =
    retentionBytes >= 0
      ? await byBytesAndTime(store, topicId, partition, state, retentionMs, retentionBytes, now)
      : await byTime(store, topicId, partition, state, retentionMs, now);
  const { live, units, doomed, batchesDeleted } = walked;
  // Items wholly below the log start are leftovers of a run that failed after it moved the start:
  // retire them now (else their objects are never collected).
  const leftovers = live.filter((item) => pageEnd(item) <= state.logStartOffset);
  if (leftovers.length > 0) {
    await store.batchWrite({ puts: leftovers.map((p) => retiredPageItem(p, now)) });
    await dropAbortedBelow(store, topicId, partition, state.logStartOffset);
  }
  const last = units[doomed - 1];
  if (!last) return none;
  const logStartOffset = last.end;
  if (logStartOffset <= state.logStartOffset) return none;
  try {
    await store.update(key, [{ set: 'logStartOffset', value: logStartOffset }], {
      condition: {
        and: [
          { path: 'logStartOffset', op: '<', value: logStartOffset },
          { path: 'tailBase', op: '>=', value: logStartOffset },
        ],
      },
    });
  } catch (error) {
    if (error instanceof ConditionFailedError) return none;
    throw error;
  }
  // An item that still holds batches at or past the new start stays until the start passes its end.
  const retired = live.filter(
    (item) => pageEnd(item) > state.logStartOffset && pageEnd(item) <= logStartOffset,
  );
  await store.batchWrite({ puts: retired.map((item) => retiredPageItem(item, now)) });
  await repairTimeIndex(store, topicId, partition, logStartOffset);
  // The aborted-transactions index below the new start: never read again.
  await dropAbortedBelow(store, topicId, partition, logStartOffset);
  return { logStartOffset, batchesDeleted };
};

interface Walked {
  /** The live (not retired) index items read, in the order read. */
  live: Item[];
  units: RetentionUnit[];
  /** How many of `units`, from the first, retention deletes. */
  doomed: number;
  batchesDeleted: number;
}

/** Items per query page of the walk: a partition with nothing to expire reads one page. */
const WALK_PAGE = 4;

/**
 * Time-based retention (no `retention.bytes`): only the oldest units can have expired, so the walk
 * reads the segment index from the log start and stops at the first unit it keeps; past the segment
 * index it reads the batch pages from the one holding the segment index's end. What it costs does not
 * grow with the data retained.
 */
const byTime = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  retentionMs: number,
  now: number,
): Promise<Walked> => {
  const pk = keys.partitionPk(topicId, partition);
  const live: Item[] = [];
  const units: RetentionUnit[] = [];
  let batchesDeleted = 0;
  const expired = (t: number) => retentionMs >= 0 && t < now - retentionMs;
  const done = (): Walked => ({ live, units, doomed: units.length, batchesDeleted });
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
    if (!expired(unit.t)) return done();
    units.push(unit);
    batchesDeleted += unit.batches;
  }
  // Every segment expired: the batches past the segment index, from the page holding its end (a page
  // is keyed by its first offset, so the last one starting at or before it). Pages below the segment
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
      if (baseOffset >= state.tailBase || !expired(entry.t)) return done();
      units.push({ end: baseOffset + entry.n, bytes: entry.l, t: entry.t, batches: 1 });
      batchesDeleted++;
    }
  }
  return done();
};

/**
 * With `retention.bytes` the bytes held decide too, so every live unit is read (the byte total of the
 * log is not kept in the partition item).
 */
const byBytesAndTime = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  retentionMs: number,
  retentionBytes: number,
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
  const tailBytes = state.tail.reduce((sum, e) => sum + e.l, 0);
  let remaining = units.reduce((sum, u) => sum + u.bytes, 0) + tailBytes;
  let doomed = 0;
  let batchesDeleted = 0;
  for (const unit of units) {
    const expired = retentionMs >= 0 && unit.t < now - retentionMs;
    const oversize = remaining - unit.bytes >= retentionBytes;
    if (!expired && !oversize) break;
    doomed++;
    batchesDeleted += unit.batches;
    remaining -= unit.bytes;
  }
  return { live: [...segments!, ...pages!], units, doomed, batchesDeleted };
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
    const marks = await queryAll(store, {
      pk: keys.partitionPk(topicId, partition),
      sk: { beginsWith: keys.timePrefix },
      consistent: true,
    });
    const firstKept = marks.find((m) => (m['o'] as number) >= logStartOffset);
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
