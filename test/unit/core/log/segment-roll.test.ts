/**
 * Rolling one segment, exactly: where segment.bytes and segment.ms close it, the bounds on entries and
 * batch pages per segment, its chunks (segment.bytes / 64, at least 4 KiB, of whole entries), the index
 * item and footer it writes, the time marks it merges, and each way it gives up (deadline, a slow write,
 * a page that changed, a store that fails) with what it leaves behind.
 */
import { describe, expect, it } from 'vitest';
import { dataObjectKey, keys, pad } from '../../../../lib/core/keys.js';
import { pageEntries, pageItem } from '../../../../lib/core/log/batch-index.js';
import type { TailEntry } from '../../../../lib/core/log/partition-state.js';
import { decodeSegmentFooter } from '../../../../lib/core/log/segments/format.js';
import type { RollOptions, RollResult } from '../../../../lib/core/log/segments/roll.js';
import { rollSegment } from '../../../../lib/core/log/segments/roll.js';
import { segmentItem } from '../../../../lib/core/log/segments/segment-index.js';
import { timeMarkItem } from '../../../../lib/core/log/time-index.js';
import { encodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import type { ObjectStore } from '../../../../lib/ports/object-store.js';
import { TransactionCanceledError } from '../../../../lib/ports/metadata-store.js';
import { InterceptedMetadataStore } from '../../../support/seams.js';
import type { SegmentSetup } from '../../../support/segment-support.js';
import { T0, readsRecorded, segmentSetup } from '../../../support/segment-support.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';

/** The stored size of one request of 4 records of 200 bytes (one RecordBatch). */
const L = 897;

/** `requests` requests of 4 records each, request i stamped from + 1000 i + (0..3). */
const uniform = async (s: SegmentSetup, requests: number, from = T0) => {
  for (let i = 0; i < requests; i++)
    await s.produce(
      Array.from({ length: 4 }, (_, j): [number, null, number, number] => [
        0,
        null,
        200,
        from + i * 1000 + j,
      ]),
    );
  await s.index();
  const entries = (await s.livePages()).flatMap(pageEntries);
  expect(entries.map((x) => x.entry.sizeInBytes)).toEqual(entries.map(() => L));
};

const roll = (s: SegmentSetup, options: RollOptions = {}, segmentStore: ObjectStore = s.segments!) =>
  rollSegment({ ...s.sluice.log, segmentStore }, s.topic.topicId, 0, s.config(), options);

/** Rolls until nothing more rolls: each segment's [base, end), data bytes, chunks and entries, and why it stopped. */
const rollAll = async (s: SegmentSetup) => {
  const rolled: [number, number, number, number, number][] = [];
  for (;;) {
    const result = await roll(s);
    if (!result.rolled) return { rolled, skipped: result.skipped };
    const { baseOffset, end, bytes, chunks, entries, objectKey } = result.rolled;
    expect(objectKey.startsWith(`g/${s.topic.topicId}/0/${pad(baseOffset)}-`)).toBe(true);
    rolled.push([baseOffset, end, bytes, chunks, entries]);
  }
};

const segEnd = async (s: SegmentSetup) => (await s.state())['segEnd' as never] as number | undefined;

describe('where a roll closes a segment', () => {
  it('at segment.bytes exactly: the entry that would pass it starts the next segment', async () => {
    const three = await segmentSetup({ 'segment.bytes': String(3 * L) });
    await uniform(three, 10);
    // Entry 9 is the open segment: nothing after it, and younger than segment.ms.
    expect(await rollAll(three)).toEqual({
      rolled: [
        [0, 12, 3 * L, 1, 3],
        [12, 24, 3 * L, 1, 3],
        [24, 36, 3 * L, 1, 3],
      ],
      skipped: 'not-closed',
    });
    expect(await segEnd(three)).toBe(36);
    const two = await segmentSetup({ 'segment.bytes': String(3 * L - 1) });
    await uniform(two, 5);
    expect(await rollAll(two)).toEqual({
      rolled: [
        [0, 8, 2 * L, 1, 2],
        [8, 16, 2 * L, 1, 2],
      ],
      skipped: 'not-closed',
    });
  });

  it('takes a first entry larger than segment.bytes alone', async () => {
    const s = await segmentSetup({ 'segment.bytes': String(L - 1) });
    await uniform(s, 3);
    expect(await rollAll(s)).toEqual({
      rolled: [
        [0, 4, L, 1, 1],
        [4, 8, L, 1, 1],
      ],
      skipped: 'not-closed',
    });
  });

  it('rolls the open segment once its first batch is segment.ms old, not a millisecond before', async () => {
    const s = await segmentSetup({ 'segment.ms': '60000' });
    const first = s.clock.now() - 10_000;
    await uniform(s, 3, first);
    // The first batch's max timestamp is first + 3.
    s.clock.time = first + 3 + 60_000 - 1;
    expect(await roll(s)).toEqual({ skipped: 'not-closed' });
    expect(s.segments!.keys()).toEqual([]);
    s.clock.time += 1;
    expect((await roll(s)).rolled).toMatchObject({
      baseOffset: 0,
      end: 12,
      bytes: 3 * L,
      chunks: 1,
      entries: 3,
    });
    expect(await roll(s)).toEqual({ skipped: 'not-closed' });
  });

  it('starts where the segment index ends, or at the log start when retention moved it past', async () => {
    const s = await segmentSetup({ 'segment.bytes': String(2 * L) });
    await uniform(s, 7);
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 0, end: 8 });
    // Records deleted up to 18, inside the entry of 16-19: the segment starts with that entry.
    await s.store.update(keys.partitionState(s.topic.topicId, 0), [{ set: 'logStartOffset', value: 18 }]);
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 16, end: 24, entries: 2 });
    expect((await s.segmentItems()).map((g) => [g.sk, g['end']])).toEqual([
      [keys.segment(s.topic.topicId, 0, 0).sk, 8],
      [keys.segment(s.topic.topicId, 0, 16).sk, 24],
    ]);
  });

  it('does nothing for a partition that does not exist', async () => {
    const s = await segmentSetup();
    expect(
      await rollSegment({ ...s.sluice.log, segmentStore: s.segments! }, s.topic.topicId, 3, s.config()),
    ).toEqual({
      skipped: 'empty',
    });
  });
});

