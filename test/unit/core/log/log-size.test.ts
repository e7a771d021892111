/**
 * The log's byte total in the partition item (lib/core/log/log-size.ts): what each writer adds or
 * subtracts, the correction an item without a total gets, and what it buys: a maintenance run over a
 * partition with nothing to do reads the partition item and nothing else, and retention by bytes reads
 * the index items it deletes, not the ones it keeps.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { pageItem } from '../../../../lib/core/log/batch-index.js';
import {
  CLEANER_SWAPS_ATTR,
  LOG_SIZE_ATTR,
  OLDEST_RETAINED_ATTR,
  UNKNOWN_LOG_SIZE,
  cleanerSwapsOf,
  logSizeOf,
  oldestRetainedOf,
  sameOldestRetained,
  storedLogSize,
} from '../../../../lib/core/log/log-size.js';
import type { TailEntry } from '../../../../lib/core/log/partition-state.js';
import { decodePartitionState, initialPartitionState } from '../../../../lib/core/log/partition-codec.js';
import { applyRetention } from '../../../../lib/core/log/retention.js';
import { timeMarkItem, timeMarks } from '../../../../lib/core/log/time-index.js';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import type { ItemKey, MetadataStore, QueryInput } from '../../../../lib/ports/metadata-store.js';
import { checkStorage } from '../../../support/storage.js';
import { memorySluice } from '../../../support/log-support.js';

const HOUR = 3_600_000;

/** Every get and query, with the key or partition key it read. */
const counted = (inner: MetadataStore) => {
  const calls: { op: 'get' | 'query'; pk: string; sk?: string; items: number }[] = [];
  const store = Object.create(inner, {
    get: {
      value: async (key: ItemKey, options?: { consistent?: boolean }) => {
        const item = await inner.get(key, options);
        calls.push({ op: 'get', pk: key.pk, sk: key.sk, items: item ? 1 : 0 });
        return item;
      },
    },
    query: {
      value: async (input: QueryInput) => {
        const page = await inner.query(input);
        calls.push({ op: 'query', pk: input.pk, items: page.items.length });
        return page;
      },
    },
  }) as MetadataStore;
  return { store, calls };
};

/** A memory Sluice with a segment store, the orphan scan hourly (as deployed), and a counting store. */
const setup = async (configs: Record<string, string>, partitions = 1) => {
  let counting: ReturnType<typeof counted> | undefined;
  const s = memorySluice(
    { tailFlushEntries: 1000, orphanScanIntervalMs: HOUR },
    {
      segmentStore: true,
      wrapStore: (store) => {
        counting = counted(store);
        return counting.store;
      },
    },
  );
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions, configs })).status).toBe(201);
  const topic = await s.sluice.catalog.get('t');
  const state = async (p = 0) =>
    decodePartitionState((await s.store.get(keys.partitionState(topic.topicId, p)))!);
  const produce = async (p: number, key: string | null, size: number) => {
    const r = await s.http('POST', '/v1/topics/t/records', {
      records: [{ partition: p, key, value: 'v'.repeat(size), timestamp: s.clock.now() }],
    });
    expect(r.status).toBe(200);
  };
  const sizes = async () =>
    (await checkStorage(s.store, [s.objects], topic.topicId, partitions, s.segments)).sizes;
  const maintain = async () => {
    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    return report;
  };
  return { ...s, topic, state, produce, sizes, maintain, calls: () => counting!.calls };
};

describe('the byte total each writer keeps', () => {
  it('grows by each committed batch, and loses what retention deletes', async () => {
    const s = await setup({ 'retention.bytes': '2000', 'segment.bytes': '1024' });
    expect((await s.state()).logSizeBytes).toBe(0);
    const grown: number[] = [];
    for (let i = 0; i < 12; i++) {
      await s.produce(0, null, 200 + i);
      const st = await s.state();
      grown.push(st.logSizeBytes! - st.tail.slice(0, -1).reduce((sum, e) => sum + e.sizeInBytes, 0));
    }
    // Each commit added exactly its own batch's stored bytes.
    const tail = (await s.state()).tail;
    expect(grown).toEqual(tail.map((e) => e.sizeInBytes));
    await s.maintain();
    const after = await s.state();
    expect(after.logStartOffset).toBeGreaterThan(0);
    expect(after.logSizeBytes).toBeLessThan(tail.reduce((sum, e) => sum + e.sizeInBytes, 0));
    expect(await s.sizes()).toEqual([]);
  });

  it('loses what compaction removes, in the swap', async () => {
    const s = await setup({
      'cleanup.policy': 'compact',
      'min.cleanable.dirty.ratio': '0.01',
      'segment.bytes': '100000000',
    });
    for (let i = 0; i < 30; i++) await s.produce(0, `k${i % 3}`, 300);
    const before = (await s.state()).logSizeBytes!;
    const report = await s.maintain();
    expect(report.recordsCompacted).toBeGreaterThan(20);
    expect((await s.state()).logSizeBytes).toBeLessThan(before);
    expect(await s.sizes()).toEqual([]);
  });
});

