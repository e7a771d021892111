/**
 * Replication under store faults (replication-sim.ts): stores down, slow and losing writes, then up to
 * N-1 of three stores lost for good. A failure names its seed and file for SLUICE_SEED=<n> replay.
 */
import { describe, expect, it } from 'vitest';
import type { ReplicationSimResult } from './replication-sim.js';
import { runReplicationSimulation } from './replication-sim.js';
import { seedSubset, seedsFor } from './sim.js';

/** The seeded replication suite over `count` seeds from `base` (split over files so they run in parallel). */
export const replicationSuite = (file: string, base: number, count: number): void => {
  const replay = (r: ReplicationSimResult) =>
    `seed ${r.seed}: ${r.violations.join('; ')} (replay: SLUICE_SEED=${r.seed} npx vitest run --project sim ${file})`;

  describe(`replication under store faults, seeds ${base}..${base + count - 1}`, () => {
    const seeds = seedsFor(base, count);
    const totals = {
      runs: 0,
      ackedAll: 0,
      ackedOne: 0,
      elections: 0,
      shrinks: 0,
      expands: 0,
      refused: 0,
      overlaps: 0,
      seedsOverlapping: 0,
    };

    it.each(seeds)(
      'seed %i: no acks=all record lost, HW never back, no read past it, one leader per epoch',
      async (seed) => {
        const r = await runReplicationSimulation({ seed });
        expect(r.violations, replay(r)).toEqual([]);
        expect(r.lost).toBe(0);
        totals.runs++;
        totals.ackedAll += r.acked.all;
        totals.ackedOne += r.acked.one;
        totals.elections += r.elections;
        totals.shrinks += r.shrinks;
        totals.expands += r.expands;
        totals.refused += r.refusedNotEnoughReplicas;
        totals.overlaps += r.overlaps;
        if (r.overlaps > 0) totals.seedsOverlapping++;
      },
    );

    it.skipIf(seedSubset())(
      'exercised what it claims: elections, shrinks, rejoins, refusals, replicator/commit overlaps',
      () => {
        console.log(`replication sim: ${JSON.stringify(totals)}`);
        expect(totals.runs).toBe(seeds.length);
        expect(totals.ackedAll).toBeGreaterThan(seeds.length * 20);
        expect(totals.elections).toBeGreaterThan(seeds.length / 2);
        expect(totals.shrinks).toBeGreaterThan(seeds.length);
        expect(totals.expands).toBeGreaterThan(seeds.length / 2);
        expect(totals.refused).toBeGreaterThan(seeds.length / 10);
        // The replicator's copy overlaps acks=all commits in most seeds (issue 24).
        expect(totals.seedsOverlapping).toBeGreaterThan(seeds.length / 2);
      },
    );
  });
};
