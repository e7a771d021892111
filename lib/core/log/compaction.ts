/**
 * The log cleaner for `cleanup.policy=compact` (and `compact,delete`), with Kafka's semantics over the
 * batch index. The partition item's tail is the active segment and is never cleaned; the index below
 * `tailBase` splits into a clean head [logStartOffset, cleanedThrough), where every key appears at
 * most once, and a dirty rest. A pass runs when the dirty share of the bytes reaches Kafka's
 * `min.cleanable.dirty.ratio` (or a kept tombstone has expired): it maps each key of the dirty part
 * to its latest offset, then rewrites every index entry from the log start that holds a record with
 * a later duplicate, a keyless record or a tombstone older than `delete.retention.ms`.
 *
 * Offsets never move. A rewritten batch keeps its base offset, `lastOffsetDelta`, producer fields and
 * each survivor's offset and timestamp, so every entry keeps its span `n` and readers still step from
 * batch to batch. A batch that loses every record stays as a 61-byte header-only batch (Kafka's cleaner
 * keeps such batches for producer state; here they also keep the index dense, so a fetch in an emptied
 * range advances `nextOffset` instead of finding nothing below the high watermark).
 *
 * Data is immutable: rewritten batches go into new objects on every in-sync store, then the index pages
 * holding each group's entries are swapped in one transaction, every rewritten entry checked to still
 * point at the object range that was read and every page conditioned on not changing after that check.
 * A concurrent cleaner, a retention run or anything else that changed an entry cancels the swap, and
 * the pass stops there (groups are swapped in offset order, so a tombstone is never dropped before the
 * older records of its key are gone). The old objects are left to the orphan collector.
 */
import type { Clock } from '../../ports/clock.js';
import type { Condition, Item, MetadataStore, TransactOp } from '../../ports/metadata-store.js';
import { ConditionFailedError, TransactionCanceledError } from '../../ports/metadata-store.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { dataObjectKey, keys, segmentObjectKey } from '../keys.js';
import { queryAll } from '../../ports/query-all.js';
import type { Record as KafkaRecord } from '../../../protocol/record-batch/index.js';
import { decodeRecordBatch, encodeRecordBatch } from '../../../protocol/record-batch/index.js';
import type { TopicConfig } from '../topics/configs.js';
import type { PartitionState } from './partition-state.js';
import { asPartitionState } from './partition-state.js';
import type { IndexedEntry, LocatedEntry } from './batch-index.js';
import { encodePageEntries, isRetired, pageEntries } from './batch-index.js';
import { cleanerSwapActions } from './log-size.js';
import type { StoredBatch } from './reader.js';
import { readBatches } from './reader.js';
import { timeMarkItem, timeMarks } from './time-index.js';
import type { StoreResolver } from './segments/segment-index.js';
import { logEntries, segmentEndOf, tieredStores } from './segments/segment-index.js';
import { AbortedFilter, abortedTransactions, lastStableOffset } from '../transactions/lso.js';

/** Kafka's `min.cleanable.dirty.ratio` default, when the caller passes no topic config for it. */
export const MIN_CLEANABLE_DIRTY_RATIO = 0.5;
/** Records mapped per pass (Kafka bounds its offset map by `log.cleaner.dedupe.buffer.size` the same way). */
const MAX_MAPPED_RECORDS = 500_000;
/** Entries read concurrently, and entries (and bytes) per new object and per swap transaction. */
const READ_CHUNK = 32;
const GROUP_ENTRIES = 50;
const GROUP_BYTES = 16 * 1024 * 1024;

/** What a cleaner keeps on the partition item, beside the commit path's state. */
interface CleanerState {
  /** Offset below which every key appears at most once (the first dirty offset). */
  cleanedThrough?: number;
  /** Stored bytes of [logStartOffset, cleanedThrough) after the last pass. */
  cleanBytes?: number;
  /** Max timestamp of the oldest batch holding a tombstone the last pass kept. */
  oldestTombstone?: number;
}

