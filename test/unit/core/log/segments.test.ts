import { describe, expect, it } from 'vitest';
import { FaultInjector, FaultyObjectStore } from '../../../../lib/adapters/fault/index.js';
import { pageEntries } from '../../../../lib/core/log/batch-index.js';
import { decodeSegmentFooter, encodeSegment } from '../../../../lib/core/log/segments/format.js';
import { rollSegment } from '../../../../lib/core/log/segments/roll.js';
import { splitBatches } from '../../../../protocol/record-batch/index.js';
import { DEFAULT_TOPIC_CONFIG, parseConfigOverrides } from '../../../../lib/core/topics/configs.js';
import { T0, referencedObjects, segmentSetup, snapshot } from '../../../support/segment-support.js';

const TIMES = [T0 - 1, T0, T0 + 5, T0 + 7_003, T0 + 20_000, T0 + 39_009, T0 + 10 ** 9];

describe('segment format', () => {
  it('round-trips the footer and rejects a flipped bit, a wrong size and a missing trailer', () => {
    const data = new Uint8Array(300).map((_, i) => i % 251);
    const chunks = [
      {
        baseOffset: 100,
        position: 0,
        sizeInBytes: 120,
        offsetCount: 7,
        recordCount: 7,
        maxTimestamp: 5000,
        firstTimestamp: 4000,
      },
      {
        baseOffset: 107,
        position: 120,
        sizeInBytes: 180,
        offsetCount: 3,
        recordCount: 0,
        maxTimestamp: -1,
        firstTimestamp: -1,
      },
    ];
    const segment = encodeSegment(data, chunks);
    expect(segment.length).toBe(300 + 2 * 32 + 32);
    expect(Buffer.from(segment.subarray(0, 300))).toEqual(Buffer.from(data));
    expect(decodeSegmentFooter(segment, segment.length)).toEqual({
      baseOffset: 100,
      span: 10,
      dataBytes: 300,
      chunks,
    });
    const flipped = new Uint8Array(segment);
    flipped[300 + 5] = flipped[300 + 5]! ^ 1;
    expect(() => decodeSegmentFooter(flipped, flipped.length)).toThrow(/CRC-32C/);
    expect(() => decodeSegmentFooter(segment, segment.length + 1)).toThrow(/do not fit/);
    expect(() => decodeSegmentFooter(data, data.length)).toThrow(/trailer/);
    expect(() => encodeSegment(data, [chunks[0]!])).toThrow(/cover 120 of 300/);
  });
});

describe('segment topic configs', () => {
  it("parse with Kafka's names and ranges, and bad values are INVALID_CONFIG naming the key", () => {
    expect(
      parseConfigOverrides({
        'local.retention.ms': '-2',
        'local.retention.bytes': 1048576,
        'min.cleanable.dirty.ratio': '0.25',
        'segment.bytes': '16384',
      }),
    ).toEqual({
      'local.retention.ms': -2,
      'local.retention.bytes': 1048576,
      'min.cleanable.dirty.ratio': 0.25,
      'segment.bytes': 16384,
    });
    for (const ratio of ['0', '1', '.5', '1.0'])
      expect(parseConfigOverrides({ 'min.cleanable.dirty.ratio': ratio })).toEqual({
        'min.cleanable.dirty.ratio': Number(ratio),
      });
    for (const [name, value] of [
      ['min.cleanable.dirty.ratio', '1.5'],
      ['min.cleanable.dirty.ratio', '-0.1'],
      ['min.cleanable.dirty.ratio', 'half'],
      ['local.retention.ms', '-3'],
      ['local.retention.bytes', '1e6'],
    ]) {
      expect(() => parseConfigOverrides({ [name!]: value })).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining(name!) }),
      );
    }
    expect([DEFAULT_TOPIC_CONFIG['segment.bytes'], DEFAULT_TOPIC_CONFIG['local.retention.ms']]).toEqual([
      16 * 1024 * 1024,
      3_600_000,
    ]);
  });
});