/**
 * A partition built by hand: `pages[i]` one-record batches in batch page i, all in one object of the
 * leader's store, every batch committed and indexed. Faster than producing thousands of requests.
 */
const handBuilt = async (
  pages: number[],
  configs: Record<string, string> = {},
  /** What the index says of the entry at an offset, over the one-record defaults (a compacted entry). */
  facts: (offset: number) => Partial<TailEntry> = () => ({}),
  valueBytes = 1,
) => {
  const s = await segmentSetup({ 'segment.ms': '1', 'segment.bytes': String(1 << 30), ...configs });
  const { topicId } = s.topic;
  const o = dataObjectKey(topicId, 'bulk-object');
  const batches: Uint8Array[] = [];
  let offset = 0;
  let b = 0;
  for (const size of pages) {
    const entries: TailEntry[] = [];
    for (let i = 0; i < size; i++) {
      const t = T0 + offset;
      const value = new Uint8Array(valueBytes).fill(offset % 256);
      const batch = encodeRecordBatch([{ key: null, value, timestamp: t }]);
      batches.push(batch);
      entries.push({
        objectKey: o,
        position: b,
        sizeInBytes: batch.length,
        offsetCount: 1,
        recordCount: 1,
        maxTimestamp: t,
        firstTimestamp: t,
        ...facts(offset),
      });
      b += batch.length;
      offset++;
    }
    await s.store.put(pageItem(topicId, 0, offset - size, entries));
  }
  await s.objects.put(o, Buffer.concat(batches));
  await s.store.update(keys.partitionState(topicId, 0), [
    { set: 'nextOffset', value: offset },
    { set: 'tailBase', value: offset },
    { set: stateAttr.highWatermark, value: offset },
    { set: [stateAttr.logEndOffsets, 's0'], value: offset },
  ]);
  return s;
};

describe('the bounds on one segment', () => {
  it('takes at most 2048 batch index entries', async () => {
    const s = await handBuilt(Array.from({ length: 33 }, () => 64).concat([1]));
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 0, end: 2048, entries: 2048 });
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 2048, end: 2113, entries: 65 });
  });

  it('takes entries from at most 98 batch pages (the swap checks each), finishing the last page', async () => {
    const s = await handBuilt(Array.from({ length: 100 }, () => 2));
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 0, end: 196, entries: 196 });
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 196, end: 200, entries: 4 });
  });
});

