/**
 * Compaction under seeded faults: producers write a small set of keys to a compacted topic while the
 * cleaner rewrites batches, consumers poll (offsets may now have gaps) and the orphan collector runs.
 * The latest acknowledged record of every key must survive at its offset, byte-identical; an older
 * one may only be gone when a later record of its key is there. Replay a failing seed with
 * SLUICE_SEED=<n> npx vitest run --project sim test/sim/log-compaction.test.ts
 */
import { describe, expect, it } from 'vitest';
import { failureMessage, runLogSimulation, seedSubset, seedsFor } from '../support/sim.js';

describe('compaction under seeded faults', () => {
  const seeds = seedsFor(8000, 30);
  let compacted = 0;

  it.each(seeds)('seed %i', async (seed) => {
    const r = await runLogSimulation({
      seed,
      writesPerProducer: 10,
      keySpace: 6,
      tailFlushEntries: 3,
      topicConfigs: { 'cleanup.policy': 'compact', 'delete.retention.ms': '2000' },
    });
    const clean = r.report.valid && r.storageViolations.length === 0 && r.unexpected.length === 0;
    expect(clean, failureMessage(r, 'test/sim/log-compaction.test.ts')).toBe(true);
    compacted += r.report.counts.compacted;
  });

  it.skipIf(seedSubset())('compacted records on the way', () => {
    expect(compacted).toBeGreaterThan(seeds.length * 10);
  });
});
