/**
 * The topic catalog against concurrent writers and damaged items: a delete fences every partition
 * item (more than one batch of them) and leaves absent ones absent, a delete or an update that loses a
 * race is refused without writing, and a corrupt or incomplete registry is reported, not trusted.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { SluiceError } from '../../../../protocol/errors.js';
import type { MetadataStore } from '../../../../lib/ports/metadata-store.js';
import { memorySluice } from '../../../support/log-support.js';

/** A memory Sluice whose store runs `hook` before the named operation, while `hook` is set. */
const hooked = () => {
  const state: { op?: string; hook?: () => Promise<void> } = {};
  const s = memorySluice(
    {},
    {
      wrapStore: (store: MetadataStore) =>
        new Proxy(store, {
          get(target, name, receiver) {
            const value: unknown = Reflect.get(target, name, receiver);
            if (typeof value !== 'function') return value;
            return async (...args: unknown[]) => {
              if (name === state.op && state.hook) {
                const hook = state.hook;
                state.hook = undefined;
                await hook();
              }
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        }),
    },
  );
  return { ...s, before: (op: string, hook: () => Promise<void>) => Object.assign(state, { op, hook }) };
};

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SluiceError);
  const { code, message, retriable } = error as SluiceError;
  return { code, message, retriable };
};

describe('deleting a topic', () => {
  it('fences every partition item in batches of 16, and leaves an absent one absent', async () => {
    const s = hooked();
    const topic = await s.sluice.catalog.create({ name: 't', partitions: 40 });
    await s.store.delete(keys.partitionState(topic.topicId, 17));
    await s.sluice.catalog.delete('t');
    const fenced = [];
    for (let p = 0; p < 41; p++)
      fenced.push((await s.store.get(keys.partitionState(topic.topicId, p)))?.['deleted']);
    expect(fenced).toEqual([...Array(17).fill(true), undefined, ...Array(22).fill(true), undefined]);
    expect(await s.store.get(keys.partitionState(topic.topicId, 17))).toBeUndefined();
    expect(await s.store.get(keys.topic('t'))).toBeUndefined();
    expect(await s.store.get(keys.deletedTopic(topic.topicId))).toMatchObject({ name: 't', partitions: 40 });
  });

  it('refuses with UNKNOWN_TOPIC_OR_PARTITION when the topic was replaced between the read and the delete', async () => {
    const s = hooked();
    const first = await s.sluice.catalog.create({ name: 't' });
    s.before('transact', async () => {
      await s.store.put({ ...(await s.store.get(keys.topic('t')))!, topicId: 'other' });
    });
    expect(await refusal(s.sluice.catalog.delete('t'))).toEqual({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: 'topic t does not exist',
      retriable: false,
    });
    expect(await s.store.get(keys.topic('t'))).toMatchObject({ topicId: 'other' });
    expect((await s.store.get(keys.partitionState(first.topicId, 0)))?.['deleted']).toBeUndefined();
  });
});

describe('updating a topic', () => {
  it('refuses, retriably, when the partitions changed between the read and the write', async () => {
    const s = hooked();
    await s.sluice.catalog.create({ name: 't', partitions: 2 });
    s.before('put', async () => {
      await s.store.put({ ...(await s.store.get(keys.topic('t')))!, partitions: 3 });
    });
    expect(await refusal(s.sluice.catalog.update('t', { configs: { 'retention.ms': '5' } }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'topic t changed concurrently; retry',
      retriable: true,
    });
    expect(await s.store.get(keys.topic('t'))).toMatchObject({ partitions: 3, configs: {} });
  });
});

describe('the registry', () => {
  it('reports a corrupt registry item and a missing partition item instead of trusting them', async () => {
    const s = hooked();
    const topic = await s.sluice.catalog.create({ name: 't', partitions: 2 });
    await s.store.delete(keys.partitionState(topic.topicId, 1));
    expect(await refusal(s.sluice.catalog.partitionInfo(topic))).toEqual({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: 'partition t-1 is missing',
      retriable: false,
    });
    const item = (await s.store.get(keys.topic('t')))!;
    await s.store.put({ ...item, topicId: 7 });
    expect(await refusal(s.sluice.catalog.get('t', { fresh: true }))).toEqual({
      code: 'UNKNOWN_SERVER_ERROR',
      message: `corrupt topic registry item ${item.sk}`,
      retriable: false,
    });
  });

  it('passes on a store failure of a create instead of calling it TOPIC_ALREADY_EXISTS', async () => {
    const s = hooked();
    const failure = new SluiceError('KAFKA_STORAGE_ERROR', 'the store is unavailable', { retriable: true });
    s.before('put', async () => {
      throw failure;
    });
    await expect(s.sluice.catalog.create({ name: 't' })).rejects.toBe(failure);
  });

  it('takes min.insync.replicas equal to the replication factor', async () => {
    const s = hooked();
    const topic = await s.sluice.catalog.create({ name: 't', configs: { 'min.insync.replicas': '1' } });
    expect(topic.configs).toEqual({ 'min.insync.replicas': 1 });
    expect((await s.sluice.catalog.update('t', { configs: { 'min.insync.replicas': 1 } })).configs).toEqual({
      'min.insync.replicas': 1,
    });
  });

  it('forgets a cached topic: the next read goes to the store', async () => {
    const s = hooked();
    await s.sluice.catalog.create({ name: 't' });
    expect((await s.sluice.catalog.get('t')).partitions).toBe(1);
    await s.store.put({ ...(await s.store.get(keys.topic('t')))!, partitions: 5 });
    expect((await s.sluice.catalog.get('t')).partitions).toBe(1);
    s.sluice.catalog.forget('t');
    expect((await s.sluice.catalog.get('t')).partitions).toBe(5);
  });
});

describe('the catalog’s reads', () => {
  it('list every topic across pages (the store pages at 1 MB)', async () => {
    const s = hooked();
    await s.sluice.catalog.create({ name: 'a' });
    const item = (await s.store.get(keys.topic('a')))!;
    for (const name of ['b', 'c', 'd', 'e'])
      await s.store.put({ ...item, ...keys.topic(name), name, pad: 'x'.repeat(390_000) });
    expect((await s.store.query({ pk: keys.topicsPk })).cursor).toBeDefined();
    expect((await s.sluice.catalog.list()).map((t) => t.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('are all strongly consistent: an eventually consistent read could miss a create or a delete', async () => {
    const reads: string[] = [];
    const s = memorySluice(
      {},
      {
        wrapStore: (store: MetadataStore) =>
          new Proxy(store, {
            get(target, name, receiver) {
              const value: unknown = Reflect.get(target, name, receiver);
              if (typeof value !== 'function') return value;
              if (name === 'get')
                return (key: { sk: string }, options?: { consistent?: boolean }) => {
                  reads.push(`get ${String(options?.consistent)}`);
                  return target.get(key as never, options);
                };
              if (name === 'query')
                return (input: { consistent?: boolean }) => {
                  reads.push(`query ${String(input.consistent)}`);
                  return target.query(input as never);
                };
              return value.bind(target);
            },
          }),
      },
    );
    const topic = await s.sluice.catalog.create({ name: 't' });
    await s.sluice.catalog.get('t', { fresh: true });
    await s.sluice.catalog.list();
    await s.sluice.catalog.partitionInfo(topic);
    await s.sluice.catalog.update('t', { partitions: 2 });
    await s.sluice.catalog.delete('t');
    expect(reads.length).toBeGreaterThanOrEqual(5);
    expect(reads.filter((r) => !r.endsWith(' true'))).toEqual([]);
  });
});
