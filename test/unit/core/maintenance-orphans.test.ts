/**
 * The orphan collector and the purge of a deleted topic, exactly: the grace period to the millisecond
 * (for unreferenced objects, and for the objects of pages local retention retired), entries below the
 * log start no longer protecting their objects, a partition item gone, every page of a store that
 * answers one item or object at a time, and no empty batch delete (DeleteObjects and BatchWriteItem
 * refuse an empty request).
 */
import { describe, expect, it, vi } from 'vitest';
import { dataObjectKey, dataObjectPrefix, keys } from '../../../lib/core/keys.js';
import { pageEntries } from '../../../lib/core/log/batch-index.js';
import { Maintenance } from '../../../lib/core/maintenance.js';
import { queryAll } from '../../../lib/ports/query-all.js';
import type { MetadataStore, QueryInput } from '../../../lib/ports/metadata-store.js';
import type { ObjectStore } from '../../../lib/ports/object-store.js';
import { memorySluice } from '../../support/log-support.js';
import { segmentSetup } from '../../support/segment-support.js';

const GRACE = 15 * 60_000;

/** `store` answering every query or list one item at a time, as a store paging at its size limit does. */
const onePerPage = <S extends MetadataStore | ObjectStore>(store: S): S =>
  new Proxy(store, {
    get: (target, prop, receiver) => {
      if (prop === 'query')
        return (input: QueryInput) => (target as MetadataStore).query({ ...input, limit: 1 });
      if (prop === 'list')
        return (prefix: string, options: { cursor?: string } = {}) =>
          (target as ObjectStore).list(prefix, { ...options, limit: 1 });
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });

/** Topic `t` with `n` single-record requests indexed into one page, each in its own object. */
const indexed = async (n: number, partitions = 1) => {
  const s = memorySluice({ tailFlushEntries: 1000 });
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions })).status).toBe(201);
  for (let i = 0; i < n; i++)
    expect(
      (await s.http('POST', '/v1/topics/t/records', { records: [{ value: `v${i}`, partition: 0 }] })).status,
    ).toBe(200);
  expect((await s.sluice.maintenance.run()).entriesIndexed).toBe(n);
  const { topicId } = await s.sluice.catalog.get('t');
  expect(s.objects.keys()).toHaveLength(n);
  return { ...s, topicId };
};

/** An object no index entry references (a produce that failed after its PUT), written now. */
const orphan = async (s: ReturnType<typeof memorySluice>, topicId: string, name: string) => {
  const key = `${dataObjectPrefix(topicId)}${name}`;
  await s.objects.put(key, new Uint8Array([1]));
  return key;
};

describe('the orphan collector', () => {
  it('keeps an unreferenced object for exactly the grace period (15 minutes by default)', async () => {
    const s = await indexed(1);
    const written = s.clock.now();
    const key = await orphan(s, s.topicId, 'orphan');
    s.clock.time = written + GRACE;
    expect(await s.sluice.maintenance.collectOrphans(s.topicId, 1)).toBe(0);
    expect(s.objects.keys()).toContain(key);
    s.clock.time = written + GRACE + 1;
    expect(await s.sluice.maintenance.collectOrphans(s.topicId, 1)).toBe(1);
    expect(s.objects.keys()).not.toContain(key);
    expect(s.objects.keys()).toHaveLength(1);
  });

  it("lists a topic's objects under its prefix, each in a folder of its id's first two characters", async () => {
    expect(dataObjectKey('topic', 'abcdef')).toBe('d/topic/ab/abcdef');
    const s = await indexed(2);
    // Each produce's object, as written: the topic's prefix, the id's first two characters, the id.
    for (const key of s.objects.keys()) {
      const id = key.slice(key.lastIndexOf('/') + 1);
      expect(id.length).toBeGreaterThan(2);
      expect(key).toBe(`${dataObjectPrefix(s.topicId)}${id.slice(0, 2)}/${id}`);
    }
  });

  it('deletes the objects of entries wholly below the log start, though their page is still live', async () => {
    const s = await indexed(3);
    const [page] = (
      await s.store.query({ pk: keys.partitionPk(s.topicId, 0), sk: { beginsWith: keys.batchPrefix } })
    ).items;
    const objects = pageEntries(page!).map((x) => x.entry.objectKey);
    expect(new Set(objects).size).toBe(3);
    await s.store.update(keys.partitionState(s.topicId, 0), [{ set: 'logStartOffset', value: 2 }]);
    s.clock.time += GRACE + 1;
    expect(await s.sluice.maintenance.collectOrphans(s.topicId, 1)).toBe(2);
    // The entry at the log start (offset 2) keeps its object; the one ending there does not.
    expect(s.objects.keys()).toEqual([objects[2]]);
    const fetched = await s.sluice.fetcher.fetchRecords('t', 0, { offset: 2, maxBytes: 100, maxWaitMs: 0 });
    expect(fetched.records.map((r) => [r.offset, Buffer.from(r.value!).toString()])).toEqual([[2, 'v2']]);
  });

  it('keeps what the index references when a partition item is gone', async () => {
    const s = await indexed(2);
    await s.store.delete(keys.partitionState(s.topicId, 0));
    s.clock.time += GRACE + 1;
    expect(await s.sluice.maintenance.collectOrphans(s.topicId, 1)).toBe(0);
    expect(s.objects.keys()).toHaveLength(2);
  });

  it('reads every page of the index and of the object listing, and deletes nothing when nothing is orphaned', async () => {
    const s = await indexed(3);
    const orphans = [await orphan(s, s.topicId, 'x1'), await orphan(s, s.topicId, 'x2')];
    const objects = onePerPage(s.objects);
    const maintenance = new Maintenance({
      log: { ...s.sluice.log, store: onePerPage(s.store) },
      objectStores: [objects],
    });
    s.clock.time += GRACE + 1;
    const deletes = vi.spyOn(s.objects, 'delete');
    const gets = vi.spyOn(s.store, 'get');
    expect(await maintenance.collectOrphans(s.topicId, 1)).toBe(2);
    // The one partition's item, and no other.
    expect(gets.mock.calls.map(([key]) => key)).toEqual([keys.partitionState(s.topicId, 0)]);
    expect(deletes.mock.calls).toEqual([[orphans]]);
    expect(s.objects.keys()).toHaveLength(3);
    expect(await maintenance.collectOrphans(s.topicId, 1)).toBe(0);
    expect(deletes).toHaveBeenCalledTimes(1);
  });

  it("keeps a retired page's objects for the grace period after its retirement, to the millisecond", async () => {
    const s = await segmentSetup({ 'segment.ms': '1', 'local.retention.ms': '1000' });
    for (let i = 0; i < 3; i++) {
      await s.produce([[0, 'k', 50, s.clock.now() - 10_000 + i]]);
      await s.index();
    }
    expect(await s.roll()).toBe(1);
    s.clock.time += 2_000;
    expect((await s.sluice.maintenance.run()).localPagesRetired).toBe(3);
    const retired = (await s.items('B#')).filter((p) => p['retiredAt'] !== undefined);
    expect(retired).toHaveLength(3);
    const retiredAt = retired[0]!['retiredAt'] as number;
    expect(retired.map((p) => p['retiredAt'])).toEqual([retiredAt, retiredAt, retiredAt]);
    expect(s.objects.keys()).toHaveLength(3);
    s.clock.time = retiredAt + GRACE;
    expect(await s.sluice.maintenance.collectOrphans(s.topic.topicId, 1)).toBe(0);
    s.clock.time = retiredAt + GRACE + 1;
    expect(await s.sluice.maintenance.collectOrphans(s.topic.topicId, 1)).toBe(3);
    expect(s.objects.keys()).toEqual([]);
    expect(s.segments!.keys()).toHaveLength(1);
  });
});

