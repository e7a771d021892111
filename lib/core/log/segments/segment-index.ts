/**
 * The segment index: one `G#{baseOffset}` item per rolled segment, holding the segment's chunks in the
 * batch index's page encoding (entries that point into the segment itself store `=` for its key, `o`
 * on the item), so every reader of index entries (fetch, ListOffsets, compaction, retention) handles
 * segment items and batch pages alike. Segment items tile [first segment, last segment's end) the way
 * pages tile the batch index.
 *
 * The partition item's `segEnd` says how far the segment index reaches. It is raised in the transaction
 * that writes the segment item (rolls before that raised it afterwards, so on older data it may lag
 * behind the index, a roll that crashed in between, but it never runs ahead); the
 * batch pages below `segEnd` stay until local retention retires them, so a reader that trusts a lagging
 * `segEnd` reads the very same bytes from the replica stores.
 */
import type { Item, MetadataStore } from '../../../ports/metadata-store.js';
import type { ObjectStore } from '../../../ports/object-store.js';
import { isSegmentObjectKey, keys } from '../../keys.js';
import type { IndexedEntry } from '../batch-index.js';
import { encodePageEntries, indexEntries, pageEntries } from '../batch-index.js';
import type { PartitionState } from '../partition-state.js';
import type { SegmentChunk } from './format.js';

/** What the partition item holds about segments (beside the commit path's state). */
export interface SegmentState {
  /** Offsets below this are in the segment index. */
  segEnd?: number;
}

export const segmentEndOf = (state: PartitionState): number =>
  (state as PartitionState & SegmentState).segEnd ?? 0;

export const segmentItem = (
  topicId: string,
  partition: number,
  objectKey: string,
  chunks: readonly SegmentChunk[],
  rolledAt: number,
): Item => {
  const first = chunks[0]!;
  const last = chunks.at(-1)!;
  const item: Item = {
    ...keys.segment(topicId, partition, first.baseOffset),
    o: objectKey,
    end: last.baseOffset + last.n,
    rolledAt,
    e: [],
  };
  item['e'] = encodePageEntries(
    item,
    chunks.map(({ b, l, n, c, t, f }) => ({ entry: { o: objectKey, b, l, n, c, t, f } })),
  );
  return item;
};

/**
 * Index entries overlapping [from, to) from whichever tier indexes them: the segment index below
 * `segmentEnd`, the batch index from there on.
 */
export async function* logEntries(
  store: MetadataStore,
  topicId: string,
  partition: number,
  segmentEnd: number,
  from: number,
  to: number,
  cache?: SegmentLookup,
): AsyncGenerator<IndexedEntry> {
  let next = from;
  const segmentsTo = Math.min(to, segmentEnd);
  // Cached segment items first (the fetch path), then the segment index from where they end.
  cached: for (let item = next < segmentsTo ? cache?.holding(next) : undefined; item;) {
    const start = next;
    for (const located of pageEntries(item)) {
      if (located.baseOffset + located.entry.n <= next) continue;
      if (located.baseOffset >= segmentsTo) break cached;
      yield located;
      next = located.baseOffset + located.entry.n;
    }
    item = next > start && next < segmentsTo ? cache?.holding(next) : undefined;
  }
  if (next < segmentsTo) {
    const onPage = cache ? (page: Item) => cache.remember(page) : undefined;
    for await (const located of indexEntries(
      store,
      topicId,
      partition,
      next,
      segmentsTo,
      keys.segmentPrefix,
      onPage,
    )) {
      yield located;
      next = located.baseOffset + located.entry.n;
    }
  }
  if (next < to) yield* indexEntries(store, topicId, partition, next, to);
}

/** A fetch's view of its process's segment item cache, bound to one partition. */
export interface SegmentLookup {
  holding(offset: number): Item | undefined;
  remember(item: Item): void;
}

/** Resolves the store an index entry's object lives in: the segment store for segments, else `local`. */
export type StoreResolver = (key: string) => ObjectStore;

export const tieredStores =
  (local: ObjectStore, segments: ObjectStore | undefined): StoreResolver =>
  (key) =>
    isSegmentObjectKey(key) && segments ? segments : local;
