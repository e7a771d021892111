/**
 * The maintenance run step by step: each failing step reported under its own name and partition while
 * the others still run, the replication totals over every partition of every replicated topic, the
 * cleaner only on compacted topics, the tail indexed until a pass moves nothing (one read when it is
 * empty), and no new roll once the run's deadline is reached.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../../lib/adapters/memory/object-store.js';
import { createSluice } from '../../../../functions/app.js';
import { keys } from '../../../../lib/core/keys.js';
import { decodePartitionState } from '../../../../lib/core/log/partition-codec.js';
import type { QueryInput } from '../../../../lib/ports/metadata-store.js';
import { storageUnavailable, throttled } from '../../../../lib/ports/storage-errors.js';
import { InterceptedMetadataStore, InterceptedObjectStore } from '../../../support/seams.js';
import { TestClock, memorySluice } from '../../../support/log-support.js';
import { T0, segmentSetup } from '../../../support/segment-support.js';

/** Anything that answers HTTP requests: a memory Sluice, or the two-store cluster below. */
interface Http {
  http: (method: string, path: string, body?: unknown) => Promise<{ status: number }>;
}

const create = async (s: Http, name: string, partitions: number, more: object = {}) =>
  expect((await s.http('POST', '/v1/topics', { name, partitions, ...more })).status).toBe(201);

const send = async (s: Http, topic: string, partition: number, value: string, key?: string) =>
  expect(
    (await s.http('POST', `/v1/topics/${topic}/records`, { records: [{ key, value, partition }], acks: '1' }))
      .status,
  ).toBe(200);

describe('a failing step', () => {
  it('is reported by name and partition, and the other steps and partitions still run', async () => {
    const s = memorySluice({ orphanScanIntervalMs: 0 });
    await create(s, 'c', 1, { configs: { 'cleanup.policy': 'compact' } });
    await create(s, 'd', 2);
    await send(s, 'c', 0, 'v', 'k');
    for (const p of [0, 1]) await send(s, 'd', p, 'v');
    const [c, d] = [await s.sluice.catalog.get('c'), await s.sluice.catalog.get('d')];
    const { maintenance } = s.sluice;
    const index = maintenance.indexTail.bind(maintenance);
    vi.spyOn(maintenance, 'indexTail').mockImplementation(async (topicId, p, ...rest) => {
      if (topicId === d.topicId && p === 1) throw new Error('index down');
      return index(topicId, p, ...rest);
    });
    const roll = maintenance.rollSegments.bind(maintenance);
    vi.spyOn(maintenance, 'rollSegments').mockImplementation(async (topicId, p, ...rest) => {
      if (topicId === c.topicId && p === 0) throw new Error('roll down');
      return roll(topicId, p, ...rest);
    });
    // The index pages of c-0 and d-0 cannot be read: d-0's retention, c-0's cleaner and both orphan
    // scans fail; d-1 (index failed) still runs retention.
    const query = s.store.query.bind(s.store);
    const unreadable = [keys.partitionPk(c.topicId, 0), keys.partitionPk(d.topicId, 0)];
    vi.spyOn(s.store, 'query').mockImplementation(async (input: QueryInput) => {
      if (unreadable.includes(input.pk) && input.sk !== undefined) throw throttled('query');
      return query(input);
    });
    const report = await maintenance.run();
    // Partitions run concurrently (partitionConcurrency), so the errors come in no fixed order.
    expect([...report.errors].sort()).toEqual(
      [
        'roll c-0: roll down',
        'compaction c-0: storage is throttled; retry with backoff',
        'orphans of c: storage is throttled; retry with backoff',
        'retention d-0: storage is throttled; retry with backoff',
        'index d-1: index down',
        'orphans of d: storage is throttled; retry with backoff',
      ].sort(),
    );
    expect([report.partitions, report.entriesIndexed]).toEqual([3, 2]);
  });

  it("is the partition item's read: reported by name, that partition's other steps skipped", async () => {
    const s = memorySluice();
    await create(s, 'd', 2);
    for (const p of [0, 1]) await send(s, 'd', p, 'v');
    const { topicId } = await s.sluice.catalog.get('d');
    // d-1's item fails its first read (the run's read before its steps), then answers again.
    let failures = 1;
    const get = s.store.get.bind(s.store);
    vi.spyOn(s.store, 'get').mockImplementation(async (key, options) => {
      if (key.pk === keys.partitionPk(topicId, 1) && key.sk === 'STATE' && failures-- > 0)
        throw throttled('get');
      return get(key, options);
    });
    expect(await s.sluice.maintenance.run()).toMatchObject({
      partitions: 2,
      entriesIndexed: 1,
      errors: ['read d-1: storage is throttled; retry with backoff'],
    });
    expect(await s.sluice.maintenance.run()).toMatchObject({ partitions: 2, entriesIndexed: 1, errors: [] });
  });

  it('reports a failed purge of a deleted topic by its id, and purges it on the next run', async () => {
    const s = memorySluice();
    await create(s, 'x', 1);
    await send(s, 'x', 0, 'v');
    const { topicId } = await s.sluice.catalog.get('x');
    expect((await s.http('DELETE', '/v1/topics/x')).status).toBeLessThan(300);
    vi.spyOn(s.sluice.maintenance, 'purgeTopic').mockRejectedValueOnce(new Error('purge down'));
    s.clock.time += 60 * 60_000 + 1;
    expect(await s.sluice.maintenance.run()).toMatchObject({
      topicsPurged: 0,
      errors: [`purge ${topicId}: purge down`],
    });
    expect(await s.sluice.maintenance.run()).toMatchObject({ topicsPurged: 1, errors: [] });
  });
});

