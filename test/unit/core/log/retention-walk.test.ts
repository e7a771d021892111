/**
 * Retention's walk over hand-built index items (lib/core/log/retention.ts), exact to the offset and the
 * byte: where the walk starts, what it skips (retired items, batches still in the tail), what it reads,
 * and what an item without its byte total learns from the counting walk.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { isRetired, pageItem, retiredPageItem } from '../../../../lib/core/log/batch-index.js';
import { segmentItem } from '../../../../lib/core/log/segments/segment-index.js';
import { FIRST_LOCAL_ATTR, LOG_SIZE_ATTR, oldestRetainedOf } from '../../../../lib/core/log/log-size.js';
import type { PartitionState, TailEntry } from '../../../../lib/core/log/partition-state.js';
import { decodePartitionState, encodePartitionItem } from '../../../../lib/core/log/partition-codec.js';
import { newPartitionState } from '../../../../lib/core/log/partition-state.js';
import { applyRetention } from '../../../../lib/core/log/retention.js';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import type { MetadataStore, QueryInput } from '../../../../lib/ports/metadata-store.js';

const TOPIC = 'topic';
const NOW = 1_700_000_000_000;
const L = 1000;
const PAGE = 64;

const entry = (i: number): TailEntry => ({
  objectKey: `d/${i}`,
  position: 0,
  sizeInBytes: L,
  offsetCount: 1,
  recordCount: 1,
  maxTimestamp: NOW + i,
  firstTimestamp: NOW + i,
});

/** Index items read by queries, and the consistency each query asked for. */
const counting = (inner: MetadataStore) => {
  const queries: { items: number; consistent?: boolean; input: QueryInput }[] = [];
  const store = Object.create(inner, {
    query: {
      value: async (input: QueryInput) => {
        const page = await inner.query(input);
        queries.push({ items: page.items.length, consistent: input.consistent, input });
        return page;
      },
    },
  }) as MetadataStore;
  // The walk's reads: the queries before the time index's repair (which reads the time marks first).
  const walkRead = () => {
    const repair = queries.findIndex(
      (q) => 'beginsWith' in q.input.sk! && q.input.sk.beginsWith === keys.timePrefix,
    );
    return queries.slice(0, repair < 0 ? undefined : repair).reduce((sum, q) => sum + q.items, 0);
  };
  return { store, queries, walkRead };
};

/**
 * One-offset batches of L bytes in pages of PAGE, offsets [0, indexed); the tail holds `tail` more.
 * `total`: whether the item knows its byte total.
 */
const partition = async (
  indexed: number,
  {
    tail = 0,
    total = true,
    fields = {},
    extra = {},
  }: { tail?: number; total?: boolean; fields?: Partial<PartitionState>; extra?: object } = {},
) => {
  const inner = new MemoryMetadataStore();
  for (let base = 0; base < indexed; base += PAGE) {
    const entries = Array.from({ length: Math.min(PAGE, indexed - base) }, (_, i) => entry(base + i));
    await inner.put(pageItem(TOPIC, 0, base, entries));
  }
  const next = indexed + tail;
  const { [LOG_SIZE_ATTR]: _, ...encoded } = encodePartitionItem(TOPIC, {
    ...newPartitionState('t', 0, ['s0']),
    nextOffset: next,
    tailBase: indexed,
    tail: Array.from({ length: tail }, (_, i) => entry(indexed + i)),
    highWatermark: next,
    logEndOffsets: { s0: next },
    maxTimestampSoFar: NOW + next - 1,
    ...fields,
  });
  await inner.put({
    ...encoded,
    ...(total ? { [LOG_SIZE_ATTR]: next * L } : {}),
    ...extra,
  });
  const c = counting(inner);
  return { inner, ...c };
};

const bytes = (n: number) => ({
  'cleanup.policy': 'delete' as const,
  'retention.ms': -1,
  'retention.bytes': n,
});
const item = async (store: MetadataStore) => (await store.get(keys.partitionState(TOPIC, 0)))!;
const state = async (store: MetadataStore) => decodePartitionState(await item(store));
const pageAt = async (store: MetadataStore, base: number) => (await store.get(keys.batch(TOPIC, 0, base)))!;

