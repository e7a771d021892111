/**
 * Reads across the tiers (KIP-405's shape): ListOffsets falls back to the replica stores' copy of a
 * segment chunk the segment store cannot serve, only when that copy covers the chunk exactly; a fetch
 * whose cached segment item names a collected object reads the index again, also once the local copy is
 * gone; and a segment GET that fails once is retried afresh only when a cached item was used.
 */
import { describe, expect, it, vi } from 'vitest';
import { pageEntries } from '../../../../lib/core/log/batch-index.js';
import type { PartitionState } from '../../../../lib/core/log/partition-state.js';
import { segmentEndOf } from '../../../../lib/core/log/segments/segment-index.js';
import { storageUnavailable, throttled } from '../../../../lib/ports/storage-errors.js';
import { InterceptedObjectStore } from '../../../support/seams.js';
import { T0, segmentSetup } from '../../../support/segment-support.js';

/** A segment store that fails every GET while `down.segments` is set. */
const tiered = async (configs: Record<string, string> = {}) => {
  const down = { segments: false };
  const s = await segmentSetup({ 'segment.ms': '1', ...configs }, 1, {
    wrapSegmentStore: (store) =>
      new InterceptedObjectStore(store, async (call, run) => {
        if (down.segments && call.op === 'get') throw storageUnavailable('store segments');
        return run();
      }),
  });
  // 12 requests of 10 records of 50 bytes, each indexed into a page of its own: offsets 10i..10i+9
  // carry timestamps T0 + 1000i + j. Rolled, a 4 KiB chunk holds several requests.
  for (let i = 0; i < 12; i++) {
    await s.produce(Array.from({ length: 10 }, (_, j) => [0, `k${j}`, 50, T0 + i * 1000 + j]));
    await s.index();
  }
  expect(await s.roll()).toBeGreaterThan(0);
  const at = (request: number, record: number) =>
    s.sluice.fetcher.listOffsets('t', 0, T0 + request * 1000 + record);
  return { ...s, down, at };
};

describe('ListOffsets when the segment store fails', () => {
  it("answers from the replica stores' copy only while it covers the chunk without a gap", async () => {
    const s = await tiered();
    const [segment] = await s.segmentItems();
    const [chunk] = pageEntries(segment!);
    // The first chunk spans several requests (pages), at least three.
    expect(chunk!.baseOffset).toBe(0);
    expect(chunk!.entry.offsetCount % 10).toBe(0);
    const pagesInChunk = chunk!.entry.offsetCount / 10;
    expect(pagesInChunk).toBeGreaterThanOrEqual(3);
    expect(await s.at(1, 5)).toEqual({ offset: 15, timestamp: T0 + 1005 });

    s.down.segments = true;
    expect(await s.at(0, 0)).toEqual({ offset: 0, timestamp: T0 });
    expect(await s.at(1, 5)).toEqual({ offset: 15, timestamp: T0 + 1005 });
    expect(await s.at(pagesInChunk - 1, 9)).toEqual({
      offset: pagesInChunk * 10 - 1,
      timestamp: T0 + (pagesInChunk - 1) * 1000 + 9,
    });

    // A page of the chunk's local copy gone (first, middle or last): the segment store's error stands.
    const pages = await s.livePages();
    for (const gone of [0, 1, pagesInChunk - 1]) {
      const page = pages[gone]!;
      await s.store.delete({ pk: page.pk, sk: page.sk });
      await expect(s.at(gone, 5)).rejects.toMatchObject({
        code: 'KAFKA_STORAGE_ERROR',
        message: expect.stringMatching(/^object .* could not be read/),
      });
      await s.store.put(page);
    }
    expect(await s.at(1, 5)).toEqual({ offset: 15, timestamp: T0 + 1005 });
  });
});

describe("the fetcher's segment item cache with the local copy retired", () => {
  const retired = async () => {
    const s = await tiered({ 'local.retention.ms': '1000' });
    s.clock.time += 2_000;
    expect((await s.sluice.maintenance.run()).localPagesRetired).toBeGreaterThan(0);
    return s;
  };
  const fetch = (s: Awaited<ReturnType<typeof retired>>) =>
    s.sluice.fetcher.fetchRecords('t', 0, { offset: 3, maxBytes: 100, maxWaitMs: 0 });

  it("reads the index again when the cached item's object was rewritten and collected", async () => {
    const s = await retired();
    const before = await fetch(s);
    expect(before.records.map((r) => r.offset)).toEqual([3]);
    const [first] = await s.segmentItems();
    const old = first!['o'] as string;
    await s.segments!.put(`${old}-moved`, await s.segments!.get(old));
    await s.store.put({ ...first!, o: `${old}-moved` });
    await s.segments!.delete([old]);
    expect(await fetch(s)).toEqual(before);
  });

  it("answers with the fresh read's error when the index read afresh fails too", async () => {
    const s = await retired();
    await fetch(s);
    const [first] = await s.segmentItems();
    const old = first!['o'] as string;
    await s.store.put({ ...first!, o: `${old}-moved` });
    await s.segments!.delete([old]);
    // The cached item names `old` (gone); the index names `old-moved`, which was never written.
    await expect(fetch(s)).rejects.toMatchObject({
      code: 'KAFKA_STORAGE_ERROR',
      message: `object ${old}-moved could not be read: object ${old}-moved not found`,
    });
  });

  it('retries a failed segment read with the index only when a cached item was used', async () => {
    const s = await retired();
    const get = vi.spyOn(s.segments!, 'get').mockRejectedValueOnce(new Error('connection reset'));
    // Cold cache: the segment store's error stands (the local copy is retired).
    await expect(fetch(s)).rejects.toMatchObject({ code: 'KAFKA_STORAGE_ERROR' });
    expect(get).toHaveBeenCalledTimes(1);
    const answer = await fetch(s);
    expect(answer.records.map((r) => r.offset)).toEqual([3]);
    get.mockClear();
    get.mockRejectedValueOnce(new Error('connection reset'));
    // Warm cache: one failed GET, then the index read afresh and a second GET.
    expect(await fetch(s)).toEqual(answer);
    expect(get).toHaveBeenCalledTimes(2);
  });
});