describe("a segment's chunks", () => {
  it('are at most 127 however entries are sized: each pair of chunks is over a chunk size', async () => {
    // Entries of 2,049 bytes, just over half the 4 KiB chunk of a 256 KiB segment: one entry a chunk.
    const s = await handBuilt([130], { 'segment.bytes': String(256 * 1024) }, () => ({}), 1979);
    expect((await s.livePages()).flatMap(pageEntries)[0]!.entry.sizeInBytes).toBe(2049);
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 0, end: 127, bytes: 127 * 2049, chunks: 127 });
    const [item] = await s.segmentItems();
    expect(pageEntries(item!).map((x) => x.baseOffset)).toEqual(Array.from({ length: 127 }, (_, i) => i));
  });

  const chunksOf = async (s: SegmentSetup) => {
    const [item] = await s.segmentItems();
    const object = await s.segments!.get(item!['o'] as string);
    const footer = decodeSegmentFooter(object, object.length);
    const indexed = pageEntries(item!).map(
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
    );
    expect(footer.chunks).toEqual(indexed);
    // Every chunk points into the segment itself.
    expect(pageEntries(item!).map((x) => x.entry.objectKey)).toEqual(indexed.map(() => item!['o']));
    return indexed;
  };
  /** The chunk of entries [i, j) of uniform(). */
  const chunk = (i: number, j: number) => ({
    baseOffset: 4 * i,
    position: i * L,
    sizeInBytes: (j - i) * L,
    offsetCount: 4 * (j - i),
    recordCount: 4 * (j - i),
    maxTimestamp: T0 + (j - 1) * 1000 + 3,
    firstTimestamp: T0 + i * 1000,
  });

  it('are whole entries of at most segment.bytes / 64 bytes', async () => {
    // 286,977 / 64 rounds up to 4,485 bytes: exactly five entries of 897.
    const s = await segmentSetup({ 'segment.bytes': '286977', 'segment.ms': '1' });
    await uniform(s, 12);
    expect((await roll(s)).rolled).toMatchObject({
      baseOffset: 0,
      end: 48,
      bytes: 12 * L,
      chunks: 3,
      entries: 12,
    });
    expect(await chunksOf(s)).toEqual([chunk(0, 5), chunk(5, 10), chunk(10, 12)]);
  });

  it('are at least 4 KiB: four entries of 897 bytes for a 16 KiB segment', async () => {
    const s = await segmentSetup({ 'segment.bytes': '16384', 'segment.ms': '1' });
    await uniform(s, 9);
    expect((await roll(s)).rolled).toMatchObject({ bytes: 9 * L, chunks: 3, entries: 9 });
    expect(await chunksOf(s)).toEqual([chunk(0, 4), chunk(4, 8), chunk(8, 9)]);
  });
});

describe("a chunk's record facts", () => {
  it('count records and take the first timestamp of the first entry that has records, -1 while none has', async () => {
    // Offsets 0 and 1 were compacted to no record (their first timestamps are left over); 2 and 3 keep one.
    const empty = { recordCount: 0, maxTimestamp: -1, firstTimestamp: T0 + 100 };
    const s = await handBuilt([4], {}, (offset) => (offset < 2 ? empty : {}));
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 0, end: 4, chunks: 1, entries: 4 });
    const [item] = await s.segmentItems();
    expect(
      pageEntries(item!).map(
        ({ baseOffset, entry: { offsetCount: n, recordCount: c, maxTimestamp: t, firstTimestamp: f } }) => ({
          baseOffset,
          offsetCount: n,
          recordCount: c,
          maxTimestamp: t,
          firstTimestamp: f,
        }),
      ),
    ).toEqual([
      { baseOffset: 0, offsetCount: 4, recordCount: 2, maxTimestamp: T0 + 3, firstTimestamp: T0 + 2 },
    ]);
    // A chunk of compacted entries only.
    const none = await handBuilt([2], {}, () => empty);
    expect((await roll(none)).rolled).toMatchObject({ end: 2, chunks: 1 });
    const [only] = await none.segmentItems();
    expect(
      pageEntries(only!).map(({ entry: { recordCount: c, maxTimestamp: t, firstTimestamp: f } }) => ({
        recordCount: c,
        maxTimestamp: t,
        firstTimestamp: f,
      })),
    ).toEqual([{ recordCount: 0, maxTimestamp: -1, firstTimestamp: -1 }]);
  });
});

