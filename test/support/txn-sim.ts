/**
 * The transactions simulation: transactional producers running consume-transform-produce style
 * transactions (records into several partitions plus a group offset), crashing at random steps and
 * coming back as new instances (which fences the old one, whose zombie then tries to write), a
 * read_committed reader observing every partition meanwhile, and store faults (fail before, fail after
 * the write took effect, lost answers, delays) under every coordinator step, which crash it half way.
 * Seeded: a seed replays the same run. The checker (txn-checker.ts) judges the final log and the
 * reader's observations.
 */
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import {
  FaultInjector,
  FaultyMetadataStore,
  FaultyObjectStore,
  seededRandom,
} from '../../lib/adapters/fault/index.js';
import type { Random } from '../../lib/adapters/fault/index.js';
import type { Clock } from '../../lib/ports/clock.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import { createSluice } from '../../functions/app.js';
import type { Sluice } from '../../functions/app.js';
import {
  encodeRecordBatch,
  readBatchHeader,
  decodeRecordBatch,
  controlTypeOf,
} from '../../protocol/record-batch/index.js';
import type { ProducerIdAndEpoch } from '../../lib/core/transactions/index.js';

export const OUT = 'out';
export const IN = 'in';
export const PARTITIONS = 3;
const TIMEOUT_MS = 5_000;

class SimClock implements Clock {
  constructor(public time = 1_700_000_000_000) {}
  now(): number {
    return this.time;
  }
  async sleep(ms: number): Promise<void> {
    this.time += Math.max(0, ms);
    await new Promise((r) => setImmediate(r));
  }
}

/** What a producer was told about a transaction it tried to end. */
export interface TxnOutcome {
  tag: string;
  transactionalId: string;
  txnNo: number;
  acked: 'commit' | 'abort' | 'unknown';
}

export interface Observation {
  partition: number;
  highWatermark: number;
  lastStableOffset: number;
  records: { offset: number; value: string }[];
}

export interface ZombieWrite {
  partition: number;
  offset: number;
  producerEpoch: number;
}

export interface LoggedBatch {
  partition: number;
  baseOffset: number;
  lastOffset: number;
  producerId: number;
  producerEpoch: number;
  isTransactional: boolean;
  control?: 'COMMIT' | 'ABORT' | 'UNKNOWN';
  values: string[];
}

export interface SimResult {
  seed: number;
  outcomes: TxnOutcome[];
  observations: Observation[];
  /** Zombie calls that succeeded after their transactional.id had a newer instance. */
  zombieSuccesses: string[];
  log: LoggedBatch[];
  /** read_committed view of every partition after the run settled. */
  committedView: { partition: number; offset: number; value: string }[];
  /** Final committed offset of each transactional.id's group (topic `in`, partition 0). */
  groupOffsets: Record<string, number | undefined>;
  faults: number;
}

export interface SimOptions {
  seed: number;
  /** Wraps the (faulty) metadata store: planted bugs live here. */
  wrapStore?: (store: MetadataStore, sluice: () => Sluice) => MetadataStore;
  faultRate?: number;
  producers?: number;
  transactions?: number;
  /**
   * How the producers end their transactions: 2 (default) as KIP-890 clients, the epoch bumped at every
   * end; 1 as Kafka clients whose EndTxn is v0-v4, one epoch for every transaction and sequences going on.
   */
  transactionVersion?: 1 | 2;
  /** The tail's move runs after the produce's answer, as deployed (LogOptions.materializeAfterAck). */
  materializeAfterAck?: boolean;
}