export interface CompactionDeps {
  store: MetadataStore;
  clock: Clock;
  newId: () => string;
  objectStore(id: string): ObjectStore;
  /** Where rewritten segments go (a segment's cleaned batches stay in the segment tier). */
  segmentStore?: ObjectStore | undefined;
}

export interface CompactionOptions {
  /**
   * A new object whose write took longer than this is not swapped in (the pass stops): the orphan
   * collector (15 minutes grace) must never delete an object the index is about to refer to.
   */
  swapDeadlineMs?: number;
}

export interface CompactionResult {
  /** Why no pass ran or why it stopped early; absent when it ran to the end. */
  skipped?: 'not-compacted' | 'below-dirty-ratio' | 'raced' | 'deadline';
  dirtyRatio: number;
  /** The first dirty offset after the pass. */
  cleanedThrough: number;
  entriesRewritten: number;
  recordsRemoved: number;
  tombstonesDropped: number;
}

/** One cleaning pass over a partition's batch index (see the file comment). */
export const compactPartition = async (
  deps: CompactionDeps,
  topicId: string,
  partition: number,
  config: Pick<TopicConfig, 'cleanup.policy' | 'delete.retention.ms'> &
    Partial<Pick<TopicConfig, 'min.cleanable.dirty.ratio'>>,
  now: number,
  options: CompactionOptions = {},
): Promise<CompactionResult> => {
  const { store } = deps;
  const item = await store.get(keys.partitionState(topicId, partition), { consistent: true });
  const state = item && (asPartitionState(item) as PartitionState & CleanerState);
  const result: CompactionResult = {
    dirtyRatio: 0,
    cleanedThrough: state?.cleanedThrough ?? 0,
    entriesRewritten: 0,
    recordsRemoved: 0,
    tombstonesDropped: 0,
  };
  if (!state || !config['cleanup.policy'].includes('compact')) return { ...result, skipped: 'not-compacted' };

  const start = state.logStartOffset;
  const cleanedThrough = Math.min(Math.max(state.cleanedThrough ?? 0, start), state.tailBase);
  const cleanBytes = (state.cleanedThrough ?? 0) > start ? (state.cleanBytes ?? 0) : 0;
  const segmentEnd = segmentEndOf(state);
  // Kafka cleans only below the last stable offset: a record of an open transaction may still abort,
  // so it must neither shadow an older record of its key nor be cleaned itself.
  const stable = Math.min(state.tailBase, lastStableOffset(state));
  const dirty: IndexedEntry[] = [];
  for (const d of await indexRange(store, topicId, partition, segmentEnd, cleanedThrough, state.tailBase)) {
    if (d.baseOffset + d.entry.n > stable) break;
    dirty.push(d);
  }
  const dirtyBytes = dirty.reduce((sum, d) => sum + d.entry.l, 0);
  result.dirtyRatio = dirtyBytes === 0 ? 0 : dirtyBytes / (cleanBytes + dirtyBytes);
  const deleteHorizon = now - config['delete.retention.ms'];
  const tombstonesDue = state.oldestTombstone !== undefined && state.oldestTombstone < deleteHorizon;
  const minRatio = config['min.cleanable.dirty.ratio'] ?? MIN_CLEANABLE_DIRTY_RATIO;
  if ((dirtyBytes === 0 || result.dirtyRatio < minRatio) && !tombstonesDue) {
    return { ...result, skipped: 'below-dirty-ratio' };
  }

  const leader = tieredStores(deps.objectStore(state.leader), deps.segmentStore);
  const mapped: LocatedEntry[] = [];
  let mappedRecords = 0;
  for (const d of dirty) {
    if (mapped.length > 0 && mappedRecords + d.entry.c > MAX_MAPPED_RECORDS) break;
    mapped.push(d);
    mappedRecords += d.entry.c;
  }
  const last = mapped.at(-1);
  const end = last ? last.baseOffset + last.entry.n : cleanedThrough;
  const latest = new Map<string, number>();
  // Markers and aborted transactional records are no key's latest record (Kafka's cleaner skips both).
  const mapFilter = new AbortedFilter(
    await abortedTransactions(store, topicId, partition, state, cleanedThrough, end),
  );
  for (let i = 0; i < mapped.length; i += READ_CHUNK) {
    for (const batch of await readBatches(leader, mapped.slice(i, i + READ_CHUNK))) {
      if (!mapFilter.keeps(batch.header, batch.baseOffset)) continue;
      for (const record of recordsOf(batch)) {
        if (record.key !== null) latest.set(keyString(record.key), record.offset);
      }
    }
  }

  const cleaner = new Rewriter(deps, topicId, state, options.swapDeadlineMs ?? 5 * 60_000);
  let stopped: CompactionResult['skipped'];
  try {
    const range = await indexRange(store, topicId, partition, segmentEnd, start, end);
    stopped = await cleanRange(cleaner, leader, range, {
      latest,
      deleteHorizon,
      aborted: new AbortedFilter(await abortedTransactions(store, topicId, partition, state, start, end)),
    });
  } finally {
    // Swapped entries have new max timestamps, also when the pass stopped half-way.
    if (cleaner.entriesRewritten > 0) await rebuildTimeIndex(store, topicId, partition);
  }
  if (stopped) return { ...result, ...cleaner.counts(), skipped: stopped };

  const oldestTombstone = cleaner.oldestTombstone;
  try {
    await store.update(
      keys.partitionState(topicId, partition),
      [
        { set: 'cleanedThrough', value: end },
        { set: 'cleanBytes', value: cleaner.bytes },
        oldestTombstone === undefined
          ? { remove: 'oldestTombstone' }
          : { set: 'oldestTombstone', value: oldestTombstone },
      ],
      {
        // An update creates a missing item: a topic deleted during the pass must stay deleted.
        condition: {
          and: [
            { exists: 'pk' },
            { or: [{ notExists: 'cleanedThrough' }, { path: 'cleanedThrough', op: '<=', value: end }] },
          ],
        },
      },
    );
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
  }
  return { ...result, ...cleaner.counts(), cleanedThrough: end };
};

