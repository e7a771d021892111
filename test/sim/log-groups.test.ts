/**
 * A consumer group following a topic while it is written, under seeded faults: members join over
 * time, heartbeat with what they own, consume and commit with their member epoch, crash and come back
 * as new members, and leave at the end; maintenance expires dead sessions. The checker looks at both
 * the log (lost, duplicated, reordered...) and the group (one owner per partition, no stale commit
 * accepted, committed offsets read back). Replay a failing seed with
 * SLUICE_SEED=<n> npx vitest run --project sim test/sim/log-groups.test.ts
 */
import { describe, expect, it } from 'vitest';
import { failureMessage, runLogSimulation, seedSubset, seedsFor } from '../support/sim.js';

describe('a consumer group under seeded faults', () => {
  const seeds = seedsFor(9000, 70);
  const totals = { heartbeats: 0, commits: 0, crashes: 0, handovers: 0 };

  it.each(seeds)('seed %i', async (seed) => {
    const r = await runLogSimulation({
      seed,
      partitions: 4,
      producers: { idempotent: 1, keyed: 1, plain: 1 },
      writesPerProducer: 8,
      consumers: 0,
      group: { members: 3, crashChance: 0.01 },
    });
    const clean = r.report.valid && r.storageViolations.length === 0 && r.unexpected.length === 0;
    expect(clean, failureMessage(r, 'test/sim/log-groups.test.ts')).toBe(true);
    totals.heartbeats += r.report.counts.heartbeats;
    totals.commits += r.report.counts.commits;
    const ops = r.world.recorder.ops;
    totals.crashes += ops.filter((o) => o.f === 'crash').length;
    // A partition assigned to a member other than its previous holder: a handover happened.
    const holder = new Map<string, string>();
    for (const o of [...ops].sort((a, b) => a.complete - b.complete)) {
      if (o.f !== 'heartbeat' || o.outcome !== 'ok' || !o.assignment) continue;
      for (const tp of o.assignment) {
        if (holder.has(tp) && holder.get(tp) !== o.member) totals.handovers++;
        holder.set(tp, o.member);
      }
    }
  });

  it.skipIf(seedSubset())('exercised rebalances, crashes and commits', () => {
    expect(totals.heartbeats).toBeGreaterThan(seeds.length * 20);
    expect(totals.commits).toBeGreaterThan(seeds.length * 5);
    expect(totals.crashes).toBeGreaterThan(0);
    expect(totals.handovers).toBeGreaterThan(seeds.length);
  });
});
