/**
 * The log under seeded faults: idempotent, Idempotency-Key and plain producers, polling consumers and
 * maintenance (indexing, orphan collection past the grace period) all running concurrently against
 * stores that fail before, fail after, drop answers and delay. Every seed ends with a full read, the
 * history checker and the storage invariants. A failure names its seed: replay it with
 * SLUICE_SEED=<n> npx vitest run --project sim test/sim/log-faults.test.ts
 */
import { describe, expect, it } from 'vitest';
import type { LogSimulationResult } from '../support/sim.js';
import { failureMessage, runLogSimulation, seedSubset, seedsFor } from '../support/sim.js';

const FILE = 'test/sim/log-faults.test.ts';

const expectClean = (r: LogSimulationResult) => {
  const clean = r.report.valid && r.storageViolations.length === 0 && r.unexpected.length === 0;
  expect(clean, failureMessage(r, FILE)).toBe(true);
};

describe('the log under seeded faults', () => {
  const seeds = seedsFor(1, 150);
  const totals = {
    runs: 0,
    acked: 0,
    ambiguous: 0,
    allowedDuplicates: 0,
    orphansDeleted: 0,
    failAfter: 0,
    dropResponse: 0,
    polls: 0,
  };

  // Even seeds move the tail after the produce's answer, as deployed (functions/environment.ts).
  it.each(seeds)('three partitions, mixed producers and consumers: seed %i', async (seed) => {
    const r = await runLogSimulation({
      seed,
      writesPerProducer: 6,
      ...(seed % 2 === 0 ? { world: { materializeAfterAck: true } } : {}),
    });
    expectClean(r);
    totals.runs++;
    totals.acked += r.report.counts.acked;
    totals.ambiguous += r.report.counts.ambiguous;
    totals.allowedDuplicates += r.report.counts.allowedDuplicates;
    totals.orphansDeleted += r.orphansDeleted;
    totals.failAfter += r.faults.failAfter;
    totals.dropResponse += r.faults.dropResponse;
    totals.polls += r.report.counts.polls;
  });

  it.skipIf(seedSubset())(
    'exercised the cases it claims to (ambiguous writes, retried duplicates, orphans)',
    () => {
      expect(totals.runs).toBe(seeds.length);
      expect(totals.acked).toBeGreaterThan(seeds.length * 50);
      expect(totals.failAfter).toBeGreaterThan(seeds.length);
      expect(totals.dropResponse).toBeGreaterThan(0);
      expect(totals.ambiguous).toBeGreaterThan(seeds.length);
      expect(totals.allowedDuplicates).toBeGreaterThan(0);
      expect(totals.orphansDeleted).toBeGreaterThan(0);
      expect(totals.polls).toBeGreaterThan(seeds.length * 10);
    },
  );

  it('replays a seed exactly', async () => {
    const run = async () => {
      const r = await runLogSimulation({ seed: 77, writesPerProducer: 4 });
      return JSON.stringify({ ops: r.world.recorder.ops, finals: r.world.recorder.finals, faults: r.faults });
    };
    expect(await run()).toBe(await run());
  });
});