/** Cleans the entries in order; returns why it stopped early, if it did. */
const cleanRange = async (
  cleaner: Rewriter,
  leader: StoreResolver,
  entries: readonly IndexedEntry[],
  rule: { latest: ReadonlyMap<string, number>; deleteHorizon: number; aborted: AbortedFilter },
): Promise<CompactionResult['skipped']> => {
  for (let i = 0; i < entries.length; i += READ_CHUNK) {
    const chunk = entries.slice(i, i + READ_CHUNK);
    const batches = await readBatches(leader, chunk);
    for (const located of chunk) {
      const own = batches.filter(
        (b) => b.baseOffset >= located.baseOffset && b.baseOffset < located.baseOffset + located.entry.n,
      );
      // The filter sees every batch in offset order: a marker ends its producer's aborted run.
      const aborted = new Set(
        own
          .filter((b) => !rule.aborted.keeps(b.header, b.baseOffset) && !b.header.isControl)
          .map((b) => b.baseOffset),
      );
      const stopped = await cleaner.add(located, cleanBatches(own, rule.latest, rule.deleteHorizon, aborted));
      if (stopped) return stopped;
    }
  }
  return cleaner.flush();
};

interface CleanedEntry {
  /** The entry's batches after cleaning; undefined when nothing changed. */
  batches: Uint8Array[] | undefined;
  records: number;
  removed: number;
  tombstonesDropped: number;
  maxTimestamp: number;
  minTimestamp: number;
  /** Max timestamp of the oldest batch in which a tombstone was kept. */
  oldestTombstone: number | undefined;
}

