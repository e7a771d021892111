/**
 * What replication reports through the Telemetry port: IsrShrinksPerSec when a store leaves an ISR,
 * IsrExpandsPerSec when it rejoins, LeaderElectionRateAndTimeMs per election, and maintenance's
 * partition gauges (UnderReplicatedPartitions, UnderMinIsrPartitionCount, OfflinePartitionsCount,
 * MaxLag per store) as the cluster goes from healthy to degraded to offline and back.
 */
import { describe, expect, it } from 'vitest';
import type { Telemetry } from '../../../../lib/ports/telemetry.js';
import { replicationCluster } from './replication-support.js';

const recording = () => {
  const points: { name: string; value: number; dimensions: Record<string, unknown> }[] = [];
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const telemetry: Telemetry = {
    metric: (name, value, dimensions) => points.push({ name, value, dimensions }),
    log: (level, message, fields = {}) => lines.push({ level, message, fields }),
    annotate: () => {},
  };
  const take = (name: string) => {
    const found = points.filter((p) => p.name === name);
    points.splice(0, points.length, ...points.filter((p) => p.name !== name));
    return found.map((p) => [p.value, p.dimensions]);
  };
  return { telemetry, points, lines, take };
};

describe('replication telemetry', () => {
  it('counts shrinks, expansions and elections, and maintenance reports the partition gauges', async () => {
    const r = recording();
    const c = replicationCluster(3, { telemetry: r.telemetry });
    await c.create({ 'min.insync.replicas': '2' });
    expect((await c.send('a')).status).toBe(200);
    await c.sluice.maintenance.run();
    expect(r.take('UnderReplicatedPartitions')).toEqual([[0, {}]]);
    expect(r.take('UnderMinIsrPartitionCount')).toEqual([[0, {}]]);
    expect(r.take('OfflinePartitionsCount')).toEqual([[0, {}]]);
    expect(r.take('MaxLag')).toEqual([
      [0, { store: 's0' }],
      [0, { store: 's1' }],
      [0, { store: 's2' }],
    ]);
    expect(r.take('IsrShrinksPerSec')).toEqual([]);

    // s2 fails a write: it leaves the ISR (one shrink), and the partition is under-replicated.
    c.down.add('s2');
    expect((await c.send('b')).status).toBe(200);
    expect(r.take('IsrShrinksPerSec')).toEqual([[1, {}]]);
    expect(r.lines.find((l) => l.message === 'ISR shrink')?.fields).toMatchObject({
      left: ['s2'],
      reason: 'failed',
    });
    await c.sluice.maintenance.run();
    expect(r.take('UnderReplicatedPartitions')).toEqual([[1, {}]]);
    expect(r.take('UnderMinIsrPartitionCount')).toEqual([[0, {}]]);
    expect(r.take('MaxLag')).toContainEqual([1, { store: 's2' }]);

    // s1 goes too: the ISR is the leader alone, under min.insync.replicas=2.
    c.down.add('s1');
    await c.send('c');
    await c.sluice.maintenance.run();
    expect(r.take('UnderMinIsrPartitionCount')).toEqual([[1, {}]]);

    // Back up: both catch up and rejoin (two expansions); healthy again.
    c.down.clear();
    r.take('IsrShrinksPerSec');
    await c.sluice.maintenance.run();
    expect(r.take('IsrExpandsPerSec')).toEqual([
      [1, {}],
      [1, {}],
    ]);
    await c.sluice.maintenance.run();
    expect(r.take('UnderReplicatedPartitions').at(-1)).toEqual([0, {}]);

    // The leader's store fails: one election, timed, and logged.
    c.down.add('s0');
    await c.sluice.maintenance.replicate();
    const elections = r.take('LeaderElectionRateAndTimeMs');
    expect(elections).toHaveLength(1);
    expect(elections[0]![0]).toBeGreaterThanOrEqual(0);
    expect(r.lines.find((l) => l.message === 'leader elected')?.fields).toMatchObject({
      topic: 't',
      partition: 0,
      electionType: 'FAILOVER',
      unclean: false,
    });
  });

  it('counts a partition whose leader fails with nobody in sync as offline', async () => {
    const r = recording();
    const c = replicationCluster(3, { telemetry: r.telemetry });
    await c.create({ 'min.insync.replicas': '1' });
    c.down.add('s1');
    c.down.add('s2');
    expect((await c.send('a')).status).toBe(200);
    expect(r.take('IsrShrinksPerSec')).toEqual([[2, {}]]);
    c.down.add('s0');
    const report = await c.sluice.maintenance.run();
    expect(report.partitionHealth).toMatchObject({ offline: 1, underReplicated: 1, underMinIsr: 0 });
    expect(r.take('OfflinePartitionsCount')).toEqual([[1, {}]]);
    expect(r.take('LeaderElectionRateAndTimeMs')).toEqual([]);
  });
});
