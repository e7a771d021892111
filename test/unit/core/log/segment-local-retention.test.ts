/**
 * Local retention (KIP-405's local.retention.ms / local.retention.bytes) on a hand-built partition:
 * exactly which batch pages it retires (oldest first, only wholly below segEnd, at the boundaries of
 * each limit), the marker it leaves, and what it does when a page changed under it or the store fails.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { keys } from '../../../../lib/core/keys.js';
import {
  RETIRED_PAGE_TTL_MS,
  pageEnd,
  pageEntries,
  pageItem,
  retiredPageItem,
} from '../../../../lib/core/log/batch-index.js';
import { segmentItem } from '../../../../lib/core/log/segments/segment-index.js';
import type { TailEntry } from '../../../../lib/core/log/partition-state.js';
import { encodeTailEntry, initialPartitionState } from '../../../../lib/core/log/partition-codec.js';
import { CLEANER_SWAPS_ATTR, FIRST_LOCAL_ATTR, LOG_SIZE_ATTR } from '../../../../lib/core/log/log-size.js';
import type { LocalRetentionConfig } from '../../../../lib/core/log/segments/local-retention.js';
import {
  localLimits,
  locallyRetiredPageItem,
  retireLocalCopies,
} from '../../../../lib/core/log/segments/local-retention.js';
import { InterceptedMetadataStore } from '../../../support/seams.js';
import { readsRecorded } from '../../../support/segment-support.js';

const TOPIC = 'topic';
const NOW = 1_700_000_000_000;
const entry = (o: string, l: number, t: number, n = 2): TailEntry => ({
  objectKey: o,
  position: 0,
  sizeInBytes: l,
  offsetCount: n,
  recordCount: n,
  maxTimestamp: t,
  firstTimestamp: t - 5,
});

/**
 * Pages [0, 6) of 300 bytes, newest record at NOW - 50 s; [6, 10) of 200 bytes, at NOW - 20 s; [10, 14)
 * of 200 bytes, at NOW - 90 s; then a tail of 50 bytes. The segment index reaches `segEnd`.
 */
const partition = async (segEnd: number | 'unrolled' = 10) => {
  const store = new MemoryMetadataStore();
  const pages = [
    pageItem(TOPIC, 0, 0, [
      entry('d/a', 100, NOW - 60_000),
      entry('d/a', 100, NOW - 50_000),
      entry('d/b', 100, NOW - 55_000),
    ]),
    pageItem(TOPIC, 0, 6, [entry('d/c', 120, NOW - 20_000), entry('d/d', 80, NOW - 30_000)]),
    pageItem(TOPIC, 0, 10, [entry('d/e', 200, NOW - 90_000, 4)]),
  ];
  const state = initialPartitionState(TOPIC, 't', 0, ['s0']);
  await store.put({
    ...state,
    tailBase: 14,
    nextOffset: 15,
    tail: [encodeTailEntry(entry('d/f', 50, NOW, 1), TOPIC)],
    // The log's byte total: 700 of pages (their segments hold the same bytes) and 50 of tail.
    [LOG_SIZE_ATTR]: 750,
    ...(segEnd === 'unrolled' ? {} : { segEnd }),
  });
  for (const page of pages) await store.put(page);
  // The segment index below segEnd: a segment per page, holding the same bytes.
  for (const page of pages) {
    const chunks = pageEntries(page).map(({ baseOffset, entry: e }) => ({ ...e, baseOffset }));
    if (segEnd !== 'unrolled' && pageEnd(page) <= segEnd)
      await store.put(segmentItem(TOPIC, 0, `g/${page.sk}`, chunks, NOW));
  }
  const page = async (offset: number) => (await store.get(keys.batch(TOPIC, 0, offset)))!;
  return { store, pages, page };
};

const config = (limits: Partial<LocalRetentionConfig>): LocalRetentionConfig => ({
  'retention.ms': -1,
  'retention.bytes': -1,
  'local.retention.ms': -1,
  'local.retention.bytes': -1,
  ...limits,
});

/**
 * 300 + 200 + 200 bytes of pages and 50 of tail (750): the pages retired at each local.retention.bytes,
 * oldest first while the rest, tail included, still reaches the limit.
 */
