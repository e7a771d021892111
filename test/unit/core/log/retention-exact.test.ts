/**
 * Retention's exact effect: which batches go under retention.bytes and retention.ms (down to the byte
 * and the millisecond), -1 meaning "keep", the index pages retired, the time index repaired, and the
 * conditional update of the log start raced and failed.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { isRetired, pageEntries, pageItem } from '../../../../lib/core/log/batch-index.js';
import { decodePartitionState, stateAttr } from '../../../../lib/core/log/partition-codec.js';
import { applyRetention } from '../../../../lib/core/log/retention.js';
import type { TopicConfig } from '../../../../lib/core/topics/configs.js';
import { SluiceError } from '../../../../protocol/errors.js';
import type { MetadataStore } from '../../../../lib/ports/metadata-store.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import { beforeUpdate } from '../../../support/before-update.js';
import { memorySluice } from '../../../support/log-support.js';
import { recordReads } from '../../../support/recorded-reads.js';

type RetentionConfig = Pick<TopicConfig, 'cleanup.policy' | 'retention.ms' | 'retention.bytes'>;
const KEEP: RetentionConfig = { 'cleanup.policy': 'delete', 'retention.ms': -1, 'retention.bytes': -1 };

/**
 * A partition whose batches are indexed in passes of `passes[i]` batches (one index page each), then
 * `tail` more left in the partition item. Every batch holds one record of the same size and timestamp
 * `stamp(offset)`, so every batch has the same length L.
 */
const partition = async (passes: number[], tail: number, stamp: (offset: number) => number = () => 1) => {
  const s = memorySluice({ tailFlushEntries: 1000 });
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions: 1 })).status).toBe(201);
  const { topicId } = await s.sluice.catalog.get('t');
  let offset = 0;
  const produce = async (n: number) => {
    for (let i = 0; i < n; i++, offset++) {
      const r = await s.http('POST', '/v1/topics/t/records', {
        records: [{ value: 'x'.repeat(100), partition: 0, timestamp: stamp(offset) }],
      });
      expect(r.body.results[0].offset).toBe(offset);
    }
  };
  for (const n of passes) {
    await produce(n);
    expect(await s.sluice.maintenance.indexTail(topicId, 0)).toBe(n);
  }
  await produce(tail);
  const state = async () => decodePartitionState((await s.store.get(keys.partitionState(topicId, 0)))!);
  const indexed = s.store
    .dump()
    .filter((i) => i.sk.startsWith(keys.batchPrefix))
    .flatMap(pageEntries)
    .map((x) => x.entry);
  const lengths = [...indexed, ...(await state()).tail].map((e) => e.sizeInBytes);
  const L = lengths[0]!;
  expect(lengths).toEqual(Array(offset).fill(L));
  const retain = (config: Partial<RetentionConfig>, store: MetadataStore = s.store, now = s.clock.time) =>
    applyRetention(store, topicId, 0, { ...KEEP, ...config }, now);
  const items = (prefix: string) => s.store.dump().filter((i) => i.sk.startsWith(prefix));
  const pages = () =>
    items(keys.batchPrefix).map((p) => ({ sk: p.sk, retired: isRetired(p), entries: pageEntries(p).length }));
  return { ...s, topicId, L, state, retain, items, pages };
};

