/**
 * Planted replication bugs the simulation and its checker must catch (a checker that passes broken
 * code is no checker): a commit without the ISR condition, and a high watermark taken from the
 * leader's LEO instead of the smallest LEO in the ISR. The same seeds are clean without the plant
 * (test/sim/replication-*.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, drive } from '../../lib/adapters/fault/index.js';
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { createSluice } from '../../functions/app.js';
import { readPartitionState } from '../../lib/core/log/context.js';
import { replicatePartition } from '../../lib/core/replication/replicator.js';
import type { MetadataStore, UpdateAction } from '../../lib/ports/metadata-store.js';
import { storageUnavailable } from '../../lib/ports/storage-errors.js';
import { runReplicationSimulation } from '../support/replication-sim.js';
import {
  InterceptedMetadataStore,
  InterceptedObjectStore,
  gate,
  isCommit,
  stripFromCommits,
} from '../support/seams.js';

const SEEDS = Array.from({ length: 40 }, (_, i) => 1 + i);

const caughtBy = async (plant: Parameters<typeof runReplicationSimulation>[0]['wrapStore']) => {
  const caught: number[] = [];
  const examples: string[] = [];
  for (const seed of SEEDS) {
    const r = await runReplicationSimulation({ seed, ...(plant ? { wrapStore: plant } : {}) });
    if (r.violations.length > 0) {
      caught.push(seed);
      examples.push(r.violations[0]!);
    }
  }
  return { caught, examples };
};

/**
 * A rejoin in the middle of an acks=all produce: s2 is out of the ISR and caught up; the producer has
 * written to [s0, s1] and is held before its commit while the replicator lets s2 back in. Then s0 and
 * s1 are lost and s2 must lead with every acknowledged record.
 */
const rejoinScenario = async (plant?: (store: MetadataStore) => MetadataStore) => {
  const clock = new ManualClock();
  const memory = new MemoryMetadataStore();
  const raw = [0, 1, 2].map((i) => new MemoryObjectStore(`s${i}`, undefined, clock));
  const down = new Set<string>();
  const hold = gate();
  let holdOn: string | undefined;
  const objectStores = raw.map(
    (store) =>
      new InterceptedObjectStore(store, async (call, run) => {
        if (down.has(store.id)) throw storageUnavailable(`store ${store.id} is down`);
        const result = await run();
        if (call.op === 'put' && holdOn === store.id) {
          holdOn = undefined;
          await hold.promise;
        }
        return result;
      }),
  );
  // Two processes (two Lambda containers): one produces, the other runs the replicator, so the
  // producer's cached leadership does not see the rejoin.
  const deployment = () =>
    createSluice({
      store: plant ? plant(memory) : memory,
      objectStores,
      clock,
      config: { clusterId: 'mutation', replicaLagTimeMaxMs: 400 },
    });
  const producer = deployment();
  const replicator = deployment();
  const send = (value: string) =>
    producer.producer.produce('t', {
      acks: 'all',
      records: [{ key: null, value: Buffer.from(value), headers: [], partition: 0 }],
    });
  return drive(
    clock,
    (async () => {
      await producer.catalog.create({
        name: 't',
        replicationFactor: 3,
        configs: { 'min.insync.replicas': '2' },
      });
      const topic = await producer.catalog.get('t');
      const state = () => readPartitionState(memory, topic, 0);
      const [leader, follower, late] = (await state()).replicas as [string, string, string];
      down.add(late);
      const first = await send('first');
      down.delete(late);
      const shrunk = (await state()).isr;
      holdOn = leader;
      const during = send('during');
      await clock.sleep(1);
      await replicatePartition(replicator.log, topic, 0);
      const joined = (await state()).isr;
      hold.open();
      const second = await during;
      const after = await state();
      const missing = after.tail.filter((e) => !raw[Number(late.slice(1))]!.keys().includes(e.o)).length;
      down.add(leader);
      down.add(follower);
      for (let pass = 0; pass < 3; pass++) await replicatePartition(replicator.log, topic, 0);
      const read = await replicator.fetcher
        .fetchRecords('t', 0, { offset: 0, maxBytes: 1 << 20, maxWaitMs: 0 })
        .then((r) => r.records.map((x) => Buffer.from(x.value!).toString()))
        .catch((e: unknown) => (e instanceof Error ? e.message : String(e)));
      const final = await state();
      return {
        first,
        second,
        shrunk,
        joined,
        after,
        missing,
        read,
        late,
        newLeader: final.leader,
        replicas: final.replicas,
      };
    })(),
  );
};

describe('mutation: the commit is not conditioned on the ISR it wrote to', () => {
  it('is clean with the condition: the write goes again to the grown ISR, which keeps both records through two lost stores', async () => {
    const r = await rejoinScenario();
    expect(r.shrunk).toEqual(r.replicas.slice(0, 2));
    expect(r.joined).toEqual(r.replicas);
    expect(r.second).toEqual([expect.objectContaining({ partition: 0, offset: 1 })]);
    expect(r.missing).toBe(0);
    expect(r.newLeader).toBe(r.late);
    expect(r.read).toEqual(['first', 'during']);
  });

  it('is caught without it: the rejoined store is in the ISR below the HW without the data, and the record is lost', async () => {
    const r = await rejoinScenario((store) => stripFromCommits(store, 'isr'));
    expect(r.joined).toEqual(r.replicas);
    expect(r.after.hw).toBe(2);
    expect(r.missing).toBe(1);
    expect(r.newLeader).toBe(r.late);
    expect(r.read).not.toEqual(['first', 'during']);
  });
});

describe('mutation: the high watermark is the leader LEO', () => {
  /** Every commit sets hw = nextOffset + n, as if the leader's LEO were committed. */
  const hwFromLeader = (
    store: Parameters<NonNullable<Parameters<typeof runReplicationSimulation>[0]['wrapStore']>>[0],
  ) =>
    new InterceptedMetadataStore(store, (call, run) => {
      if (!isCommit(call)) return run();
      const actions = call.actions!.filter((a) => !('set' in a && a.set === 'hw'));
      const span = actions.find(
        (a): a is UpdateAction & { add: number } => 'add' in a && a.set === 'nextOffset',
      )!.add;
      return store.update(
        call.key!,
        [...actions, { set: 'hw', add: span, from: 'nextOffset' }],
        call.options,
      ) as never;
    });

  it('is caught: reads past the true HW, then data under the HW missing from the ISR', async () => {
    const { caught, examples } = await caughtBy(hwFromLeader);
    expect(caught.length).toBeGreaterThan(SEEDS.length / 4);
    expect(examples.some((e) => /does not hold it|a consumer read/.test(e))).toBe(true);
  });
});