const RETIRED_AT_LIMIT = [
  [751, 0],
  [451, 0],
  [450, 1],
  [251, 1],
  [250, 2],
  [51, 2],
  [50, 3],
  [0, 3],
] as const;

/**
 * A partition whose one page (offsets 0-1, rolled: segEnd 2) lost all its records to compaction, so it
 * has no timestamps; `state` changes the partition item after it is written.
 */
const compactedAwayPage = async (state?: Record<string, unknown>): Promise<MemoryMetadataStore> => {
  const store = new MemoryMetadataStore();
  await store.put({ ...initialPartitionState(TOPIC, 't', 0, ['s0']), tailBase: 2, nextOffset: 2, segEnd: 2 });
  if (state) await setState(store, state);
  const gone = { ...entry('d/a', 10, -1), recordCount: 0, firstTimestamp: -1 };
  await store.put(pageItem(TOPIC, 0, 0, [gone]));
  return store;
};

describe('local retention limits', () => {
  it("are the topic's own, or with Kafka's -2 the topic's retention.ms and retention.bytes", () => {
    const limits = { 'retention.ms': 7, 'retention.bytes': 8 };
    expect(localLimits({ ...limits, 'local.retention.ms': 1, 'local.retention.bytes': 2 })).toEqual({
      retentionMs: 1,
      retentionBytes: 2,
    });
    expect(localLimits({ ...limits, 'local.retention.ms': -2, 'local.retention.bytes': -2 })).toEqual({
      retentionMs: 7,
      retentionBytes: 8,
    });
    expect(localLimits({ ...limits, 'local.retention.ms': -1, 'local.retention.bytes': -2 })).toEqual({
      retentionMs: -1,
      retentionBytes: 8,
    });
    expect(localLimits({ ...limits, 'local.retention.ms': 0, 'local.retention.bytes': -1 })).toEqual({
      retentionMs: 0,
      retentionBytes: -1,
    });
  });
});

describe('the marker of a locally retired page', () => {
  it("keeps the page's end, its objects once each and the time it was retired", () => {
    const page = pageItem(TOPIC, 0, 0, [entry('d/a', 100, 1), entry('d/b', 100, 2), entry('d/a', 100, 3)]);
    expect(locallyRetiredPageItem(page, NOW)).toEqual({
      ...keys.batch(TOPIC, 0, 0),
      end: 6,
      expiresAt: Math.ceil((NOW + RETIRED_PAGE_TTL_MS) / 1000),
      retiredAt: NOW,
      objs: ['d/a', 'd/b'],
    });
  });
});

