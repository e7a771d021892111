/**
 * The hot-partition case under seeded faults: nine producers of all three kinds appending to one
 * partition at once, with commits racing tail materialization (a small flush threshold) and orphan
 * collection. Replay a failing seed with SLUICE_SEED=<n> npx vitest run --project sim test/sim/log-hot-partition.test.ts
 */
import { describe, expect, it } from 'vitest';
import { failureMessage, runLogSimulation, seedsFor } from '../support/sim.js';

describe('one hot partition under seeded faults', () => {
  it.each(seedsFor(5000, 80))('seed %i', async (seed) => {
    const r = await runLogSimulation({
      seed,
      onePartition: true,
      producers: { idempotent: 4, keyed: 3, plain: 2 },
      writesPerProducer: 4,
      tailFlushEntries: 3,
      consumers: 1,
    });
    const clean = r.report.valid && r.storageViolations.length === 0 && r.unexpected.length === 0;
    expect(clean, failureMessage(r, 'test/sim/log-hot-partition.test.ts')).toBe(true);
    // Offsets of the one partition are exactly 0..n-1.
    const offsets = r.world.recorder.finals[0]!.records.map((x) => x.offset);
    expect(offsets).toEqual(offsets.map((_, i) => i));
  });
});
