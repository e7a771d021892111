/**
 * The batch index: committed entries below the partition item's tail, in page items of up to one
 * materialization pass each (`B#{base offset of the first entry}`), entries encoded as in the tail.
 * Pages tile the log: each starts where the one before it ends, so the page holding an offset is the
 * last one starting at or before it. One page per pass instead of one item per batch cuts the index's
 * writes by the pass length. Materializers racing on one tail keep the tiling through the only-if-absent
 * put: one that finds a page where its pass starts follows the pages and writes only what they do not
 * hold (see materialize.ts).
 *
 * Pages are written only if absent and never moved: compaction rewrites entries in place, and retention
 * retires a page it has dropped by putting a marker in its place (`end`, no entries) that keeps the key
 * taken for a day, so a materializer that stalled cannot put the page back (a Lambda runs 15 minutes at
 * most); DynamoDB's TTL removes the marker.
 */
import type { Item, MetadataStore } from '../../ports/metadata-store.js';
import { keys, offsetFromBatchSk, pad } from '../keys.js';
import type { TailEntry } from './partition-state.js';
import { decodeTailEntry, encodeTailEntry, topicIdOf } from './partition-codec.js';

export interface LocatedEntry {
  baseOffset: number;
  entry: Pick<
    TailEntry,
    | 'objectKey'
    | 'position'
    | 'sizeInBytes'
    | 'offsetCount'
    | 'recordCount'
    | 'maxTimestamp'
    | 'firstTimestamp'
  >;
}

/** An index entry with the whole tail entry and the page that holds it. */
export interface IndexedEntry extends LocatedEntry {
  entry: TailEntry;
  page: string;
}

/** How long a retired page's marker keeps its key. */
export const RETIRED_PAGE_TTL_MS = 24 * 60 * 60_000;
/** Page items per query when reading on (a page holds up to a pass: 64 entries). */
const PAGES_PER_QUERY = 8;

export const pageItem = (
  topicId: string,
  partition: number,
  baseOffset: number,
  entries: readonly TailEntry[],
): Item => ({
  ...keys.batch(topicId, partition, baseOffset),
  e: entries.map((entry) => encodeTailEntry(entry, topicId)),
});

/** The marker retention leaves in place of a page it dropped. */
export const retiredPageItem = (page: Item, now: number): Item => ({
  pk: page.pk,
  sk: page.sk,
  end: pageEnd(page),
  expiresAt: Math.ceil((now + RETIRED_PAGE_TTL_MS) / 1000),
});

export const isRetired = (page: Item): boolean => !Array.isArray(page['e']);

/**
 * Entries that point into the item's own object (`o`, a segment item's segment) store `=` for the key,
 * which would otherwise repeat in every chunk of the item.
 */
const SHARED_OBJECT = '=';

/** The page's entries with their base offsets (none for a retired page). */
export const pageEntries = (page: Item): IndexedEntry[] => {
  const list = page['e'];
  if (!Array.isArray(list)) return [];
  let next = offsetFromBatchSk(page.sk);
  const topicId = topicIdOf(page);
  const shared = typeof page['o'] === 'string' ? page['o'] : undefined;
  return list.map((s) => {
    const entry = decodeTailEntry(String(s), topicId);
    if (entry.objectKey === SHARED_OBJECT && shared !== undefined) entry.objectKey = shared;
    const located = { baseOffset: next, entry, page: page.sk };
    next += entry.offsetCount;
    return located;
  });
};

/** The `e` attribute of a page or segment item holding these entries. */
export const encodePageEntries = (page: Item, entries: readonly Pick<IndexedEntry, 'entry'>[]): string[] => {
  const topicId = topicIdOf(page);
  const shared = typeof page['o'] === 'string' ? page['o'] : undefined;
  return entries.map(({ entry }) =>
    encodeTailEntry(
      entry.objectKey === shared ? { ...entry, objectKey: SHARED_OBJECT } : entry,
      topicId ?? '',
    ),
  );
};

/** The offset after the page's last entry. */
export const pageEnd = (page: Item): number => {
  if (typeof page['end'] === 'number') return page['end'];
  const last = pageEntries(page).at(-1);
  return last ? last.baseOffset + last.entry.offsetCount : offsetFromBatchSk(page.sk);
};

/**
 * Index entries overlapping offsets [from, to), in offset order, read a few pages at a time as the
 * caller goes (stop early by breaking out of the loop). The batch index by default; the segment index
 * (same item shape, `G#` keys) with `prefix: keys.segmentPrefix`.
 */
export async function* indexEntries(
  store: MetadataStore,
  topicId: string,
  partition: number,
  from: number,
  to: number,
  prefix: string = keys.batchPrefix,
  /** Told every index item read (the fetch path caches segment items). */
  onPage?: (page: Item) => void,
): AsyncGenerator<IndexedEntry> {
  if (to <= from) return;
  const pk = keys.partitionPk(topicId, partition);
  const skAt = (offset: number) => `${prefix}${pad(offset)}`;
  const within = function* (page: Item): Generator<IndexedEntry, boolean> {
    for (const located of pageEntries(page)) {
      if (located.baseOffset >= to) return false;
      if (located.baseOffset + located.entry.offsetCount > from) yield located;
    }
    return true;
  };
  const holding = await store.query({
    pk,
    sk: { between: [prefix, skAt(from)] },
    reverse: true,
    limit: 1,
    consistent: true,
  });
  const head = holding.items[0];
  if (head) onPage?.(head);
  if (head && !(yield* within(head))) return;
  const next = head ? pageEnd(head) : from;
  if (next >= to) return;
  let cursor: string | undefined;
  do {
    const page = await store.query({
      pk,
      sk: { between: [skAt(next), skAt(to - 1)] },
      limit: PAGES_PER_QUERY,
      consistent: true,
      ...(cursor ? { cursor } : {}),
    });
    for (const item of page.items) {
      onPage?.(item);
      if (!(yield* within(item))) return;
    }
    cursor = page.cursor;
  } while (cursor);
}
