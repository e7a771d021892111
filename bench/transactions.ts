/**
 * `npm run bench:transactions`: what a Kafka transaction costs on Sluice, in simulated time under an
 * AWS latency model (as bench/latency-sim.ts: the SDK, the real routes and the core on in-memory
 * stores that wait by the model on a manual clock, so only the model's waits take time). Modelled,
 * not AWS measurements.
 *
 * 1. Per transaction with one 1 KiB record into each of N = 1, 4, 16 partitions (RF=3, acks=all) and
 *    one consumer offset: commitTransaction latency p50/p99 and the whole transaction's, and the
 *    DynamoDB requests and S3 PUTs each transaction makes (counted beneath the model).
 * 2. A consume-transform-produce loop over one partition, B records per iteration: the transactional
 *    loop (read_committed, sendOffsetsToTransaction, commit) against the idempotent one (send, then
 *    commit the offsets with OffsetCommit), in records per simulated second.
 *
 * 3. Streams' exactly_once_v2 commit (streams/runtime/eos.ts: one TransactWriteItems with the lease, the
 *    state and an outbox item, then the outbox produced with an Idempotency-Key and deleted) of one
 *    1 KiB record into each of N partitions, for docs/design.md's comparison: latency and requests per
 *    commit.
 *
 * Flags: --model express|standard (express), --transactions N (100 per size), --records R (2000 per
 * loop), --batch B (100), --seed N (1).
 */
import { pathToFileURL } from 'node:url';
import { storeId } from '../lib/config/environment.js';
import { createSluice } from '../functions/app.js';
import { ManualClock, macrotask } from '../lib/adapters/fault/index.js';
import type { LatencyModelName } from '../lib/adapters/latency/index.js';
import { latencyModels, withLatency } from '../lib/adapters/latency/index.js';
import { MemoryMetadataStore } from '../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import type { MetadataStore } from '../lib/ports/metadata-store.js';
import type { ObjectStore } from '../lib/ports/object-store.js';
import { SluiceClient } from '../sdk/client.js';
import { ExactlyOnceCommitter } from '../streams/runtime/eos.js';
import { MetadataStateBackend } from '../streams/state/metadata-backend.js';
import { TaskStores } from '../streams/state/task-stores.js';
import { routerFetch } from '../test/support/router-fetch.js';
import { flags, modelFlag, numberFlag } from './flags.js';
import { round, summarize } from './stats.js';

const STEP_MS = 0.25;
const TURNS_PER_STEP = 8;
const RECORD = new Uint8Array(1024).fill(7);

const settle = async () => {
  for (let i = 0; i < TURNS_PER_STEP; i++) await macrotask();
};

/** Runs `work` while moving the clock, until it settles. */
const driven = async <T>(clock: ManualClock, work: Promise<T>): Promise<T> => {
  let done = false;
  const tracked = work.finally(() => (done = true));
  tracked.catch(() => undefined);
  while (!done) {
    await clock.advance(STEP_MS);
    await settle();
  }
  return tracked;
};

