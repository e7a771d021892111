/**
 * Rolls a partition's committed batches into a segment (Kafka's log roll, KIP-405's copy to the remote
 * tier in one step): the batch index entries from where the segment index ends are read (CRCs checked),
 * cut by `segment.bytes` or closed by `segment.ms`, written once as one segment object to the segment
 * store (whatever the replication factor: the segment store is durable on its own), and indexed by one
 * transaction that puts the segment item only if absent, checks every batch page it was read from is
 * unchanged and raises the partition item's `segEnd`. A produce object that holds several partitions' batches is split this way: each
 * partition copies its own byte ranges.
 *
 * Every step can crash or race safely: an object written but not indexed is an orphan the collector
 * deletes; two rolls of one range race on the only-if-absent put and the loser deletes its object; a
 * compaction or retention that changed a page cancels the transaction. The batch pages stay in place
 * (the local tier's copy) until local retention retires them, so a reader that read the index before
 * the swap still finds its objects.
 */
import type { Clock } from '../../../ports/clock.js';
import type { Condition, Item, MetadataStore, TransactOp } from '../../../ports/metadata-store.js';
import { TransactionCanceledError } from '../../../ports/metadata-store.js';
import type { ObjectStore } from '../../../ports/object-store.js';
import { keys, pad, segmentObjectKey } from '../../keys.js';
import { queryAll } from '../../../ports/query-all.js';
import type { TopicConfig } from '../../topics/configs.js';
import type { IndexedEntry } from '../batch-index.js';
import { indexEntries, pageEnd, pageEntries } from '../batch-index.js';
import type { PartitionState } from '../partition-state.js';
import { asPartitionState } from '../partition-state.js';
import { readBatches } from '../reader.js';
import { timeMarkItem } from '../time-index.js';
import type { SegmentChunk } from './format.js';
import { encodeSegment } from './format.js';
import { segmentEndOf, segmentItem, tieredStores } from './segment-index.js';

export interface RollDeps {
  store: MetadataStore;
  clock: Clock;
  newId: () => string;
  objectStore(id: string): ObjectStore;
  segmentStore: ObjectStore;
}

export interface RollOptions {
  /** Clock time after which no new step starts (the run's Lambda timeout, with a margin). */
  deadline?: number;
  /**
   * A segment whose write took longer than this is not indexed: the orphan collector's grace period
   * (15 minutes) must never run out on an object the index is about to refer to.
   */
  swapDeadlineMs?: number;
}

export interface RolledSegment {
  baseOffset: number;
  end: number;
  objectKey: string;
  /** Data bytes (without the footer) and chunks in the footer and index item. */
  bytes: number;
  chunks: number;
  entries: number;
}

export interface RollResult {
  rolled?: RolledSegment;
  /** Why nothing was rolled. */
  skipped?: 'empty' | 'not-closed' | 'raced' | 'deadline';
}

/**
 * Chunks per segment when entries allow (a 16 MiB segment is indexed every 256 KiB, so a fetch reads
 * at most a chunk's worth before its offset), with a floor that keeps small segments' items small too.
 * This also bounds the index item: a chunk closes only when the next entry would take it past the chunk
 * size, so any two neighbouring chunks hold more than one chunk size, and a segment (at most
 * `segment.bytes`, or one entry) holds at most 2 × 64 − 1 = 127 chunks.
 */
const CHUNKS_PER_SEGMENT = 64;
const MIN_CHUNK_BYTES = 4096;
/** Batch index entries one segment takes at most (bounds one roll's reads and time). */
const MAX_ENTRIES = 2048;
/** Pages one segment may come from: the transaction checks each, beside the put and the partition item's update (limit 100). */
const MAX_PAGES = 98;
/** Entries read from the replica store at once. */
const READ_CHUNK = 32;

