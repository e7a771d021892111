import { describe, expect, it, vi } from 'vitest';
import { keys, offsetFromBatchSk } from '../../../../lib/core/keys.js';
import { pageEntries, pageItem, retiredPageItem } from '../../../../lib/core/log/batch-index.js';
import { compactPartition } from '../../../../lib/core/log/compaction.js';
import { timeMarkItem } from '../../../../lib/core/log/time-index.js';
import type { Item, UpdateAction } from '../../../../lib/ports/metadata-store.js';
import { ConditionFailedError, TransactionCanceledError } from '../../../../lib/ports/metadata-store.js';
import { encodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import { setup, utf8 } from '../../../support/compaction-support.js';
import { segmentSetup, T0 } from '../../../support/segment-support.js';
import { recordReads } from '../../../support/recorded-reads.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';

type Setup = Awaited<ReturnType<typeof setup>>;

const NOTHING = { entriesRewritten: 0, recordsRemoved: 0, tombstonesDropped: 0 };
const HEADER_ONLY = 61;
const MIB = 1024 * 1024;

/** `count` indexed requests of one record of key k each: a pass empties all but the last. */
const overwrites = async (s: Setup, count: number) => {
  for (let i = 0; i < count; i++) await s.produce([['k', `v${i}`]]);
  await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
  return s.index();
};

const pageItems = async (s: Setup) =>
  (
    await s.store.query({
      pk: keys.partitionPk(s.topic.topicId, 0),
      sk: { beginsWith: keys.batchPrefix },
      consistent: true,
    })
  ).items;

const timeIndex = async (s: Setup) =>
  (await s.store.query({ pk: keys.partitionPk(s.topic.topicId, 0), sk: { beginsWith: keys.timePrefix } }))
    .items;

describe('a pass’s writes', () => {
  it('are its progress alone when nothing is superseded', async () => {
    const s = await setup();
    await s.produce([['a', 'a0']]);
    await s.produce([['b', 'b0']]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const index = await s.index();
    const puts = s.objects.meter.read().objectPuts;
    const update = vi.spyOn(s.store, 'update');
    const transact = vi.spyOn(s.store, 'transact');
    const batchWrite = vi.spyOn(s.store, 'batchWrite');
    expect(await s.compact()).toEqual({ dirtyRatio: 1, cleanedThrough: 2, ...NOTHING });
    expect(transact).not.toHaveBeenCalled();
    expect(batchWrite).not.toHaveBeenCalled();
    expect(update.mock.calls).toEqual([
      [
        keys.partitionState(s.topic.topicId, 0),
        [
          { set: 'cleanedThrough', value: 2 },
          { set: 'cleanBytes', value: index[0]!.sizeInBytes + index[1]!.sizeInBytes },
          { remove: 'oldestTombstone' },
        ],
        {
          condition: {
            and: [
              { exists: 'pk' },
              { or: [{ notExists: 'cleanedThrough' }, { path: 'cleanedThrough', op: '<=', value: 2 }] },
            ],
          },
        },
      ],
    ]);
    expect(s.objects.meter.read().objectPuts).toBe(puts);
    expect(await s.index()).toEqual(index);
  });

  it('swap at most 50 entries per transaction, each group in one new object, in offset order', async () => {
    const s = await setup();
    const before = await overwrites(s, 52);
    const transact = vi.spyOn(s.store, 'transact');
    const objects = s.objects.keys();
    expect(await s.compact()).toEqual({
      dirtyRatio: 1,
      cleanedThrough: 52,
      entriesRewritten: 51,
      recordsRemoved: 51,
      tombstonesDropped: 0,
    });
    expect(transact).toHaveBeenCalledTimes(2);
    const added = s.objects.keys().filter((k) => !objects.includes(k));
    expect(added).toHaveLength(2);
    const after = await s.index();
    const first = after[0]!.objectKey;
    const second = after[50]!.objectKey;
    expect(new Set([first, second])).toEqual(new Set(added));
    expect(after.map((e) => [e.objectKey, e.position, e.sizeInBytes, e.recordCount])).toEqual([
      ...Array.from({ length: 50 }, (_, i) => [first, i * HEADER_ONLY, HEADER_ONLY, 0]),
      [second, 0, HEADER_ONLY, 0],
      [before[51]!.objectKey, before[51]!.position, before[51]!.sizeInBytes, 1],
    ]);
    expect((await s.objects.get(first)).length).toBe(50 * HEADER_ONLY);
    expect((await s.fetchRows()).rows).toEqual([[51, 'k', 'v51']]);
  });

  it('stop at a swap that another writer cancelled, before any later group', async () => {
    const s = await setup();
    const before = await overwrites(s, 52);
    const transact = vi
      .spyOn(s.store, 'transact')
      .mockRejectedValueOnce(new TransactionCanceledError(['ConditionalCheckFailed']));
    expect(await s.compact()).toEqual({ skipped: 'raced', dirtyRatio: 1, cleanedThrough: 0, ...NOTHING });
    expect(transact).toHaveBeenCalledTimes(1);
    expect(await s.index()).toEqual(before);
    expect((await s.cleaner()).cleanedThrough).toBeUndefined();
  });

  it('fail the pass on a store error that is not a cancellation, swapping nothing', async () => {
    const s = await setup();
    const before = await overwrites(s, 3);
    vi.spyOn(s.store, 'transact').mockRejectedValueOnce(new Error('throttled'));
    await expect(s.compact()).rejects.toThrow('throttled');
    expect(await s.index()).toEqual(before);
  });
});

describe('the swap deadline', () => {
  /** A pass whose object write takes `ms` on the test clock. */
  const slowWrite = async (ms: number, options = {}) => {
    const s = await setup();
    const before = await overwrites(s, 3);
    const put = s.objects.put.bind(s.objects);
    vi.spyOn(s.objects, 'put').mockImplementation(async (key, body) => {
      s.clock.time += ms;
      return put(key, body);
    });
    const transact = vi.spyOn(s.store, 'transact');
    const result = await s.compact(undefined, { options });
    return { s, before, result, transact };
  };

  it('is five minutes by default: a write that took longer is not swapped in', async () => {
    const late = await slowWrite(5 * 60_000 + 1);
    expect(late.result).toEqual({ skipped: 'deadline', dirtyRatio: 1, cleanedThrough: 0, ...NOTHING });
    expect(late.transact).not.toHaveBeenCalled();
    expect(await late.s.index()).toEqual(late.before);
    const inTime = await slowWrite(5 * 60_000);
    expect(inTime.result).toEqual({
      dirtyRatio: 1,
      cleanedThrough: 3,
      entriesRewritten: 2,
      recordsRemoved: 2,
      tombstonesDropped: 0,
    });
  });

  it('is the caller’s when given', async () => {
    expect((await slowWrite(1001, { swapDeadlineMs: 1000 })).result.skipped).toBe('deadline');
    expect((await slowWrite(1000, { swapDeadlineMs: 1000 })).result.skipped).toBeUndefined();
  });
});

describe('a swap whose entry changed after the pass read it', () => {
  type Change = (page: Item, s: Setup) => Item | undefined;
  const firstEntry =
    (field: 'objectKey' | 'position' | 'sizeInBytes', value: string | number): Change =>
    (page, s) =>
      pageItem(
        s.topic.topicId,
        0,
        offsetFromBatchSk(page.sk),
        pageEntries(page).map((x, i) => (i === 0 ? { ...x.entry, [field]: value } : x.entry)),
      );

  it.each<[string, Change]>([
    ['points at another object', firstEntry('objectKey', 'elsewhere')],
    ['points at another range of its object', firstEntry('position', 7)],
    ['has another length', firstEntry('sizeInBytes', 99)],
    ['is no longer on its page', (page, s) => pageItem(s.topic.topicId, 0, offsetFromBatchSk(page.sk), [])],
    ['is on a page that retention retired', (page, s) => retiredPageItem(page, s.clock.now())],
    ['is on a page that is gone', () => undefined],
  ])(
    'stops the pass when the entry %s, leaving the index as the other writer left it',
    async (_what, change) => {
      const s = await setup();
      await overwrites(s, 3);
      const [page] = await pageItems(s);
      const replacement = change(page!, s);
      const put = s.objects.put.bind(s.objects);
      // The other writer gets there while the pass writes its object.
      vi.spyOn(s.objects, 'put').mockImplementationOnce(async (key, body) => {
        if (replacement) await s.store.put(replacement);
        else await s.store.delete({ pk: page!.pk, sk: page!.sk });
        return put(key, body);
      });
      const transact = vi.spyOn(s.store, 'transact');
      expect(await s.compact()).toEqual({ skipped: 'raced', dirtyRatio: 1, cleanedThrough: 0, ...NOTHING });
      expect(transact).not.toHaveBeenCalled();
      expect(await pageItems(s)).toEqual(replacement ? [replacement] : []);
      expect((await s.cleaner()).cleanedThrough).toBeUndefined();
    },
  );
});

describe('the pass’s last write', () => {
  const isProgress = (actions: readonly UpdateAction[]) =>
    actions.some((a) => 'set' in a && a.set === 'cleanedThrough');

  it('never moves the clean part’s end back below a later pass’s', async () => {
    const s = await setup();
    await overwrites(s, 3);
    const update = s.store.update.bind(s.store);
    vi.spyOn(s.store, 'update').mockImplementation(async (key, actions, options) => {
      // Another pass finished first and cleaned further.
      if (isProgress(actions)) await update(key, [{ set: 'cleanedThrough', value: 9 }]);
      return update(key, actions, options);
    });
    expect(await s.compact()).toEqual({
      dirtyRatio: 1,
      cleanedThrough: 3,
      entriesRewritten: 2,
      recordsRemoved: 2,
      tombstonesDropped: 0,
    });
    expect((await s.cleaner()).cleanedThrough).toBe(9);
  });

  it('fails the pass when the store fails it', async () => {
    const s = await setup();
    await overwrites(s, 3);
    const update = s.store.update.bind(s.store);
    vi.spyOn(s.store, 'update').mockImplementation(async (key, actions, options) => {
      if (isProgress(actions)) throw new Error('store down');
      return update(key, actions, options);
    });
    await expect(s.compact()).rejects.toThrow('store down');
    // The swaps stand; the next pass finds them clean.
    expect((await s.index()).map((e) => e.recordCount)).toEqual([0, 0, 1]);
  });
});

describe('the time index rebuild', () => {
  const isTsMax = (actions: readonly UpdateAction[]) =>
    actions.some((a) => 'set' in a && a.set === stateAttr.maxTimestampSoFar);

  it('starts again when the tail moved before it set tsMax, and gives up after three tries', async () => {
    const s = await setup();
    await overwrites(s, 3);
    const update = s.store.update.bind(s.store);
    let tries = 0;
    vi.spyOn(s.store, 'update').mockImplementation(async (key, actions, options) => {
      if (isTsMax(actions)) {
        tries++;
        throw new ConditionFailedError(undefined);
      }
      return update(key, actions, options);
    });
    expect(await s.compact()).toEqual({
      dirtyRatio: 1,
      cleanedThrough: 3,
      entriesRewritten: 2,
      recordsRemoved: 2,
      tombstonesDropped: 0,
    });
    expect(tries).toBe(3);
  });

  it('reads the moved tail again: its marks and tsMax include what the materializer added', async () => {
    const s = await setup();
    const now = s.clock.now();
    await s.produce([['a', 'a0', now - 50]]);
    await s.produce([['a', 'a1', now - 90]]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const update = s.store.update.bind(s.store);
    let moved = false;
    vi.spyOn(s.store, 'update').mockImplementation(async (key, actions, options) => {
      if (isTsMax(actions) && !moved) {
        moved = true;
        await s.produce([['b', 'b2', now - 70]]);
        await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
      }
      return update(key, actions, options);
    });
    expect(await s.compact()).toMatchObject({ cleanedThrough: 2, entriesRewritten: 1 });
    expect(moved).toBe(true);
    expect((await s.state()).maxTimestampSoFar).toBe(now - 70);
    expect(await timeIndex(s)).toEqual([
      timeMarkItem(s.topic.topicId, 0, { maxTimestamp: now - 70, baseOffset: 1, prev: -1 }),
    ]);
  });

  it('fails the pass on a store error', async () => {
    const s = await setup();
    await overwrites(s, 3);
    const update = s.store.update.bind(s.store);
    vi.spyOn(s.store, 'update').mockImplementation(async (key, actions, options) => {
      if (isTsMax(actions)) throw new Error('store down');
      return update(key, actions, options);
    });
    await expect(s.compact()).rejects.toThrow('store down');
  });

  it('writes nothing to the time index when the marks it wants are the ones there', async () => {
    const s = await setup();
    await s.produce([
      ['x', 'x0'],
      ['k', 'k0'],
    ]);
    await s.produce([['k', 'k1']]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const marks = await timeIndex(s);
    expect(marks).toEqual([
      timeMarkItem(s.topic.topicId, 0, { maxTimestamp: s.clock.now(), baseOffset: 0, prev: -1 }),
    ]);
    const writes = vi.spyOn(s.store, 'batchWrite');
    // x keeps offset 0's timestamp: the running max still first rises there.
    expect(await s.compact()).toMatchObject({ entriesRewritten: 1, recordsRemoved: 1 });
    expect(writes.mock.calls).toEqual([[{ puts: [], deletes: [] }]]);
    expect(await timeIndex(s)).toEqual(marks);
  });

  it('leaves the marks at or past the tail base to the materializer that is writing them', async () => {
    const s = await setup();
    await overwrites(s, 3);
    const { topicId } = s.topic;
    const [materialized] = await timeIndex(s);
    // A materializer moving the next pass has written its mark and not yet moved tailBase (3).
    const pending = [
      timeMarkItem(topicId, 0, { maxTimestamp: s.clock.now() + 5, baseOffset: 3, prev: s.clock.now() }),
      timeMarkItem(topicId, 0, { maxTimestamp: s.clock.now() + 9, baseOffset: 4, prev: s.clock.now() + 5 }),
    ];
    const stale = timeMarkItem(topicId, 0, { maxTimestamp: 7, baseOffset: 2, prev: 1 });
    for (const mark of [...pending, stale]) await s.store.put(mark);
    const writes = vi.spyOn(s.store, 'batchWrite');
    expect(await s.compact()).toMatchObject({ entriesRewritten: 2 });
    // Offsets 0 and 1 are emptied: the running max now rises at 2. The stale mark below the tail base goes.
    const rises = timeMarkItem(topicId, 0, { maxTimestamp: s.clock.now(), baseOffset: 2, prev: -1 });
    expect(materialized).toEqual(
      timeMarkItem(topicId, 0, { maxTimestamp: s.clock.now(), baseOffset: 0, prev: -1 }),
    );
    expect(await timeIndex(s)).toEqual([rises, ...pending]);
    expect(writes.mock.calls).toEqual([
      [{ puts: [rises], deletes: [stale, materialized!].map(({ pk, sk }) => ({ pk, sk })) }],
    ]);
  });
});

describe('a pass’s reads', () => {
  it('are all strongly consistent: a stale page or partition item could undo another writer’s change', async () => {
    const s = await setup();
    await overwrites(s, 3);
    const { store: recording, reads } = recordReads(s.store);
    expect(await s.compact(undefined, { deps: { store: recording } })).toMatchObject({ entriesRewritten: 2 });
    // The partition item, the dirty and the whole range's pages (key ranges), the aborted-transactions
    // index of the mapped and of the cleaned range (key ranges), the page to swap; then the rebuild's
    // partition item, pages and marks.
    expect(reads.sort()).toEqual([
      'get B true',
      'get STATE true',
      'get STATE true',
      'query T true',
      'query undefined true',
      'query undefined true',
      'query undefined true',
      'query undefined true',
      'query undefined true',
    ]);
  });
});

describe('a pass racing the deletion of its topic', () => {
  it('does not bring the deleted partition item back', async () => {
    const s = await setup();
    await overwrites(s, 3);
    const key = keys.partitionState(s.topic.topicId, 0);
    const transact = s.store.transact.bind(s.store);
    // The topic is deleted once the pass has swapped its entries.
    vi.spyOn(s.store, 'transact').mockImplementation(async (ops) => {
      await transact(ops);
      await s.store.delete(key);
    });
    expect(await s.compact()).toEqual({
      dirtyRatio: 1,
      cleanedThrough: 3,
      entriesRewritten: 2,
      recordsRemoved: 2,
      tombstonesDropped: 0,
    });
    expect(await s.store.get(key)).toBeUndefined();
  });
});

describe('a pass over both tiers', () => {
  /** 40 requests rolled into segments and 10 more in batch pages, all dirty, over 13 keys. */
  const tiers = async () => {
    const s = await segmentSetup({ 'cleanup.policy': 'compact' });
    await s.write(40);
    await s.index();
    expect(await s.roll()).toBe(5);
    await s.write(10, T0 + 40_000);
    await s.index();
    const compact = () => compactPartition(s.sluice.log, s.topic.topicId, 0, s.config(), s.clock.now());
    return { s, compact };
  };
  const entriesOf = async (items: Item[]) => items.flatMap(pageEntries).map((x) => x.entry);

  it('writes a segment’s cleaned batches to the segment store and a batch page’s to the replicas, one group each', async () => {
    const { s, compact } = await tiers();
    const replicaObjects = s.objects.keys();
    const transact = vi.spyOn(s.store, 'transact');
    expect(await compact()).toMatchObject({ cleanedThrough: 500, entriesRewritten: 49 });
    expect(transact).toHaveBeenCalledTimes(2);
    // Each swap moves the log's byte total only while its entries are live: the partition there and its
    // first entry at or above the log start; a batch page's also not below a segment roll's end (the
    // segment tier then counts those bytes). The segment group starts at 0, the pages' at 350.
    const live = (first: number) => [{ exists: 'pk' }, { path: 'logStartOffset', op: '<=', value: first }];
    expect(transact.mock.calls.map(([ops]) => (ops.at(-1) as { condition?: unknown }).condition)).toEqual([
      { and: live(0) },
      {
        and: [...live(350), { or: [{ notExists: 'segEnd' }, { path: 'segEnd', op: '<=', value: 350 }] }],
      },
    ]);
    const segmentEntries = await entriesOf(await s.segmentItems());
    const pageEntriesAfter = await entriesOf(await s.livePages());
    // The 35 rolled chunks (all emptied: the last requests overwrite every key) point into one new segment.
    expect(segmentEntries.map((e) => e.recordCount)).toEqual(Array<number>(35).fill(0));
    const segmentObjects = new Set(segmentEntries.map((e) => e.objectKey));
    expect(segmentObjects.size).toBe(1);
    const [segment] = segmentObjects;
    expect(segment!.startsWith(`g/${s.topic.topicId}/0/`)).toBe(true);
    expect(s.segments!.keys()).toContain(segment);
    expect(s.objects.keys()).not.toContain(segment);
    // The batch pages' 15 unrolled entries: 14 rewritten into one new replica object, the last untouched.
    // The local copies of rolled entries are not the pass's: reads go to the segments.
    const added = s.objects.keys().filter((k) => !replicaObjects.includes(k));
    expect(added).toHaveLength(1);
    expect(pageEntriesAfter.map((e) => e.objectKey === added[0])).toEqual([
      ...Array<boolean>(35).fill(false),
      ...Array<boolean>(14).fill(true),
      false,
    ]);
  });

  it('stops at the first tier’s cancelled swap, before writing the second tier’s group', async () => {
    const { s, compact } = await tiers();
    const before = [await s.segmentItems(), await s.livePages()];
    const objects = s.objects.keys();
    const transact = vi
      .spyOn(s.store, 'transact')
      .mockRejectedValueOnce(new TransactionCanceledError(['ConditionalCheckFailed']));
    expect(await compact()).toMatchObject({ skipped: 'raced', entriesRewritten: 0 });
    expect(transact).toHaveBeenCalledTimes(1);
    expect([await s.segmentItems(), await s.livePages()]).toEqual(before);
    expect(s.objects.keys()).toEqual(objects);
  });
});

describe('a group', () => {
  it('is swapped as soon as its new object reaches 16 MiB', async () => {
    const s = await setup({ 'max.message.bytes': String(2 * MIB) });
    // A value of the length that makes a lone record of key uNN exactly a MiB as a batch.
    const sizeWith = (length: number) =>
      encodeRecordBatch([{ key: utf8('u00'), value: new Uint8Array(length), timestamp: s.clock.now() }])
        .length;
    const guess = MIB - 100;
    const length = guess + MIB - sizeWith(guess);
    expect(sizeWith(length)).toBe(MIB);
    for (let i = 0; i < 17; i++)
      await s.produce([
        [`u${String(i).padStart(2, '0')}`, 'x'.repeat(length)],
        ['k', `k${i}`],
      ]);
    await s.produce([['k', 'last']]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const objects = s.objects.keys();
    const transact = vi.spyOn(s.store, 'transact');
    expect(await s.compact()).toMatchObject({ cleanedThrough: 35, entriesRewritten: 17, recordsRemoved: 17 });
    // 16 rewritten entries of a MiB fill the first object; the 17th starts the next.
    expect(transact).toHaveBeenCalledTimes(2);
    const added = s.objects.keys().filter((k) => !objects.includes(k));
    const sizes = await Promise.all(added.map(async (k) => (await s.objects.get(k)).length));
    expect(sizes.sort((a, b) => b - a)).toEqual([16 * MIB, MIB]);
  });
});
