/**
 * `npm run bench:streams-conflicts`: an exactly_once_v2 Streams app commits while ordinary producers
 * write to its output partition, through the local stack (DynamoDB Local + s3rver + the handlers).
 * For 0, 4 and 16 producers (BENCH_PRODUCERS) it reports the app's records/s, its commit transactions
 * and how many were cancelled, the produce commits on the output partition (the app's outbox
 * publishes and the producers' sends, told apart by their Idempotency-Keys) and how many failed their
 * condition and were retried by the server, and the producers' sends/s before and while the app runs.
 * It checks that the output holds each of the app's records exactly once. Figures from a loaded,
 * shared machine are indicative only.
 */
import { createAwsClients } from '../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../lib/adapters/aws/dynamodb-metadata-store.js';
import { idempotencyHash } from '../lib/core/log/idempotency.js';
import type { MetadataStore, TransactOp } from '../lib/ports/metadata-store.js';
import { TransactionCanceledError } from '../lib/ports/metadata-store.js';
import { startLocalStack } from '../local/stack.js';
import type { FetchLike } from '../sdk/index.js';
import { SluiceClient, nodeHttpFetch } from '../sdk/index.js';
import { StreamsBuilder } from '../streams/index.js';
import { parseStreamsConfig } from '../streams/runtime/config.js';
import { KafkaStreams } from '../streams/runtime/kafka-streams.js';
import { MetadataStateBackend } from '../streams/state/metadata-backend.js';
import { CommitMeter } from './commit-meter.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const RECORDS = Number(process.env.BENCH_RECORDS ?? 2_000);
const PRODUCERS = (process.env.BENCH_PRODUCERS ?? '0,4,16').split(',').map(Number);
const BASELINE_MS = Number(process.env.BENCH_BASELINE_MS ?? 3_000);
/** Input records per produce request while the app runs. */
const FEED_BATCH = Number(process.env.BENCH_FEED_BATCH ?? 20);
/** Whether the ordinary producers are idempotent (the SDK's default: an Idempotency-Key per send). */
const IDEMPOTENT = process.env.BENCH_PRODUCER_IDEMPOTENT !== 'false';

const stack = await startLocalStack({ port: 0, maintenanceIntervalMs: 0 });
const runtime = await import('../local/runtime.js');
/** Hashes of the Idempotency-Keys the app's client sent (its outbox publishes). */
const appKeys = new Set<string>();
let outputTopicId = '';
/** Only commits on the output partition count: the app's and the producers'. */
const meter = new CommitMeter((key, hash) =>
  key.pk !== `P#${outputTopicId}#0`
    ? undefined
    : hash !== undefined && appKeys.has(hash)
      ? 'app'
      : 'producers',
);
/** How long each of the app's outbox publishes took, ms. */
const publishMs: number[] = [];
runtime.setStorageLayer(meter.layer());

const base = nodeHttpFetch();
const client = new SluiceClient({ url: stack.url, fetch: base });
/** The app's own client: the same transport, noting each Idempotency-Key before it is sent. */
const noting: FetchLike = (input, init) => {
  const key = new Headers(init.headers).get('idempotency-key');
  if (!key) return base(input, init);
  appKeys.add(idempotencyHash(outputTopicId, key));
  const started = performance.now();
  return base(input, init).finally(() => publishMs.push(performance.now() - started));
};
const appClient = new SluiceClient({ url: stack.url, fetch: noting });

const transactions = { attempts: 0, cancelled: 0 };
const dynamo = new DynamoMetadataStore({
  client: createAwsClients({ endpoints: { dynamodb: stack.endpoints.dynamodb } }).dynamodb,
  tableName: stack.tableName,
});
/** The app's state store, counting its commit transactions. */
const appStore: MetadataStore = new Proxy(dynamo, {
  get: (target, prop, receiver) => {
    if (prop === 'transact')
      return async (ops: readonly TransactOp[]) => {
        transactions.attempts += 1;
        try {
          await target.transact(ops);
        } catch (error) {
          if (error instanceof TransactionCanceledError) transactions.cancelled += 1;
          throw error;
        }
      };
    const value: unknown = Reflect.get(target, prop, receiver);
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
  },
});

const admin = client.admin();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `count` producers sending one record per request to `topic` until stopped. */
const startProducers = (topic: string, count: number) => {
  let stop = false;
  let sends = 0;
  const loops = Array.from({ length: count }, async (_, p) => {
    const producer = client.producer({ idempotent: IDEMPOTENT });
    for (let i = 0; !stop; i++) {
      await producer.send({ topic, messages: [{ key: `producer-${p}-${i}`, value: 'ordinary' }] });
      sends += 1;
    }
  });
  return { sends: () => sends, stop: async () => ((stop = true), await Promise.all(loops)) };
};