describe('retention.bytes', () => {
  it('deletes the oldest batches while what is left stays at or above the limit, counting the tail', async () => {
    const p = await partition([8], 2);
    const { L } = p;
    // 10 batches of L bytes; 5L + 1 keeps 6 of them: dropping a fifth would leave 5L < 5L + 1.
    expect(await p.retain({ 'retention.bytes': 5 * L + 1 })).toEqual({
      logStartOffset: 4,
      batchesDeleted: 4,
    });
    // Exactly 5L keeps 5: the log may sit at the limit.
    expect(await p.retain({ 'retention.bytes': 5 * L })).toEqual({ logStartOffset: 5, batchesDeleted: 1 });
    expect(await p.retain({ 'retention.bytes': 5 * L })).toEqual({ logStartOffset: 5, batchesDeleted: 0 });
    // Entries below the log start no longer count: 3L keeps offsets 7..9, two more batches go, not three.
    expect(await p.retain({ 'retention.bytes': 3 * L })).toEqual({ logStartOffset: 7, batchesDeleted: 2 });
    expect((await p.state()).logStartOffset).toBe(7);
  });

  it('never deletes the tail, even at retention.bytes=0', async () => {
    const p = await partition([8], 2);
    expect(await p.retain({ 'retention.bytes': 0 })).toEqual({ logStartOffset: 8, batchesDeleted: 8 });
    const state = await p.state();
    expect([state.logStartOffset, state.tailBase, state.nextOffset, state.tail.length]).toEqual([
      8, 8, 10, 2,
    ]);
    const fetched = await p.http('GET', '/v1/topics/t/partitions/0/records?offset=8');
    expect(fetched.body.records.map((r: { offset: number }) => r.offset)).toEqual([8, 9]);
  });

  it('keeps everything at retention.bytes=-1 however old the batches are (retention.ms=-1)', async () => {
    const p = await partition([6], 1);
    expect(await p.retain({ 'retention.ms': -1, 'retention.bytes': -1 })).toEqual({
      logStartOffset: 0,
      batchesDeleted: 0,
    });
    // retention.ms=-1 with a byte limit the log is under: nothing is old enough to go, however old.
    expect(await p.retain({ 'retention.ms': -1, 'retention.bytes': 7 * p.L })).toEqual({
      logStartOffset: 0,
      batchesDeleted: 0,
    });
    expect(await p.retain({ 'retention.ms': -1, 'retention.bytes': 6 * p.L })).toEqual({
      logStartOffset: 1,
      batchesDeleted: 1,
    });
  });

  it('does nothing for a partition that does not exist', async () => {
    const p = await partition([1], 0);
    const config = { ...KEEP, 'retention.bytes': 0 };
    expect(await applyRetention(p.store, 'no-such-topic', 0, config, p.clock.time)).toEqual({
      logStartOffset: 0,
      batchesDeleted: 0,
    });
  });

  it('does nothing for cleanup.policy=compact', async () => {
    const p = await partition([4], 0);
    const config = { 'cleanup.policy': 'compact' as const, 'retention.bytes': 0, 'retention.ms': 0 };
    expect(await p.retain(config)).toEqual({ logStartOffset: 0, batchesDeleted: 0 });
    expect(await p.retain({ ...config, 'cleanup.policy': 'compact,delete' })).toEqual({
      logStartOffset: 4,
      batchesDeleted: 4,
    });
  });
});

describe('retention.ms', () => {
  it('deletes a batch whose max timestamp is older than now - retention.ms, to the millisecond', async () => {
    const now = 1_700_000_000_000;
    // Offsets 0..5 stamped now - 1000 + 100 * offset: 0 and 1 are older than now - 850, 2 is not.
    const p = await partition([6], 1, (o) => now - 1000 + 100 * o);
    const config = { 'retention.ms': 800 };
    // now - 800 = the stamp of offset 2: not older, so it stays.
    expect(await p.retain(config, p.store, now)).toEqual({ logStartOffset: 2, batchesDeleted: 2 });
    expect(await p.retain(config, p.store, now + 1)).toEqual({ logStartOffset: 3, batchesDeleted: 1 });
    // retention.bytes=-1 adds nothing: the recent batches stay.
    expect(await p.retain({ 'retention.ms': 800, 'retention.bytes': -1 }, p.store, now + 1)).toEqual({
      logStartOffset: 3,
      batchesDeleted: 0,
    });
  });

  it('takes retention.ms=0 as "older than now", not as "keep"', async () => {
    const now = 1_700_000_000_000;
    const p = await partition([3], 0, (o) => now - 1 + o);
    expect(await p.retain({ 'retention.ms': 0 }, p.store, now)).toEqual({
      logStartOffset: 1,
      batchesDeleted: 1,
    });
  });

  it('stops at the first batch that is neither expired nor over the byte limit', async () => {
    const now = 1_700_000_000_000;
    // Offset 1 is recent between old ones: retention drops whole batches from the start only.
    const stamps = [now - 5000, now, now - 5000, now - 5000];
    const p = await partition([4], 0, (o) => stamps[o]!);
    expect(await p.retain({ 'retention.ms': 1000 }, p.store, now)).toEqual({
      logStartOffset: 1,
      batchesDeleted: 1,
    });
  });
});