describe('an item from before the total was kept', () => {
  it('loses to retention.bytes exactly what an item with its total loses', async () => {
    const run = async (knownTotal: boolean) => {
      const s = await setup({ 'retention.bytes': '1500', 'segment.bytes': '1024' });
      for (let i = 0; i < 8; i++) await s.produce(0, null, 300);
      if (!knownTotal)
        await s.store.update(keys.partitionState(s.topic.topicId, 0), [
          { remove: LOG_SIZE_ATTR },
          { remove: 'rk' },
        ]);
      const report = await s.maintain();
      const st = await s.state();
      expect(await s.sizes()).toEqual([]);
      return { expired: report.batchesExpired, logStartOffset: st.logStartOffset, total: st.logSizeBytes };
    };
    const known = await run(true);
    // Something went, not all (the total also counts the tail, which retention never deletes from).
    expect(known.expired).toBeGreaterThan(0);
    expect(known.logStartOffset).toBeGreaterThan(0);
    expect(known.total).toBeGreaterThan(1500);
    expect(await run(false)).toEqual(known);
  });

  it('is counted once by a retention.bytes run, commits meanwhile included', async () => {
    const s = await setup({ 'retention.bytes': '100000000', 'segment.bytes': '1024' });
    for (let i = 0; i < 8; i++) await s.produce(0, null, 300);
    await s.maintain();
    const key = keys.partitionState(s.topic.topicId, 0);
    // As an older item: no total. A commit after that adds its bytes to nothing.
    await s.store.update(key, [{ remove: LOG_SIZE_ATTR }, { remove: 'rk' }]);
    await s.produce(0, null, 300);
    const unknown = await s.store.get(key);
    expect(unknown?.[LOG_SIZE_ATTR]).toBeLessThan(UNKNOWN_LOG_SIZE / 2);
    expect((await s.state()).logSizeBytes).toBeUndefined();
    await s.maintain();
    expect((await s.state()).logSizeBytes).toBeGreaterThan(0);
    expect(await s.sizes()).toEqual([]);
  });
});

describe('a maintenance run over a partition with nothing to do', () => {
  it('reads each partition item once and no index item, with retention.bytes and retention.ms set', async () => {
    const s = await setup(
      {
        'retention.ms': String(7 * 24 * HOUR),
        'retention.bytes': '100000000',
        'segment.bytes': '4096',
        'segment.ms': '60000',
        'local.retention.ms': String(24 * HOUR),
      },
      3,
    );
    for (let i = 0; i < 40; i++) await s.produce(i % 3, null, 400);
    // Index, roll (segment.ms passes), retire nothing yet: the runs settle what each walk keeps.
    for (let run = 0; run < 3; run++) {
      s.clock.time += 2 * 60_000;
      await s.maintain();
    }
    const st = await s.state();
    expect(st.tail).toEqual([]);
    expect((st as unknown as Record<string, number>)['segEnd']).toBe(st.nextOffset);
    s.clock.time += 60_000;
    const from = s.calls().length;
    const report = await s.maintain();
    expect(report.orphanScan).toBe(false);
    const partitionReads = s
      .calls()
      .slice(from)
      .filter((c) => c.pk.startsWith('P#'));
    expect(partitionReads).toEqual(
      [0, 1, 2].map((p) => ({ op: 'get', ...keys.partitionState(s.topic.topicId, p), items: 1 })),
    );
  });
});

