/**
 * One maintenance run's report, exactly: every partition counted, every tail entry indexed, a deleted
 * topic purged only once its grace has passed (to the millisecond), sweeps' answers and failures
 * reported by name, and nothing else counted.
 */
import { expect, it } from 'vitest';
import { dataObjectKey, keys } from '../../../lib/core/keys.js';
import { memorySluice } from '../../support/log-support.js';

it('counts exactly what it did, purges a deleted topic after its grace, and names each failure', async () => {
  const s = memorySluice();
  for (const [name, partitions] of [
    ['a', 2],
    ['b', 1],
  ] as const)
    expect((await s.http('POST', '/v1/topics', { name, partitions })).status).toBe(201);
  for (const [topic, partition, n] of [
    ['a', 0, 3],
    ['a', 1, 2],
    ['b', 0, 1],
  ] as const)
    for (let i = 0; i < n; i++)
      expect(
        (await s.http('POST', `/v1/topics/${topic}/records`, { records: [{ value: 'v', partition }] }))
          .status,
      ).toBe(200);
  s.sluice.maintenance.addSweep('answer', async () => 42);
  s.sluice.maintenance.addSweep('broken', async () => {
    throw new Error('boom');
  });
  const first = await s.sluice.maintenance.run();
  expect(first).toEqual({
    partitions: 3,
    entriesIndexed: 6,
    segmentsRolled: 0,
    localPagesRetired: 0,
    batchesExpired: 0,
    recordsCompacted: 0,
    topicsPurged: 0,
    orphansDeleted: 0,
    orphanScan: true,
    replication: { copied: 0, joined: 0, left: 0, elected: 0 },
    partitionHealth: { underReplicated: 0, underMinIsr: 0, offline: 0, maxLag: {} },
    sweeps: {
      groups: { failedGroups: 0, groups: 0, membersExpired: 0 },
      transactions: { aborted: 0, completed: 0 },
      consumerLag: { groups: 0, partitions: 0, maxLag: {} },
      answer: 42,
    },
    errors: ['sweep broken: boom'],
  });
  const { topicId } = await s.sluice.catalog.get('b');
  expect((await s.http('DELETE', '/v1/topics/b')).status).toBeLessThan(300);
  const deletedAt = s.clock.now();
  // The grace is an hour: at exactly an hour the record of the deletion stays; a millisecond later it goes.
  s.clock.time = deletedAt + 60 * 60_000;
  expect(await s.sluice.maintenance.run()).toMatchObject({
    partitions: 2,
    entriesIndexed: 0,
    topicsPurged: 0,
  });
  expect(await s.store.get(keys.deletedTopic(topicId))).toBeDefined();
  s.clock.time = deletedAt + 60 * 60_000 + 1;
  expect(await s.sluice.maintenance.run()).toMatchObject({ partitions: 2, topicsPurged: 1 });
  expect(await s.store.get(keys.deletedTopic(topicId))).toBeUndefined();
  expect(await s.sluice.maintenance.run()).toMatchObject({ topicsPurged: 0 });
});

it('counts each partition of a one-store topic whose min.insync.replicas it cannot meet as under min ISR', async () => {
  const s = memorySluice();
  for (const [name, partitions] of [
    ['a', 3],
    ['b', 2],
  ] as const)
    expect((await s.http('POST', '/v1/topics', { name, partitions })).status).toBe(201);
  // The catalog refuses min.insync.replicas above the replication factor; a topic item that has one
  // anyway (written before that check, or by hand) can never meet it.
  const item = await s.store.get(keys.topic('a'));
  await s.store.put({ ...item!, configs: { 'min.insync.replicas': 2 } });
  expect((await s.sluice.maintenance.run()).partitionHealth).toEqual({
    underReplicated: 0,
    underMinIsr: 3,
    offline: 0,
    maxLag: {},
  });
});

it('maintains no partition of a topic listed with none, and still collects its orphans', async () => {
  const s = memorySluice();
  expect((await s.http('POST', '/v1/topics', { name: 'z', partitions: 1 })).status).toBe(201);
  const { topicId } = await s.sluice.catalog.get('z');
  const item = await s.store.get(keys.topic('z'));
  await s.store.put({ ...item!, partitions: 0 });
  await s.objects.put(dataObjectKey(topicId, 'orphan'), new Uint8Array([1]));
  s.clock.time += 15 * 60_000 + 1;
  expect(await s.sluice.maintenance.run()).toMatchObject({
    partitions: 0,
    orphanScan: true,
    orphansDeleted: 1,
    errors: [],
  });
  expect(s.objects.keys()).toEqual([]);
});