describe('what a time-based run reads', () => {
  it('stops at the first batch it keeps: one page of the index however long the log, and all of it under retention.bytes', async () => {
    // 40 index pages of one batch each: nothing has expired.
    const p = await partition(Array(40).fill(1), 2);
    let itemsRead = 0;
    const counting = new Proxy(p.store, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (name !== 'query')
          return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
        return async (input: never) => {
          const page = await target.query(input);
          itemsRead += page.items.length;
          return page;
        };
      },
    });
    expect(await p.retain({ 'retention.ms': 60_000 }, counting, 30_000)).toEqual({
      logStartOffset: 0,
      batchesDeleted: 0,
    });
    // The segment index (empty), the page holding its end, then one page of the walk.
    expect(itemsRead).toBeLessThanOrEqual(5);
    itemsRead = 0;
    // retention.bytes reads the log's byte total in the partition item, and what the last walk kept
    // (the first batch) is still kept: no index item is read.
    await p.retain({ 'retention.bytes': 1_000_000 }, counting, 30_000);
    expect(itemsRead).toBe(0);
    // Expired from offset 30 on only by time: the walk reads up to the first kept batch.
    itemsRead = 0;
    expect((await p.retain({ 'retention.ms': 10 }, counting, 30_000)).logStartOffset).toBe(40);
  });
});

describe('retention of index pages', () => {
  it('retires the pages wholly below the new log start and no other', async () => {
    const p = await partition([3, 3, 3], 1);
    const sk = (o: number) => keys.batch(p.topicId, 0, o).sk;
    // Start 5 is inside the second page: only the first is retired.
    expect(await p.retain({ 'retention.bytes': 5 * p.L })).toEqual({ logStartOffset: 5, batchesDeleted: 5 });
    expect(p.pages()).toEqual([
      { sk: sk(0), retired: true, entries: 0 },
      { sk: sk(3), retired: false, entries: 3 },
      { sk: sk(6), retired: false, entries: 3 },
    ]);
    // Start 6 is the second page's end: it goes too.
    expect(await p.retain({ 'retention.bytes': 4 * p.L })).toEqual({ logStartOffset: 6, batchesDeleted: 1 });
    expect(p.pages()).toEqual([
      { sk: sk(0), retired: true, entries: 0 },
      { sk: sk(3), retired: true, entries: 0 },
      { sk: sk(6), retired: false, entries: 3 },
    ]);
  });

  it('does not count a page that still overlaps the tail (a materializer stopped between its writes)', async () => {
    const p = await partition([5], 5);
    const state = await p.state();
    // The page of the next pass is written, the tail not yet trimmed: offsets 5..9 are in both.
    await p.store.put(pageItem(p.topicId, 0, 5, state.tail));
    // Counted once, 10L is over 5L by five batches: exactly the indexed ones go.
    expect(await p.retain({ 'retention.bytes': 5 * p.L })).toEqual({ logStartOffset: 5, batchesDeleted: 5 });
    expect((await p.state()).tailBase).toBe(5);
  });
});