describe('retiring local copies', () => {
  it('by local.retention.ms retires the pages below segEnd whose newest record is older, oldest first', async () => {
    const p = await partition();
    // Page 0's newest is 50 s old: retired at a 49,999 ms limit, kept at exactly 50,000.
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.ms': 50_000 }), NOW)).toBe(0);
    expect(await p.page(0)).toEqual(p.pages[0]);
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.ms': 49_999 }), NOW)).toBe(1);
    expect(await p.page(0)).toEqual(locallyRetiredPageItem(p.pages[0]!, NOW));
    expect(await p.page(6)).toEqual(p.pages[1]);
    // Page 10 is older still, but not wholly below segEnd: the segment index does not hold it yet.
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.ms': 1 }), NOW + 1)).toBe(1);
    expect(await p.page(6)).toEqual(locallyRetiredPageItem(p.pages[1]!, NOW + 1));
    expect(await p.page(10)).toEqual(p.pages[2]);
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.ms': 0 }), NOW + 2)).toBe(0);
  });

  it('stops at the first page it keeps, though a newer page is older by its timestamps', async () => {
    const p = await partition(14);
    // Page 6 (newest 20 s) is kept at 30 s; page 10 (90 s old) is not reached.
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.ms': 30_000 }), NOW)).toBe(1);
    expect((await p.page(10))['e']).toEqual(p.pages[2]!['e']);
  });

  it('by local.retention.bytes retires the oldest pages while the rest, tail included, still reaches the limit', async () => {
    // 300 + 200 + 200 bytes of pages and 50 of tail: 750. A page goes while the rest is at least the limit.
    for (const [limit, retired] of RETIRED_AT_LIMIT) {
      const p = await partition(14);
      const bytes = config({ 'local.retention.bytes': limit });
      expect(await retireLocalCopies(p.store, TOPIC, 0, bytes, NOW), `limit ${limit}`).toBe(retired);
      const live = [0, 6, 10].filter((o, i) => i >= retired);
      for (const o of live) expect((await p.page(o))['e'], `limit ${limit}`).toBeDefined();
    }
  });

  it('by either limit: a page goes when it is too old or the rest is too large', async () => {
    // Page 0 is 50 s old (the rest, 450 bytes, is below 600); page 6 is neither.
    const p = await partition(14);
    expect(
      await retireLocalCopies(
        p.store,
        TOPIC,
        0,
        config({ 'local.retention.ms': 40_000, 'local.retention.bytes': 600 }),
        NOW,
      ),
    ).toBe(1);
    // Pages 0 and 6 are not 60 s old, but the rest after each is at least 250 bytes; page 10 is 90 s old.
    const q = await partition(14);
    expect(
      await retireLocalCopies(
        q.store,
        TOPIC,
        0,
        config({ 'local.retention.ms': 60_000, 'local.retention.bytes': 250 }),
        NOW,
      ),
    ).toBe(3);
  });

  it("takes the topic's retention.ms and retention.bytes for -2", async () => {
    const p = await partition(14);
    const ms = config({ 'retention.ms': 10_000, 'local.retention.ms': -2, 'retention.bytes': 1 });
    expect(await retireLocalCopies(p.store, TOPIC, 0, ms, NOW)).toBe(3);
    const q = await partition(14);
    const bytes = config({ 'retention.ms': 1, 'retention.bytes': 250, 'local.retention.bytes': -2 });
    expect(await retireLocalCopies(q.store, TOPIC, 0, bytes, NOW)).toBe(2);
  });

  it('leaves everything when neither limit is set, nothing is rolled, or the partition is gone', async () => {
    const p = await partition(14);
    // Reading the partition item is all it does then.
    const idle = readsRecorded(p.store);
    expect(await retireLocalCopies(idle.store, TOPIC, 0, config({}), NOW + 10 ** 9)).toBe(0);
    const unrolled = await partition('unrolled');
    const none = readsRecorded(unrolled.store);
    expect(await retireLocalCopies(none.store, TOPIC, 0, config({ 'local.retention.ms': 0 }), NOW)).toBe(0);
    expect(await retireLocalCopies(none.store, TOPIC, 0, config({ 'local.retention.bytes': 0 }), NOW)).toBe(
      0,
    );
    expect([idle.reads, none.reads]).toEqual([
      [{ op: 'get', consistent: true }],
      [
        { op: 'get', consistent: true },
        { op: 'get', consistent: true },
      ],
    ]);
    expect(await unrolled.page(0)).toEqual(unrolled.pages[0]);
    expect(await retireLocalCopies(p.store, TOPIC, 1, config({ 'local.retention.ms': 0 }), NOW)).toBe(0);
    expect(await p.page(0)).toEqual(p.pages[0]);
  });

  it('reads the partition item and the batch pages strongly consistent', async () => {
    const p = await partition(14);
    const recorded = readsRecorded(p.store);
    expect(await retireLocalCopies(recorded.store, TOPIC, 0, config({ 'local.retention.ms': 0 }), NOW)).toBe(
      3,
    );
    expect(recorded.reads.length).toBeGreaterThan(1);
    expect(recorded.reads.filter((r) => !r.consistent)).toEqual([]);
  });

  it('takes a page whose records were all compacted away as expired at any age', async () => {
    const store = await compactedAwayPage();
    // A clock at exactly local.retention.ms: the cut-off is 0, and the page has no timestamp at all.
    expect(await retireLocalCopies(store, TOPIC, 0, config({ 'local.retention.ms': 5000 }), 5000)).toBe(1);
  });

  it('passes over pages already retired, which neither count nor stop it', async () => {
    const p = await partition(14);
    await p.store.put(retiredPageItem(p.pages[0]!, NOW - 1));
    // 200 + 200 + 50 left: at 250 one page goes, page 6.
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.bytes': 250 }), NOW)).toBe(1);
    expect(await p.page(6)).toEqual(locallyRetiredPageItem(p.pages[1]!, NOW));
    expect((await p.page(10))['e']).toEqual(p.pages[2]!['e']);
  });

  it('stops without writing when a page changed since it was read, and passes other store errors on', async () => {
    const p = await partition(14);
    const compacted = pageItem(TOPIC, 0, 6, [
      entry('g/x', 120, NOW - 20_000),
      { ...entry('g/x', 0, -1), recordCount: 0 },
    ]);
    let puts = 0;
    const racing = new InterceptedMetadataStore(p.store, async (call, run) => {
      // A compaction rewrites page 6 just before retention's put of it.
      if (call.op === 'put' && call.key?.sk === compacted.sk) await p.store.put(compacted);
      if (call.op === 'put') puts++;
      return run();
    });
    expect(await retireLocalCopies(racing, TOPIC, 0, config({ 'local.retention.ms': 0 }), NOW)).toBe(1);
    expect(puts).toBe(2);
    expect(await p.page(0)).toEqual(locallyRetiredPageItem(p.pages[0]!, NOW));
    expect(await p.page(6)).toEqual(compacted);
    expect((await p.page(10))['e']).toEqual(p.pages[2]!['e']);

    const q = await partition(14);
    const failing = new InterceptedMetadataStore(q.store, async (call, run) => {
      if (call.op === 'put') throw new Error('throttled');
      return run();
    });
    await expect(
      retireLocalCopies(failing, TOPIC, 0, config({ 'local.retention.ms': 0 }), NOW),
    ).rejects.toThrow(new Error('throttled'));
    expect(await q.page(0)).toEqual(q.pages[0]);
  });
});

