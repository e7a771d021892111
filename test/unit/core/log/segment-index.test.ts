/**
 * Reading index entries across the two tiers (lib/core/log/segments/segment-index.ts): the segment
 * index below segEnd, the batch index from there, each entry once; the fetch path's cached segment
 * items first, then the index from where they end; and which store an entry's object is read from.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../../lib/adapters/memory/object-store.js';
import { dataObjectKey, keys, segmentObjectKey } from '../../../../lib/core/keys.js';
import { pageItem } from '../../../../lib/core/log/batch-index.js';
import type { PartitionState } from '../../../../lib/core/log/partition-state.js';
import { decodePartitionState, initialPartitionState } from '../../../../lib/core/log/partition-codec.js';
import type { SegmentLookup } from '../../../../lib/core/log/segments/segment-index.js';
import {
  logEntries,
  segmentEndOf,
  segmentItem,
  tieredStores,
} from '../../../../lib/core/log/segments/segment-index.js';
import type { Item, MetadataStore } from '../../../../lib/ports/metadata-store.js';

const TOPIC = 'topic';
const G0 = segmentObjectKey(TOPIC, 0, 0, 's1');
const G10 = segmentObjectKey(TOPIC, 0, 10, 's2');
const LOCAL = dataObjectKey(TOPIC, 'local');
const chunk = (baseOffset: number, n: number, b: number) => ({
  baseOffset,
  position: b,
  sizeInBytes: 100,
  offsetCount: n,
  recordCount: n,
  maxTimestamp: 9,
  firstTimestamp: 8,
});
const segments = [
  segmentItem(TOPIC, 0, G0, [chunk(0, 4, 0), chunk(4, 6, 100)], 1),
  segmentItem(TOPIC, 0, G10, [chunk(10, 5, 0), chunk(15, 5, 100)], 1),
];
const localEntry = {
  objectKey: LOCAL,
  position: 0,
  sizeInBytes: 50,
  offsetCount: 5,
  recordCount: 5,
  maxTimestamp: 9,
  firstTimestamp: 8,
};

/**
 * Segments [0, 10) and [10, 20); batch pages [0, 20) (the local copies, still there) and [20, 30).
 * Every query counted.
 */
const tiers = async () => {
  const inner = new MemoryMetadataStore();
  for (const item of segments) await inner.put(item);
  await inner.put(
    pageItem(
      TOPIC,
      0,
      0,
      [0, 1, 2, 3].map(() => localEntry),
    ),
  );
  await inner.put(pageItem(TOPIC, 0, 20, [localEntry, localEntry]));
  const queried: string[] = [];
  const store = Object.create(inner, {
    query: {
      value: (input: Parameters<MetadataStore['query']>[0]) => {
        const sk = input.sk && 'between' in input.sk ? input.sk.between[0].slice(0, 2) : '?';
        queried.push(sk);
        return inner.query(input);
      },
    },
  }) as MetadataStore;
  const read = async (from: number, to: number, segEnd = 20, cache?: SegmentLookup) => {
    const out: [number, string][] = [];
    for await (const x of logEntries(store, TOPIC, 0, segEnd, from, to, cache))
      out.push([x.baseOffset, x.entry.objectKey]);
    return out;
  };
  return { store, queried, read };
};

/** A fake of the fetcher's cache: the items given, by offset range, and what it was told to remember. */
const lookup = (items: Item[]) => {
  const remembered: string[] = [];
  const asked: number[] = [];
  const cache: SegmentLookup = {
    holding: (offset) => {
      asked.push(offset);
      return items.find(
        (i) =>
          (i['e'] as string[]).length > 0 && offset >= Number(i.sk.slice(2)) && offset < (i['end'] as number),
      );
    },
    remember: (item) => void remembered.push(item.sk),
  };
  return { cache, remembered, asked };
};