describe('the roll writes', () => {
  it('one segment item equal to its footer, raises segEnd, and merges the time marks of the range into one', async () => {
    const s = await segmentSetup({ 'segment.bytes': String(4 * L) });
    // Two requests per index pass, request k stamped T0 + 5k + (0..3): one time mark per pass.
    for (let k = 0; k < 12; k++) {
      await s.produce(
        Array.from({ length: 4 }, (_, j): [number, null, number, number] => [0, null, 200, T0 + 5 * k + j]),
      );
      if (k % 2 === 1) await s.index();
    }
    const marks = async () => (await s.items('T#')).map((m) => [Number(m.sk.split('#')[1]), m['o'], m['p']]);
    // Pass i holds offsets [8i, 8i + 8) and reaches T0 + 10i + 8.
    const mark = (i: number) => [T0 + 10 * i + 8, 8 * i, i === 0 ? -1 : T0 + 10 * i - 2];
    expect(await marks()).toEqual([0, 1, 2, 3, 4, 5].map(mark));
    const result = await roll(s);
    expect(result.rolled).toMatchObject({ baseOffset: 0, end: 16, entries: 4 });
    const [item] = await s.segmentItems();
    const object = await s.segments!.get(result.rolled!.objectKey);
    const footer = decodeSegmentFooter(object, object.length);
    expect(item).toEqual(
      segmentItem(s.topic.topicId, 0, result.rolled!.objectKey, footer.chunks, s.clock.now()),
    );
    expect(await segEnd(s)).toBe(16);
    // The marks of passes 0 and 1 become one: pass 0's start and previous max, pass 1's timestamp.
    expect(await marks()).toEqual([[T0 + 18, 0, -1], ...[2, 3, 4, 5].map(mark)]);
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 16, end: 32 });
    expect(await marks()).toEqual([[T0 + 18, 0, -1], [T0 + 38, 16, T0 + 18], mark(4), mark(5)]);
  });

  it('merges only the marks of the rolled range, though older and newer marks sort among them', async () => {
    const s = await segmentSetup({ 'segment.bytes': String(4 * L) });
    // One request per pass; request i's records at base + 0..3. Marks where the running max rises.
    for (const base of [1000, 500, 800, 900, 600, 1100, 1200, 1300, 1400]) {
      await s.produce(
        Array.from({ length: 4 }, (_, j): [number, null, number, number] => [0, null, 200, T0 + base + j]),
      );
      await s.index();
    }
    const marks = async () =>
      (await s.items('T#')).map((m) => [Number(m.sk.split('#')[1]) - T0, m['o'], m['p']]);
    const before = [
      [1003, 0, -1],
      [1103, 20, T0 + 1003],
      [1203, 24, T0 + 1103],
      [1303, 28, T0 + 1203],
      [1403, 32, T0 + 1303],
    ];
    expect(await marks()).toEqual(before);
    // [0, 16) holds one mark: nothing to merge, nothing written to the time index.
    const writes: string[] = [];
    const recording = new InterceptedMetadataStore(s.store, async (call, run) => {
      if (call.op === 'batchWrite' || (call.op === 'put' && call.key?.sk.startsWith('T#')))
        writes.push(call.op);
      return run();
    });
    const rollRecorded = () =>
      rollSegment(
        { ...s.sluice.log, store: recording, segmentStore: s.segments! },
        s.topic.topicId,
        0,
        s.config(),
      );
    expect((await rollRecorded()).rolled).toMatchObject({ baseOffset: 0, end: 16 });
    expect([await marks(), writes]).toEqual([before, []]);
    // [16, 32) reaches down to 603, below the mark at 0, and the mark at 32 is past its end: its three
    // marks become one, the first one's start and previous max with the last one's timestamp.
    expect((await rollRecorded()).rolled).toMatchObject({ baseOffset: 16, end: 32 });
    expect(await marks()).toEqual([
      [1003, 0, -1],
      [1303, 20, T0 + 1003],
      [1403, 32, T0 + 1303],
    ]);
    expect(writes).toEqual(['put', 'batchWrite']);
  });

  it('merges marks in offset order, keeping the merged one where it takes the key of one it replaces', async () => {
    // Marks as a stalled materializer and a compaction rebuild may leave them: their keys (timestamp,
    // then offset) sort otherwise than their offsets.
    const s = await handBuilt([1, 1, 1]);
    const mark = (ts: number, o: number, p: number) =>
      timeMarkItem(s.topic.topicId, 0, { maxTimestamp: T0 + ts, baseOffset: o, prev: p });
    for (const m of [mark(5, 0, -1), mark(3, 1, T0), mark(5, 2, T0 + 4)]) await s.store.put(m);
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 0, end: 3 });
    expect(await s.items('T#')).toEqual([mark(5, 0, -1)]);
  });

  it('merges a mark at timestamp 0, and leaves the Idempotency-Keys of the range alone', async () => {
    const s = await handBuilt([1, 1], {}, (offset) => ({
      maxTimestamp: 10 * offset,
      firstTimestamp: 10 * offset,
    }));
    const mark = (ts: number, o: number, p: number) =>
      timeMarkItem(s.topic.topicId, 0, { maxTimestamp: ts, baseOffset: o, prev: p });
    const key = {
      ...keys.idempotencyKey(s.topic.topicId, 0, 'HASH'),
      o: 1,
      n: 1,
      t: 10,
      m: 'HASH..',
      expiresAt: 1,
    };
    for (const m of [mark(0, 0, -1), mark(10, 1, 0), key]) await s.store.put(m);
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 0, end: 2 });
    expect(await s.items('T#')).toEqual([mark(10, 0, -1)]);
    expect(await s.items('K#')).toEqual([key]);
    // The one chunk's first timestamp is its first record's, 0.
    const [item] = await s.segmentItems();
    expect(
      pageEntries(item!).map(({ entry: { recordCount: c, maxTimestamp: t, firstTimestamp: f } }) => ({
        recordCount: c,
        maxTimestamp: t,
        firstTimestamp: f,
      })),
    ).toEqual([{ recordCount: 2, maxTimestamp: 10, firstTimestamp: 0 }]);
  });

  it('reads everything strongly consistent', async () => {
    const s = await segmentSetup({ 'segment.bytes': String(2 * L) });
    await uniform(s, 5);
    const recorded = readsRecorded(s.store);
    const result = await rollSegment(
      { ...s.sluice.log, store: recorded.store, segmentStore: s.segments! },
      s.topic.topicId,
      0,
      s.config(),
    );
    expect(result.rolled).toMatchObject({ baseOffset: 0, end: 8 });
    expect(recorded.reads.length).toBeGreaterThan(3);
    expect(recorded.reads.filter((r) => !r.consistent)).toEqual([]);
  });

  it('never lowers segEnd: a roll that arrives after a longer one keeps the higher end', async () => {
    const s = await segmentSetup({ 'segment.bytes': String(2 * L) });
    await uniform(s, 5);
    await s.store.update(keys.partitionState(s.topic.topicId, 0), [{ set: 'segEnd', value: 100 }]);
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 0, end: 8 });
    expect(await segEnd(s)).toBe(100);
  });
});

