/**
 * The crash cases, one at a time and deterministic: a crash between the object write and the commit,
 * a crash between the commit and the answer, a produce stalled past the orphan grace period, and many
 * producers racing on one partition. Each ends with a full read, the history checker and the storage
 * invariants (DESIGN "Invariants" 1-4 and 6).
 */
import { describe, expect, it } from 'vitest';
import { describeReport } from '../support/checker.js';
import { SluiceError } from '../../sdk/errors.js';
import type { Kind } from '../support/scenario.js';
import { TOPIC, finish, sender } from '../support/scenario.js';
import { InterceptedObjectStore, gate } from '../support/seams.js';
import type { SimWorld } from '../support/sim.js';
import { SIM_ORPHAN_GRACE_MS, createSimWorld } from '../support/sim.js';
import { storageViolations } from '../support/storage.js';
import type { WorkloadContext } from '../support/workload.js';
import { makeRecords, runProducer } from '../support/workload.js';

const COMMIT = { ops: ['update'], sk: 'STATE' } as const;

const expectClean = (result: Awaited<ReturnType<typeof finish>>) => {
  expect(result.report.valid, describeReport(result.report)).toBe(true);
  expect(storageViolations(result.storage)).toEqual([]);
  expect(result.storage.unreferenced).toEqual([]);
};

const objectKeys = (world: SimWorld): string[] => world.memory.objectStores[0]!.keys();

describe('a crash after the object write and before the commit', () => {
  it.each<Kind>(['binary', 'json'])(
    'leaves an orphan that is collected only after the grace period, and no hole (%s)',
    async (kind) => {
      const world = createSimWorld({ seed: 1, faults: { rate: 0 } });
      await world.run(
        (async () => {
          await world.client.createTopic(TOPIC, 1);
          const topicId = await world.topicId(TOPIC);
          const p = sender(world, kind, 'p');
          const first = await p.prepare(makeRecords(world.random, 'first', 3));
          expect(await first.attempt()).toEqual([0, 1, 2]);
          const kept = objectKeys(world);

          world.injectors[0]!.failNext(COMMIT, 'failBefore');
          const crashed = await p.prepare(makeRecords(world.random, 'crashed', 2));
          await expect(crashed.attempt()).rejects.toBeInstanceOf(SluiceError);
          const orphan = objectKeys(world).filter((k) => !kept.includes(k));
          expect(orphan).toHaveLength(1);

          // The next write takes the next offset: the crashed one left no hole.
          const next = await p.prepare(makeRecords(world.random, 'next', 2));
          expect(await next.attempt()).toEqual([3, 4]);

          // Young orphans stay (their produce may still be committing); old ones go; referenced ones never.
          expect(await world.maintenance.collectOrphans(topicId, 1)).toBe(0);
          await world.clock.advance(SIM_ORPHAN_GRACE_MS + 1);
          expect(await world.maintenance.collectOrphans(topicId, 1)).toBe(1);
          expect(objectKeys(world)).not.toContain(orphan[0]);
          expect(objectKeys(world)).toEqual(expect.arrayContaining(kept));
        })(),
      );
      const result = await world.run(finish(world));
      expectClean(result);
      expect(result.finals[0]!.records.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4]);
    },
  );
});

type Retry = 'at once' | 'after the tail moved to the index' | 'after later commits and indexing';

describe('a crash after the commit and before the answer', () => {
  const cases: [Kind, 'failAfter' | 'dropResponse', Retry][] = [];
  for (const kind of ['binary', 'json'] as const)
    for (const fault of ['failAfter', 'dropResponse'] as const)
      for (const retry of [
        'at once',
        'after the tail moved to the index',
        'after later commits and indexing',
      ] as const)
        cases.push([kind, fault, retry]);

  it.each(cases)(
    'a %s retry after %s returns the original offsets and writes nothing (%s)',
    async (kind, fault, retry) => {
      const world = createSimWorld({ seed: 2, faults: { rate: 0 } });
      await world.run(
        (async () => {
          await world.client.createTopic(TOPIC, 1);
          const topicId = await world.topicId(TOPIC);
          const p = sender(world, kind, 'p');
          const other = sender(world, kind, 'other');
          await (await p.prepare(makeRecords(world.random, 'before', 2))).attempt();

          world.injectors[0]!.failNext(COMMIT, fault);
          const write = await p.prepare(makeRecords(world.random, 'crashed', 3));
          await expect(write.attempt()).rejects.toMatchObject({ status: fault === 'failAfter' ? 503 : 504 });

          if (retry === 'after later commits and indexing') {
            for (let i = 0; i < 6; i++)
              await (await other.prepare(makeRecords(world.random, `o${i}`, 1))).attempt();
          }
          if (retry !== 'at once') {
            await world.maintenance.indexTail(topicId, 0);
            // The original commit has left the partition item's tail: the retry must find it elsewhere.
            const state = await world.memory.store.get({ pk: `P#${topicId}#0`, sk: 'STATE' });
            expect(state?.['tailBase']).toBeGreaterThanOrEqual(5);
          }

          expect(await write.attempt()).toEqual([2, 3, 4]);
          // And once more, for good measure: still the same.
          expect(await write.attempt()).toEqual([2, 3, 4]);
        })(),
      );
      const result = await world.run(finish(world));
      expectClean(result);
      const values = result.finals[0]!.records.map((r) => r.value);
      expect(new Set(values).size).toBe(values.length);
    },
  );
});