describe('with nothing indexed past the log start', () => {
  it('reads nothing but the partition item, however due the tail is', async () => {
    const p = await partition(0, { tail: 5 });
    expect(await applyRetention(p.store, TOPIC, 0, bytes(0), NOW + 1000)).toEqual({
      logStartOffset: 0,
      batchesDeleted: 0,
    });
    expect(p.queries).toEqual([]);
  });
});

describe('with no unit indexed between the log start and the tail base', () => {
  it('writes nothing', async () => {
    // The tail base says [0, 10) was flushed, but no index item holds it: nothing to delete or record.
    const p = await partition(0, { fields: { tailBase: 10 } });
    const before = await item(p.inner);
    let updates = 0;
    const store = Object.create(p.store, {
      update: {
        value: (...args: Parameters<MetadataStore['update']>) => {
          updates++;
          return p.inner.update(...args);
        },
      },
    }) as MetadataStore;
    expect(await applyRetention(store, TOPIC, 0, bytes(0), NOW + 1000)).toEqual({
      logStartOffset: 0,
      batchesDeleted: 0,
    });
    expect(updates).toBe(0);
    expect(await item(p.inner)).toEqual(before);
  });
});

describe('an item that knows its total', () => {
  it('walks from the page holding the segment index end, not from the first page', async () => {
    // Segments (gone) covered [0, 5000): the pages below are local copies; 157 pages in all.
    const p = await partition(10_000, {
      fields: { logStartOffset: 5000 },
      extra: { segEnd: 5000, [LOG_SIZE_ATTR]: 5000 * L },
    });
    const result = await applyRetention(p.store, TOPIC, 0, bytes(4900 * L), NOW + 20_000);
    expect(result).toEqual({ logStartOffset: 5100, batchesDeleted: 100 });
    expect((await state(p.inner)).logSizeBytes).toBe(4900 * L);
    // The page holding 5000 (base 4992) and the walk's pages from it: not the 78 below.
    expect(p.walkRead()).toBeLessThanOrEqual(12);
    expect(p.queries.every((q) => q.consistent === true)).toBe(true);
  });

  it('walks from the first page when none starts at or before the log start', async () => {
    // Pages from 64: the first one's item expired (retired items are deleted after their TTL).
    const p = await partition(1024);
    await p.inner.delete(keys.batch(TOPIC, 0, 0));
    const st = await state(p.inner);
    await p.inner.put({
      ...encodePartitionItem(TOPIC, { ...st, logStartOffset: 64 }),
      [LOG_SIZE_ATTR]: 960 * L,
    });
    expect(await applyRetention(p.store, TOPIC, 0, bytes(900 * L), NOW + 20_000)).toEqual({
      logStartOffset: 124,
      batchesDeleted: 60,
    });
  });

  it('leaves retired pages as the run that retired them wrote them', async () => {
    const p = await partition(256);
    expect(await applyRetention(p.store, TOPIC, 0, bytes(126 * L), NOW)).toEqual({
      logStartOffset: 130,
      batchesDeleted: 130,
    });
    const retired = [await pageAt(p.inner, 0), await pageAt(p.inner, 64)];
    expect(retired.map(isRetired)).toEqual([true, true]);
    expect(isRetired(await pageAt(p.inner, 128))).toBe(false);
    expect(await applyRetention(p.store, TOPIC, 0, bytes(100 * L), NOW + 3_600_000)).toEqual({
      logStartOffset: 156,
      batchesDeleted: 26,
    });
    expect([await pageAt(p.inner, 0), await pageAt(p.inner, 64)]).toEqual(retired);
  });

  it('never deletes a batch at or past the tail base, even when a page already holds it', async () => {
    // A flush writes its page before it moves the tail base: the page holds [0, 256), the tail base is 200.
    const p = await partition(256, { fields: { tailBase: 200 } });
    expect(await applyRetention(p.store, TOPIC, 0, bytes(0), NOW + 1000)).toEqual({
      logStartOffset: 200,
      batchesDeleted: 200,
    });
  });

  it("records the first unit kept and keeps local retention's first local unit when nothing goes", async () => {
    // Local retention remembers its first local unit (lk) below the log start's batches: only a run
    // that moves the log start invalidates it.
    const p = await partition(256, { extra: { [FIRST_LOCAL_ATTR]: [0, 0] } });
    expect(await applyRetention(p.store, TOPIC, 0, bytes(1_000_000 * L), NOW)).toEqual({
      logStartOffset: 0,
      batchesDeleted: 0,
    });
    const after = await item(p.inner);
    expect(oldestRetainedOf(after)).toEqual({ maxTimestamp: NOW, sizeInBytes: L });
    expect(after[FIRST_LOCAL_ATTR]).toEqual([0, 0]);
  });

  it('does not count the log when retention.bytes is unlimited and the total is unknown', async () => {
    const p = await partition(10_000, { total: false });
    const ms = { 'cleanup.policy': 'delete' as const, 'retention.ms': 1_000_000, 'retention.bytes': -1 };
    // Batches older than NOW + 100 go.
    expect(await applyRetention(p.store, TOPIC, 0, ms, NOW + 1_000_100)).toEqual({
      logStartOffset: 100,
      batchesDeleted: 100,
    });
    expect(p.walkRead()).toBeLessThanOrEqual(12);
    expect((await state(p.inner)).logSizeBytes).toBeUndefined();
  });
});

