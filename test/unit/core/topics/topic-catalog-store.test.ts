/**
 * The topic catalog over a store it does not trust to be quiet: the registry cache serves a read for
 * exactly cacheTtlMs, store failures that are not lost races pass through unchanged (never turned
 * into UNKNOWN_TOPIC_OR_PARTITION or a retriable conflict), and a delete fences exactly the topic's
 * partition items, at most 16 at a time.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { keys } from '../../../../lib/core/keys.js';
import { TopicCatalog } from '../../../../lib/core/topics/catalog.js';
import { SluiceError } from '../../../../protocol/errors.js';
import type { ItemKey, MetadataStore } from '../../../../lib/ports/metadata-store.js';
import { TestClock } from '../../../support/log-support.js';

type Operation = 'put' | 'update' | 'transact';

/** A catalog over a memory store; `fail(op)` makes every later call of op reject with `failure`. */
const setup = (options: { cacheTtlMs?: number; newId?: () => string } = {}) => {
  const memory = new MemoryMetadataStore();
  const clock = new TestClock();
  const failing = new Set<Operation>();
  const failure = new SluiceError('KAFKA_STORAGE_ERROR', 'the store is unavailable', { retriable: true });
  const updates: { partition: string; inFlight: number }[] = [];
  let inFlight = 0;
  const store: MetadataStore = {
    get: (key, o) => memory.get(key, o),
    query: (input) => memory.query(input),
    delete: (key, o) => memory.delete(key, o),
    batchWrite: (writes) => memory.batchWrite(writes),
    put: async (item, o) => {
      if (failing.has('put')) throw failure;
      return memory.put(item, o);
    },
    transact: async (ops) => {
      if (failing.has('transact')) throw failure;
      return memory.transact(ops);
    },
    update: async (key: ItemKey, actions, o) => {
      updates.push({ partition: key.sk, inFlight: ++inFlight });
      try {
        if (failing.has('update')) throw failure;
        return await memory.update(key, actions, o);
      } finally {
        inFlight--;
      }
    },
  };
  const catalog = new TopicCatalog({
    store,
    clock,
    stores: [{ id: 's0', location: 'memory://s0', kind: 'standard' }],
    ...options,
  });
  return { memory, clock, catalog, updates, failure, fail: (op: Operation) => failing.add(op) };
};

let ids = 0;
const sequentialIds = () => `topic-${++ids}`;

describe('topic ids', () => {
  it('are random v4 UUIDs unless the deployment supplies its own', async () => {
    const { catalog } = setup();
    const a = await catalog.create({ name: 'a' });
    const b = await catalog.create({ name: 'b' });
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(a.topicId).toMatch(uuid);
    expect(b.topicId).toMatch(uuid);
    expect(a.topicId).not.toBe(b.topicId);
    expect((await catalog.get('a', { fresh: true })).topicId).toBe(a.topicId);
  });
});

describe('the registry cache', () => {
  it('serves a read for exactly cacheTtlMs after the entry was read, then reads the store again', async () => {
    const { memory, clock, catalog } = setup({ cacheTtlMs: 1_000, newId: sequentialIds });
    await catalog.create({ name: 't', partitions: 2 });
    clock.time += 10;
    expect((await catalog.get('t')).partitions).toBe(2);
    // Another instance grows the topic: this one keeps its cached entry until the TTL runs out.
    await memory.put({ ...(await memory.get(keys.topic('t')))!, partitions: 3 });
    clock.time += 989;
    expect((await catalog.get('t')).partitions).toBe(2);
    clock.time += 1;
    expect((await catalog.get('t')).partitions).toBe(3);
    // The store read refreshed the entry: the TTL runs from this read.
    await memory.put({ ...(await memory.get(keys.topic('t')))!, partitions: 4 });
    clock.time += 999;
    expect((await catalog.get('t')).partitions).toBe(3);
    expect((await catalog.get('t', { fresh: true })).partitions).toBe(4);
  });

  it('is off with no TTL: every read goes to the store', async () => {
    const { memory, catalog } = setup({ newId: sequentialIds });
    await catalog.create({ name: 't' });
    await memory.put({ ...(await memory.get(keys.topic('t')))!, partitions: 7 });
    expect((await catalog.get('t')).partitions).toBe(7);
  });
});

describe('store failures', () => {
  it('of an update pass through unchanged, not as a retriable concurrent change, and write nothing new', async () => {
    const { memory, catalog, failure, fail } = setup({ newId: sequentialIds });
    const topic = await catalog.create({ name: 't', partitions: 1 });
    fail('put');
    await expect(catalog.update('t', { configs: { 'retention.ms': '5' } })).rejects.toBe(failure);
    expect(await memory.get(keys.topic('t'))).toMatchObject({ partitions: 1, configs: {} });
    expect(await memory.get(keys.partitionState(topic.topicId, 1))).toBeUndefined();
  });

  it('of the delete transaction pass through, not as UNKNOWN_TOPIC_OR_PARTITION, and nothing is fenced', async () => {
    const { memory, catalog, updates, failure, fail } = setup({ newId: sequentialIds });
    const topic = await catalog.create({ name: 't', partitions: 2 });
    fail('transact');
    await expect(catalog.delete('t')).rejects.toBe(failure);
    expect(await memory.get(keys.topic('t'))).toMatchObject({ topicId: topic.topicId });
    expect(await memory.get(keys.deletedTopic(topic.topicId))).toBeUndefined();
    expect(updates).toEqual([]);
  });

  it('of fencing a partition item fail the delete, which a retry cannot repeat (the name is gone)', async () => {
    const { memory, catalog, updates, failure, fail } = setup({ newId: sequentialIds });
    const topic = await catalog.create({ name: 't', partitions: 3 });
    fail('update');
    await expect(catalog.delete('t')).rejects.toBe(failure);
    expect(updates.map((u) => u.partition)).toEqual(
      [0, 1, 2].map((p) => keys.partitionState(topic.topicId, p).sk),
    );
    expect(await memory.get(keys.topic('t'))).toBeUndefined();
    // Maintenance still finds the deleted id and purges the partitions.
    expect(await memory.get(keys.deletedTopic(topic.topicId))).toMatchObject({ name: 't', partitions: 3 });
  });
});

describe('deleting a topic', () => {
  it('fences each partition item exactly once, 16 at a time, and touches no item past the last partition', async () => {
    const { memory, catalog, updates } = setup({ newId: sequentialIds });
    const topic = await catalog.create({ name: 't', partitions: 20 });
    await catalog.delete('t');
    const sk = (p: number) => keys.partitionState(topic.topicId, p).sk;
    expect(updates.map((u) => u.partition)).toEqual(Array.from({ length: 20 }, (_, p) => sk(p)));
    // All of a batch's updates start before any finishes; the second batch waits for the first.
    expect(updates.map((u) => u.inFlight)).toEqual([
      ...Array.from({ length: 16 }, (_, i) => i + 1),
      ...Array.from({ length: 4 }, (_, i) => i + 1),
    ]);
    for (let p = 0; p < 20; p++)
      expect((await memory.get(keys.partitionState(topic.topicId, p)))?.['deleted']).toBe(true);
  });
});