/** Rolls at most one segment of one partition. */
export const rollSegment = async (
  deps: RollDeps,
  topicId: string,
  partition: number,
  config: Pick<TopicConfig, 'segment.bytes' | 'segment.ms'>,
  options: RollOptions = {},
): Promise<RollResult> => {
  const { store, clock } = deps;
  const item = await store.get(keys.partitionState(topicId, partition), { consistent: true });
  if (!item) return { skipped: 'empty' };
  const state = asPartitionState(item);
  const lastSegment = await store.query({
    pk: keys.partitionPk(topicId, partition),
    sk: { beginsWith: keys.segmentPrefix },
    reverse: true,
    limit: 1,
    consistent: true,
  });
  const segmentIndexEnd = lastSegment.items[0] ? pageEnd(lastSegment.items[0]) : 0;
  const taken = await closedEntries(store, topicId, partition, state, segmentIndexEnd, config, clock.now());
  if (taken.length === 0) return { skipped: 'not-closed' };
  if (options.deadline !== undefined && clock.now() > options.deadline) return { skipped: 'deadline' };

  const chunkBytes = Math.max(MIN_CHUNK_BYTES, Math.ceil(config['segment.bytes'] / CHUNKS_PER_SEGMENT));
  const { data, chunks } = await segmentData(deps, state, taken, chunkBytes);
  const first = taken[0]!;
  const objectKey = segmentObjectKey(topicId, partition, first.baseOffset, deps.newId());
  const writtenAt = clock.now();
  await deps.segmentStore.put(objectKey, encodeSegment(data, chunks));
  const late = clock.now() - writtenAt > (options.swapDeadlineMs ?? 5 * 60_000);
  const swap = late
    ? undefined
    : await swapOps(store, state, topicId, partition, taken, objectKey, chunks, clock);
  if (swap) {
    try {
      await store.transact(swap);
    } catch (error) {
      if (!(error instanceof TransactionCanceledError)) throw error;
      await deps.segmentStore.delete([objectKey]);
      return { skipped: 'raced' };
    }
  } else {
    // Unindexed, so unread: a late one is left to the collector (its grace outlasts any stalled put).
    if (!late) await deps.segmentStore.delete([objectKey]);
    return { skipped: late ? 'deadline' : 'raced' };
  }
  const last = taken.at(-1)!;
  const end = last.baseOffset + last.entry.n;
  await mergeTimeMarks(store, topicId, partition, first.baseOffset, end, taken);
  return {
    rolled: {
      baseOffset: first.baseOffset,
      end,
      objectKey,
      bytes: data.length,
      chunks: chunks.length,
      entries: taken.length,
    },
  };
};

/**
 * The batch index entries of the next segment, from where the segment index ends (or the log start),
 * if they close one: `segment.bytes` reached by the entries after them, or the first one older than
 * `segment.ms`. Only committed entries below `tailBase`; a page a materializer has written but not yet
 * trimmed from the tail is left for the next run.
 */
const closedEntries = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  state: PartitionState,
  segmentIndexEnd: number,
  config: Pick<TopicConfig, 'segment.bytes' | 'segment.ms'>,
  now: number,
): Promise<IndexedEntry[]> => {
  const from = Math.max(segmentIndexEnd, state.logStartOffset);
  const taken: IndexedEntry[] = [];
  const pages = new Set<string>();
  let bytes = 0;
  let next = from;
  for await (const located of indexEntries(store, topicId, partition, from, state.tailBase)) {
    const { baseOffset, entry } = located;
    if (taken.length === 0 && baseOffset < segmentIndexEnd)
      throw new Error(
        `batch index entry at ${baseOffset} straddles the segment index's end ${segmentIndexEnd}`,
      );
    if (taken.length > 0 && baseOffset !== next)
      throw new Error(
        `batch index of partition ${partition} has a gap at ${next} (next entry at ${baseOffset})`,
      );
    const full =
      taken.length > 0 &&
      (bytes + entry.l > config['segment.bytes'] ||
        (!pages.has(located.page) && pages.size >= MAX_PAGES) ||
        taken.length >= MAX_ENTRIES);
    if (full) return taken;
    taken.push(located);
    pages.add(located.page);
    bytes += entry.l;
    next = baseOffset + entry.n;
  }
  // The active segment: rolled by age alone (Kafka's segment.ms, from its first batch's timestamp).
  const oldest = taken[0];
  return oldest && now - oldest.entry.t >= config['segment.ms'] ? taken : [];
};

/** Reads the entries' batches (CRCs checked, true base offsets written in) and cuts them into chunks. */
const segmentData = async (
  deps: RollDeps,
  state: PartitionState,
  taken: readonly IndexedEntry[],
  chunkBytes: number,
): Promise<{ data: Uint8Array; chunks: SegmentChunk[] }> => {
  const stores = tieredStores(deps.objectStore(state.leader), deps.segmentStore);
  const parts: Uint8Array[] = [];
  const chunks: SegmentChunk[] = [];
  let position = 0;
  for (let i = 0; i < taken.length; i += READ_CHUNK) {
    const group = taken.slice(i, i + READ_CHUNK);
    const batches = await readBatches(stores, group);
    let b = 0;
    for (const { baseOffset, entry } of group) {
      let length = 0;
      for (; b < batches.length && batches[b]!.baseOffset < baseOffset + entry.n; b++) {
        parts.push(batches[b]!.bytes);
        length += batches[b]!.bytes.length;
      }
      const open = chunks.at(-1);
      if (open && open.l + length <= chunkBytes) {
        open.l += length;
        open.n += entry.n;
        open.c += entry.c;
        open.t = Math.max(open.t, entry.t);
        if (open.f < 0) open.f = entry.c > 0 ? entry.f : -1;
      } else {
        chunks.push({
          baseOffset,
          b: position,
          l: length,
          n: entry.n,
          c: entry.c,
          t: entry.t,
          f: entry.c > 0 ? entry.f : -1,
        });
      }
      position += length;
    }
  }
  return { data: Buffer.concat(parts), chunks };
};