describe('an item without its total', () => {
  it('counts it, tail included, and retention.bytes 0 deletes every indexed batch', async () => {
    const p = await partition(256, { tail: 3, total: false });
    expect(await applyRetention(p.store, TOPIC, 0, bytes(0), NOW + 1000)).toEqual({
      logStartOffset: 256,
      batchesDeleted: 256,
    });
    expect((await state(p.inner)).logSizeBytes).toBe(3 * L);
    for (const base of [0, 64, 128, 192]) expect(isRetired(await pageAt(p.inner, base))).toBe(true);
    expect(p.queries.every((q) => q.consistent === true)).toBe(true);
  });

  it('learns its total and the first unit kept, and the next run deletes by them', async () => {
    const p = await partition(256, { tail: 2, total: false });
    expect(await applyRetention(p.store, TOPIC, 0, bytes(200 * L), NOW)).toEqual({
      logStartOffset: 58,
      batchesDeleted: 58,
    });
    const after = await item(p.inner);
    expect(decodePartitionState(after).logSizeBytes).toBe(200 * L);
    expect(oldestRetainedOf(after)).toEqual({ maxTimestamp: NOW + 58, sizeInBytes: L });
    expect(isRetired(await pageAt(p.inner, 0))).toBe(false);
    // Now known: the next run walks from the log start and deletes 10 more.
    expect(await applyRetention(p.store, TOPIC, 0, bytes(190 * L), NOW)).toEqual({
      logStartOffset: 68,
      batchesDeleted: 10,
    });
    expect(isRetired(await pageAt(p.inner, 0))).toBe(true);
    expect((await state(p.inner)).logSizeBytes).toBe(190 * L);
  });

  it('learns its total when nothing is due and the first unit kept is already recorded', async () => {
    const p = await partition(256, { tail: 1, total: false, extra: { rk: [NOW, L] } });
    expect(await applyRetention(p.store, TOPIC, 0, bytes(1_000_000 * L), NOW)).toEqual({
      logStartOffset: 0,
      batchesDeleted: 0,
    });
    expect((await state(p.inner)).logSizeBytes).toBe(257 * L);
  });

  it('is corrected once when two runs read it before either wrote', async () => {
    const p = await partition(256, { total: false, extra: { rk: [NOW, L] } });
    const stale = await state(p.inner);
    await applyRetention(p.store, TOPIC, 0, bytes(1_000_000 * L), NOW);
    expect((await state(p.inner)).logSizeBytes).toBe(256 * L);
    await applyRetention(p.store, TOPIC, 0, bytes(1_000_000 * L), NOW, stale);
    expect((await state(p.inner)).logSizeBytes).toBe(256 * L);
  });

  it('leaves retired pages as the run that retired them wrote them', async () => {
    const p = await partition(256, { total: false });
    await applyRetention(p.store, TOPIC, 0, bytes(126 * L), NOW);
    const retired = [await pageAt(p.inner, 0), await pageAt(p.inner, 64)];
    expect(retired.map(isRetired)).toEqual([true, true]);
    await p.inner.update(keys.partitionState(TOPIC, 0), [{ remove: LOG_SIZE_ATTR }]);
    expect(await applyRetention(p.store, TOPIC, 0, bytes(100 * L), NOW + 3_600_000)).toEqual({
      logStartOffset: 156,
      batchesDeleted: 26,
    });
    expect([await pageAt(p.inner, 0), await pageAt(p.inner, 64)]).toEqual(retired);
  });

  it('never deletes a batch at or past the tail base, even when a page already holds it', async () => {
    const p = await partition(256, {
      total: false,
      fields: { tailBase: 200 },
    });
    expect(await applyRetention(p.store, TOPIC, 0, bytes(0), NOW + 1000)).toEqual({
      logStartOffset: 200,
      batchesDeleted: 200,
    });
  });
});