/**
 * Kafka's retention rule for one record: it needs a key, no later record of its key may exist in the
 * mapped range, and a tombstone goes once its batch is older than the delete horizon. Records of an
 * aborted transaction go (no read_committed reader sees them); markers stay, since the aborted index
 * needs each ABORT to end its run and a reader at any offset must find where a transaction ended.
 */
const cleanBatches = (
  batches: readonly StoredBatch[],
  latest: ReadonlyMap<string, number>,
  deleteHorizon: number,
  aborted: ReadonlySet<number>,
): CleanedEntry => {
  const out: CleanedEntry = {
    batches: undefined,
    records: 0,
    removed: 0,
    tombstonesDropped: 0,
    maxTimestamp: -1,
    minTimestamp: -1,
    oldestTombstone: undefined,
  };
  const rewritten = batches.map((batch) => {
    const { header } = batch;
    const records = recordsOf(batch);
    if (header.isControl) {
      out.records += records.length;
      return batch.bytes;
    }
    const inAborted = aborted.has(batch.baseOffset);
    const kept = records.filter((r) => {
      if (inAborted || r.key === null) return false;
      const newest = latest.get(keyString(r.key));
      if (newest !== undefined && newest > r.offset) return false;
      if (r.value === null && header.maxTimestamp < deleteHorizon) {
        out.tombstonesDropped++;
        return false;
      }
      return true;
    });
    out.records += kept.length;
    out.removed += records.length - kept.length;
    for (const r of kept) {
      out.maxTimestamp = Math.max(out.maxTimestamp, r.timestamp);
      out.minTimestamp = out.minTimestamp < 0 ? r.timestamp : Math.min(out.minTimestamp, r.timestamp);
    }
    if (kept.some((r) => r.value === null)) {
      out.oldestTombstone = Math.min(out.oldestTombstone ?? header.maxTimestamp, header.maxTimestamp);
    }
    if (kept.length === records.length) return batch.bytes;
    return encodeRecordBatch(
      kept.map((r) => ({
        key: r.key,
        value: r.value,
        headers: r.headers,
        timestamp: r.timestamp,
        offsetDelta: r.offset - batch.baseOffset,
      })),
      {
        baseOffset: batch.baseOffset,
        lastOffsetDelta: header.lastOffsetDelta,
        partitionLeaderEpoch: header.partitionLeaderEpoch,
        producerId: header.producerId,
        producerEpoch: header.producerEpoch,
        baseSequence: header.baseSequence,
        isTransactional: header.isTransactional,
        // Sluice reads zstd but cannot write it: such a batch is rewritten uncompressed.
        compression: header.compression === 'zstd' ? 'none' : header.compression,
        timestampType: header.timestampType,
        ...(header.timestampType === 'LogAppendTime' ? { logAppendTime: header.maxTimestamp } : {}),
      },
    );
  });
  if (out.removed > 0) out.batches = rewritten;
  return out;
};

interface Pending {
  located: IndexedEntry;
  cleaned: CleanedEntry;
  bytes: Uint8Array;
}

/** Collects rewritten entries into new objects and swaps their index items, group by group in offset order. */
class Rewriter {
  entriesRewritten = 0;
  recordsRemoved = 0;
  tombstonesDropped = 0;
  /** Stored bytes of the cleaned range after the swaps. */
  bytes = 0;
  oldestTombstone: number | undefined;
  private group: Pending[] = [];
  private groupBytes = 0;

  constructor(
    private readonly deps: CompactionDeps,
    private readonly topicId: string,
    private readonly state: PartitionState,
    private readonly swapDeadlineMs: number,
  ) {}

  counts() {
    const { entriesRewritten, recordsRemoved, tombstonesDropped } = this;
    return { entriesRewritten, recordsRemoved, tombstonesDropped };
  }