/** The partition item's remembered first local page (`lk`), as the last run wrote it. */
const lkOf = async (store: MemoryMetadataStore) =>
  (await store.get(keys.partitionState(TOPIC, 0)))![FIRST_LOCAL_ATTR];
const setState = async (store: MemoryMetadataStore, attrs: Record<string, unknown>) =>
  store.update(
    keys.partitionState(TOPIC, 0),
    Object.entries(attrs).map(([set, value]) =>
      value === undefined ? { remove: set } : { set, value: value as number },
    ),
  );

describe('retiring local copies of a partition item without a byte total (every page counted)', () => {
  const unsized = async (segEnd = 14) => {
    const p = await partition(segEnd);
    await setState(p.store, { [LOG_SIZE_ATTR]: undefined });
    return p;
  };
  /** Which of pages 0, 6 and 10 are retired markers (as of `at`), the rest exactly as written. */
  const expectRetired = async (p: Awaited<ReturnType<typeof partition>>, count: number, at = NOW) => {
    for (const [i, o] of [0, 6, 10].entries())
      expect(await p.page(o), `page ${o}`).toEqual(
        i < count ? locallyRetiredPageItem(p.pages[i]!, at) : p.pages[i],
      );
  };

  it('by local.retention.bytes: 700 bytes of pages and 50 of tail, oldest first while the rest reaches the limit', async () => {
    for (const [limit, retired] of RETIRED_AT_LIMIT) {
      const p = await unsized();
      const bytes = config({ 'local.retention.bytes': limit });
      expect(await retireLocalCopies(p.store, TOPIC, 0, bytes, NOW), `limit ${limit}`).toBe(retired);
      await expectRetired(p, retired);
      // This walk keeps no record of the first local page.
      expect(await lkOf(p.store)).toBeUndefined();
    }
  });

  it('only pages wholly below segEnd: page 10 stays at segEnd 10 even at limit 0', async () => {
    const p = await unsized(10);
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.bytes': 0 }), NOW)).toBe(2);
    await expectRetired(p, 2);
  });

  it('by local.retention.ms beside a bytes limit never reached, at the exact cut-off', async () => {
    for (const [ms, retired] of [
      [50_000, 0],
      [49_999, 1],
      [20_000, 1],
      [19_999, 3],
      [0, 3],
    ] as const) {
      const p = await unsized();
      const both = config({ 'local.retention.ms': ms, 'local.retention.bytes': 10 ** 6 });
      expect(await retireLocalCopies(p.store, TOPIC, 0, both, NOW), `ms ${ms}`).toBe(retired);
      await expectRetired(p, retired);
    }
    // local.retention.ms of 0 retires nothing newer than the clock.
    const p = await unsized();
    const zero = config({ 'local.retention.ms': 0, 'local.retention.bytes': 10 ** 6 });
    expect(await retireLocalCopies(p.store, TOPIC, 0, zero, NOW - 60_000)).toBe(0);
  });

  it('takes a page without timestamps as expired at a cut-off of 0', async () => {
    const store = await compactedAwayPage({ [LOG_SIZE_ATTR]: undefined });
    const both = config({ 'local.retention.ms': 5000, 'local.retention.bytes': 10 ** 6 });
    expect(await retireLocalCopies(store, TOPIC, 0, both, 5000)).toBe(1);
  });

  it('without local.retention.bytes walks as usual, and records the first local page', async () => {
    const p = await unsized();
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.ms': 50_000 }), NOW)).toBe(0);
    await expectRetired(p, 0);
    expect(await lkOf(p.store)).toEqual([0, 0, 6, NOW - 50_000, 300]);
  });

  it('passes over retired pages, which neither count nor stop it', async () => {
    const p = await unsized();
    const marker = retiredPageItem(p.pages[0]!, NOW - 1);
    await p.store.put(marker);
    // 200 + 200 + 50 left: at 250 page 6 goes.
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.bytes': 250 }), NOW)).toBe(1);
    expect(await p.page(0)).toEqual(marker);
    expect(await p.page(6)).toEqual(locallyRetiredPageItem(p.pages[1]!, NOW));
    expect(await p.page(10)).toEqual(p.pages[2]);
  });

  it('reads the item and the pages once, strongly consistent', async () => {
    const p = await unsized();
    const recorded = readsRecorded(p.store);
    expect(
      await retireLocalCopies(recorded.store, TOPIC, 0, config({ 'local.retention.bytes': 0 }), NOW),
    ).toBe(3);
    expect(recorded.reads).toEqual([
      { op: 'get', consistent: true },
      { op: 'query', consistent: true },
    ]);
  });

  it('stops when a page changed since it was read, and passes other store errors on', async () => {
    const p = await unsized();
    const compacted = pageItem(TOPIC, 0, 6, [entry('g/x', 120, NOW - 20_000)]);
    const racing = new InterceptedMetadataStore(p.store, async (call, run) => {
      if (call.op === 'put' && call.key?.sk === compacted.sk) await p.store.put(compacted);
      return run();
    });
    expect(await retireLocalCopies(racing, TOPIC, 0, config({ 'local.retention.bytes': 0 }), NOW)).toBe(1);
    expect(await p.page(0)).toEqual(locallyRetiredPageItem(p.pages[0]!, NOW));
    expect(await p.page(6)).toEqual(compacted);
    expect(await p.page(10)).toEqual(p.pages[2]);

    const q = await unsized();
    const failing = new InterceptedMetadataStore(q.store, async (call, run) => {
      if (call.op === 'put') throw new Error('throttled');
      return run();
    });
    await expect(
      retireLocalCopies(failing, TOPIC, 0, config({ 'local.retention.bytes': 0 }), NOW),
    ).rejects.toThrow(new Error('throttled'));
    expect(await q.page(0)).toEqual(q.pages[0]);
  });
});

