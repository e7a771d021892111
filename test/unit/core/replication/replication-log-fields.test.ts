/**
 * Replication's log lines say why: the 'leader elected' line carries Kafka's election type, FAILOVER
 * when a produce finds its leader store failing the write or an ISR shrink is handed a failed leader,
 * UNCLEAN for the ElectLeaders admin call (the replicator's FAILOVER is in replication-telemetry); the
 * 'ISR shrink' line its reason, 'lagging' for a follower the replicator drops for falling behind.
 */
import { describe, expect, it } from 'vitest';
import { electLeaders } from '../../../../lib/core/replication/elect-leaders.js';
import { removeFromIsr } from '../../../../lib/core/replication/isr.js';
import { replicatePartition } from '../../../../lib/core/replication/replicator.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import type { Telemetry } from '../../../../lib/ports/telemetry.js';
import { LAG_MS, arrangedPartition, replicationCluster } from './replication-support.js';

const recording = () => {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const telemetry: Telemetry = {
    metric: () => {},
    log: (_level, message, fields = {}) => lines.push({ message, fields }),
    annotate: () => {},
  };
  const named = (message: string) => lines.filter((l) => l.message === message).map((l) => l.fields);
  return { telemetry, elections: () => named('leader elected'), shrinks: () => named('ISR shrink') };
};

describe('the election type in the leader elected log', () => {
  it('is FAILOVER when a produce finds its leader store failing the write', async () => {
    const r = recording();
    const c = replicationCluster(3, { telemetry: r.telemetry });
    const t = await c.create({ 'min.insync.replicas': '1' });
    const { leader } = await t.state();
    c.down.add(leader);
    expect((await c.send('a')).status).not.toBe(200);
    const after = await t.state();
    expect(after.leader).not.toBe(leader);
    expect(r.elections()).toEqual([
      expect.objectContaining({
        partition: 0,
        leader: after.leader,
        leaderEpoch: 1,
        electionType: 'FAILOVER',
        unclean: false,
      }),
    ]);
  });

  it('is FAILOVER when an ISR shrink for a failed write is handed the leader', async () => {
    const r = recording();
    const p = await arrangedPartition({ leos: [5, 4], telemetry: r.telemetry });
    const after = await removeFromIsr(p.c.ctx, p.topic, 0, [p.leader, p.f1], {
      reason: 'failed',
      seenEpoch: 0,
    });
    expect(after.leader).toBe(p.f2);
    expect(r.elections()).toEqual([
      expect.objectContaining({ leader: p.f2, leaderEpoch: 1, electionType: 'FAILOVER', unclean: false }),
    ]);
  });

  it('is UNCLEAN for an ElectLeaders UNCLEAN that elects an out-of-sync follower', async () => {
    const r = recording();
    const p = await arrangedPartition({
      leos: [4, 2],
      hw: 5,
      configs: { 'min.insync.replicas': '1', 'unclean.leader.election.enable': 'true' },
      telemetry: r.telemetry,
    });
    await p.arrange([{ set: 'isr', value: [p.leader] }]);
    p.c.down.add(p.leader);
    expect(await electLeaders(p.c.ctx, p.topic, 'UNCLEAN')).toEqual([
      { partition: 0, leader: p.f1, leaderEpoch: 1, truncatedFrom: 5, truncatedTo: 4 },
    ]);
    expect(r.elections()).toEqual([
      expect.objectContaining({ leader: p.f1, leaderEpoch: 1, electionType: 'UNCLEAN', unclean: true }),
    ]);
  });
});

describe('the reason in the ISR shrink log', () => {
  it("is 'lagging' for a follower behind for longer than replica.lag.time.max.ms whose write loses", async () => {
    const r = recording();
    const c = replicationCluster(3, { telemetry: r.telemetry });
    const t = await c.create({ 'min.insync.replicas': '1' });
    for (const v of ['a', 'b', 'c']) await c.send(v);
    await c.send('d', '1');
    const { leader, replicas } = await t.state();
    const [f1, f2] = replicas.filter((s) => s !== leader) as [string, string];
    c.clock.time += LAG_MS + 1;
    // f1's copy write loses its condition, so it does not advance; f2 catches up and stays.
    c.hooks.stateUpdate = (call, run) =>
      (call.actions ?? []).some(
        (a) => 'set' in a && JSON.stringify(a.set) === JSON.stringify([stateAttr.logEndOffsets, f1]),
      )
        ? Promise.reject(new ConditionFailedError(undefined))
        : run();
    const { left } = await replicatePartition(c.ctx, t.topic, 0);
    expect(left).toEqual([f1]);
    expect(r.shrinks()).toEqual([
      { topic: 't', partition: 0, left: [f1], reason: 'lagging', isr: [leader, f2] },
    ]);
  });
});