/** The app is done when its task's lease holds offset RECORDS and its outbox is empty. */
const appDone = async (applicationId: string, input: string): Promise<boolean> => {
  const pk = `ST#${applicationId}#0_0`;
  const page = await dynamo.query({ pk, consistent: true });
  const lease = page.items.find((i) => i.sk === 'LEASE');
  const offsets = lease?.['offsets'] as Record<string, unknown> | undefined;
  return offsets?.[input] === RECORDS && !page.items.some((i) => i.sk.startsWith('OUT#'));
};

const scenario = async (producers: number) => {
  const [input, output, applicationId] = [`c${producers}-in`, `c${producers}-out`, `c${producers}-app`];
  await admin.createTopic({ name: input, partitions: 1 });
  await admin.createTopic({ name: output, partitions: 1 });
  outputTopicId = (await admin.describeTopic(output)).topicId;
  const load = startProducers(output, producers);
  await sleep(producers > 0 ? BASELINE_MS : 0);
  const before = load.sends();
  meter.reset();
  publishMs.length = 0;
  Object.assign(transactions, { attempts: 0, cancelled: 0 });
  const builder = new StreamsBuilder();
  builder
    .stream<string, string>(input)
    .mapValues((v) => v.toUpperCase())
    .to(output);
  const config = parseStreamsConfig({
    'application.id': applicationId,
    'bootstrap.servers': stack.url,
    'processing.guarantee': 'exactly_once_v2',
  });
  const streams = new KafkaStreams({
    topology: builder.build(),
    config,
    client: appClient,
    state: new MetadataStateBackend(appStore, applicationId),
  });
  await streams.start();
  const started = performance.now();
  // Input arrives while the app runs, so it commits every commit.interval.ms as records come in.
  const sendsAtStart = load.sends();
  const feeder = client.producer();
  for (let i = 0; i < RECORDS; i += FEED_BATCH)
    await feeder.send({
      topic: input,
      messages: Array.from({ length: Math.min(FEED_BATCH, RECORDS - i) }, (_, j) => ({
        key: `app-${i + j}`,
        value: `view ${i + j}`,
      })),
    });
  while (!(await appDone(applicationId, input))) await sleep(20);
  const seconds = (performance.now() - started) / 1000;
  const during = load.sends() - sendsAtStart;
  await load.stop();
  await streams.close();
  const app = meter.get('app');
  const others = meter.get('producers');

  const consumer = client.consumer();
  const seen = new Map<string, number>();
  for (let offset = 0; ;) {
    const batch = await consumer.fetch(output, 0, offset);
    for (const r of batch.records) {
      const key = Buffer.from(r.key ?? []).toString();
      if (key.startsWith('app-')) seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    if (batch.nextOffset >= batch.highWatermark) break;
    offset = batch.nextOffset;
  }
  const duplicates = [...seen.values()].filter((n) => n > 1).length;
  if (seen.size !== RECORDS || duplicates > 0)
    throw new Error(`output holds ${seen.size} of ${RECORDS} app records, ${duplicates} more than once`);
  const rate = (n: number, failed: number) => (n === 0 ? 0 : Math.round((failed / n) * 1000) / 10);
  return {
    producers,
    appRecordsPerSecond: Math.round(RECORDS / seconds),
    appTransactions: {
      ...transactions,
      cancelledPercent: rate(transactions.attempts, transactions.cancelled),
    },
    appOutputCommits: { ...app, retriedPercent: rate(app.attempts, app.failed) },
    appPublishMs: percentiles(publishMs),
    producerCommits: { ...others, retriedPercent: rate(others.attempts, others.failed) },
    producerSendsPerSecondBefore: producers > 0 ? Math.round(before / (BASELINE_MS / 1000)) : 0,
    producerSendsPerSecondDuring: Math.round(during / seconds),
    outputExactlyOnce: true,
  };
};

function percentiles(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
  return { p50: at(0.5), p99: at(0.99) };
}

try {
  const results = [];
  for (const p of PRODUCERS) results.push(await scenario(p));
  console.log(JSON.stringify({ records: RECORDS, producersIdempotent: IDEMPOTENT, results }, null, 2));
} finally {
  runtime.setStorageLayer(undefined);
  await stack.stop();
}
