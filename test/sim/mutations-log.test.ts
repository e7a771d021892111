/**
 * Mutation checks: plant a bug at a seam (a store decorator that rewrites commit conditions, a spy that
 * answers before the commit) and show that the checker or the storage invariants report it, while the
 * same scenario without the bug is clean. A checker that passes broken code is no checker.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { keys } from '../../lib/core/keys.js';
import { splitBatches } from '../../protocol/record-batch/index.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import { describeReport } from '../support/checker.js';
import { SluiceError } from '../../sdk/errors.js';
import type { Kind } from '../support/scenario.js';
import { TOPIC, finish, sender } from '../support/scenario.js';
import { InterceptedObjectStore, stripFromCommits } from '../support/seams.js';
import type { SimWorld } from '../support/sim.js';
import { createSimWorld, runLogSimulation } from '../support/sim.js';
import { storageViolations } from '../support/storage.js';
import { makeRecords } from '../support/workload.js';
import { stateAttr } from '../../lib/core/log/partition-codec.js';

const COMMIT = { ops: ['update'], sk: 'STATE' } as const;

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * A leader election in the middle of a produce: the partition has replicas s0 and s1 with only s0 in
 * sync; the producer has read leadership (epoch 0, ISR [s0]); just before its object write, s1 catches
 * up, s0 fails and s1 becomes leader at epoch 1. The producer's object lands on s0 only.
 */
const electionScenario = async (kind: Kind, plant: ((store: MetadataStore) => MetadataStore) | undefined) => {
  let armed = false;
  const world: SimWorld = createSimWorld({
    seed: 11,
    faults: { rate: 0 },
    storeCount: 2,
    ...(plant ? { wrapStore: plant } : {}),
    wrapObjectStore: (store) =>
      store.id !== 's0'
        ? store
        : new InterceptedObjectStore(store, async (call, run) => {
            if (call.op === 'put' && armed) {
              armed = false;
              await elect();
            }
            return run();
          }),
  });
  const elect = async () => {
    const [s0, s1] = world.memory.objectStores;
    for (const key of s0!.keys()) await s1!.put(key, await s0!.get(key));
    const topicId = await world.topicId(TOPIC);
    await world.memory.store.update(keys.partitionState(topicId, 0), [
      { set: 'leaderEpoch', add: 1 },
      { set: 'leader', value: 's1' },
      { set: 'isr', value: ['s1'] },
      { set: [stateAttr.logEndOffsets, 's1'], copyOf: 'nextOffset' },
    ]);
  };
  const outcome = await world.run(
    (async () => {
      await world.client.createTopic(TOPIC, 1, { replicationFactor: 2 });
      const topicId = await world.topicId(TOPIC);
      await world.memory.store.update(keys.partitionState(topicId, 0), [{ set: 'isr', value: ['s0'] }]);
      const p = sender(world, kind, 'p');
      await (await p.prepare(makeRecords(world.random, 'before', 2))).attempt();
      armed = true;
      const during = await p.prepare(makeRecords(world.random, 'during', 2));
      const first = await during.attempt().catch((e: unknown) => e);
      // The client retries a definite failure too (FENCED_LEADER_EPOCH is retriable).
      if (first instanceof SluiceError) await during.attempt();
      const after = await (await p.prepare(makeRecords(world.random, 'after', 2))).attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      // Without the fence the stale commit damages the partition item and later writes fail.
      if (!plant && after !== undefined) throw after;
      return first;
    })(),
  );
  return { first: outcome, result: await world.run(finish(world)) };
};

describe('mutation: the commit does not check the leader epoch', () => {
  it.each<Kind>(['binary', 'json'])(
    'is clean with the check: the fenced write is written again to the new leader and committed (%s)',
    async (kind) => {
      const { first, result } = await electionScenario(kind, undefined);
      expect(first).not.toBeInstanceOf(SluiceError);
      expect(result.report.valid, describeReport(result.report)).toBe(true);
      expect(storageViolations(result.storage)).toEqual([]);
    },
  );

  it.each<Kind>(['binary', 'json'])(
    'is caught without it: acknowledged records lost, index entries dangling (%s)',
    async (kind) => {
      // The ISR condition fences this write too (ISR [s0] became [s1]), so both must go.
      const { first, result } = await electionScenario(kind, (store) =>
        stripFromCommits(stripFromCommits(store, 'leaderEpoch'), 'isr'),
      );
      expect(first).not.toBeInstanceOf(SluiceError);
      expect(result.report.counts.lost).toBeGreaterThan(0);
      expect(result.storage.dangling.length).toBeGreaterThan(0);
      expect(result.storage.dangling[0]).toMatch(/missing from s1/);
    },
  );
});

