/**
 * What the produce and fetch paths share (lib/core/log/context.ts): the defaults a deployment gets,
 * the store lookup, the leadership cache, the partition item read, the retry against a re-created
 * topic, and the partition checks with their exact errors.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../../lib/adapters/memory/object-store.js';
import { keys } from '../../../../lib/core/keys.js';
import {
  TopicGoneError,
  checkPartition,
  createLogContext,
  parsePartitionParam,
  readPartitionState,
  withCurrentTopic,
} from '../../../../lib/core/log/context.js';
import { MAX_PRODUCERS_PER_PARTITION } from '../../../../lib/core/log/producer-bounds.js';
import type { TopicCatalog } from '../../../../lib/core/topics/catalog.js';
import type { Topic } from '../../../../lib/core/topics/model.js';
import { TestClock, memorySluice } from '../../../support/log-support.js';

const topic: Topic = {
  name: 'orders',
  topicId: 'id-orders',
  partitions: 3,
  replicationFactor: 1,
  configs: {},
  createdAt: 0,
};

/** Its SluiceError code and message, or what was thrown if not one. */
const thrown = async (fn: () => unknown) => {
  try {
    await fn();
  } catch (error) {
    const e = error as { code?: string; message: string; retriable?: boolean; name: string };
    return { name: e.name, code: e.code, message: e.message, retriable: e.retriable };
  }
  return undefined;
};

