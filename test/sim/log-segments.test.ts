/**
 * Segments under seeded faults: small segments (segment.bytes 4 KiB, segment.ms 2 s) roll, are tiered
 * to a faulty segment store and lose their replica-store copies (local.retention.ms 1 s) while producers,
 * consumers and maintenance run, every store failing before or after its writes now and then. The
 * history checker and the storage invariants (tiling across both indexes, every entry's object present
 * and decoding, nothing unreferenced after the grace period) hold for every seed; with retention and
 * with compaction on top as well.
 * Replay a failing seed with SLUICE_SEED=<n> npx vitest run --project sim test/sim/log-segments.test.ts
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/core/keys.js';
import { failureMessage, runLogSimulation, seedSubset, seedsFor } from '../support/sim.js';

const SEGMENTS = { 'segment.bytes': '4096', 'segment.ms': '2000', 'local.retention.ms': '1000' };

const CASES: [name: string, base: number, configs: Record<string, string>, keySpace?: number][] = [
  ['rolling and tiering', 9100, SEGMENTS],
  ['with retention', 9200, { ...SEGMENTS, 'retention.ms': '5000' }],
  [
    'with compaction',
    9300,
    { ...SEGMENTS, 'cleanup.policy': 'compact', 'min.cleanable.dirty.ratio': '0.2' },
    6,
  ],
];

describe.each(CASES)('segments under seeded faults, %s', (_name, base, configs, keySpace) => {
  const seeds = seedsFor(base, 8);
  let segments = 0;

  it.each(seeds)('seed %i', async (seed) => {
    const r = await runLogSimulation({
      seed,
      partitions: 2,
      writesPerProducer: 10,
      topicConfigs: configs,
      ...(keySpace ? { keySpace } : {}),
      world: { segmentStore: true },
    });
    const clean = r.report.valid && r.storageViolations.length === 0 && r.unexpected.length === 0;
    expect(clean, failureMessage(r, 'test/sim/log-segments.test.ts')).toBe(true);
    segments += r.world.memory.store.dump().filter((i) => i.sk.startsWith(keys.segmentPrefix)).length;
  });

  it.skipIf(seedSubset())('rolled segments on the way', () => {
    expect(segments).toBeGreaterThan(seeds.length * 2);
  });
});

describe('two maintenance runs at once, under seeded faults', () => {
  it.each(seedsFor(9400, 8))('seed %i', async (seed) => {
    let extraRuns = 0;
    const r = await runLogSimulation({
      seed,
      partitions: 2,
      writesPerProducer: 10,
      topicConfigs: { ...SEGMENTS, 'cleanup.policy': 'compact,delete', 'retention.ms': '6000' },
      keySpace: 8,
      world: { segmentStore: true },
      // A second scheduler beside the simulation's own: runs overlap at every await.
      during: async (world) => {
        for (let i = 0; i < 40; i++) {
          await world.clock.sleep(250);
          await world.maintenance.run().catch(() => undefined);
          extraRuns++;
        }
      },
    });
    const clean = r.report.valid && r.storageViolations.length === 0 && r.unexpected.length === 0;
    expect(clean, failureMessage(r, 'test/sim/log-segments.test.ts')).toBe(true);
    expect(extraRuns).toBe(40);
  });
});