describe('leftovers of a run that failed after moving the start', () => {
  it('retires the pages wholly below the start on the next run, once, and only while retention is on', async () => {
    const p = await partition([3, 3, 3], 0);
    const sk = (o: number) => keys.batch(p.topicId, 0, o).sk;
    // The start moved to 6 (the end of the second page) but no page was retired.
    await p.store.update(keys.partitionState(p.topicId, 0), [{ set: 'logStartOffset', value: 6 }]);
    const before = p.store.dump();
    expect(await p.retain(KEEP)).toEqual({ logStartOffset: 6, batchesDeleted: 0 });
    expect(p.store.dump()).toEqual(before);
    const far = { 'retention.bytes': 100 * p.L };
    expect(await p.retain(far)).toEqual({ logStartOffset: 6, batchesDeleted: 0 });
    expect(p.pages()).toEqual([
      { sk: sk(0), retired: true, entries: 0 },
      { sk: sk(3), retired: true, entries: 0 },
      { sk: sk(6), retired: false, entries: 3 },
    ]);
    // A later run leaves the markers as they are: their expiry is not pushed back.
    const markers = p.items(keys.batchPrefix).filter(isRetired);
    expect(await p.retain(far, p.store, p.clock.time + 3_600_000)).toEqual({
      logStartOffset: 6,
      batchesDeleted: 0,
    });
    expect(p.items(keys.batchPrefix).filter(isRetired)).toEqual(markers);
  });
});