describe('a log context', () => {
  const base = () => {
    const store = new MemoryMetadataStore();
    const clock = new TestClock();
    const stores = [new MemoryObjectStore('s0'), new MemoryObjectStore('s1')];
    return { store, clock, objectStores: stores, catalog: {} as TopicCatalog };
  };

  it("takes API.md's defaults: 4 MiB requests, 16 tail entries, 100 ms polls, a day's producer expiry", () => {
    const ctx = createLogContext(base());
    expect({
      maxRequestBytes: ctx.maxRequestBytes,
      tailFlushEntries: ctx.tailFlushEntries,
      pollIntervalMs: ctx.pollIntervalMs,
      producerExpirationMs: ctx.producerExpirationMs,
      maxProducersPerPartition: ctx.maxProducersPerPartition,
      commitDeadlineMs: ctx.commitDeadlineMs,
      replicaLagTimeMaxMs: ctx.replicaLagTimeMaxMs,
      sequenceGapWaitMs: ctx.sequenceGapWaitMs,
      segmentStore: ctx.segmentStore,
    }).toEqual({
      maxRequestBytes: 4 * 1024 * 1024,
      tailFlushEntries: 16,
      pollIntervalMs: 100,
      producerExpirationMs: 86_400_000,
      maxProducersPerPartition: MAX_PRODUCERS_PER_PARTITION,
      commitDeadlineMs: 300_000,
      replicaLagTimeMaxMs: 30_000,
      sequenceGapWaitMs: 0,
      segmentStore: undefined,
    });
    expect(ctx.random).toBe(Math.random);
    expect(ctx.newId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ctx.newId()).not.toBe(ctx.newId());
  });

  it('takes every option given instead', () => {
    const segments = new MemoryObjectStore('segments');
    const random = () => 0.5;
    const ctx = createLogContext({
      ...base(),
      segmentStore: segments,
      maxRequestBytes: 1,
      tailFlushEntries: 2,
      pollIntervalMs: 3,
      producerExpirationMs: 4,
      maxProducersPerPartition: 5,
      commitDeadlineMs: 6,
      replicaLagTimeMaxMs: 7,
      sequenceGapWaitMs: 8,
      random,
      newId: () => 'fixed',
    });
    expect([
      ctx.maxRequestBytes,
      ctx.tailFlushEntries,
      ctx.pollIntervalMs,
      ctx.producerExpirationMs,
      ctx.maxProducersPerPartition,
      ctx.commitDeadlineMs,
      ctx.replicaLagTimeMaxMs,
      ctx.sequenceGapWaitMs,
    ]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect([ctx.segmentStore, ctx.random, ctx.newId()]).toEqual([segments, random, 'fixed']);
  });

  it('finds each replica store by id, and answers NOT_LEADER_OR_FOLLOWER for one it does not have', async () => {
    const options = base();
    const ctx = createLogContext(options);
    expect(ctx.objectStore('s1')).toBe(options.objectStores[1]);
    expect(ctx.objectStore('s0')).toBe(options.objectStores[0]);
    expect(await thrown(() => ctx.objectStore('s2'))).toEqual({
      name: 'SluiceError',
      code: 'NOT_LEADER_OR_FOLLOWER',
      message: 'store s2 is not configured in this deployment',
      retriable: true,
    });
  });
});

describe('the leadership cache', () => {
  it('reads the partition item once, then answers from memory until asked for a fresh read', async () => {
    const s = memorySluice();
    await s.http('POST', '/v1/topics', { name: 't', partitions: 2 });
    const t = await s.sluice.catalog.get('t');
    const cache = s.sluice.log.leadership;
    const reads = () => s.store.meter.read().metadataReads;
    const before = reads();
    expect(await cache.get(t, 1)).toEqual({ leaderEpoch: 0, leader: 's0', isr: ['s0'] });
    expect(reads() - before).toBe(1);
    await s.store.update(keys.partitionState(t.topicId, 1), [{ set: 'leaderEpoch', value: 4 }]);
    expect((await cache.get(t, 1)).leaderEpoch).toBe(0);
    expect(reads() - before).toBe(1);
    expect((await cache.get(t, 1, { fresh: true })).leaderEpoch).toBe(4);
    expect((await cache.get(t, 1)).leaderEpoch).toBe(4);
    expect(reads() - before).toBe(2);
    // Partitions are cached apart.
    expect((await cache.get(t, 0)).leaderEpoch).toBe(0);
    expect(reads() - before).toBe(3);
  });
});

describe('reading a partition item', () => {
  it('answers UNKNOWN_TOPIC_OR_PARTITION for a partition past the topic, a missing item or a deleted topic', async () => {
    const s = memorySluice();
    await s.http('POST', '/v1/topics', { name: 't', partitions: 1 });
    const t = await s.sluice.catalog.get('t');
    expect((await readPartitionState(s.store, t, 0)).partition).toBe(0);
    const gone = {
      name: 'TopicGoneError',
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: 'partition t-0 does not exist',
      retriable: false,
    };
    await s.store.update(keys.partitionState(t.topicId, 0), [{ set: 'deleted', value: true }]);
    expect(await thrown(() => readPartitionState(s.store, t, 0))).toEqual(gone);
    await s.store.update(keys.partitionState(t.topicId, 0), [{ set: 'deleted', value: false }]);
    expect((await readPartitionState(s.store, t, 0)).partition).toBe(0);
    await s.store.delete(keys.partitionState(t.topicId, 0));
    expect(await thrown(() => readPartitionState(s.store, t, 0))).toEqual(gone);
    expect(await thrown(() => readPartitionState(s.store, t, 1))).toMatchObject({
      name: 'SluiceError',
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
  });
});

describe('withCurrentTopic', () => {
  const catalog = (current: Topic[]) => {
    const calls: string[] = [];
    const fake = {
      get: async (name: string, options: { fresh?: boolean } = {}) => {
        calls.push(`get ${name}${options.fresh ? ' fresh' : ''}`);
        return current.shift()!;
      },
      forget: (name: string) => void calls.push(`forget ${name}`),
    } as unknown as TopicCatalog;
    return { calls, ctx: { catalog: fake } };
  };
  const recreated: Topic = { ...topic, topicId: 'id-orders-2' };

  it('runs once with the cached topic when it is current', async () => {
    const c = catalog([topic]);
    expect(await withCurrentTopic(c.ctx, 'orders', async (t) => t.topicId)).toBe('id-orders');
    expect(c.calls).toEqual(['get orders']);
  });

  it('runs once more with a fresh entry when the cached topic was deleted', async () => {
    const c = catalog([topic, recreated]);
    const seen: string[] = [];
    const result = await withCurrentTopic(c.ctx, 'orders', async (t) => {
      seen.push(t.topicId);
      if (t.topicId === 'id-orders') throw new TopicGoneError('orders', 0);
      return 'written';
    });
    expect([result, seen, c.calls]).toEqual([
      'written',
      ['id-orders', 'id-orders-2'],
      ['get orders', 'forget orders', 'get orders fresh'],
    ]);
  });

  it('passes any other error on without a retry, and a second TopicGoneError too', async () => {
    const c = catalog([topic, recreated]);
    const other = new Error('throttled');
    await expect(withCurrentTopic(c.ctx, 'orders', () => Promise.reject(other))).rejects.toBe(other);
    expect(c.calls).toEqual(['get orders']);
    const d = catalog([topic, recreated]);
    const gone = new TopicGoneError('orders', 0);
    await expect(withCurrentTopic(d.ctx, 'orders', () => Promise.reject(gone))).rejects.toBe(gone);
    expect(d.calls).toEqual(['get orders', 'forget orders', 'get orders fresh']);
  });
});

describe('partition checks', () => {
  it('accept 0..partitions-1 and name the range for anything else', async () => {
    for (const p of [0, 1, 2]) expect(checkPartition(topic, p)).toBeUndefined();
    for (const p of [3, -1, 1.5, Number.NaN, 2 ** 53])
      expect(await thrown(() => checkPartition(topic, p))).toEqual({
        name: 'SluiceError',
        code: 'UNKNOWN_TOPIC_OR_PARTITION',
        message: `topic orders has partitions 0..2; partition ${p} does not exist`,
        retriable: false,
      });
  });

  it('parse a path parameter of one to nine digits, and refuse anything else naming it', async () => {
    expect(['0', '7', '007', '123456789'].map(parsePartitionParam)).toEqual([0, 7, 7, 123_456_789]);
    for (const raw of [undefined, '', '1234567890', '-1', '+1', '1.0', ' 1', '1 ', 'a1', '1a', '1e3', '٣'])
      expect(await thrown(() => parsePartitionParam(raw))).toEqual({
        name: 'SluiceError',
        code: 'UNKNOWN_TOPIC_OR_PARTITION',
        message: `partition ${JSON.stringify(raw)} is not a partition number`,
        retriable: false,
      });
  });
});
