/**
 * A seeded simulation of replication under store faults. Three in-memory stores, each behind a switch
 * that makes it down (every call fails), slow (every call waits) or lossy (writes fail at random, some
 * after taking effect); producers with acks=all and acks=1, a consumer, and the replicator on a timer,
 * all on a manual clock. After the faulty phase every store heals, the replicator catches up, then up to
 * N-1 stores are lost for good (wiped and down) while producers go on, and the survivors are read.
 *
 * The observer checks, on every partition state the metadata store holds after a write:
 * - every ISR store physically holds every batch below the HW (HW = min LEO(ISR) with real data);
 * - the HW never moves backwards; two different leaders never hold one epoch.
 * Every fetch is checked against the largest HW observed so far (no read past the HW), and the final
 * read must hold every acknowledged acks=all record at its offset, and every record a consumer saw.
 */
import { createSluice } from '../../functions/app.js';
import type { Sluice } from '../../functions/app.js';
import { ManualClock, drive, seededRandom } from '../../lib/adapters/fault/index.js';
import type { Random } from '../../lib/adapters/fault/random.js';
import { randomInt } from '../../lib/adapters/fault/random.js';
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { keys } from '../../lib/core/keys.js';
import type { PartitionState } from '../../lib/core/log/partition-state.js';
import { asPartitionState, tailOffsets } from '../../lib/core/log/partition-state.js';
import { replicatePartition } from '../../lib/core/replication/replicator.js';
import type { Acks } from '../../lib/core/replication/commit-clauses.js';
import { isSluiceError } from '../../protocol/errors.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import { storageUnavailable } from '../../lib/ports/storage-errors.js';
import { InterceptedMetadataStore, InterceptedObjectStore } from './seams.js';

export type StoreMode = 'up' | 'down' | 'slow' | 'lossy';

export interface ReplicationSimOptions {
  seed: number;
  /** Stores lost for good at the end (0..N-1); default seeded. */
  lose?: number;
  wrapStore?: (store: MetadataStore) => MetadataStore;
  requests?: number;
}

export interface ReplicationSimResult {
  seed: number;
  acked: { all: number; one: number };
  lost: number;
  refusedNotEnoughReplicas: number;
  /** Partition-state writes made while a replicator pass and an acks=all produce were both in flight. */
  overlaps: number;
  elections: number;
  shrinks: number;
  expands: number;
  violations: string[];
}

const TOPIC = 'r';
const STORES = 3;
const LAG_MS = 400;

interface Acked {
  offset: number;
  value: string;
  acks: Acks;
}