describe('mutation: the commit does not check the producer sequence', () => {
  const retriedBatch = async (plant: ((store: MetadataStore) => MetadataStore) | undefined) => {
    const world = createSimWorld({ seed: 12, faults: { rate: 0 }, ...(plant ? { wrapStore: plant } : {}) });
    await world.run(
      (async () => {
        await world.client.createTopic(TOPIC, 1);
        const p = sender(world, 'binary', 'p');
        await (await p.prepare(makeRecords(world.random, 'before', 1))).attempt();
        world.injectors[0]!.failNext(COMMIT, 'failAfter');
        const write = await p.prepare(makeRecords(world.random, 'retried', 2));
        await expect(write.attempt()).rejects.toMatchObject({ status: 503 });
        await write.attempt();
      })(),
    );
    return world.run(finish(world));
  };

  it('is clean with the check: the retried batch gets its original offsets', async () => {
    const result = await retriedBatch(undefined);
    expect(result.report.valid, describeReport(result.report)).toBe(true);
    expect(result.finals[0]!.records).toHaveLength(3);
  });

  it('is caught without it: the retried idempotent batch is duplicated', async () => {
    const result = await retriedBatch((store) => stripFromCommits(store, stateAttr.producers));
    expect(result.report.counts.duplicates).toBe(2);
    expect(result.report.examples.duplicates?.[0]).toMatchObject({ idempotent: true, offsets: [1, 3] });
  });

  it('is caught under seeded faults too', async () => {
    let duplicates = 0;
    for (const seed of [1, 2, 3, 4, 5]) {
      const r = await runLogSimulation({
        seed,
        producers: { idempotent: 4 },
        writesPerProducer: 6,
        faults: { rate: 0.15, ops: ['update'], sk: 'STATE', kinds: { failAfter: 1, dropResponse: 1 } },
        world: { wrapStore: (store) => stripFromCommits(store, stateAttr.producers) },
      });
      duplicates += r.report.counts.duplicates;
    }
    expect(duplicates).toBeGreaterThan(0);
  });
});

describe('mutation: the produce is acknowledged before its commit', () => {
  /** Answers with the offsets the batch would get, then commits in the background. */
  const ackBeforeCommit = (world: SimWorld) => {
    const producer = world.sluice.producer;
    const real = producer.produceBatches.bind(producer);
    vi.spyOn(producer, 'produceBatches').mockImplementation(async (topic, partition, body, acks) => {
      const topicId = await world.topicId(topic);
      const state = await world.sluice.log.store.get(keys.partitionState(topicId, partition), {
        consistent: true,
      });
      const baseOffset = state!['nextOffset'] as number;
      const span = splitBatches(body).reduce((n, b) => n + b.header.lastOffsetDelta + 1, 0);
      void real(topic, partition, body, acks).catch(() => undefined);
      return { baseOffset, lastOffset: baseOffset + span - 1, logAppendTime: -1, logStartOffset: 0 };
    });
  };

  const scenario = async (planted: boolean) => {
    const world = createSimWorld({ seed: 13, faults: { rate: 0 } });
    const answered = await world.run(
      (async () => {
        await world.client.createTopic(TOPIC, 1);
        const p = sender(world, 'binary', 'p');
        await (await p.prepare(makeRecords(world.random, 'first', 1))).attempt();
        if (planted) ackBeforeCommit(world);
        world.injectors[0]!.failNext(COMMIT, 'failBefore');
        return (await p.prepare(makeRecords(world.random, 'doomed', 2))).attempt().catch((e: unknown) => e);
      })(),
    );
    return { answered, result: await world.run(finish(world)) };
  };

  it('is clean when the answer waits for the commit: the failure is reported, nothing is lost', async () => {
    const { answered, result } = await scenario(false);
    expect(answered).toBeInstanceOf(SluiceError);
    expect(result.report.valid, describeReport(result.report)).toBe(true);
  });

  it('is caught when it does not: acknowledged records are lost', async () => {
    const { answered, result } = await scenario(true);
    expect(answered).toEqual([1, 2]);
    expect(result.report.counts.lost).toBe(2);
    expect(result.report.examples.lost?.[0]).toMatchObject({ offset: 1 });
  });

  it('is caught under seeded faults and concurrency too', async () => {
    let violations = 0;
    for (const seed of [1, 2, 3]) {
      const r = await runLogSimulation({
        seed,
        producers: { idempotent: 4 },
        writesPerProducer: 5,
        during: async (world) => ackBeforeCommit(world),
      });
      violations += r.report.counts.lost + r.report.counts.inconsistentOffsets + r.report.counts.staleReads;
    }
    expect(violations).toBeGreaterThan(0);
  });
});
