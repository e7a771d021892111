/**
 * Retention under seeded faults: a short retention.ms drops the oldest batches while producers,
 * consumers (reset to the earliest offset when retention passes them) and maintenance run. The log
 * start only moves forward, nothing acknowledged above it is lost, and once maintenance has run past
 * the grace period no index item below the log start nor any unreferenced object is left.
 * Replay a failing seed with SLUICE_SEED=<n> npx vitest run --project sim test/sim/log-retention.test.ts
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/core/keys.js';
import { isRetired, pageEnd } from '../../lib/core/log/batch-index.js';
import { describeReport } from '../support/checker.js';
import { TOPIC, finish, sender } from '../support/scenario.js';
import { createSimWorld, failureMessage, runLogSimulation, seedSubset, seedsFor } from '../support/sim.js';
import { storageViolations } from '../support/storage.js';
import { makeRecords } from '../support/workload.js';

describe('retention under seeded faults', () => {
  const seeds = seedsFor(7000, 40);
  let expired = 0;

  it.each(seeds)('seed %i', async (seed) => {
    const r = await runLogSimulation({
      seed,
      writesPerProducer: 8,
      topicConfigs: { 'retention.ms': '4000' },
    });
    const clean = r.report.valid && r.storageViolations.length === 0 && r.unexpected.length === 0;
    expect(clean, failureMessage(r, 'test/sim/log-retention.test.ts')).toBe(true);
    expired += r.report.counts.expired;
  });

  it.skipIf(seedSubset())('expired records on the way', () => {
    expect(expired).toBeGreaterThan(seeds.length * 10);
  });
});

describe('a retention run whose index writes fail after it moved the log start', () => {
  it('has its leftovers finished by the next run, so their objects are collected', async () => {
    const world = createSimWorld({ seed: 31, faults: { rate: 0 } });
    await world.run(
      (async () => {
        await world.client.createTopic(TOPIC, 1, { configs: { 'retention.ms': '1000' } });
        const topicId = await world.topicId(TOPIC);
        const p = sender(world, 'json', 'p');
        for (let i = 0; i < 3; i++)
          await (await p.prepare(makeRecords(world.random, `old${i}`, 2))).attempt();
        await world.maintenance.indexTail(topicId, 0);
        await world.clock.advance(2_000);
        await (await p.prepare(makeRecords(world.random, 'new', 1))).attempt();
        world.injectors[0]!.failNext({ ops: ['batchWrite'], sk: keys.batchPrefix }, 'failBefore');
        await world.maintenance.run();
        const state = await world.memory.store.get(keys.partitionState(topicId, 0));
        expect(state?.['logStartOffset']).toBe(6);
        // The index page of the three old writes is still there, not retired.
        const below = () =>
          world.memory.store
            .dump()
            .filter((i) => i.sk.startsWith(keys.batchPrefix) && !isRetired(i) && pageEnd(i) <= 6)
            .map((i) => i.sk);
        expect(below()).toEqual([keys.batch(topicId, 0, 0).sk]);
        await world.maintenance.run();
        expect(below()).toEqual([]);
      })(),
    );
    const result = await world.run(finish(world, 1, { allowRetention: true }));
    expect(result.report.valid, describeReport(result.report)).toBe(true);
    expect(result.report.counts.expired).toBe(6);
    expect(storageViolations(result.storage)).toEqual([]);
    expect(result.storage.unreferenced).toEqual([]);
  });
});