export const runReplicationSimulation = async (
  options: ReplicationSimOptions,
): Promise<ReplicationSimResult> => {
  const random: Random = seededRandom(options.seed);
  const clock = new ManualClock();
  const memory = new MemoryMetadataStore();
  const raw = Array.from({ length: STORES }, (_, i) => new MemoryObjectStore(`s${i}`, undefined, clock));
  const modes: StoreMode[] = raw.map(() => 'up');
  const lost = new Set<number>();
  const violations: string[] = [];
  const note = (v: string) => {
    if (violations.length < 20) violations.push(v);
  };
  const objectStores = raw.map(
    (store, i) =>
      new InterceptedObjectStore(store, async (call, run) => {
        const mode = lost.has(i) ? 'down' : modes[i]!;
        // Jitter on every call, so the replicator's GET → PUT → LEO update and a producer's PUTs →
        // commit interleave in every order the seeds reach (without it, each ran to its next await
        // in a fixed order and the copy never overlapped an acks=all commit).
        if (random() < 0.5) await clock.sleep(randomInt(random, 1, 30));
        if (mode === 'down') throw storageUnavailable(`store s${i} is down`);
        if (mode === 'slow') await clock.sleep(LAG_MS + randomInt(random, 0, LAG_MS));
        if (mode === 'lossy' && call.op === 'put' && random() < 0.3) {
          if (random() < 0.5) throw storageUnavailable(`store s${i} lost the write`);
          await run();
          throw storageUnavailable(`store s${i} took the write, then failed`);
        }
        return run();
      }),
  );

  // The observer: checks every state the table holds after a write to a partition item.
  let topicId = '';
  let maxHw = 0;
  const leaders = new Map<number, string>();
  const counts = { elections: 0, shrinks: 0, expands: 0 };
  let lastIsr: string[] | undefined;
  const observe = async () => {
    const item = await memory.get(keys.partitionState(topicId, 0));
    if (!item) return;
    const state = asPartitionState(item);
    if (state.hw < maxHw) note(`HW moved back from ${maxHw} to ${state.hw} at epoch ${state.leaderEpoch}`);
    maxHw = Math.max(maxHw, state.hw);
    const leader = leaders.get(state.leaderEpoch);
    if (leader !== undefined && leader !== state.leader)
      note(`epoch ${state.leaderEpoch} had two leaders: ${leader} and ${state.leader}`);
    if (leader === undefined && state.leaderEpoch > 0) counts.elections++;
    leaders.set(state.leaderEpoch, state.leader);
    if (lastIsr) {
      if (state.isr.length < lastIsr.length) counts.shrinks++;
      if (state.isr.length > lastIsr.length) counts.expands++;
    }
    lastIsr = state.isr;
    checkHeld(state);
  };
  const checkHeld = (state: PartitionState) => {
    const offsets = tailOffsets(state);
    state.tail.forEach((entry, i) => {
      if (offsets[i]! + entry.n > state.hw) return;
      for (const s of state.isr) {
        const index = Number(s.slice(1));
        if (lost.has(index)) continue;
        if (!raw[index]!.keys().includes(entry.o))
          note(`offset ${offsets[i]} is below the HW ${state.hw} but in-sync store ${s} does not hold it`);
      }
    });
  };
  /** In-flight replicator passes and acks=all produce requests, and the commits made while both ran. */
  const inFlight = { replicating: 0, ackAll: 0 };
  let overlaps = 0;
  const observed: MetadataStore = new InterceptedMetadataStore(memory, async (call, run) => {
    const stateWrite =
      topicId !== '' && (call.op === 'update' || call.op === 'transact') && call.key?.sk !== 'META';
    if (stateWrite && random() < 0.5) await clock.sleep(randomInt(random, 1, 20));
    if (stateWrite && inFlight.replicating > 0 && inFlight.ackAll > 0) overlaps++;
    const result = await run();
    if (topicId !== '' && (call.op === 'update' || call.op === 'transact') && call.key?.sk !== 'META')
      await observe();
    return result;
  });
  const sluice: Sluice = createSluice({
    store: options.wrapStore ? options.wrapStore(observed) : observed,
    objectStores,
    clock,
    config: {
      clusterId: 'sim',
      tailFlushEntries: 1_000_000,
      pollIntervalMs: 20,
      replicaLagTimeMaxMs: LAG_MS,
    },
    random,
    newId: (() => {
      let n = 0;
      return () => `${options.seed.toString(36)}-${(n++).toString(36).padStart(6, '0')}`;
    })(),
  });

  const acked: Acked[] = [];
  const seen = new Map<number, string>();
  let refused = 0;
  let done = false;
  const requests = options.requests ?? 10;

  const produce = async (name: string, acks: Acks) => {
    for (let i = 0; i < requests; i++) {
      const values = Array.from({ length: randomInt(random, 1, 3) }, (_, k) => `${name}-${i}-${k}`);
      for (let attempt = 0; attempt < 6; attempt++) {
        try {
          if (acks === 'all') inFlight.ackAll++;
          const results = await sluice.producer
            .produce(TOPIC, {
              acks,
              records: values.map((v) => ({ key: null, value: Buffer.from(v), headers: [], partition: 0 })),
            })
            .finally(() => {
              if (acks === 'all') inFlight.ackAll--;
            });
          const errors = results.filter((r) => 'error' in r);
          if (errors.length > 0) throw Object.assign(new Error('partition error'), { result: errors[0] });
          results.forEach((r, k) => {
            if ('offset' in r) acked.push({ offset: r.offset, value: values[k]!, acks });
          });
          break;
        } catch (error) {
          const code = isSluiceError(error)
            ? error.code
            : ((error as { result?: { error: { code: string } } }).result?.error.code ?? 'unknown');
          if (code === 'NOT_ENOUGH_REPLICAS') refused++;
          await clock.sleep(randomInt(random, 20, 150));
        }
      }
      await clock.sleep(randomInt(random, 5, 40));
    }
  };
  const consume = async () => {
    let offset = 0;
    while (!done) {
      try {
        const r = await sluice.fetcher.fetchRecords(TOPIC, 0, { offset, maxBytes: 4096, maxWaitMs: 200 });
        for (const record of r.records) {
          if (record.offset >= maxHw) note(`fetch returned offset ${record.offset} with the HW at ${maxHw}`);
          seen.set(record.offset, Buffer.from(record.value!).toString());
        }
        offset = r.nextOffset;
      } catch {
        await clock.sleep(50);
      }
    }
  };
  const replicate = async () => {
    while (!done) {
      inFlight.replicating++;
      await replicatePartition(sluice.log, await sluice.catalog.get(TOPIC), 0)
        .catch(() => undefined)
        .finally(() => inFlight.replicating--);
      await clock.sleep(100);
    }
  };
  const faults = async () => {
    for (let t = 0; t < 5; t++) {
      await clock.sleep(randomInt(random, 50, 300));
      const i = randomInt(random, 0, STORES - 1);
      modes[i] = (['down', 'slow', 'lossy'] as const)[randomInt(random, 0, 2)]!;
      await clock.sleep(randomInt(random, 100, 3 * LAG_MS));
      modes[i] = 'up';
    }
  };

  await drive(
    clock,
    (async () => {
      await sluice.catalog.create({
        name: TOPIC,
        partitions: 1,
        replicationFactor: STORES,
        configs: { 'min.insync.replicas': '2' },
      });
      topicId = (await sluice.catalog.get(TOPIC)).topicId;
      const background = Promise.all([consume(), replicate()]);
      await Promise.all([produce('a', 'all'), produce('b', 'all'), produce('c', '1'), faults()]);
      // Heal, let the replicator catch every follower up, then lose up to N-1 stores for good.
      modes.fill('up');
      await clock.sleep(4 * LAG_MS);
      const lose = options.lose ?? randomInt(random, 0, STORES - 1);
      const order = [0, 1, 2].sort(() => random() - 0.5);
      for (const i of order.slice(0, lose)) {
        lost.add(i);
        await raw[i]!.delete(raw[i]!.keys());
      }
      await Promise.all([produce('d', 'all'), clock.sleep(4 * LAG_MS)]);
      done = true;
      await background;
    })(),
  );

  // The survivors' log: every acknowledged acks=all record, and everything consumers saw, in place.
  const final = new Map<number, string>();
  await drive(
    clock,
    (async () => {
      let offset = 0;
      for (;;) {
        const r = await sluice.fetcher.fetchRecords(TOPIC, 0, { offset, maxBytes: 1 << 20, maxWaitMs: 0 });
        for (const record of r.records) final.set(record.offset, Buffer.from(record.value!).toString());
        if (r.nextOffset >= r.highWatermark) break;
        offset = r.nextOffset;
      }
    })(),
  ).catch((error: unknown) =>
    note(`final read failed: ${error instanceof Error ? error.message : String(error)}`),
  );
  let lostCount = 0;
  for (const a of acked) {
    if (a.acks === 'all' && final.get(a.offset) !== a.value) {
      lostCount++;
      note(`acks=all record ${a.value} at offset ${a.offset} is ${final.get(a.offset) ?? 'missing'}`);
    }
  }
  for (const [offset, value] of seen) {
    if (final.get(offset) !== value)
      note(
        `a consumer read ${value} at offset ${offset}; the log now holds ${final.get(offset) ?? 'nothing'}`,
      );
  }
  return {
    seed: options.seed,
    acked: {
      all: acked.filter((a) => a.acks === 'all').length,
      one: acked.filter((a) => a.acks === '1').length,
    },
    lost: lostCount,
    refusedNotEnoughReplicas: refused,
    overlaps,
    ...counts,
    violations,
  };
};
