/**
 * The topic catalog's refusals, each with its Kafka code and exact message, and nothing written by a
 * refused create or update; and what a create and an update store exactly.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { validateTopicName } from '../../../../lib/core/topics/catalog.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { memorySluice } from '../../../support/log-support.js';

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SluiceError);
  const { code, message } = error as SluiceError;
  return { code, message };
};

describe('topic names', () => {
  it('take 1-249 of [a-zA-Z0-9._-], not "." or "..", and a refusal quotes at most 64 characters', () => {
    for (const ok of ['a', 'A.b_c-9', 'x'.repeat(249), '...']) expect(validateTopicName(ok)).toBe(ok);
    const invalid = (shown: string) =>
      `topic name ${shown} is invalid: use 1-249 of [a-zA-Z0-9._-], not "." or ".."`;
    const cases: [unknown, string][] = [
      ['', invalid('""')],
      ['.', invalid('"."')],
      ['..', invalid('".."')],
      ['a b', invalid('"a b"')],
      ['x'.repeat(250), invalid(`"${'x'.repeat(64)}…"`)],
      ['y'.repeat(64) + '!', invalid(`"${'y'.repeat(64)}…"`)],
      ['z'.repeat(63) + '!', invalid(`"${'z'.repeat(63)}!"`)],
      [7, invalid('of type number')],
      [null, invalid('of type object')],
    ];
    for (const [name, message] of cases) {
      let error: unknown;
      try {
        validateTopicName(name);
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'INVALID_TOPIC_EXCEPTION', message });
    }
  });
});

describe('creating a topic', () => {
  it('refuses bad partitions, replication factors and min.insync.replicas, writing nothing', async () => {
    const s = memorySluice();
    const create = (input: Record<string, unknown>) => s.sluice.catalog.create({ name: 't', ...input });
    expect(await refusal(create({ partitions: 0 }))).toEqual({
      code: 'INVALID_PARTITIONS',
      message: 'partitions must be a positive integer, got 0',
    });
    expect(await refusal(create({ partitions: 1.5 }))).toEqual({
      code: 'INVALID_PARTITIONS',
      message: 'partitions must be a positive integer, got 1.5',
    });
    expect(await refusal(create({ partitions: '2' }))).toEqual({
      code: 'INVALID_PARTITIONS',
      message: 'partitions must be a positive integer, got "2"',
    });
    expect(await refusal(create({ partitions: 10_001 }))).toEqual({
      code: 'INVALID_PARTITIONS',
      message: 'partitions 10001 is too large: the limit is 10000',
    });
    expect(await refusal(create({ replicationFactor: 2 }))).toEqual({
      code: 'INVALID_REPLICATION_FACTOR',
      message: 'replicationFactor 2 is too large: this deployment has 1 store(s)',
    });
    expect(await refusal(create({ replicationFactor: 0 }))).toEqual({
      code: 'INVALID_REPLICATION_FACTOR',
      message: 'replicationFactor must be a positive integer, got 0',
    });
    expect(await refusal(create({ configs: { 'min.insync.replicas': '2' } }))).toEqual({
      code: 'INVALID_CONFIG',
      message: 'min.insync.replicas=2 exceeds the replication factor 1',
    });
    expect(s.store.dump()).toEqual([]);
  });

  it('stores the registry item and one partition item per partition, and refuses the name twice', async () => {
    const s = memorySluice();
    const topic = await s.sluice.catalog.create({ name: 't', partitions: 3 });
    expect(topic).toEqual({
      name: 't',
      topicId: 'id-1',
      partitions: 3,
      replicationFactor: 1,
      configs: {},
      createdAt: s.clock.now(),
    });
    expect(await s.store.get(keys.topic('t'))).toMatchObject({ name: 't', topicId: 'id-1', partitions: 3 });
    for (let p = 0; p < 3; p++) expect(await s.store.get(keys.partitionState('id-1', p))).toBeDefined();
    expect(await s.store.get(keys.partitionState('id-1', 3))).toBeUndefined();
    const before = s.store.dump();
    expect(await refusal(s.sluice.catalog.create({ name: 't' }))).toEqual({
      code: 'TOPIC_ALREADY_EXISTS',
      message: 'topic t already exists',
    });
    // The loser's partition items, under its own fresh id, are purged again.
    expect(s.store.dump()).toEqual(before);
  });
});

describe('updating a topic', () => {
  it('grows partitions and merges configs, and refuses shrinking or a bad value before writing', async () => {
    const s = memorySluice();
    await s.sluice.catalog.create({ name: 't', partitions: 2, configs: { 'retention.ms': '1000' } });
    const before = s.store.dump();
    expect(await refusal(s.sluice.catalog.update('t', { partitions: 1 }))).toEqual({
      code: 'INVALID_PARTITIONS',
      message: 'topic t has 2 partitions; partitions can only grow',
    });
    expect(await refusal(s.sluice.catalog.update('t', { partitions: 10_001 }))).toEqual({
      code: 'INVALID_PARTITIONS',
      message: 'partitions 10001 is too large: the limit is 10000',
    });
    expect(await refusal(s.sluice.catalog.update('t', { configs: { 'min.insync.replicas': 3 } }))).toEqual({
      code: 'INVALID_CONFIG',
      message: 'min.insync.replicas=3 exceeds the replication factor 1',
    });
    expect(await refusal(s.sluice.catalog.update('u', { partitions: 3 }))).toEqual({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: 'topic u does not exist',
    });
    expect(s.store.dump()).toEqual(before);
    const grown = await s.sluice.catalog.update('t', { partitions: 4, configs: { 'segment.ms': '5' } });
    expect(grown).toMatchObject({ partitions: 4, configs: { 'retention.ms': 1000, 'segment.ms': 5 } });
    expect(await s.store.get(keys.partitionState(grown.topicId, 3))).toBeDefined();
    expect(await s.store.get(keys.partitionState(grown.topicId, 4))).toBeUndefined();
    expect(await s.sluice.catalog.update('t', { partitions: 4 })).toMatchObject({ partitions: 4 });
  });
});