export const runTransactionSim = async (options: SimOptions): Promise<SimResult> => {
  const { seed } = options;
  const random = seededRandom(seed * 7919 + 1);
  const clock = new SimClock();
  const memory = new MemoryMetadataStore();
  const rate = options.faultRate ?? 0.03;
  const metaFaults = new FaultInjector({ seed, rate, maxDelayMs: 30 }, clock);
  const objectFaults = new FaultInjector({ seed: seed + 1, rate, maxDelayMs: 30 }, clock);
  const faulty = new FaultyMetadataStore(memory, metaFaults);
  // The crash of the coordinator "at every step": across seeds, the n-th metadata write fails once.
  metaFaults.failNext({ ops: ['put', 'update', 'transact'] }, seed % 2 === 0 ? 'failBefore' : 'failAfter', {
    skip: seed % 40,
  });
  const ref: { sluice?: Sluice } = {};
  const store = options.wrapStore ? options.wrapStore(faulty, () => ref.sluice!) : faulty;
  const objects = new FaultyObjectStore(new MemoryObjectStore('s0', undefined, clock), objectFaults);
  let id = 0;
  const sluice = createSluice({
    store,
    objectStores: [objects],
    clock,
    random,
    config: {
      clusterId: 'sim',
      topicCacheTtlMs: 600_000,
      tailFlushEntries: 4,
      transactionMaxTimeoutMs: 60_000,
      ...(options.materializeAfterAck ? { materializeAfterAck: true } : {}),
    },
    newId: () => `o${seed}-${++id}`,
  });
  ref.sluice = sluice;
  metaFaults.enabled = false;
  objectFaults.enabled = false;
  await sluice.catalog.create({ name: OUT, partitions: PARTITIONS, replicationFactor: 1, configs: {} });
  await sluice.catalog.create({ name: IN, partitions: 1, replicationFactor: 1, configs: {} });
  metaFaults.enabled = true;
  objectFaults.enabled = true;

  const outcomes: TxnOutcome[] = [];
  const observations: Observation[] = [];
  const zombieSuccesses: string[] = [];
  const producers = options.producers ?? 2;
  const transactions = options.transactions ?? 4;
  let running = producers;

  const actor = async (transactionalId: string) => {
    const tc = sluice.transactions;
    let session: ProducerIdAndEpoch | undefined;
    let zombie: ProducerIdAndEpoch | undefined;
    const version = options.transactionVersion ?? 2;
    // Per partition, the next sequence of this session's epoch (a bumped epoch starts again at 0).
    let sequences = new Map<number, number>();
    for (let txnNo = 1; txnNo <= transactions; txnNo++) {
      const tag = `${transactionalId}|${txnNo}`;
      const outcome: TxnOutcome = { tag, transactionalId, txnNo, acked: 'unknown' };
      outcomes.push(outcome);
      try {
        if (!session) {
          const before = session;
          session = await retrying(() => tc.initProducerId(transactionalId, TIMEOUT_MS), clock);
          sequences = new Map();
          void before;
        }
        const s = session;
        const parts = pickPartitions(random);
        await tc.addPartitions(
          transactionalId,
          s,
          parts.map((partition) => ({ topic: OUT, partition })),
        );
        for (const partition of parts) {
          const values = [`${tag}|${partition}|a`, `${tag}|${partition}|b`].slice(
            0,
            1 + Math.floor(random() * 2),
          );
          const body = encodeRecordBatch(
            values.map((v) => ({ key: Buffer.from(v), value: Buffer.from(v), timestamp: clock.now() })),
            {
              producerId: s.producerId,
              producerEpoch: s.producerEpoch,
              baseSequence: sequences.get(partition) ?? 0,
              isTransactional: true,
            },
          );
          await sluice.producer.produceBatches(OUT, partition, body, 'all');
          sequences.set(partition, (sequences.get(partition) ?? 0) + values.length);
        }
        const groupId = `g-${transactionalId}`;
        await tc.addOffsets(transactionalId, s, groupId);
        await tc.txnOffsetCommit(transactionalId, s, {
          groupId,
          memberId: null,
          generationId: -1,
          offsets: [{ topic: IN, partition: 0, offset: txnNo, metadata: tag }],
        });
        if (random() < 0.15) throw new Error('producer crash before EndTxn');
        const commit = random() < 0.75;
        session = await tc.endTxn(transactionalId, s, commit, version);
        if (session.producerEpoch !== s.producerEpoch) sequences = new Map();
        outcome.acked = commit ? 'commit' : 'abort';
      } catch {
        // Any failure: this instance dies; a new one takes over the transactional.id.
        zombie = session;
        session = undefined;
      }
      await clock.sleep(Math.floor(random() * 50));
      if (zombie && !session) {
        // Let the new instance come up, then the zombie tries to write and to commit.
        try {
          session = await retrying(() => tc.initProducerId(transactionalId, TIMEOUT_MS), clock);
          sequences = new Map();
        } catch {
          continue;
        }
        const z = zombie;
        zombie = undefined;
        const partition = Math.floor(random() * PARTITIONS);
        const value = `zombie|${transactionalId}|${txnNo}`;
        const body = encodeRecordBatch(
          [{ key: Buffer.from(value), value: Buffer.from(value), timestamp: clock.now() }],
          {
            producerId: z.producerId,
            producerEpoch: z.producerEpoch,
            baseSequence: 0,
            isTransactional: true,
          },
        );
        await sluice.producer.produceBatches(OUT, partition, body, 'all').then(
          () => zombieSuccesses.push(`${value} produce`),
          () => undefined,
        );
        await tc.addPartitions(transactionalId, z, [{ topic: OUT, partition }]).then(
          () => zombieSuccesses.push(`${value} AddPartitionsToTxn`),
          () => undefined,
        );
        await tc.endTxn(transactionalId, z, true, version).then(
          () => zombieSuccesses.push(`${value} EndTxn`),
          () => undefined,
        );
      }
    }
    running--;
  };

  const reader = async () => {
    while (running > 0) {
      for (let partition = 0; partition < PARTITIONS; partition++) {
        try {
          const f = await sluice.fetcher.fetchRecords(OUT, partition, {
            offset: 0,
            maxBytes: 1 << 20,
            maxWaitMs: 0,
            isolationLevel: 'read_committed',
          });
          observations.push({
            partition,
            highWatermark: f.highWatermark,
            lastStableOffset: f.lastStableOffset!,
            records: f.records.map((r) => ({ offset: r.offset, value: Buffer.from(r.value!).toString() })),
          });
        } catch {
          // A failed read observes nothing.
        }
      }
      await clock.sleep(5 + Math.floor(random() * 20));
    }
  };

  await Promise.all([...Array.from({ length: producers }, (_, i) => actor(`tx${i}`)), reader()]);

  // Settle: no more faults; past every timeout, maintenance aborts what is open and finishes what stopped.
  metaFaults.enabled = false;
  objectFaults.enabled = false;
  clock.time += 61_000;
  await sluice.transactions.expire();
  await sluice.maintenance.run();

  const log: LoggedBatch[] = [];
  const committedView: SimResult['committedView'] = [];
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const all = await sluice.fetcher.fetchBatches(OUT, partition, {
      offset: 0,
      maxBytes: 64 << 20,
      maxWaitMs: 0,
    });
    for (const bytes of all.batches) {
      const h = readBatchHeader(bytes, 0);
      const values = h.isControl
        ? []
        : decodeRecordBatch(bytes).records.map((r) => Buffer.from(r.value!).toString());
      log.push({
        partition,
        baseOffset: h.baseOffset,
        lastOffset: h.baseOffset + h.lastOffsetDelta,
        producerId: h.producerId,
        producerEpoch: h.producerEpoch,
        isTransactional: h.isTransactional,
        ...(h.isControl ? { control: controlTypeOf(bytes, h) } : {}),
        values,
      });
    }
    const committed = await sluice.fetcher.fetchRecords(OUT, partition, {
      offset: 0,
      maxBytes: 64 << 20,
      maxWaitMs: 0,
      isolationLevel: 'read_committed',
    });
    committedView.push(
      ...committed.records.map((r) => ({
        partition,
        offset: r.offset,
        value: Buffer.from(r.value!).toString(),
      })),
    );
  }
  const groupOffsets: Record<string, number | undefined> = {};
  for (let i = 0; i < producers; i++) {
    const { offsets } = await sluice.groups.fetchOffsets(`g-tx${i}`);
    groupOffsets[`tx${i}`] = offsets.find((o) => o.topic === IN && o.partition === 0)?.offset;
  }
  const faults =
    Object.values(metaFaults.counts).reduce((a, b) => a + b, 0) +
    Object.values(objectFaults.counts).reduce((a, b) => a + b, 0);
  metaFaults.dispose();
  objectFaults.dispose();
  return { seed, outcomes, observations, zombieSuccesses, log, committedView, groupOffsets, faults };
};

const pickPartitions = (random: Random): number[] => {
  const all = Array.from({ length: PARTITIONS }, (_, i) => i).filter(() => random() < 0.6);
  return all.length > 0 ? all : [Math.floor(random() * PARTITIONS)];
};

const retrying = async <T>(call: () => Promise<T>, clock: Clock): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= 8) throw error;
      await clock.sleep(20 * attempt);
    }
  }
};