  async add(located: IndexedEntry, cleaned: CleanedEntry): Promise<CompactionResult['skipped']> {
    if (cleaned.oldestTombstone !== undefined) {
      this.oldestTombstone = Math.min(
        this.oldestTombstone ?? cleaned.oldestTombstone,
        cleaned.oldestTombstone,
      );
    }
    if (!cleaned.batches) {
      this.bytes += located.entry.l;
      return undefined;
    }
    // A group's object goes to one tier: segment entries' to the segment store, batch pages' to replicas.
    const open = this.group[0];
    if (open && isSegmentEntry(open.located) !== isSegmentEntry(located)) {
      const stopped = await this.flush();
      if (stopped) return stopped;
    }
    const bytes = Buffer.concat(cleaned.batches);
    this.group.push({ located, cleaned, bytes });
    this.groupBytes += bytes.length;
    if (this.group.length >= GROUP_ENTRIES || this.groupBytes >= GROUP_BYTES) return this.flush();
    return undefined;
  }

  /** Writes the group's object to every in-sync store, then swaps its index items in one transaction. */
  async flush(): Promise<CompactionResult['skipped']> {
    const group = this.group;
    if (group.length === 0) return undefined;
    this.group = [];
    this.groupBytes = 0;
    const { deps, state } = this;
    // A group cleaned out of segments is a segment again, written once to the segment tier.
    const segment = deps.segmentStore && isSegmentEntry(group[0]!.located);
    const key = segment
      ? segmentObjectKey(this.topicId, state.partition, group[0]!.located.baseOffset, deps.newId())
      : dataObjectKey(this.topicId, deps.newId());
    const body = Buffer.concat(group.map((p) => p.bytes));
    const writtenAt = deps.clock.now();
    const targets = segment ? [deps.segmentStore!] : state.isr.map((id) => deps.objectStore(id));
    await Promise.all(targets.map((target) => target.put(key, body)));
    if (deps.clock.now() - writtenAt > this.swapDeadlineMs) return 'deadline';

    const ops = await this.swaps(key, group);
    if (!ops) return 'raced';
    try {
      await deps.store.transact(ops);
    } catch (error) {
      if (error instanceof TransactionCanceledError) return 'raced';
      throw error;
    }
    for (const { cleaned, bytes } of group) {
      this.entriesRewritten++;
      this.recordsRemoved += cleaned.removed;
      this.tombstonesDropped += cleaned.tombstonesDropped;
      this.bytes += bytes.length;
    }
    return undefined;
  }

  /**
   * One update per index page the group touches, replacing its rewritten entries. Each page is read
   * again and conditioned on staying as read, and every entry must still be the one the pass cleaned;
   * else another cleaner or a retention run got there first, and undefined stops the pass.
   */
  private async swaps(key: string, group: readonly Pending[]): Promise<TransactOp[] | undefined> {
    const pk = keys.partitionPk(this.topicId, this.state.partition);
    const byPage = new Map<string, { pending: Pending; b: number }[]>();
    let at = 0;
    for (const pending of group) {
      const rewrites = byPage.get(pending.located.page) ?? [];
      rewrites.push({ pending, b: at });
      byPage.set(pending.located.page, rewrites);
      at += pending.bytes.length;
    }
    const pages = await Promise.all(
      [...byPage.keys()].map((sk) => this.deps.store.get({ pk, sk }, { consistent: true })),
    );
    const ops: TransactOp[] = [];
    for (const page of pages) {
      if (!page || isRetired(page)) return undefined;
      const entries = pageEntries(page);
      for (const { pending, b } of byPage.get(page.sk)!) {
        const { located, cleaned, bytes } = pending;
        const i = entries.findIndex((x) => x.baseOffset === located.baseOffset);
        const now = entries[i]?.entry;
        const read = located.entry;
        if (!now || now.o !== read.o || now.b !== read.b || now.l !== read.l) return undefined;
        entries[i]!.entry = {
          ...now,
          o: key,
          b,
          l: bytes.length,
          c: cleaned.records,
          // A header-only entry has no timestamp: the time index and retention then pass over it.
          t: cleaned.maxTimestamp,
          f: cleaned.minTimestamp,
        };
      }
      ops.push({
        update: { pk, sk: page.sk },
        actions: [{ set: 'e', value: encodePageEntries(page, entries) }],
        condition: { path: 'e', op: '=', value: page['e']! },
      });
    }
    // The log's byte total moves with the swap (log-size.ts), and only while the entries are live and in
    // the tier that counts them: not yet below the log start, nor batch pages a roll has put below the
    // segment index since the pass read it.
    const first = group[0]!.located.baseOffset;
    const live: Condition[] = [{ exists: 'pk' }, { path: 'logStartOffset', op: '<=', value: first }];
    if (!isSegmentEntry(group[0]!.located))
      live.push({ or: [{ notExists: 'segEnd' }, { path: 'segEnd', op: '<=', value: first }] });
    ops.push({
      update: keys.partitionState(this.topicId, this.state.partition),
      actions: cleanerSwapActions(group.reduce((sum, p) => sum + p.bytes.length - p.located.entry.l, 0)),
      condition: { and: live },
    });
    return ops;
  }
}