describe('a roll that gives up', () => {
  const setup = () =>
    segmentSetup({ 'segment.bytes': String(2 * L) }).then(async (s) => (await uniform(s, 5), s));
  const nothingIndexed = async (s: SegmentSetup) => {
    expect(await s.segmentItems()).toEqual([]);
    expect(await segEnd(s)).toBeUndefined();
  };

  it('writes nothing once its deadline has passed, and rolls up to it', async () => {
    const s = await setup();
    expect(await roll(s, { deadline: s.clock.now() - 1 })).toEqual({ skipped: 'deadline' });
    expect(s.segments!.keys()).toEqual([]);
    await nothingIndexed(s);
    expect((await roll(s, { deadline: s.clock.now() })).rolled).toMatchObject({ baseOffset: 0, end: 8 });
  });

  it('leaves a segment whose write outlasted swapDeadlineMs unindexed, for the collector', async () => {
    const s = await setup();
    let took = 0;
    const slow: ObjectStore = Object.create(s.segments!, {
      put: {
        value: async (key: string, body: Uint8Array) => {
          await s.segments!.put(key, body);
          s.clock.time += took;
        },
      },
    }) as ObjectStore;
    took = 60_001;
    expect(await roll(s, { swapDeadlineMs: 60_000 }, slow)).toEqual({ skipped: 'deadline' });
    expect(s.segments!.keys()).toHaveLength(1);
    await nothingIndexed(s);
    // Five minutes by default; a write of exactly the limit is indexed.
    took = 300_001;
    expect(await roll(s, {}, slow)).toEqual({ skipped: 'deadline' });
    took = 300_000;
    const result = await roll(s, {}, slow);
    expect(result.rolled).toMatchObject({ baseOffset: 0, end: 8 });
    expect((await s.segmentItems()).map((g) => g['o'])).toEqual([result.rolled!.objectKey]);
    expect(s.segments!.keys()).toHaveLength(3);
  });

  const racing = async (change: (s: SegmentSetup) => Promise<void>) => {
    const s = await setup();
    const changing: ObjectStore = Object.create(s.segments!, {
      put: {
        value: async (key: string, body: Uint8Array) => {
          await s.segments!.put(key, body);
          await change(s);
        },
      },
    }) as ObjectStore;
    expect(await roll(s, {}, changing)).toEqual({ skipped: 'raced' });
    expect(s.segments!.keys()).toEqual([]);
    await nothingIndexed(s);
  };

  it('deletes its segment when a batch page it read was rewritten or retired meanwhile', async () => {
    const rewrite = (field: 'objectKey' | 'position' | 'sizeInBytes') => async (s: SegmentSetup) => {
      const [page] = await s.livePages();
      const entries = pageEntries(page!).map((x) => x.entry);
      const first = entries[0]!;
      const changed = {
        ...first,
        [field]: field === 'objectKey' ? dataObjectKey(s.topic.topicId, 'compacted') : first[field] + 1,
      };
      await s.store.put(pageItem(s.topic.topicId, 0, 0, [changed, ...entries.slice(1)]));
    };
    await racing(rewrite('objectKey'));
    await racing(rewrite('position'));
    await racing(rewrite('sizeInBytes'));
    await racing(async (s) => s.store.delete(keys.batch(s.topic.topicId, 0, 0)));
    // Cut short: the second of the two entries taken is no longer on the page.
    await racing(async (s) => {
      const [page] = await s.livePages();
      await s.store.put(
        pageItem(
          s.topic.topicId,
          0,
          0,
          pageEntries(page!)
            .map((x) => x.entry)
            .slice(0, 1),
        ),
      );
    });
  });

  it('deletes its segment when a page changes between its checks and the swap', async () => {
    const s = await setup();
    const compacting = new InterceptedMetadataStore(s.store, async (call, run) => {
      if (call.op === 'transact') {
        const [page] = await s.livePages();
        const entries = pageEntries(page!).map((x) => ({ ...x.entry, recordCount: 0 }));
        await s.store.put(pageItem(s.topic.topicId, 0, 0, entries));
      }
      return run();
    });
    expect(
      await rollSegment(
        { ...s.sluice.log, store: compacting, segmentStore: s.segments! },
        s.topic.topicId,
        0,
        s.config(),
      ),
    ).toEqual({
      skipped: 'raced',
    });
    expect(s.segments!.keys()).toEqual([]);
    await nothingIndexed(s);
  });

  it('deletes its segment when the swap transaction is cancelled, and passes other failures on', async () => {
    const cancelled = await setup();
    const wrap = (s: SegmentSetup, error: Error) =>
      new InterceptedMetadataStore(s.store, async (call, run) => {
        if (call.op === 'transact') throw error;
        return run();
      });
    const cancel = new TransactionCanceledError(['ConditionalCheckFailed']);
    expect(
      await rollSegment(
        { ...cancelled.sluice.log, store: wrap(cancelled, cancel), segmentStore: cancelled.segments! },
        cancelled.topic.topicId,
        0,
        cancelled.config(),
      ),
    ).toEqual({ skipped: 'raced' } satisfies RollResult);
    expect(cancelled.segments!.keys()).toEqual([]);

    const failing = await setup();
    await expect(
      rollSegment(
        {
          ...failing.sluice.log,
          store: wrap(failing, new Error('throttled')),
          segmentStore: failing.segments!,
        },
        failing.topic.topicId,
        0,
        failing.config(),
      ),
    ).rejects.toThrow(new Error('throttled'));
    // Written and not indexed: an orphan the collector deletes after its grace period.
    expect(failing.segments!.keys()).toHaveLength(1);
    await nothingIndexed(failing);
  });
});