describe('a run whose retiring write fails', () => {
  it('keeps the log start it moved, and the next run retires the pages below it', async () => {
    const p = await partition([3, 3, 3], 0);
    const sk = (o: number) => keys.batch(p.topicId, 0, o).sk;
    const down = new SluiceError('KAFKA_STORAGE_ERROR', 'unavailable', { retriable: true });
    const failing = new Proxy(p.store, {
      get(target, name, receiver) {
        if (name === 'batchWrite') return () => Promise.reject(down);
        const value: unknown = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await expect(p.retain({ 'retention.bytes': 3 * p.L }, failing)).rejects.toBe(down);
    expect((await p.state()).logStartOffset).toBe(6);
    expect(p.pages().map((x) => x.retired)).toEqual([false, false, false]);
    expect(await p.retain({ 'retention.bytes': 3 * p.L })).toEqual({ logStartOffset: 6, batchesDeleted: 0 });
    expect(p.pages()).toEqual([
      { sk: sk(0), retired: true, entries: 0 },
      { sk: sk(3), retired: true, entries: 0 },
      { sk: sk(6), retired: false, entries: 3 },
    ]);
  });
});

describe('the time index repair under a failing store', () => {
  const tsMaxUpdate = (actions: Parameters<MetadataStore['update']>[1]) =>
    actions.some((a) => 'set' in a && a.set === stateAttr.maxTimestampSoFar);

  it('gives up after three refused tsMax updates', async () => {
    const p = await partition([3], 1);
    let attempts = 0;
    const refusing = beforeUpdate(p.store, async (actions) => {
      if (!tsMaxUpdate(actions)) return;
      attempts++;
      throw new ConditionFailedError(await p.store.get(keys.partitionState(p.topicId, 0)));
    });
    expect(await p.retain({ 'retention.bytes': 0 }, refusing)).toEqual({
      logStartOffset: 3,
      batchesDeleted: 3,
    });
    expect(attempts).toBe(3);
  });

  it('passes on a failure that is not a refused condition', async () => {
    const p = await partition([3], 1);
    const failing = beforeUpdate(p.store, async (actions) => {
      if (tsMaxUpdate(actions))
        throw new SluiceError('KAFKA_STORAGE_ERROR', 'unavailable', { retriable: true });
    });
    await expect(p.retain({ 'retention.bytes': 0 }, failing)).rejects.toMatchObject({
      code: 'KAFKA_STORAGE_ERROR',
    });
  });
});

describe('the time index after retention', () => {
  const marks = (p: Awaited<ReturnType<typeof partition>>) =>
    p
      .items(keys.timePrefix)
      .map((m) => ({ sk: m.sk, o: m['o'], p: m['p'] }))
      .sort((a, b) => (a.sk < b.sk ? -1 : 1));
  const mark = (p: Awaited<ReturnType<typeof partition>>, ts: number, o: number, prev: number) => ({
    sk: keys.timeIndex(p.topicId, 0, ts, o).sk,
    o,
    p: prev,
  });
  const now = 1_700_000_000_000;
  // Three passes of three batches; the running max rises at offsets 0 (300), 4 (400) and 6 (650).
  const stamps = [100, 300, 200, 250, 400, 350, 650, 500, 450].map((t) => now - 10_000 + t);
  const at = (t: number) => now - 10_000 + t;
  const offsetAt = async (p: Awaited<ReturnType<typeof partition>>, t: number) =>
    (await p.http('GET', `/v1/topics/t/partitions/0/offsets?at=${at(t)}`)).body.offset;

  it('recomputes the marks below the new start from the first surviving batch and keeps tsMax', async () => {
    const p = await partition([3, 3, 3], 0, (o) => stamps[o]!);
    expect(marks(p)).toEqual([
      mark(p, at(300), 0, -1),
      mark(p, at(400), 4, at(300)),
      mark(p, at(650), 6, at(400)),
    ]);
    expect(await p.retain({ 'retention.bytes': 4 * p.L })).toEqual({ logStartOffset: 5, batchesDeleted: 5 });
    // Offset 5 (350) is the only survivor before the mark at 6; the marks at 0 and 4 are gone.
    expect(marks(p)).toEqual([mark(p, at(350), 5, -1), mark(p, at(650), 6, at(400))]);
    expect((await p.state()).maxTimestampSoFar).toBe(at(650));
    expect(await offsetAt(p, 100)).toBe(5);
    expect(await offsetAt(p, 351)).toBe(6);
  });

  it('keeps a mark that sits exactly at the new start as it is', async () => {
    const p = await partition([3, 3, 3], 0, (o) => stamps[o]!);
    expect(await p.retain({ 'retention.bytes': 3 * p.L })).toEqual({ logStartOffset: 6, batchesDeleted: 6 });
    expect(marks(p)).toEqual([mark(p, at(650), 6, at(400))]);
    expect((await p.state()).maxTimestampSoFar).toBe(at(650));
  });

  it('resets tsMax to the survivors’ max when no mark survives', async () => {
    const p = await partition([3, 3, 3], 0, (o) => stamps[o]!);
    expect(await p.retain({ 'retention.bytes': 2 * p.L })).toEqual({ logStartOffset: 7, batchesDeleted: 7 });
    expect(marks(p)).toEqual([mark(p, at(500), 7, -1)]);
    expect((await p.state()).maxTimestampSoFar).toBe(at(500));
    // 650 was dropped with offset 6: nothing left reaches 501.
    expect(await offsetAt(p, 501)).toBeNull();
    expect(await offsetAt(p, 460)).toBe(7);
  });

  it('resets tsMax to -1 and drops every mark when the whole index goes', async () => {
    const p = await partition([3, 3, 3], 1, (o) => (o < 9 ? stamps[o]! : at(50)));
    expect(await p.retain({ 'retention.bytes': 0 })).toEqual({ logStartOffset: 9, batchesDeleted: 9 });
    expect(marks(p)).toEqual([]);
    expect((await p.state()).maxTimestampSoFar).toBe(-1);
    expect(await offsetAt(p, 40)).toBe(9);
    // The next pass starts its marks afresh from -1.
    expect(await p.sluice.maintenance.indexTail(p.topicId, 0)).toBe(1);
    expect(marks(p)).toEqual([mark(p, at(50), 9, -1)]);
  });

  it('does not overwrite the tsMax of a materializer pass that raced the repair', async () => {
    const p = await partition([3, 3, 3], 2, (o) => (o < 9 ? stamps[o]! : at(900 + o)));
    let raced = false;
    const racing = beforeUpdate(p.store, async (actions) => {
      if (raced || !actions.some((a) => 'set' in a && a.set === stateAttr.maxTimestampSoFar)) return;
      raced = true;
      expect(await p.sluice.maintenance.indexTail(p.topicId, 0)).toBe(2);
    });
    expect(await p.retain({ 'retention.bytes': 3 * p.L }, racing)).toEqual({
      logStartOffset: 8,
      batchesDeleted: 8,
    });
    expect(raced).toBe(true);
    const state = await p.state();
    expect([state.tailBase, state.maxTimestampSoFar]).toEqual([11, at(910)]);
    expect(marks(p)).toEqual([mark(p, at(450), 8, -1), mark(p, at(910), 9, at(650))]);
    expect(await offsetAt(p, 905)).toBe(9);
  });
});

describe('the conditional update of the log start', () => {
  it('loses to a concurrent run that moved the start further, and changes nothing', async () => {
    const p = await partition([8], 0);
    const racing = beforeUpdate(p.store, async (actions) => {
      if (actions.some((a) => 'set' in a && a.set === 'logStartOffset'))
        await p.store.update(keys.partitionState(p.topicId, 0), [{ set: 'logStartOffset', value: 6 }]);
    });
    expect(await p.retain({ 'retention.bytes': 4 * p.L }, racing)).toEqual({
      logStartOffset: 0,
      batchesDeleted: 0,
    });
    expect((await p.state()).logStartOffset).toBe(6);
    expect(p.pages().map((x) => x.retired)).toEqual([false]);
  });

  it('passes on a failed write, leaving the start, the pages and the marks as they were', async () => {
    const p = await partition([4], 0);
    const before = p.store.dump();
    const failing = beforeUpdate(p.store, async (actions) => {
      if (actions.some((a) => 'set' in a && a.set === 'logStartOffset'))
        throw new SluiceError('KAFKA_STORAGE_ERROR', 'the store is unavailable', { retriable: true });
    });
    await expect(p.retain({ 'retention.bytes': 0 }, failing)).rejects.toMatchObject({
      code: 'KAFKA_STORAGE_ERROR',
    });
    expect(p.store.dump()).toEqual(before);
  });
  it('ends quietly when the topic is deleted between the new start and the time index repair', async () => {
    const p = await partition([4], 0);
    const key = keys.partitionState(p.topicId, 0);
    const deleting = new Proxy(p.store, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (name === 'update')
          return async (...args: Parameters<MetadataStore['update']>) => {
            const result = await target.update(...args);
            if (args[1].some((a) => 'set' in a && a.set === 'logStartOffset')) await target.delete(key);
            return result;
          };
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    expect(await p.retain({ 'retention.bytes': 0 }, deleting)).toEqual({
      logStartOffset: 4,
      batchesDeleted: 4,
    });
    expect(await p.store.get(key)).toBeUndefined();
    expect(p.pages().map((x) => x.retired)).toEqual([true]);
  });
});

describe('the reads of a retention run', () => {
  it('are all strongly consistent: an eventually consistent read could miss the latest start or marks', async () => {
    // No mark survives retention.bytes = 2L here, so the run also reads again to reset tsMax.
    const p = await partition([3, 3, 3], 0, (o) => 1_000 + [100, 300, 200, 250, 400, 350, 650, 500, 450][o]!);
    const { store: recording, reads } = recordReads(p.store);
    expect(await p.retain({ 'retention.bytes': 2 * p.L }, recording)).toEqual({
      logStartOffset: 7,
      batchesDeleted: 7,
    });
    // The partition item, segments, the page holding the segment index's end and the pages from it (key
    // ranges); then the repair's partition item, marks, and the log's pages; then the aborted-transactions
    // index below the new start (a key range).
    expect(reads.sort()).toEqual([
      'get STATE true',
      'get STATE true',
      'query G true',
      'query T true',
      'query undefined true',
      'query undefined true',
      'query undefined true',
      'query undefined true',
    ]);
  });
});