describe('the local tier fallback', () => {
  const fetchAt = (s: Awaited<ReturnType<typeof tiered>>, offset: number) =>
    s.sluice.fetcher.fetchRecords('t', 0, { offset, maxBytes: 100, maxWaitMs: 0 });

  it('is only for offsets the segment store holds: a failed local read at the segment end stands', async () => {
    const s = await tiered();
    // Everything written so far is rolled; one more request stays in the replica stores only.
    const segmentEnd = segmentEndOf(await s.state());
    expect(segmentEnd).toBe(120);
    await s.produce([[0, 'k', 50, T0 + 20_000]]);
    const get = vi.spyOn(s.objects, 'get').mockRejectedValueOnce(new Error('connection reset'));
    await expect(fetchAt(s, segmentEnd)).rejects.toMatchObject({
      code: 'KAFKA_STORAGE_ERROR',
      message: expect.stringMatching(/^object .* could not be read$/),
    });
    expect(get).toHaveBeenCalledTimes(1);
    expect((await fetchAt(s, segmentEnd)).records.map((r) => r.offset)).toEqual([segmentEnd]);
  });

  it('is only for storage errors: a throttled index read is answered as throttled', async () => {
    const s = await tiered();
    const query = vi.spyOn(s.store, 'query').mockRejectedValueOnce(throttled('query'));
    await expect(fetchAt(s, 3)).rejects.toMatchObject({ code: 'THROTTLING_QUOTA_EXCEEDED' });
    expect(query).toHaveBeenCalledTimes(1);
    expect((await fetchAt(s, 3)).records.map((r) => r.offset)).toEqual([3]);
  });
});

describe("the fetcher's segment item cache across compaction passes", () => {
  it('reads the index again after each pass, so records a later pass removed are not served', async () => {
    const s = await segmentSetup({
      'cleanup.policy': 'compact',
      'min.cleanable.dirty.ratio': '0.01',
      'segment.ms': '1',
    });
    const read = async () =>
      (
        await s.sluice.fetcher.fetchRecords('t', 0, { offset: 0, maxBytes: 10_000, maxWaitMs: 0 })
      ).records.map((r) => [r.offset, Buffer.from(r.key!).toString()]);
    const write = async (key: string) => {
      await s.produce([[0, key, 10, T0]]);
      await s.index();
      await s.roll();
    };
    for (const key of ['a', 'b', 'a']) await write(key);
    await s.sluice.maintenance.run();
    const cleanedThrough = async () => (await s.state())['cleanedThrough' as keyof PartitionState];
    expect([await read(), await cleanedThrough()]).toEqual([
      [
        [1, 'b'],
        [2, 'a'],
      ],
      3,
    ]);
    // A second pass rewrites the segment the fetcher has cached; its old object is still there (grace).
    await write('b');
    await s.sluice.maintenance.run();
    expect([await read(), await cleanedThrough()]).toEqual([
      [
        [2, 'a'],
        [3, 'b'],
      ],
      4,
    ]);
  });

  it('tells a first pass (cleanedThrough 1) from no pass yet, so a tombstone it dropped is not served', async () => {
    const s = await segmentSetup({
      'cleanup.policy': 'compact',
      'min.cleanable.dirty.ratio': '0.01',
      'segment.ms': '1',
      'delete.retention.ms': '0',
    });
    const read = async () =>
      (
        await s.sluice.fetcher.fetchRecords('t', 0, { offset: 0, maxBytes: 10_000, maxWaitMs: 0 })
      ).records.map((r) => [r.offset, Buffer.from(r.key!).toString(), r.value]);
    const tombstone = { partition: 0, key: 'a', value: null, timestamp: s.clock.now() - 10_000 };
    expect((await s.http('POST', '/v1/topics/t/records', { records: [tombstone] })).status).toBe(200);
    await s.index();
    await s.roll();
    const cleanedThrough = async () => (await s.state())['cleanedThrough' as keyof PartitionState];
    // The fetcher caches the segment's item before any pass.
    expect([await read(), await cleanedThrough()]).toEqual([[[0, 'a', null]], undefined]);
    // The pass drops the tombstone and rewrites the segment; its old object is still there (grace).
    await s.sluice.maintenance.run();
    expect([await read(), await cleanedThrough()]).toEqual([[], 1]);
  });
});
