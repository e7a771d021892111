/**
 * Each election says why it ran: the 'leader elected' log line carries Kafka's election type, FAILOVER
 * when a produce finds its leader store failing the write or an ISR shrink is handed a failed leader,
 * UNCLEAN for the ElectLeaders admin call (the replicator's FAILOVER is in replication-telemetry).
 */
import { describe, expect, it } from 'vitest';
import { electLeaders } from '../../../../lib/core/replication/elect-leaders.js';
import { removeFromIsr } from '../../../../lib/core/replication/isr.js';
import type { Telemetry } from '../../../../lib/ports/telemetry.js';
import { arrangedPartition, replicationCluster } from './replication-support.js';

const recording = () => {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const telemetry: Telemetry = {
    metric: () => {},
    log: (_level, message, fields = {}) => lines.push({ message, fields }),
    annotate: () => {},
  };
  const elections = () => lines.filter((l) => l.message === 'leader elected').map((l) => l.fields);
  return { telemetry, elections };
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
