/**
 * The swap step of the log cleaner (compaction.ts): rewritten entries are collected into new objects,
 * written to every in-sync store (or the segment store, for entries cleaned out of segments), then
 * swapped into their index pages in one transaction per group, in offset order. Each page is read
 * again and conditioned on not changing, and each entry on still pointing where the pass read it: a
 * concurrent cleaner or retention run cancels the swap and the pass stops ('raced'); an object whose
 * write outlasted the swap deadline is not swapped in ('deadline').
 */
import type { Clock } from '../../ports/clock.js';
import type { Condition, MetadataStore, TransactOp } from '../../ports/metadata-store.js';
import { TransactionCanceledError } from '../../ports/metadata-store.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { dataObjectKey, keys, segmentObjectKey } from '../keys.js';
import type { IndexedEntry } from './batch-index.js';
import { encodePageEntries, isRetired, pageEntries } from './batch-index.js';
import { cleanerSwapActions } from './log-size.js';
import type { PartitionState } from './partition-state.js';

/** Entries (and bytes) per new object and per swap transaction. */
const GROUP_ENTRIES = 50;
const GROUP_BYTES = 16 * 1024 * 1024;

/** Why a swap stopped the pass. */
export type SwapStop = 'raced' | 'deadline';

export interface CompactionDeps {
  store: MetadataStore;
  clock: Clock;
  newId: () => string;
  objectStore(id: string): ObjectStore;
  /** Where rewritten segments go (a segment's cleaned batches stay in the segment tier). */
  segmentStore?: ObjectStore | undefined;
}

export interface CleanedEntry {
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

interface Pending {
  located: IndexedEntry;
  cleaned: CleanedEntry;
  bytes: Uint8Array;
}

/** Collects rewritten entries into new objects and swaps their index items, group by group in offset order. */
export class Rewriter {
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

  async add(located: IndexedEntry, cleaned: CleanedEntry): Promise<SwapStop | undefined> {
    if (cleaned.oldestTombstone !== undefined) {
      this.oldestTombstone = Math.min(
        this.oldestTombstone ?? cleaned.oldestTombstone,
        cleaned.oldestTombstone,
      );
    }
    if (!cleaned.batches) {
      this.bytes += located.entry.sizeInBytes;
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
  async flush(): Promise<SwapStop | undefined> {
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
    const byPage = new Map<string, { pending: Pending; position: number }[]>();
    let at = 0;
    for (const pending of group) {
      const rewrites = byPage.get(pending.located.page) ?? [];
      rewrites.push({ pending, position: at });
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
      for (const { pending, position } of byPage.get(page.sk)!) {
        const { located, cleaned, bytes } = pending;
        const i = entries.findIndex((x) => x.baseOffset === located.baseOffset);
        const now = entries[i]?.entry;
        const read = located.entry;
        if (
          !now ||
          now.objectKey !== read.objectKey ||
          now.position !== read.position ||
          now.sizeInBytes !== read.sizeInBytes
        )
          return undefined;
        entries[i]!.entry = {
          ...now,
          objectKey: key,
          position,
          sizeInBytes: bytes.length,
          recordCount: cleaned.records,
          // A header-only entry has no timestamp: the time index and retention then pass over it.
          maxTimestamp: cleaned.maxTimestamp,
          firstTimestamp: cleaned.minTimestamp,
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
      actions: cleanerSwapActions(
        group.reduce((sum, p) => sum + p.bytes.length - p.located.entry.sizeInBytes, 0),
      ),
      condition: { and: live },
    });
    return ops;
  }
}

const isSegmentEntry = (located: IndexedEntry): boolean => located.page.startsWith(keys.segmentPrefix);