describe('retention.bytes over 10,000 retained batches', () => {
  const TOPIC = 'topic';
  const NOW = 1_700_000_000_000;
  const L = 1000;
  /** Batches of L bytes, 64 to a page, each a second newer than the one before; `extra` more in the tail. */
  const partition = async (batches: number) => {
    const inner = new MemoryMetadataStore();
    const entry = (i: number): TailEntry => ({
      objectKey: `d/${i}`,
      position: 0,
      sizeInBytes: L,
      offsetCount: 1,
      recordCount: 1,
      maxTimestamp: NOW + i,
      firstTimestamp: NOW + i,
    });
    for (let base = 0; base < batches; base += 64) {
      const entries = Array.from({ length: Math.min(64, batches - base) }, (_, i) => entry(base + i));
      await inner.put(pageItem(TOPIC, 0, base, entries));
    }
    const { marks } = timeMarks(
      Array.from({ length: batches }, (_, i) => ({ baseOffset: i, maxTimestamp: NOW + i })),
      -1,
    );
    for (const mark of marks) await inner.put(timeMarkItem(TOPIC, 0, mark));
    await inner.put({
      ...initialPartitionState(TOPIC, 't', 0, ['s0']),
      nextOffset: batches,
      tailBase: batches,
      hw: batches,
      leo: { s0: batches },
      tsMax: NOW + batches - 1,
      [LOG_SIZE_ATTR]: batches * L,
    });
    return { inner, ...counted(inner) };
  };
  const config = (bytes: number) => ({
    'cleanup.policy': 'delete' as const,
    'retention.ms': -1,
    'retention.bytes': bytes,
  });
  const indexItemsRead = (calls: ReturnType<typeof counted>['calls']) =>
    calls.filter((c) => c.op === 'query').reduce((sum, c) => sum + c.items, 0);

  it('reads the index items of what it deletes and one more, not the retained ones', async () => {
    const p = await partition(10_000);
    // 100 batches over: they go (two pages, the second partly), and the walk stops at the first kept.
    const result = await applyRetention(p.store, TOPIC, 0, config(9_900 * L), NOW + 20_000);
    expect(result).toEqual({ logStartOffset: 100, batchesDeleted: 100 });
    expect(decodePartitionState((await p.inner.get(keys.partitionState(TOPIC, 0)))!).logSizeBytes).toBe(
      9_900 * L,
    );
    // The walk's pages (4 to a query), the page holding the segment index's end, and the time marks
    // below the first one kept: a few dozen items where the index holds 157 pages and 157 marks.
    expect(indexItemsRead(p.calls)).toBeLessThanOrEqual(12);
    // Nothing more due: the partition item alone.
    p.calls.length = 0;
    expect(await applyRetention(p.store, TOPIC, 0, config(9_900 * L), NOW + 20_000)).toEqual({
      logStartOffset: 100,
      batchesDeleted: 0,
    });
    expect(p.calls).toEqual([{ op: 'get', ...keys.partitionState(TOPIC, 0), items: 1 }]);
  });

  it('reads as much for 1,000 retained batches as for 10,000', async () => {
    const reads = [];
    for (const batches of [1_000, 10_000]) {
      const p = await partition(batches);
      await applyRetention(p.store, TOPIC, 0, config((batches - 300) * L), NOW + 20_000);
      reads.push(indexItemsRead(p.calls));
    }
    expect(reads[0]).toBe(reads[1]);
  });
});

describe('the partition item’s size attributes, read', () => {
  it('reads only numbers: anything else stored there reads as absent', () => {
    expect([
      storedLogSize({ [LOG_SIZE_ATTR]: 7 }),
      storedLogSize({ [LOG_SIZE_ATTR]: '7' }),
      storedLogSize({}),
    ]).toEqual([7, undefined, undefined]);
    expect([logSizeOf({ [LOG_SIZE_ATTR]: 7 }), logSizeOf({ [LOG_SIZE_ATTR]: UNKNOWN_LOG_SIZE + 7 })]).toEqual(
      [7, undefined],
    );
    expect([
      cleanerSwapsOf({ [CLEANER_SWAPS_ATTR]: 3 }),
      cleanerSwapsOf({ [CLEANER_SWAPS_ATTR]: '3' }),
    ]).toEqual([3, undefined]);
    expect(oldestRetainedOf({ [OLDEST_RETAINED_ATTR]: [5, 6] })).toEqual({ maxTimestamp: 5, sizeInBytes: 6 });
    expect(oldestRetainedOf({ [OLDEST_RETAINED_ATTR]: ['5', 6] })).toBeUndefined();
    expect(oldestRetainedOf({ [OLDEST_RETAINED_ATTR]: [5, '6'] })).toBeUndefined();
    expect(oldestRetainedOf({ [OLDEST_RETAINED_ATTR]: 5 })).toBeUndefined();
  });

  it('takes two oldest retained units as the same only when both their fields are', () => {
    const unit = { maxTimestamp: 5, sizeInBytes: 6 };
    expect(sameOldestRetained(unit, { ...unit })).toBe(true);
    expect(sameOldestRetained(undefined, undefined)).toBe(true);
    expect(sameOldestRetained(unit, { ...unit, maxTimestamp: 4 })).toBe(false);
    expect(sameOldestRetained(unit, { ...unit, sizeInBytes: 7 })).toBe(false);
    expect(sameOldestRetained(unit, undefined)).toBe(false);
  });
});