describe('replication totals', () => {
  /** Two stores that a test can take down, a topic `r` of two partitions on both, and one of one store. */
  const cluster = async () => {
    const clock = new TestClock();
    const store = new MemoryMetadataStore();
    const down = new Set<string>();
    let ids = 0;
    const objectStores = ['s0', 's1'].map(
      (id) =>
        new InterceptedObjectStore(new MemoryObjectStore(id, undefined, clock), async (_call, run) => {
          if (down.has(id)) throw storageUnavailable(`store ${id}`);
          return run();
        }),
    );
    const sluice = createSluice({
      store,
      objectStores,
      clock,
      config: { clusterId: 'test', topicCacheTtlMs: 60_000, replicaLagTimeMaxMs: 1_000 },
      random: () => 0,
      newId: () => `id-${++ids}`,
    });
    const http = async (method: string, path: string, body?: unknown) =>
      (await sluice.router().handle({
        method,
        path,
        query: {},
        headers: {},
        body: new Uint8Array(Buffer.from(JSON.stringify(body ?? {}))),
      })) as { status: number };
    await create({ http }, 'r', 2, { replicationFactor: 2 });
    await create({ http }, 'one', 1, { replicationFactor: 1 });
    const topic = await sluice.catalog.get('r');
    const leaders = async () =>
      Promise.all(
        [0, 1].map(
          async (p) => decodePartitionState((await store.get(keys.partitionState(topic.topicId, p)))!).leader,
        ),
      );
    return { sluice, store, http, down, leaders };
  };

  it('adds up copies, ISR leaves and joins, and elections over every partition', async () => {
    const c = await cluster();
    for (const p of [0, 1]) await send(c, 'r', p, 'a');
    await send(c, 'one', 0, 'a');
    expect(await c.sluice.maintenance.replicate()).toEqual({ copied: 2, joined: 0, left: 0, elected: 0 });
    // The two partitions' leaders are on different stores: taking one store down hits r-0's follower
    // and r-1's leader.
    const [first, second] = await c.leaders();
    expect([first, second].sort()).toEqual(['s0', 's1']);
    c.down.add(second!);
    await send(c, 'r', 0, 'b');
    expect(await c.sluice.maintenance.replicate()).toEqual({ copied: 0, joined: 0, left: 1, elected: 1 });
    expect(await c.leaders()).toEqual([first, first]);
    // Back, it copies what each partition wrote meanwhile and rejoins both ISRs, in a full run.
    c.down.delete(second!);
    await send(c, 'r', 1, 'b');
    const report = await c.sluice.maintenance.run();
    expect([report.replication, report.errors]).toEqual([{ copied: 2, joined: 2, left: 0, elected: 0 }, []]);
    // A fetch from a store outside the ISR is refused naming every in-sync store.
    const [leader] = await c.leaders();
    const follower = leader === 's0' ? 's1' : 's0';
    await expect(
      c.sluice.fetcher.fetchRecords('r', 0, { offset: 0, maxBytes: 100, maxWaitMs: 0, replica: 's9' }),
    ).rejects.toMatchObject({
      code: 'NOT_LEADER_OR_FOLLOWER',
      message: `store s9 is not an in-sync replica of this partition; in-sync: ${leader}, ${follower}`,
    });
  });

  it('reports a partition whose pass fails by name, and still replicates the others', async () => {
    const c = await cluster();
    for (const p of [0, 1]) await send(c, 'r', p, 'a');
    const { topicId } = await c.sluice.catalog.get('r');
    const get = c.store.get.bind(c.store);
    vi.spyOn(c.store, 'get').mockImplementation(async (key, options) => {
      if (key.pk === keys.partitionPk(topicId, 0) && key.sk === 'STATE') throw throttled('get');
      return get(key, options);
    });
    const report = await c.sluice.maintenance.run();
    expect(report.replication).toEqual({ copied: 1, joined: 0, left: 0, elected: 0 });
    expect(report.errors[0]).toBe('replicate r-0: storage is throttled; retry with backoff');
  });

  it('fails no partition when asked for no health figures', async () => {
    const c = await cluster();
    for (const p of [0, 1]) await send(c, 'r', p, 'a');
    const errors: string[] = [];
    const onError = (what: string, error: unknown) => errors.push(`${what}: ${String(error)}`);
    expect(await c.sluice.maintenance.replicate(onError)).toEqual({
      copied: 2,
      joined: 0,
      left: 0,
      elected: 0,
    });
    expect(errors).toEqual([]);
  });

  it('reads nothing of a topic with one replica', async () => {
    const s = memorySluice();
    await create(s, 'one', 3);
    const before = s.store.meter.read().metadataReads;
    expect(await s.sluice.maintenance.replicate()).toEqual({ copied: 0, joined: 0, left: 0, elected: 0 });
    // The catalog's one page of topics, and no partition item.
    expect(s.store.meter.read().metadataReads - before).toBe(1);
  });
});

