/**
 * One maintenance run's report, exactly: every partition counted, every tail entry indexed, a deleted
 * topic purged only once its grace has passed (to the millisecond), sweeps' answers and failures
 * reported by name, and nothing else counted.
 */
import { expect, it } from 'vitest';
import { keys } from '../../../lib/core/keys.js';
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