describe('index entries across the tiers', () => {
  it('come from the segment index below segEnd and the batch index from it, each offset once', async () => {
    const t = await tiers();
    expect(await t.read(0, 30)).toEqual([
      [0, G0],
      [4, G0],
      [10, G10],
      [15, G10],
      [20, LOCAL],
      [25, LOCAL],
    ]);
    expect(await t.read(12, 22)).toEqual([
      [10, G10],
      [15, G10],
      [20, LOCAL],
    ]);
    expect(await t.read(3, 5)).toEqual([
      [0, G0],
      [4, G0],
    ]);
    expect(await t.read(20, 30)).toEqual([
      [20, LOCAL],
      [25, LOCAL],
    ]);
    expect(await t.read(19, 20)).toEqual([[15, G10]]);
    expect(await t.read(30, 40)).toEqual([]);
  });

  it('come from the batch index alone with nothing rolled, or past segEnd', async () => {
    const t = await tiers();
    expect(await t.read(0, 30, 0)).toEqual([
      [0, LOCAL],
      [5, LOCAL],
      [10, LOCAL],
      [15, LOCAL],
      [20, LOCAL],
      [25, LOCAL],
    ]);
    expect(t.queried.every((sk) => sk === 'B#')).toBe(true);
    t.queried.length = 0;
    // A segEnd that lags behind the segment index (a roll that crashed before raising it) is trusted:
    // the batch pages below the last segment's end are still there.
    expect(await t.read(0, 30, 10)).toEqual([
      [0, G0],
      [4, G0],
      [10, LOCAL],
      [15, LOCAL],
      [20, LOCAL],
      [25, LOCAL],
    ]);
  });

  it('come from cached segment items first, the index from where they end, telling the cache what it read', async () => {
    const t = await tiers();
    const all = lookup(segments);
    expect(await t.read(5, 30, 20, all.cache)).toEqual([
      [4, G0],
      [10, G10],
      [15, G10],
      [20, LOCAL],
      [25, LOCAL],
    ]);
    expect(all.asked).toEqual([5, 10]);
    // No segment index query at all; the batch index for [20, 30).
    expect(t.queried.filter((sk) => sk === 'G#')).toEqual([]);
    expect(all.remembered).toEqual([]);

    const t2 = await tiers();
    const first = lookup([segments[0]!]);
    expect(await t2.read(0, 30, 20, first.cache)).toEqual([
      [0, G0],
      [4, G0],
      [10, G10],
      [15, G10],
      [20, LOCAL],
      [25, LOCAL],
    ]);
    // [10, 20) is not cached: read from the segment index and remembered.
    expect(first.asked).toEqual([0, 10]);
    expect(first.remembered).toEqual([segments[1]!.sk]);
  });

  it('stop a cached item at segEnd and at the end of the range', async () => {
    const t = await tiers();
    const all = lookup(segments);
    expect(await t.read(0, 12, 20, all.cache)).toEqual([
      [0, G0],
      [4, G0],
      [10, G10],
    ]);
    expect(t.queried).toEqual([]);
    // segEnd inside the cached second segment (it lags): its entries past segEnd come from the pages.
    const lagging = await tiers();
    expect(await lagging.read(0, 30, 15, lookup(segments).cache)).toEqual([
      [0, G0],
      [4, G0],
      [10, G10],
      [15, LOCAL],
      [20, LOCAL],
      [25, LOCAL],
    ]);
    // A range starting at segEnd does not ask the cache.
    const past = lookup(segments);
    expect(await (await tiers()).read(20, 30, 20, past.cache)).toEqual([
      [20, LOCAL],
      [25, LOCAL],
    ]);
    expect(past.asked).toEqual([]);
  });

  it('read the index when a cached item does not hold the offset asked for, rather than ask again forever', async () => {
    const t = await tiers();
    const asked: number[] = [];
    const lying: SegmentLookup = {
      holding: (offset) => (asked.push(offset), segments[0]),
      remember: () => undefined,
    };
    expect(await t.read(0, 30, 20, lying)).toEqual([
      [0, G0],
      [4, G0],
      [10, G10],
      [15, G10],
      [20, LOCAL],
      [25, LOCAL],
    ]);
    expect(asked).toEqual([0, 10]);
  });
});

describe('the partition item', () => {
  it('says how far the segment index reaches, 0 before the first roll', () => {
    const state = decodePartitionState(initialPartitionState(TOPIC, 't', 0, ['s0']));
    expect(segmentEndOf(state)).toBe(0);
    expect(segmentEndOf({ ...state, segEnd: 40 } as PartitionState)).toBe(40);
  });
});

describe("an entry's store", () => {
  it('is the segment store for a segment object, the replica store otherwise or without a segment store', () => {
    const local = new MemoryObjectStore('s0');
    const segmentStore = new MemoryObjectStore('segments');
    const resolve = tieredStores(local, segmentStore);
    expect([resolve(G0), resolve(LOCAL), resolve(`x${G0}`)]).toEqual([segmentStore, local, local]);
    expect(tieredStores(local, undefined)(G0)).toBe(local);
  });
});

describe('a segment index item', () => {
  it("holds the segment's chunks with its object key once, its end and when it was rolled", () => {
    const item = segments[1]!;
    expect(item).toEqual({
      ...keys.segment(TOPIC, 0, 10),
      o: G10,
      end: 20,
      rolledAt: 1,
      e: ['0|2s|5|5|9|1||||||=', '2s|2s|5|5|9|1||||||='],
    });
  });
});