describe('rolling segments', () => {
  it('rolls by segment.bytes into segments whose reads are byte-identical, footer = index item', async () => {
    const s = await segmentSetup();
    await s.write(40);
    await s.index();
    const before = await snapshot(s, 0, TIMES);
    expect(before.nextOffset).toBe(400);

    const rolled = await s.roll();
    const segments = await s.segmentItems();
    // 40 entries of ~2.4 KiB, 16 KiB segments: six full ones; the rest is the open segment.
    expect(rolled).toBe(segments.length);
    expect(segments.length).toBe(5);
    const state = await s.state();
    expect(state['segEnd' as keyof typeof state]).toBe(segments.at(-1)!['end']);
    let expectedBase = 0;
    for (const item of segments) {
      const chunks = pageEntries(item);
      expect(chunks[0]!.baseOffset).toBe(expectedBase);
      const object = await s.segments!.get(item['o'] as string);
      const footer = decodeSegmentFooter(object, object.length);
      expect(footer.chunks).toEqual(
        chunks.map(
          ({
            baseOffset,
            entry: {
              position: b,
              sizeInBytes: l,
              offsetCount: n,
              recordCount: c,
              maxTimestamp: t,
              firstTimestamp: f,
            },
          }) => ({
            baseOffset,
            position: b,
            sizeInBytes: l,
            offsetCount: n,
            recordCount: c,
            maxTimestamp: t,
            firstTimestamp: f,
          }),
        ),
      );
      expect(footer.dataBytes).toBeLessThanOrEqual(16384);
      // Kafka's log bytes: batches with their true base offsets, back to back, CRCs intact.
      const batches = splitBatches(object.subarray(0, footer.dataBytes));
      expect(batches[0]!.header.baseOffset).toBe(expectedBase);
      expectedBase = item['end'] as number;
    }
    expect(await snapshot(s, 0, TIMES)).toEqual(before);
    // Rolling again finds nothing closed: idempotent.
    expect(await s.roll()).toBe(0);
    expect((await s.segmentItems()).length).toBe(5);
  });

  it('rolls the open segment only once its first batch is older than segment.ms', async () => {
    const s = await segmentSetup({ 'segment.ms': '3600000' });
    const now = s.clock.now();
    await s.write(3, now - 1_000);
    await s.index();
    expect(await s.roll()).toBe(0);
    s.clock.time = now + 3_600_000;
    expect(await s.roll()).toBe(1);
    expect(pageEntries((await s.segmentItems())[0]!).reduce((n, x) => n + x.entry.offsetCount, 0)).toBe(30);
  });

  it('splits a produce object that holds several partitions into one segment per partition', async () => {
    const s = await segmentSetup({ 'segment.ms': '1' }, 2);
    for (let i = 0; i < 6; i++)
      await s.produce(
        [0, 1, 0, 1].map((p, j) => [p, `k${j}`, 300, T0 + i * 10 + j] as [number, string, number, number]),
      );
    const shared = (await s.state(0)).tail[0]!.objectKey;
    expect((await s.state(1)).tail[0]!.objectKey).toBe(shared);
    await s.index(0);
    await s.index(1);
    const before = [await snapshot(s, 0, TIMES), await snapshot(s, 1, TIMES)];
    expect(await s.roll(0)).toBe(1);
    expect(await s.roll(1)).toBe(1);
    const [g0] = await s.segmentItems(0);
    const [g1] = await s.segmentItems(1);
    expect(g0!['o']).not.toBe(g1!['o']);
    for (const g of [g0!, g1!]) {
      const object = await s.segments!.get(g['o'] as string);
      expect(
        splitBatches(object.subarray(0, decodeSegmentFooter(object, object.length).dataBytes)),
      ).toHaveLength(6);
    }
    expect([await snapshot(s, 0, TIMES), await snapshot(s, 1, TIMES)]).toEqual(before);
  });

  it('reads the rolled range with one ranged GET and one index query per fetch', async () => {
    const s = await segmentSetup({ 'segment.bytes': '65536' });
    await s.write(100);
    await s.index();
    const gets = () => s.objects.meter.read().objectGets + s.segments!.meter.read().objectGets;
    const queries = () => s.store.meter.read().metadataReads;
    const readTo = async (end: number) => {
      const [g, q] = [gets(), queries()];
      let offset = 0;
      let fetches = 0;
      while (offset < end) {
        const r = await s.sluice.fetcher.fetchBatches('t', 0, { offset, maxBytes: 16 * 1024, maxWaitMs: 0 });
        offset = r.nextOffset;
        fetches++;
      }
      return { fetches, gets: gets() - g, queries: queries() - q, offset };
    };
    // segment.ms passes too: the open segment rolls as well, and the whole log is in segments.
    s.clock.time += 7 * 86_400_000;
    expect(await s.roll()).toBe(4);
    const segEnd = (await s.segmentItems()).at(-1)!['end'] as number;
    expect(segEnd).toBe(1000);
    const after = await readTo(segEnd);
    expect(after.offset).toBe(segEnd);
    // One GET per fetch, two for a fetch that crosses one of the 3 segment boundaries.
    expect(after.gets).toBeGreaterThanOrEqual(after.fetches);
    expect(after.gets).toBeLessThanOrEqual(after.fetches + 3);
    // Per fetch the partition item; the segment index once per segment (the fetcher keeps the items it
    // read for a while), or a second time for a fetch that reaches past the end of its segment.
    expect(after.queries - after.fetches).toBeGreaterThanOrEqual(4);
    expect(after.queries - after.fetches).toBeLessThanOrEqual(4 + 3);
    // A second pass within the cache's 30 s reads no index item at all; past it, the index again.
    expect((await readTo(segEnd)).queries).toBe(after.fetches);
    s.clock.time += 30_001;
    expect((await readTo(segEnd)).queries - after.fetches).toBeGreaterThanOrEqual(4);
    // The same range from the batch index: a GET per produce request.
    const unrolled = await segmentSetup({ 'segment.bytes': '65536' });
    await unrolled.write(100);
    await unrolled.index();
    const [g0] = [unrolled.objects.meter.read().objectGets];
    let offset = 0;
    while (offset < segEnd)
      offset = (
        await unrolled.sluice.fetcher.fetchBatches('t', 0, { offset, maxBytes: 16 * 1024, maxWaitMs: 0 })
      ).nextOffset;
    expect(unrolled.objects.meter.read().objectGets - g0).toBeGreaterThanOrEqual(segEnd / 10);
  });

  it('two rolls at once write one segment per range and leave no object behind', async () => {
    const s = await segmentSetup();
    await s.write(40);
    await s.index();
    const before = await snapshot(s);
    const deps = { ...s.sluice.log, segmentStore: s.segments! };
    for (let round = 0; round < 8; round++) {
      const results = await Promise.all(
        [0, 1, 2].map(() => rollSegment(deps, s.topic.topicId, 0, s.config())),
      );
      if (results.every((r) => !r.rolled)) break;
      expect(results.filter((r) => r.rolled)).toHaveLength(1);
    }
    expect((await s.segmentItems()).length).toBe(5);
    expect(s.segments!.keys()).toEqual((await s.segmentItems()).map((g) => g['o']).sort());
    expect(await snapshot(s)).toEqual(before);
  });
});