/**
 * The swap: the segment item, put only if absent, and a check per batch page that it still holds the
 * entries as they were read (re-read now, so the checks compare against what the segment contains).
 * Undefined when a page has already changed.
 */
const swapOps = async (
  store: MetadataStore,
  state: PartitionState,
  topicId: string,
  partition: number,
  taken: readonly IndexedEntry[],
  objectKey: string,
  chunks: readonly SegmentChunk[],
  clock: Clock,
): Promise<TransactOp[] | undefined> => {
  const pk = keys.partitionPk(topicId, partition);
  const sks = [...new Set(taken.map((x) => x.page))];
  const pages = await Promise.all(sks.map((sk) => store.get({ pk, sk }, { consistent: true })));
  const first = taken[0]!;
  const last = taken.at(-1)!;
  const end = last.baseOffset + last.entry.n;
  // segEnd moves with the index it describes (monotone), and only over live entries: the log's byte
  // total (log-size.ts) counts each offset in the tier that indexes it, and a retention run that
  // deleted the first entry since it was read has subtracted it already.
  const live: Condition = {
    and: [{ exists: 'pk' }, { path: 'logStartOffset', op: '<', value: first.baseOffset + first.entry.n }],
  };
  const raise: TransactOp =
    segmentEndOf(state) < end
      ? {
          update: keys.partitionState(topicId, partition),
          actions: [{ set: 'segEnd', value: end }],
          condition: {
            and: [live, { or: [{ notExists: 'segEnd' }, { path: 'segEnd', op: '<', value: end }] }],
          },
        }
      : { check: keys.partitionState(topicId, partition), condition: live };
  const ops: TransactOp[] = [
    { put: segmentItem(topicId, partition, objectKey, chunks, clock.now()), condition: { notExists: 'pk' } },
    raise,
  ];
  for (const page of pages) {
    if (!page) return undefined;
    const now = new Map(pageEntries(page).map((x) => [x.baseOffset, x.entry]));
    for (const { baseOffset, entry, page: sk } of taken) {
      if (sk !== page.sk) continue;
      const current = now.get(baseOffset);
      if (!current || current.o !== entry.o || current.b !== entry.b || current.l !== entry.l)
        return undefined;
    }
    ops.push({ check: { pk, sk: page.sk }, condition: { path: 'e', op: '=', value: page['e']! } });
  }
  return ops;
};

/**
 * Merges the time-index marks of the rolled range into one (see time-index.ts): the first mark's start
 * and previous max with the last mark's timestamp is as true as the marks it replaces, so ListOffsets
 * stays exact while the index keeps about one mark per segment instead of one per materialization pass.
 * The merged mark goes in before the others go, so a crash in between leaves only extra true marks.
 */
const mergeTimeMarks = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  from: number,
  to: number,
  taken: readonly IndexedEntry[],
) => {
  const stamped = taken.map((x) => x.entry.t).filter((t) => t >= 0);
  if (stamped.length === 0) return;
  // A mark of the range rose at one of its batches, so its timestamp is at least the range's lowest.
  const lowest = Math.min(...stamped);
  const marks = (
    await queryAll(store, {
      pk: keys.partitionPk(topicId, partition),
      sk: { between: [`${keys.timePrefix}${pad(lowest, 15)}`, `${keys.timePrefix}~`] },
      consistent: true,
    })
  )
    .filter((m) => (m['o'] as number) >= from && (m['o'] as number) < to)
    .sort((a, b) => (a['o'] as number) - (b['o'] as number));
  const firstMark = marks[0];
  const lastMark = marks.at(-1);
  if (!firstMark || !lastMark || marks.length < 2) return;
  const merged: Item = timeMarkItem(topicId, partition, {
    ts: markTimestamp(lastMark),
    baseOffset: firstMark['o'] as number,
    prev: firstMark['p'] as number,
  });
  await store.put(merged);
  const stale = marks.filter((m) => m.sk !== merged.sk);
  await store.batchWrite({ deletes: stale.map(({ pk, sk }) => ({ pk, sk })) });
};

/** A mark's timestamp is in its key (`T#{ts}#{offset}`, see keys.timeIndex). */
const markTimestamp = (mark: Item): number => Number(mark.sk.slice(keys.timePrefix.length).split('#')[0]);