describe('the first local page remembered in the partition item', () => {
  it('is the page kept, with the log bytes below it; a run with nothing due reads the item alone', async () => {
    const p = await partition(14);
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.bytes': 451 }), NOW)).toBe(0);
    expect(await lkOf(p.store)).toEqual([0, 0, 6, NOW - 50_000, 300]);
    const idle = readsRecorded(p.store);
    expect(await retireLocalCopies(idle.store, TOPIC, 0, config({ 'local.retention.bytes': 451 }), NOW)).toBe(
      0,
    );
    expect(idle.reads).toEqual([{ op: 'get', consistent: true }]);
    // From the record: the rest after page 0 is 450.
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.bytes': 450 }), NOW)).toBe(1);
    expect(await lkOf(p.store)).toEqual([6, 300, 10, NOW - 20_000, 200]);
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.bytes': 250 }), NOW)).toBe(1);
    expect(await lkOf(p.store)).toEqual([10, 500, 14, NOW - 90_000, 200]);
    expect(await p.page(6)).toEqual(locallyRetiredPageItem(p.pages[1]!, NOW));
  });

  it('is where the next page starts once none is left, and a later run goes on from there', async () => {
    const p = await partition(14);
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.ms': 0 }), NOW)).toBe(3);
    expect(await lkOf(p.store)).toEqual([14, 700]);
    // The tail is indexed and rolled: page [14, 16) of 100 bytes.
    const next = pageItem(TOPIC, 0, 14, [entry('d/f', 100, NOW, 2)]);
    await p.store.put(next);
    await setState(p.store, { segEnd: 16, tailBase: 16, [LOG_SIZE_ATTR]: 850 });
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.ms': 0 }), NOW + 1)).toBe(1);
    expect(await p.page(14)).toEqual(locallyRetiredPageItem(next, NOW + 1));
    expect(await lkOf(p.store)).toEqual([16, 800]);
  });

  it('counts only bytes at or past the log start, and the bytes below from the segment index', async () => {
    // Log start 3: of page 0 only the chunk at 4 counts (the chunk at 2 starts before it).
    const p = await partition(14);
    await setState(p.store, { logStartOffset: 3 });
    expect(
      await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.bytes': 10 ** 6 }), NOW),
    ).toBe(0);
    expect(await lkOf(p.store)).toEqual([0, 0, 6, NOW - 50_000, 100]);
    // Page 0 already retired: the bytes below page 6 are read from the segment index, from the log start.
    for (const [logStartOffset, below] of [
      [0, 300],
      [3, 100],
    ] as const) {
      const q = await partition(14);
      await setState(q.store, { logStartOffset });
      await q.store.put(retiredPageItem(q.pages[0]!, NOW));
      const bytes = config({ 'local.retention.bytes': 10 ** 6 });
      expect(await retireLocalCopies(q.store, TOPIC, 0, bytes, NOW)).toBe(0);
      expect(await lkOf(q.store), `log start ${logStartOffset}`).toEqual([6, below, 10, NOW - 20_000, 200]);
    }
  });

  it('counts no bytes below without local.retention.bytes, and does with a limit of 0', async () => {
    const p = await partition(14);
    await p.store.put(retiredPageItem(p.pages[0]!, NOW));
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.ms': 30_000 }), NOW)).toBe(0);
    expect(await lkOf(p.store)).toEqual([6, 0, 10, NOW - 20_000, 200]);
    const q = await partition(10);
    await q.store.put(retiredPageItem(q.pages[0]!, NOW));
    expect(await retireLocalCopies(q.store, TOPIC, 0, config({ 'local.retention.bytes': 0 }), NOW)).toBe(1);
    expect(await lkOf(q.store)).toEqual([10, 500, 14, NOW - 90_000, 200]);
  });

  it('starts past the last retired page read, though the tail starts before it', async () => {
    const p = await partition(14);
    await setState(p.store, { tailBase: 10 });
    await p.store.put(retiredPageItem(p.pages[2]!, NOW));
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.bytes': 0 }), NOW)).toBe(2);
    // 500 bytes of pages 0 and 6, and 200 of [10, 14) from the segment index.
    expect(await lkOf(p.store)).toEqual([14, 700]);
  });

  it('takes a live page without entries as starting at its end', async () => {
    const p = await partition(14);
    await p.store.put(retiredPageItem(p.pages[0]!, NOW));
    await p.store.put({ ...pageItem(TOPIC, 0, 6, []), end: 10 });
    expect(
      await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.bytes': 10 ** 6 }), NOW),
    ).toBe(0);
    expect(await lkOf(p.store)).toEqual([10, 500, 10, -1, 0]);
  });

  it('is ignored when malformed, and the walk starts at the log start', async () => {
    // A list with a hole where the start would be.
    const holed: number[] = [];
    holed[1] = 0;
    for (const lk of [['a', 0], [], [6], holed, 'x']) {
      const p = await partition(14);
      await p.store.update(keys.partitionState(TOPIC, 0), [{ set: FIRST_LOCAL_ATTR, value: lk as never }]);
      const ms = config({ 'local.retention.ms': 49_999 });
      expect(await retireLocalCopies(p.store, TOPIC, 0, ms, NOW), JSON.stringify(lk)).toBe(1);
      expect(await lkOf(p.store)).toEqual([6, 300, 10, NOW - 20_000, 200]);
    }
  });

  it('is rewritten when the page found differs from the record in any fact', async () => {
    for (const [lk, segEnd, limits, found] of [
      // The record's page ends below segEnd, the page does not.
      [[6, 300, 8, NOW - 20_000, 200], 9, { 'local.retention.ms': 1000 }, [6, 300, 10, NOW - 20_000, 200]],
      [
        [6, 300, 10, NOW - 90_000, 200],
        14,
        { 'local.retention.ms': 30_000 },
        [6, 300, 10, NOW - 20_000, 200],
      ],
      [
        [6, 300, 10, NOW - 20_000, 100],
        14,
        { 'local.retention.bytes': 300 },
        [6, 300, 10, NOW - 20_000, 200],
      ],
    ] as const) {
      const p = await partition(segEnd);
      await p.store.put(retiredPageItem(p.pages[0]!, NOW));
      await setState(p.store, { [FIRST_LOCAL_ATTR]: [...lk] });
      expect(await retireLocalCopies(p.store, TOPIC, 0, config(limits), NOW)).toBe(0);
      expect(await lkOf(p.store), JSON.stringify(lk)).toEqual(found);
    }
    // No page left past the record's point: the next starts past the retired page read.
    const p = await partition(14);
    for (const page of p.pages) await p.store.put(retiredPageItem(page, NOW));
    await setState(p.store, { [FIRST_LOCAL_ATTR]: [10, 500] });
    expect(await retireLocalCopies(p.store, TOPIC, 0, config({ 'local.retention.ms': 0 }), NOW)).toBe(0);
    expect(await lkOf(p.store)).toEqual([14, 500]);
  });

  it('is not written again when the walk finds it unchanged', async () => {
    // segEnd past the record's point, with no page there (a hand-built item): due, and found the same.
    const p = await partition(14);
    await p.store.delete(keys.batch(TOPIC, 0, 10));
    await setState(p.store, { tailBase: 10, [FIRST_LOCAL_ATTR]: [10, 500] });
    const writes: string[] = [];
    const watched = new InterceptedMetadataStore(p.store, async (call, run) => {
      if (call.op !== 'get' && call.op !== 'query') writes.push(call.op);
      return run();
    });
    expect(await retireLocalCopies(watched, TOPIC, 0, config({ 'local.retention.ms': 0 }), NOW)).toBe(0);
    expect(writes).toEqual([]);
    expect(await lkOf(p.store)).toEqual([10, 500]);
  });

  it('is written only while the log start and the cleaner swaps are as read; other errors pass on', async () => {
    for (const change of [{ logStartOffset: 1 }, { [CLEANER_SWAPS_ATTR]: 1 }]) {
      const p = await partition(14);
      const racing = new InterceptedMetadataStore(p.store, async (call, run) => {
        if (call.op === 'update') await setState(p.store, change);
        return run();
      });
      const ms = config({ 'local.retention.ms': 49_999 });
      expect(await retireLocalCopies(racing, TOPIC, 0, ms, NOW), JSON.stringify(change)).toBe(1);
      expect(await lkOf(p.store)).toBeUndefined();
    }
    const q = await partition(14);
    const failing = new InterceptedMetadataStore(q.store, async (call, run) => {
      if (call.op === 'update') throw new Error('throttled');
      return run();
    });
    await expect(
      retireLocalCopies(failing, TOPIC, 0, config({ 'local.retention.ms': 49_999 }), NOW),
    ).rejects.toThrow(new Error('throttled'));
  });
});