describe("the fetcher's segment item cache", () => {
  it("reads the index again when a cached segment's object is gone, with the same answer", async () => {
    const s = await segmentSetup({ 'segment.ms': '1' });
    await s.write(40);
    await s.index();
    await s.roll();
    const before = await snapshot(s, 0, TIMES);
    // Another process rewrites the first segment into a new object and deletes the old one, with no
    // change this fetcher could see in the partition item.
    const [first] = await s.segmentItems();
    const old = first!['o'] as string;
    const moved = `${old}-moved`;
    await s.segments!.put(moved, await s.segments!.get(old));
    await s.store.put({ ...first!, o: moved });
    await s.segments!.delete([old]);
    expect(await snapshot(s, 0, TIMES)).toEqual(before);
  });
});

describe('two maintenance runs at once', () => {
  it('roll, retire local copies and collect without a lost, doubled or unreadable offset', async () => {
    const s = await segmentSetup({ 'local.retention.ms': '1000' });
    for (let i = 0; i < 10; i++) {
      await s.write(4, s.clock.now() - 60_000 + i * 4000);
      await s.index();
    }
    const before = await snapshot(s, 0, TIMES);
    const [a, b] = await Promise.all([s.sluice.maintenance.run(), s.sluice.maintenance.run()]);
    expect([a.errors, b.errors]).toEqual([[], []]);
    expect(a.segmentsRolled + b.segmentsRolled).toBe(5);
    const segments = await s.segmentItems();
    expect(segments.map((g) => pageEntries(g)[0]!.baseOffset)).toEqual([
      0,
      ...segments.slice(0, -1).map((g) => g['end']),
    ]);
    expect(await snapshot(s, 0, TIMES)).toEqual(before);
    s.clock.time += 15 * 60_000 + 1;
    await Promise.all([s.sluice.maintenance.run(), s.sluice.maintenance.run()]);
    expect([...s.segments!.keys(), ...s.objects.keys()].sort()).toEqual(await referencedObjects(s));
    expect(await snapshot(s, 0, TIMES)).toEqual(before);
  });
});