describe('the purge of a deleted topic', () => {
  it('removes every item and object through stores that page one at a time, with no empty batch delete', async () => {
    const s = await indexed(3, 2);
    const objects = onePerPage(s.objects);
    const store = onePerPage(s.store);
    const maintenance = new Maintenance({ log: { ...s.sluice.log, store }, objectStores: [objects] });
    const items = async (p: number) => queryAll(s.store, { pk: keys.partitionPk(s.topicId, p) });
    expect((await items(0)).length).toBeGreaterThan(1);
    expect(await items(1)).toHaveLength(1);
    await s.store.put({ ...keys.deletedTopic(s.topicId), partitions: 2, deletedAt: s.clock.now() });
    const batchWrites = vi.spyOn(s.store, 'batchWrite');
    const deletes = vi.spyOn(s.objects, 'delete');
    const queries = vi.spyOn(s.store, 'query');
    const lists = vi.spyOn(s.objects, 'list');
    await maintenance.purgeTopic(s.topicId);
    const pages = queries.mock.calls.map(([input]) => [input.pk, input.cursor !== undefined]);
    expect(lists.mock.calls.map(([, options]) => options?.cursor !== undefined)).toEqual([false, true, true]);
    expect([await items(0), await items(1), s.objects.keys()]).toEqual([[], [], []]);
    // One page of one item each time: a batch write per item, an object delete per object.
    const itemCount = batchWrites.mock.calls.length;
    expect(batchWrites.mock.calls.every(([w]) => w.deletes?.length === 1)).toBe(true);
    expect(deletes.mock.calls.map(([k]) => k.length)).toEqual([1, 1, 1]);
    // A page per item of each of the two partitions, the last one without a cursor.
    expect(itemCount).toBe(4);
    expect(pages).toEqual([
      [keys.partitionPk(s.topicId, 0), false],
      [keys.partitionPk(s.topicId, 0), true],
      [keys.partitionPk(s.topicId, 0), true],
      [keys.partitionPk(s.topicId, 1), false],
    ]);
    batchWrites.mockClear();
    deletes.mockClear();
    await maintenance.purgeTopic(s.topicId);
    expect([batchWrites.mock.calls, deletes.mock.calls]).toEqual([[], []]);
  });
});

describe('queryAll', () => {
  it('follows the cursor through every page, in order', async () => {
    const s = memorySluice();
    for (const sk of ['c', 'a', 'b']) await s.store.put({ pk: 'P', sk });
    const query = vi.spyOn(s.store, 'query');
    const all = await queryAll(s.store, { pk: 'P', limit: 1 });
    expect(all.map((i) => i.sk)).toEqual(['a', 'b', 'c']);
    expect(query).toHaveBeenCalledTimes(3);
    expect(query.mock.calls.map(([input]) => input.cursor === undefined)).toEqual([true, false, false]);
  });
});