const isSegmentEntry = (located: IndexedEntry): boolean => located.page.startsWith(keys.segmentPrefix);

const recordsOf = (batch: StoredBatch): KafkaRecord[] =>
  // readBatches verified every CRC already.
  decodeRecordBatch(batch.bytes, { verifyCrc: false }).records;

/** Keys compare byte for byte: latin1 maps each byte to one UTF-16 unit. */
const keyString = (key: Uint8Array): string =>
  Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');

/** Index entries (either tier) with base offsets in [from, to) (both are entry boundaries). */
const indexRange = async (
  store: MetadataStore,
  topicId: string,
  partition: number,
  segmentEnd: number,
  from: number,
  to: number,
): Promise<IndexedEntry[]> => {
  const out: IndexedEntry[] = [];
  for await (const located of logEntries(store, topicId, partition, segmentEnd, from, to)) out.push(located);
  return out;
};

/**
 * Rewritten entries have new max timestamps (none when emptied), so the sparse time index, which marks
 * where the running max timestamp rises (see time-index.ts), is recomputed from the log start; the
 * partition's running max (which the materializer continues from) is set with it, conditioned on the
 * tail not having moved.
 */
const rebuildTimeIndex = async (store: MetadataStore, topicId: string, partition: number): Promise<void> => {
  const key = keys.partitionState(topicId, partition);
  for (let attempt = 0; attempt < 3; attempt++) {
    const item = await store.get(key, { consistent: true });
    if (!item) return;
    const current = asPartitionState(item);
    const { logStartOffset, tailBase } = current;
    const entries = await indexRange(
      store,
      topicId,
      partition,
      segmentEndOf(current),
      logStartOffset,
      tailBase,
    );
    const { marks: rebuilt, runningMax } = timeMarks(
      entries.map(({ baseOffset, entry }) => ({ baseOffset, t: entry.t })),
      -1,
    );
    const wanted = rebuilt.map((mark) => timeMarkItem(topicId, partition, mark));
    const marks = await storedTimeMarks(store, topicId, partition);
    const have = new Set(marks.map((m) => m.sk));
    const keep = new Set(wanted.map((m) => m.sk));
    // Marks at or past tailBase belong to a materializer still at work: not ours to judge.
    const stale = marks.filter((m) => (m['o'] as number) < tailBase && !keep.has(m.sk));
    await store.batchWrite({
      puts: wanted.filter((m) => !have.has(m.sk)),
      deletes: stale.map(({ pk, sk }) => ({ pk, sk })),
    });
    try {
      await store.update(key, [{ set: 'tsMax', value: runningMax }], {
        condition: { path: 'tailBase', op: '=', value: tailBase },
      });
      return;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }
};

const storedTimeMarks = (store: MetadataStore, topicId: string, partition: number): Promise<Item[]> =>
  queryAll(store, {
    pk: keys.partitionPk(topicId, partition),
    sk: { beginsWith: keys.timePrefix },
    consistent: true,
  });