describe('with segments', () => {
  /** Segments of 64 one-offset batches over [0, 128) (their batch pages still there too), `segEnd` 128. */
  const segmented = async (total: boolean, logStartOffset: number) => {
    const p = await partition(256, {
      total,
      fields: { logStartOffset },
      extra: { segEnd: 128, ...(total ? { [LOG_SIZE_ATTR]: (256 - logStartOffset) * L } : {}) },
    });
    for (const base of [0, 64]) {
      const chunks = Array.from({ length: 64 }, (_, i) => ({ ...entry(base + i), baseOffset: base + i }));
      await p.inner.put(segmentItem(TOPIC, 0, `s/${base}`, chunks, NOW));
    }
    return p;
  };
  const ms = (retentionMs: number) => ({
    'cleanup.policy': 'delete' as const,
    'retention.ms': retentionMs,
    'retention.bytes': -1,
  });

  it('ages a segment by its newest batch when the total is counted', async () => {
    const p = await segmented(false, 0);
    // The first 30 batches are past retention.ms, the segment's newest (NOW + 63) is not: nothing goes.
    expect(
      await applyRetention(p.store, TOPIC, 0, { ...ms(1000), 'retention.bytes': 1_000_000 * L }, NOW + 1030),
    ).toEqual({
      logStartOffset: 0,
      batchesDeleted: 0,
    });
    expect((await state(p.inner)).logSizeBytes).toBe(256 * L);
  });

  it('counts no segment wholly below the log start', async () => {
    const p = await segmented(false, 64);
    expect(await applyRetention(p.store, TOPIC, 0, bytes(1_000_000 * L), NOW)).toEqual({
      logStartOffset: 64,
      batchesDeleted: 0,
    });
    expect((await state(p.inner)).logSizeBytes).toBe(192 * L);
    expect(oldestRetainedOf(await item(p.inner))).toEqual({ maxTimestamp: NOW + 127, sizeInBytes: 64 * L });
  });

  it('leaves a retired segment as the run that retired it wrote it', async () => {
    const p = await segmented(true, 64);
    const retired = retiredPageItem((await p.inner.get(keys.segment(TOPIC, 0, 0)))!, NOW);
    await p.inner.put(retired);
    expect(await applyRetention(p.store, TOPIC, 0, ms(1000), NOW + 3_600_000)).toEqual({
      logStartOffset: 256,
      batchesDeleted: 192,
    });
    expect(await p.inner.get(keys.segment(TOPIC, 0, 0))).toEqual(retired);
  });
});