describe('tiers', () => {
  it("reads the replica stores' copy while the segment store fails, until local retention retires it", async () => {
    const injector = new FaultInjector({ seed: 5, rate: 0 });
    const s = await segmentSetup({ 'local.retention.ms': '7200000' }, 1, {
      wrapSegmentStore: (store) => new FaultyObjectStore(store, injector),
    });
    for (let i = 0; i < 10; i++) {
      await s.write(4, T0 + i * 4000);
      await s.index();
    }
    expect(await s.roll()).toBe(5);
    const before = await snapshot(s, 0, TIMES);
    injector.failNext({ ops: ['get'] }, 'failBefore', { count: 100_000 });
    expect(await snapshot(s, 0, TIMES)).toEqual(before);
    expect(injector.counts.failBefore).toBeGreaterThan(0);
    s.clock.time += 7_200_000;
    const report = await s.sluice.maintenance.run();
    expect(report.localPagesRetired).toBeGreaterThan(0);
    await expect(
      s.sluice.fetcher.fetchBatches('t', 0, { offset: 0, maxBytes: 1000, maxWaitMs: 0 }),
    ).rejects.toMatchObject({ code: 'KAFKA_STORAGE_ERROR' });
    injector.enabled = false;
    expect(await snapshot(s, 0, TIMES)).toEqual(before);
  });

  it('local retention retires rolled pages only, and the collector deletes their objects after its grace', async () => {
    const s = await segmentSetup({ 'local.retention.ms': '60000' });
    const now = s.clock.now();
    // Indexed every 4 requests: pages of 4 entries, most of them wholly below the rolled segments' end.
    for (let i = 0; i < 10; i++) {
      await s.write(4, now - 120_000 + i * 4000);
      await s.index();
    }
    const before = await snapshot(s, 0, TIMES);
    const pagesBefore = (await s.livePages()).length;
    const objectsBefore = s.objects.keys().length;
    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    expect(report.segmentsRolled).toBe(5);
    const segEnd = (await s.segmentItems()).at(-1)!['end'] as number;
    const live = await s.livePages();
    expect(report.localPagesRetired).toBe(pagesBefore - live.length);
    expect(report.localPagesRetired).toBeGreaterThan(0);
    for (const page of live)
      expect(
        pageEntries(page).at(-1)!.baseOffset + pageEntries(page).at(-1)!.entry.offsetCount,
      ).toBeGreaterThan(segEnd);
    // Retired within the grace period: the objects stay for readers holding the old page.
    expect(s.objects.keys().length).toBe(objectsBefore);
    expect(await snapshot(s, 0, TIMES)).toEqual(before);
    s.clock.time += 15 * 60_000 + 1;
    await s.sluice.maintenance.run();
    expect(s.objects.keys()).toEqual((await referencedObjects(s)).filter((k) => k.startsWith('d/')));
    expect(s.objects.keys().length).toBeLessThan(objectsBefore);
    expect(await snapshot(s, 0, TIMES)).toEqual(before);
  });
});