/** Counts the calls made on a store, by method name, beneath the latency model. */
const counted = <T extends object>(inner: T, counts: Map<string, number>): T =>
  new Proxy(inner, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        counts.set(String(name), (counts.get(String(name)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });

const METADATA_CALLS = ['get', 'put', 'update', 'delete', 'query', 'transact', 'batchWrite'];

const world = async (model: LatencyModelName, seed: number) => {
  const clock = new ManualClock(1_700_000_000_000);
  const dynamodb = new Map<string, number>();
  const s3 = new Map<string, number>();
  const storage = withLatency(
    latencyModels[model],
    {
      store: counted<MetadataStore>(new MemoryMetadataStore(), dynamodb),
      objectStores: [0, 1, 2].map((i) =>
        counted<ObjectStore>(new MemoryObjectStore(storeId(i), undefined, clock), s3),
      ),
    },
    seed,
    clock,
  );
  const sluice = createSluice({
    ...storage,
    clock,
    config: { clusterId: 'transactions-bench', sequenceGapWaitMs: 100 },
  });
  const client = new SluiceClient({ url: 'http://sluice.invalid', fetch: routerFetch(sluice.router()) });
  const requests = () => ({
    dynamodb: METADATA_CALLS.reduce((n, c) => n + (dynamodb.get(c) ?? 0), 0),
    s3Puts: s3.get('put') ?? 0,
  });
  return { clock, client, requests, store: storage.store };
};

export interface TransactionFigures {
  partitions: number;
  transactions: number;
  commitMs: { p50: number; p99: number };
  transactionMs: { p50: number; p99: number };
  perTransaction: { dynamodb: number; s3Puts: number };
}

export const measureTransactions = async (
  model: LatencyModelName,
  partitions: number,
  transactions: number,
  seed: number,
): Promise<TransactionFigures> => {
  const { clock, client, requests } = await world(model, seed);
  const admin = client.admin();
  await driven(clock, admin.createTopic({ name: 'out', partitions, replicationFactor: 3 }));
  await driven(clock, admin.createTopic({ name: 'in', partitions: 1, replicationFactor: 3 }));
  const producer = client.producer({ transactionalId: `bench-${partitions}` });
  await driven(clock, producer.initTransactions());
  const one = async (n: number) => {
    producer.beginTransaction();
    await Promise.all(
      Array.from({ length: partitions }, (_, p) => producer.sendBatch('out', p, [{ value: RECORD }])),
    );
    await producer.sendOffsetsToTransaction([{ topic: 'in', partition: 0, offset: n + 1 }], 'bench');
    const committing = clock.now();
    await producer.commitTransaction();
    return clock.now() - committing;
  };
  await driven(clock, one(0)); // caches warm, outside the figures
  const before = requests();
  const commits: number[] = [];
  const totals: number[] = [];
  for (let n = 1; n <= transactions; n++) {
    const started = clock.now();
    commits.push(await driven(clock, one(n)));
    totals.push(clock.now() - started);
  }
  const after = requests();
  const c = summarize(commits);
  const t = summarize(totals);
  return {
    partitions,
    transactions,
    commitMs: { p50: round(c.p50, 1), p99: round(c.p99, 1) },
    transactionMs: { p50: round(t.p50, 1), p99: round(t.p99, 1) },
    perTransaction: {
      dynamodb: round((after.dynamodb - before.dynamodb) / transactions, 2),
      s3Puts: round((after.s3Puts - before.s3Puts) / transactions, 2),
    },
  };
};

export interface StreamsFigures {
  partitions: number;
  commits: number;
  commitMs: { p50: number; p99: number };
  perCommit: { dynamodb: number; s3Puts: number };
}

/** Streams' exactly_once_v2 commit of one record per output partition (records keyed to spread). */
export const measureStreamsCommit = async (
  model: LatencyModelName,
  partitions: number,
  commits: number,
  seed: number,
): Promise<StreamsFigures> => {
  const { clock, client, requests, store } = await world(model, seed);
  await driven(clock, client.admin().createTopic({ name: 'out', partitions, replicationFactor: 3 }));
  const backend = new MetadataStateBackend(store, 'bench');
  const committer = new ExactlyOnceCommitter(backend, '0_0', client.producer(), undefined, 0);
  await driven(clock, committer.start());
  const stores = new TaskStores(backend, '0_0');
  const commit = (n: number) =>
    committer.commit({
      offsets: [{ topic: 'in', offset: n }],
      outputs: Array.from({ length: partitions }, (_, p) => ({
        topic: 'out',
        record: {
          key: new TextEncoder().encode(`k${n}-${p}`),
          value: RECORD,
          timestamp: Math.floor(clock.now()),
          headers: [],
        },
      })),
      stores,
    });
  await driven(clock, commit(1));
  const before = requests();
  const latencies: number[] = [];
  for (let n = 2; n < commits + 2; n++) {
    const started = clock.now();
    await driven(clock, commit(n));
    latencies.push(clock.now() - started);
  }
  const after = requests();
  const c = summarize(latencies);
  return {
    partitions,
    commits,
    commitMs: { p50: round(c.p50, 1), p99: round(c.p99, 1) },
    perCommit: {
      dynamodb: round((after.dynamodb - before.dynamodb) / commits, 2),
      s3Puts: round((after.s3Puts - before.s3Puts) / commits, 2),
    },
  };
};

export interface LoopFigures {
  loop: 'transactional' | 'idempotent';
  records: number;
  batch: number;
  recordsPerSecond: number;
  msPerIteration: number;
  perIteration: { dynamodb: number; s3Puts: number };
}

/** The consume-transform-produce loop over `records` inputs, `batch` per iteration. */
export const measureLoop = async (
  model: LatencyModelName,
  loop: LoopFigures['loop'],
  records: number,
  batch: number,
  seed: number,
): Promise<LoopFigures> => {
  const { clock, client, requests } = await world(model, seed);
  const admin = client.admin();
  await driven(clock, admin.createTopic({ name: 'in', partitions: 1, replicationFactor: 3 }));
  await driven(clock, admin.createTopic({ name: 'out', partitions: 1, replicationFactor: 3 }));
  const filler = client.producer();
  for (let n = 0; n < records; n += batch)
    await driven(
      clock,
      filler.sendBatch(
        'in',
        0,
        Array.from({ length: Math.min(batch, records - n) }, () => ({ value: RECORD })),
      ),
    );
  const transactional = loop === 'transactional';
  const consumer = client.consumer({
    isolationLevel: transactional ? 'read_committed' : 'read_uncommitted',
    maxPartitionBytes: batch * (RECORD.length + 80),
  });
  const producer = transactional ? client.producer({ transactionalId: 'loop' }) : client.producer();
  if (transactional) await driven(clock, producer.initTransactions());
  // The idempotent loop's OffsetCommit, as a consumer outside the group protocol commits.
  const member = client.groupMember({ groupId: 'loop', subscribedTopics: ['in'] });
  member.memberEpoch = -1;
  const groupCommit = (offset: number) => member.commit([{ topic: 'in', partition: 0, offset }]);
  const before = requests();
  const started = clock.now();
  let offset = 0;
  let iterations = 0;
  while (offset < records) {
    await driven(
      clock,
      (async () => {
        const [answer] = await consumer.fetchMany([{ topic: 'in', partition: 0, offset }]);
        if (!answer || 'error' in answer) throw answer?.error ?? new Error('no answer');
        const out = answer.records.map((r) => ({ value: r.value }));
        if (transactional) {
          producer.beginTransaction();
          await producer.sendBatch('out', 0, out);
          await producer.sendOffsetsToTransaction(
            [{ topic: 'in', partition: 0, offset: answer.nextOffset }],
            'loop',
          );
          await producer.commitTransaction();
        } else {
          await producer.sendBatch('out', 0, out);
          await groupCommit(answer.nextOffset);
        }
        offset = answer.nextOffset;
      })(),
    );
    iterations++;
  }
  const elapsed = clock.now() - started;
  const after = requests();
  return {
    loop,
    records,
    batch,
    recordsPerSecond: round((records / elapsed) * 1000, 0),
    msPerIteration: round(elapsed / iterations, 1),
    perIteration: {
      dynamodb: round((after.dynamodb - before.dynamodb) / iterations, 2),
      s3Puts: round((after.s3Puts - before.s3Puts) / iterations, 2),
    },
  };
};

const main = async () => {
  const f = flags();
  const model = modelFlag(f, 'express');
  const transactions = numberFlag(f, 'transactions', 100);
  const records = numberFlag(f, 'records', 2000);
  const batch = numberFlag(f, 'batch', 100);
  const seed = numberFlag(f, 'seed', 1);
  const sizes: TransactionFigures[] = [];
  for (const partitions of [1, 4, 16]) {
    const r = await measureTransactions(model, partitions, transactions, seed);
    sizes.push(r);
    console.log(
      `${model} model, ${partitions} partition(s), ${transactions} transactions (1 KiB per partition + 1 offset, RF=3): ` +
        `commit p50/p99 ${r.commitMs.p50}/${r.commitMs.p99} ms, transaction p50/p99 ${r.transactionMs.p50}/${r.transactionMs.p99} ms, ` +
        `${r.perTransaction.dynamodb} DynamoDB requests and ${r.perTransaction.s3Puts} S3 PUTs per transaction`,
    );
  }
  const loops: LoopFigures[] = [];
  for (const loop of ['idempotent', 'transactional'] as const) {
    const r = await measureLoop(model, loop, records, batch, seed);
    loops.push(r);
    console.log(
      `${model} model, ${loop} consume-transform-produce loop, ${records} records, ${batch} per iteration: ` +
        `${r.recordsPerSecond} records/s, ${r.msPerIteration} ms per iteration, ` +
        `${r.perIteration.dynamodb} DynamoDB requests and ${r.perIteration.s3Puts} S3 PUTs per iteration`,
    );
  }
  const streams: StreamsFigures[] = [];
  for (const partitions of [1, 4, 16]) {
    const r = await measureStreamsCommit(model, partitions, transactions, seed);
    streams.push(r);
    console.log(
      `${model} model, Streams exactly_once_v2 commit of 1 KiB into each of ${partitions} partition(s), ${transactions} commits: ` +
        `p50/p99 ${r.commitMs.p50}/${r.commitMs.p99} ms, ${r.perCommit.dynamodb} DynamoDB requests and ${r.perCommit.s3Puts} S3 PUTs per commit`,
    );
  }
  console.log('(modelled in simulated time, not AWS measurements)');
  console.log(JSON.stringify({ bench: 'transactions', model, seed, sizes, loops, streams }));
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