describe('the steps', () => {
  it('runs the cleaner on compacted topics only', async () => {
    const s = memorySluice();
    await create(s, 'd', 1);
    // k=1 is superseded by k=2: a cleaner would remove it (the same writes on a compacted topic do).
    await create(s, 'c', 1, { configs: { 'cleanup.policy': 'compact' } });
    for (const topic of ['d', 'c'])
      for (const [key, value] of [
        ['k', '1'],
        ['k', '2'],
        ['j', '1'],
      ])
        await send(s, topic, 0, value!, key);
    expect((await s.sluice.maintenance.run()).recordsCompacted).toBe(1);
    const offsets = async (topic: string) =>
      (
        await s.sluice.fetcher.fetchRecords(topic, 0, { offset: 0, maxBytes: 1000, maxWaitMs: 0 })
      ).records.map((r) => r.offset);
    expect([await offsets('d'), await offsets('c')]).toEqual([
      [0, 1, 2],
      [1, 2],
    ]);
  });

  it('indexes the tail until a pass moves nothing: an empty tail costs one read and no write', async () => {
    const s = memorySluice({ tailFlushEntries: 5_000 });
    await create(s, 't', 1);
    const { topicId } = await s.sluice.catalog.get('t');
    for (let i = 0; i < 3; i++) await send(s, 't', 0, 'v');
    expect(await s.sluice.maintenance.indexTail(topicId, 0)).toBe(3);
    const before = s.store.meter.read();
    expect(await s.sluice.maintenance.indexTail(topicId, 0)).toBe(0);
    expect(s.store.meter.read().metadataReads - before.metadataReads).toBe(1);
    expect(s.store.meter.read().metadataWrites - before.metadataWrites).toBe(0);
  });

  it('indexes at most 16 passes of 64 entries per call; the next call moves the rest', async () => {
    const s = memorySluice({ tailFlushEntries: 5_000 });
    await create(s, 't', 1);
    const { topicId } = await s.sluice.catalog.get('t');
    for (let i = 0; i < 16 * 64 + 1; i++) await send(s, 't', 0, 'v');
    expect(await s.sluice.maintenance.indexTail(topicId, 0)).toBe(16 * 64);
    expect(await s.sluice.maintenance.indexTail(topicId, 0)).toBe(1);
  });

  it('starts no roll at its deadline, nor writes one whose reads ran past it', async () => {
    // Index reads take 10 ms each while `slow` is set.
    const slow = { on: false };
    const s = await segmentSetup({ 'segment.ms': '1' }, 1, {
      wrapStore: (store) =>
        new InterceptedMetadataStore(store, async (call, run) => {
          if (slow.on && call.op === 'query') s.clock.time += 10;
          return run();
        }),
    });
    for (let i = 0; i < 4; i++) {
      await s.produce([[0, 'k', 50, T0 + i]]);
      await s.index();
    }
    const roll = (deadline: number) =>
      s.sluice.maintenance.rollSegments(s.topic.topicId, 0, s.config(), deadline);
    expect(await roll(s.clock.now())).toBe(0);
    slow.on = true;
    expect(await roll(s.clock.now() + 1)).toBe(0);
    expect(await s.segmentItems()).toEqual([]);
    slow.on = false;
    expect(await roll(s.clock.now() + 1)).toBe(1);
    expect(await s.segmentItems()).toHaveLength(1);
  });
});