describe('retention by segment', () => {
  it('deletes whole segments by their largest timestamp, never part of one, and answers OFFSET_OUT_OF_RANGE below', async () => {
    const s = await segmentSetup({ 'retention.ms': '86400000' });
    await s.write(40, s.clock.now() - 86_400_000 - 20_500);
    await s.index();
    await s.roll();
    const segments = await s.segmentItems();
    // Request i has timestamps now - 1 d - 20.5 s + i s: requests 0..20 are past retention.ms.
    const ends = segments.map((g) => g['end'] as number);
    const expired = segments.filter(
      (g) => Math.max(...pageEntries(g).map((x) => x.entry.maxTimestamp)) < s.clock.now() - 86_400_000,
    );
    expect(expired.length).toBeGreaterThan(0);
    expect(expired.length).toBeLessThan(segments.length);
    const before = await snapshot(s);
    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    const logStart = ends[expired.length - 1]!;
    expect((await s.state()).logStartOffset).toBe(logStart);
    expect((await s.segmentItems()).map((g) => g['end'])).toEqual(ends.slice(expired.length));
    const after = await snapshot(s);
    expect(after.reads).toEqual(before.reads.filter((r) => (r as { offset: number }).offset >= logStart));
    await expect(
      s.sluice.fetcher.fetchBatches('t', 0, { offset: logStart - 1, maxBytes: 1000, maxWaitMs: 0 }),
    ).rejects.toMatchObject({ code: 'OFFSET_OUT_OF_RANGE' });
  });

  it('retention.bytes deletes the oldest segments while the rest still exceeds it', async () => {
    const s = await segmentSetup({ 'retention.bytes': '40000' });
    await s.write(40);
    await s.index();
    await s.roll();
    const segments = await s.segmentItems();
    const bytes = (g: (typeof segments)[number]) =>
      pageEntries(g).reduce((n, x) => n + x.entry.sizeInBytes, 0);
    const st = await s.state();
    const unrolled = (await s.livePages())
      .flatMap(pageEntries)
      .filter((x) => x.baseOffset >= (segments.at(-1)!['end'] as number))
      .reduce((n, x) => n + x.entry.sizeInBytes, 0);
    let total =
      segments.reduce((n, g) => n + bytes(g), 0) + unrolled + st.tail.reduce((n, e) => n + e.sizeInBytes, 0);
    let dropped = 0;
    while (total - bytes(segments[dropped]!) >= 40000) total -= bytes(segments[dropped++]!);
    expect(dropped).toBeGreaterThan(0);
    await s.sluice.maintenance.run();
    expect((await s.state()).logStartOffset).toBe(segments[dropped - 1]!['end']);
    expect((await s.segmentItems()).length).toBe(segments.length - dropped);
  });
});

describe('compaction of segments', () => {
  it('rewrites rolled segments into the segment store keeping offsets and the latest record per key', async () => {
    const s = await segmentSetup({ 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.1' });
    await s.write(40);
    await s.index();
    expect(await s.roll()).toBe(5);
    const before = await snapshot(s);
    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    expect(report.recordsCompacted).toBeGreaterThan(0);
    const after = await snapshot(s);
    // Every record still read has the offset, key and value it had; superseded keys are gone.
    type Read = { offset: number; records: { offset: number; key: string; value: string }[] };
    const all = new Map<number, { key: string; value: string }>();
    for (const r of before.reads as Read[]) for (const x of r.records) all.set(x.offset, x);
    const kept = new Map<number, { key: string; value: string }>();
    for (const r of after.reads as Read[]) for (const x of r.records) kept.set(x.offset, x);
    const latest = new Map<string, number>();
    for (const [offset, x] of all) latest.set(x.key, Math.max(latest.get(x.key) ?? -1, offset));
    const st = await s.state();
    for (const [offset, x] of kept) expect(all.get(offset)).toEqual(x);
    const cleaned = [...all.keys()].filter(
      (o) => o < (st as unknown as { cleanedThrough: number }).cleanedThrough,
    );
    for (const o of cleaned) expect(kept.has(o)).toBe(latest.get(all.get(o)!.key) === o || o >= st.tailBase);
    const rewritten = (await s.segmentItems())
      .flatMap(pageEntries)
      .filter((x) => x.entry.objectKey.startsWith('g/'));
    expect(rewritten.length).toBe((await s.segmentItems()).flatMap(pageEntries).length);
    s.clock.time += 15 * 60_000 + 1;
    await s.sluice.maintenance.run();
    expect(s.segments!.keys()).toEqual((await referencedObjects(s)).filter((k) => k.startsWith('g/')));
  });
});

describe('orphans and deleted topics', () => {
  it('purges a deleted topic from the segment store', async () => {
    const s = await segmentSetup();
    await s.write(40);
    await s.index();
    await s.roll();
    expect(s.segments!.keys().length).toBe(5);
    expect((await s.http('DELETE', '/v1/topics/t')).status).toBeLessThan(300);
    await s.sluice.maintenance.run();
    expect(s.segments!.keys()).toEqual([]);
  });
});