describe('a produce stalled past the orphan grace period between its object write and its commit', () => {
  it.each<Kind>(['binary', 'json'])(
    'is never acknowledged with an object the collector deleted (%s)',
    async (kind) => {
      let hold: { promise: Promise<void>; open: () => void } | undefined;
      let reached: (() => void) | undefined;
      const world = createSimWorld({
        seed: 3,
        faults: { rate: 0 },
        // The object write lands, then its answer is held: the producer stalls (a GC pause, a suspended laptop).
        wrapObjectStore: (store) =>
          new InterceptedObjectStore(store, async (call, run) => {
            const result = await run();
            const held = hold;
            if (call.op === 'put' && held) {
              hold = undefined;
              reached?.();
              await held.promise;
            }
            return result;
          }),
      });
      let stalledOutcome: number[] | SluiceError | undefined;
      await world.run(
        (async () => {
          await world.client.createTopic(TOPIC, 1);
          const topicId = await world.topicId(TOPIC);
          const p = sender(world, kind, 'p');
          await (await p.prepare(makeRecords(world.random, 'before', 1))).attempt();

          const stall = gate();
          hold = stall;
          const atPut = new Promise<void>((resolve) => (reached = resolve));
          const write = await p.prepare(makeRecords(world.random, 'stalled', 2));
          const stalled = write.attempt().then(
            (offsets) => (stalledOutcome = offsets),
            (error: SluiceError) => (stalledOutcome = error),
          );
          await atPut;
          await world.clock.advance(SIM_ORPHAN_GRACE_MS + 1);
          await world.maintenance.collectOrphans(topicId, 1);
          stall.open();
          await stalled;
        })(),
      );
      // Either outcome is allowed (refused, or acknowledged with its object intact); the checks decide.
      expect(stalledOutcome).toBeDefined();
      const result = await world.run(finish(world));
      expectClean(result);
    },
  );
});

describe('many concurrent producers on one partition', () => {
  it.each([
    ['without faults', 0],
    ['with faults', 0.1],
  ] as const)(
    'keeps offsets dense and unique, each producer in order, every byte (%s)',
    async (_label, rate) => {
      const world = createSimWorld({ seed: 4, faults: { rate, maxDelayMs: 5 } });
      const ctx: WorkloadContext = {
        client: world.client,
        recorder: world.recorder,
        random: world.random,
        sleep: (ms) => world.clock.sleep(ms),
        topic: TOPIC,
        partitions: 1,
        stopped: () => false,
        now: () => world.clock.now(),
        unexpected: [],
      };
      world.setFaults(false);
      await world.run(world.client.createTopic(TOPIC, 1));
      world.setFaults(true);
      await world.run(
        Promise.all(
          Array.from({ length: 32 }, (_, i) =>
            runProducer(ctx, {
              kind: (['idempotent', 'keyed', 'idempotent', 'plain'] as const)[i % 4]!,
              name: `p${i}`,
              writes: 6,
              thinkMs: 0,
              partition: 0,
            }),
          ),
        ),
      );
      const result = await world.run(finish(world));
      expectClean(result);
      expect(ctx.unexpected).toEqual([]);
      const offsets = result.finals[0]!.records.map((r) => r.offset);
      expect(offsets).toEqual(offsets.map((_, i) => i));
      expect(result.report.counts.acked).toBeGreaterThan(32 * 6);
      if (rate === 0) expect(offsets.length).toBe(result.report.counts.acked);
    },
  );
});