describe('a batch index a roll refuses', () => {
  it('has an entry straddling the end of the segment index', async () => {
    const s = await segmentSetup({ 'segment.ms': '1' });
    await uniform(s, 3);
    await s.store.put(
      segmentItem(
        s.topic.topicId,
        0,
        'g/x',
        [
          {
            baseOffset: 0,
            position: 0,
            sizeInBytes: 10,
            offsetCount: 2,
            recordCount: 2,
            maxTimestamp: 1,
            firstTimestamp: 1,
          },
        ],
        0,
      ),
    );
    await expect(roll(s)).rejects.toThrow(
      new Error("batch index entry at 0 straddles the segment index's end 2"),
    );
  });

  it('has a gap between pages', async () => {
    const s = await segmentSetup({ 'segment.ms': '1' });
    for (let i = 0; i < 3; i++) await uniform(s, 2, T0 + i * 10_000);
    await s.store.delete(keys.batch(s.topic.topicId, 0, 8));
    await expect(roll(s)).rejects.toThrow(
      new Error('batch index of partition 0 has a gap at 8 (next entry at 16)'),
    );
    expect(s.segments!.keys()).toEqual([]);
  });
});

describe('the swap’s conditions', () => {
  it('keeps segEnd when it is already the segment’s end', async () => {
    const s = await segmentSetup({ 'segment.bytes': String(2 * L) });
    await uniform(s, 5);
    await s.store.update(keys.partitionState(s.topic.topicId, 0), [{ set: 'segEnd', value: 8 }]);
    expect((await roll(s)).rolled).toMatchObject({ baseOffset: 0, end: 8 });
    expect(await segEnd(s)).toBe(8);
  });

  /** Rolls with `change` made just before the swap's transaction: it must be refused. */
  const refused = async (change: (s: SegmentSetup) => Promise<void>, segEndBefore?: number) => {
    const s = await segmentSetup({ 'segment.bytes': String(2 * L) });
    await uniform(s, 5);
    if (segEndBefore !== undefined)
      await s.store.update(keys.partitionState(s.topic.topicId, 0), [{ set: 'segEnd', value: segEndBefore }]);
    const changing = new InterceptedMetadataStore(s.store, async (call, run) => {
      if (call.op === 'transact') await change(s);
      return run();
    });
    expect(
      await rollSegment(
        { ...s.sluice.log, store: changing, segmentStore: s.segments! },
        s.topic.topicId,
        0,
        s.config(),
      ),
    ).toEqual({ skipped: 'raced' });
    return s;
  };

  it('is refused when retention moved the log start past the first entry taken', async () => {
    // The first entry taken is [0, 4): a log start of 4 is past it.
    for (const segEndBefore of [undefined, 8]) {
      const s = await refused(async (s) => {
        await s.store.update(keys.partitionState(s.topic.topicId, 0), [{ set: 'logStartOffset', value: 4 }]);
      }, segEndBefore);
      expect(await segEnd(s)).toBe(segEndBefore);
    }
  });

  it('is refused when another roll raised segEnd to its end meanwhile, or indexed a segment at its base', async () => {
    for (const value of [8, 9]) {
      const s = await refused(async (s) => {
        await s.store.update(keys.partitionState(s.topic.topicId, 0), [{ set: 'segEnd', value }]);
      });
      expect(await segEnd(s)).toBe(value);
    }
    const s = await refused(async (s) => {
      await s.store.put({ ...keys.segment(s.topic.topicId, 0, 0), o: 'g/other' });
    });
    expect((await s.segmentItems()).length).toBe(0);
    expect((await s.items(keys.segmentPrefix)).map((g) => g['o'])).toEqual(['g/other']);
  });
});
