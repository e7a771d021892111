/**
 * Batch index pages on their own (lib/core/log/batch-index.ts): the item a page is, the marker that
 * retires it, where a page ends, the `=` shorthand of a segment item's own object, and the entries
 * `indexEntries` yields for a range: exactly those overlapping it, in order, read a few pages a query.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import type { IndexedEntry } from '../../../../lib/core/log/batch-index.js';
import {
  RETIRED_PAGE_TTL_MS,
  encodePageEntries,
  indexEntries,
  isRetired,
  pageEnd,
  pageEntries,
  pageItem,
  retiredPageItem,
} from '../../../../lib/core/log/batch-index.js';
import type { TailEntry } from '../../../../lib/core/log/partition-state.js';
import { encodeTailEntry } from '../../../../lib/core/log/partition-codec.js';
import type { Item, MetadataStore, QueryInput } from '../../../../lib/ports/metadata-store.js';

const TOPIC = 'topic';
const entry = (n: number, id = 'x'): TailEntry => ({
  objectKey: dataObjectKey(TOPIC, id),
  position: 0,
  sizeInBytes: 10 * n,
  offsetCount: n,
  recordCount: n,
  maxTimestamp: 5,
  firstTimestamp: 4,
});

describe('a batch index page', () => {
  it('is keyed by its first offset and holds its entries in the tail encoding', () => {
    const entries = [entry(3), entry(2, 'y')];
    const page = pageItem(TOPIC, 1, 40, entries);
    expect(page).toEqual({ ...keys.batch(TOPIC, 1, 40), e: entries.map((e) => encodeTailEntry(e, TOPIC)) });
    expect(pageEntries(page)).toEqual([
      { baseOffset: 40, entry: entries[0], page: page.sk },
      { baseOffset: 43, entry: entries[1], page: page.sk },
    ]);
    expect([isRetired(page), pageEnd(page)]).toEqual([false, 45]);
  });

  it('ends where it starts when empty, and a retired marker keeps its end, no entries, and a day-long TTL', () => {
    expect(pageEnd(pageItem(TOPIC, 0, 7, []))).toBe(7);
    const page = pageItem(TOPIC, 0, 7, [entry(4)]);
    const now = 1_700_000_000_500;
    const marker = retiredPageItem(page, now);
    expect(marker).toEqual({
      pk: page.pk,
      sk: page.sk,
      end: 11,
      expiresAt: Math.ceil((now + RETIRED_PAGE_TTL_MS) / 1000),
    });
    expect(RETIRED_PAGE_TTL_MS).toBe(86_400_000);
    expect([isRetired(marker), pageEnd(marker), pageEntries(marker)]).toEqual([true, 11, []]);
    // The end attribute is what a marker's end is, whatever else it holds.
    expect(pageEnd({ ...page, end: 9 })).toBe(9);
  });

  it("stores entries pointing into the item's own object as '=', and reads them back whole", () => {
    const own = 'g/topic/0/00000000000000000000-s1';
    const item: Item = { ...keys.segment(TOPIC, 0, 0), o: own, e: [] };
    const entries = [{ entry: { ...entry(2), objectKey: own } }, { entry: entry(3, 'other') }];
    const encoded = encodePageEntries(item, entries);
    expect(encoded).toEqual([
      encodeTailEntry({ ...entry(2), objectKey: '=' }, TOPIC),
      encodeTailEntry(entry(3, 'other'), TOPIC),
    ]);
    expect(encoded[0]!.endsWith('|=')).toBe(true);
    expect(pageEntries({ ...item, e: encoded }).map((x) => x.entry)).toEqual([
      { ...entry(2), objectKey: own },
      entry(3, 'other'),
    ]);
    // Without an own object, '=' is no shorthand: a batch page keeps every key whole.
    const page = pageItem(TOPIC, 0, 0, [entry(1)]);
    expect(encodePageEntries(page, [{ entry: entry(1) }])).toEqual(page['e']);
  });

  it("reads '=' as a key of its own where the item names no object (or not as a string)", () => {
    const stored = encodeTailEntry({ ...entry(2), objectKey: '=' }, TOPIC);
    const page = { ...keys.batch(TOPIC, 0, 0), e: [stored] };
    expect(pageEntries(page).map((x) => x.entry.objectKey)).toEqual(['=']);
    expect(pageEntries({ ...page, o: 5 }).map((x) => x.entry.objectKey)).toEqual(['=']);
  });

  it('encodes the entries of an item whose key names no topic as for the empty topic id', () => {
    // Only a key of the topic the item names is shortened to `@id`; with none, that is the topic ''.
    const item: Item = { pk: 'X', sk: 'B#0', e: [] };
    const ofNone = { ...entry(1), objectKey: dataObjectKey('', 'x') };
    expect(encodePageEntries(item, [{ entry: ofNone }, { entry: entry(1) }])).toEqual([
      encodeTailEntry(ofNone, ''),
      encodeTailEntry(entry(1), ''),
    ]);
    expect(encodeTailEntry(ofNone, '').endsWith('|@x')).toBe(true);
  });
});

describe('index entries of a range', () => {
  /** Pages of the given sizes in entries, each entry spanning 2 offsets: page i starts at 2 * (sizes before i). */
  const index = async (sizes: number[], prefix = 'B#') => {
    const store = new MemoryMetadataStore();
    let offset = 0;
    for (const size of sizes) {
      const page = pageItem(
        TOPIC,
        0,
        offset,
        Array.from({ length: size }, () => entry(2)),
      );
      await store.put(prefix === 'B#' ? page : { ...page, sk: page.sk.replace('B#', prefix) });
      offset += 2 * size;
    }
    const queries: QueryInput[] = [];
    const spy = Object.create(store, {
      query: { value: (input: QueryInput) => (queries.push(input), store.query(input)) },
    }) as MetadataStore;
    return { store: spy, queries };
  };
  const read = async (store: MetadataStore, from: number, to: number, prefix?: string, seen?: Item[]) => {
    const out: number[] = [];
    for await (const x of indexEntries(
      store,
      TOPIC,
      0,
      from,
      to,
      prefix,
      seen ? (p) => seen.push(p) : undefined,
    ))
      out.push(x.baseOffset);
    return out;
  };

  it('yields exactly the entries overlapping [from, to), in offset order', async () => {
    const { store } = await index([3, 2, 4]);
    // Entries at 0, 2, 4 | 6, 8 | 10, 12, 14, 16; the log ends at 18.
    expect(await read(store, 0, 18)).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16]);
    expect(await read(store, 3, 9)).toEqual([2, 4, 6, 8]);
    expect(await read(store, 4, 5)).toEqual([4]);
    expect(await read(store, 5, 6)).toEqual([4]);
    expect(await read(store, 6, 7)).toEqual([6]);
    expect(await read(store, 17, 100)).toEqual([16]);
    expect(await read(store, 18, 100)).toEqual([]);
    expect(await read(store, 5, 5)).toEqual([]);
    expect(await read(store, 9, 3)).toEqual([]);
  });

  it('reads the page holding `from`, then a few pages per query, and stops when the caller does', async () => {
    const { store, queries } = await index(Array.from({ length: 20 }, () => 1));
    expect(await read(store, 3, 40)).toEqual(Array.from({ length: 19 }, (_, i) => 2 * (i + 1)));
    // The holding page, then pages 4.. in queries of 8: 8, 8 and the last 2.
    expect(queries.map((q) => [q.limit, q.reverse ?? false, q.sk])).toEqual([
      [1, true, { between: ['B#', keys.batch(TOPIC, 0, 3).sk] }],
      [8, false, { between: [keys.batch(TOPIC, 0, 4).sk, keys.batch(TOPIC, 0, 39).sk] }],
      [8, false, { between: [keys.batch(TOPIC, 0, 4).sk, keys.batch(TOPIC, 0, 39).sk] }],
      [8, false, { between: [keys.batch(TOPIC, 0, 4).sk, keys.batch(TOPIC, 0, 39).sk] }],
    ]);
    expect(queries.map((q) => [q.consistent, q.cursor !== undefined])).toEqual([
      [true, false],
      [true, false],
      [true, true],
      [true, true],
    ]);
    queries.length = 0;
    // A range within the holding page needs no second query.
    expect(await read(store, 2, 4)).toEqual([2]);
    expect(queries).toHaveLength(1);
    queries.length = 0;
    for await (const x of indexEntries(store, TOPIC, 0, 0, 40)) if (x.baseOffset >= 4) break;
    expect(queries).toHaveLength(2);
  });

  it('reads the segment index with its prefix, and tells every item read', async () => {
    const { store } = await index([2, 2], 'G#');
    const seen: Item[] = [];
    expect(await read(store, 1, 8, 'G#', seen)).toEqual([0, 2, 4, 6]);
    expect(seen.map((p) => p.sk)).toEqual([keys.segment(TOPIC, 0, 0).sk, keys.segment(TOPIC, 0, 4).sk]);
    expect(await read(store, 1, 8)).toEqual([]);
  });

  it('starts at `from` when no page holds it, and skips retired pages', async () => {
    const { store } = await index([2, 2, 2]);
    await store.put(retiredPageItem(pageItem(TOPIC, 0, 0, [entry(2), entry(2)]), 0));
    expect(await read(store, 0, 12)).toEqual([4, 6, 8, 10]);
    const empty = new MemoryMetadataStore();
    const seen: Item[] = [];
    expect(await read(empty, 0, 12, 'B#', seen)).toEqual([]);
    // No holding page: nothing to tell.
    expect(seen).toEqual([]);
    const later = await index([]);
    await later.store.put(pageItem(TOPIC, 0, 6, [entry(2)]));
    expect(await read(later.store, 0, 12)).toEqual([6]);
  });

  it('yields each entry with the page that holds it', async () => {
    const { store } = await index([1, 1]);
    const got: IndexedEntry[] = [];
    for await (const x of indexEntries(store, TOPIC, 0, 0, 4)) got.push(x);
    expect(got.map((x) => [x.baseOffset, x.page])).toEqual([
      [0, keys.batch(TOPIC, 0, 0).sk],
      [2, keys.batch(TOPIC, 0, 2).sk],
    ]);
  });

  it('stops at the first entry past the range, though the query says it may go on (DynamoDB at its limit)', async () => {
    // The holding page at 0, then 7 pages of one entry and one of two (16 and 18) in the first query of 8.
    const { store, queries } = await index([1, 1, 1, 1, 1, 1, 1, 1, 2, 1]);
    // DynamoDB answers a query that reached its limit with a LastEvaluatedKey even when nothing is left.
    const atLimit = Object.create(store, {
      query: {
        value: async (input: QueryInput) => {
          const out = await store.query(input);
          const last = out.items.at(-1);
          return out.items.length === input.limit && last && !out.cursor
            ? { ...out, cursor: Buffer.from(last.sk).toString('base64url') }
            : out;
        },
      },
    }) as MetadataStore;
    expect(await read(atLimit, 0, 17)).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16]);
    expect(queries).toHaveLength(2);
  });
});
