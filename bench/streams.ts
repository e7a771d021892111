/**
 * `npm run bench:streams`: Streams through the local stack (DynamoDB Local + s3rver + the real
 * handlers). Measures records/s of one task for a stateless filter/mapValues topology and a windowed
 * count, and end-to-end latency (input produced → output visible to a consumer) at a low steady rate.
 * Figures from a loaded, shared machine are indicative only.
 */
import { createAwsClients } from '../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../lib/adapters/aws/dynamodb-metadata-store.js';
import { startLocalStack } from '../local/stack.js';
import { SluiceClient, nodeHttpFetch } from '../sdk/index.js';
import type { Topology } from '../streams/index.js';
import { StreamsBuilder, TimeWindows } from '../streams/index.js';
import { parseStreamsConfig } from '../streams/runtime/config.js';
import { KafkaStreams } from '../streams/runtime/kafka-streams.js';
import { MetadataStateBackend } from '../streams/state/metadata-backend.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const RECORDS = Number(process.env.BENCH_RECORDS ?? 5_000);
const LATENCY_RECORDS = Number(process.env.BENCH_LATENCY_RECORDS ?? 200);
const GUARANTEE = process.env.BENCH_GUARANTEE ?? 'at_least_once';

const stack = await startLocalStack({ port: 0, maintenanceIntervalMs: 0 });
const client = new SluiceClient({ url: stack.url, fetch: nodeHttpFetch() });
const store = new DynamoMetadataStore({
  client: createAwsClients({ endpoints: { dynamodb: stack.endpoints.dynamodb } }).dynamodb,
  tableName: stack.tableName,
});
const admin = client.admin();

const stateless = (input: string, output: string): Topology => {
  const b = new StreamsBuilder();
  b.stream<string, string>(input)
    .filter((_k, v) => !v.startsWith('#'))
    .mapValues((v) => v.toUpperCase())
    .to(output);
  return b.build();
};

const windowed = (input: string, output: string): Topology => {
  const b = new StreamsBuilder();
  b.stream<string, string>(input)
    .groupByKey()
    .windowedBy(TimeWindows.ofSizeWithNoGrace(60_000))
    .count()
    .toStream()
    .map((w, n) => ({ key: `${w.key}@${w.window.start}`, value: String(n) }))
    .to(output);
  return b.build();
};

const highWatermark = async (topic: string): Promise<number> =>
  (await admin.fetchTopicOffsets(topic)).reduce((s, p) => s + p.high, 0);

const run = async (name: string, topology: Topology) => {
  const config = parseStreamsConfig({
    'application.id': name,
    'bootstrap.servers': stack.url,
    'commit.interval.ms': '100',
    'processing.guarantee': GUARANTEE,
  });
  const streams = new KafkaStreams({
    topology,
    config,
    client,
    state: new MetadataStateBackend(store, name),
  });
  await streams.start();
  return streams;
};

const throughput = async (name: string, build: (i: string, o: string) => Topology): Promise<number> => {
  const [input, output] = [`${name}-in`, `${name}-out`];
  await admin.createTopic({ name: input, partitions: 1 });
  await admin.createTopic({ name: output, partitions: 1 });
  const producer = client.producer();
  for (let i = 0; i < RECORDS; i += 500)
    await producer.send({
      topic: input,
      messages: Array.from({ length: Math.min(500, RECORDS - i) }, (_, j) => ({
        key: `user-${(i + j) % 100}`,
        value: `view ${i + j}`,
        timestamp: 1_700_000_000_000 + (i + j) * 10,
      })),
    });
  const started = performance.now();
  const streams = await run(name, build(input, output));
  while ((await highWatermark(output)) < RECORDS) await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - started) / 1000;
  await streams.close();
  return RECORDS / seconds;
};

const latency = async (): Promise<{ p50: number; p99: number }> => {
  const [input, output] = ['latency-in', 'latency-out'];
  await admin.createTopic({ name: input, partitions: 1 });
  await admin.createTopic({ name: output, partitions: 1 });
  const streams = await run('latency', stateless(input, output));
  const consumer = client.consumer();
  const sent = new Map<string, number>();
  const seen: number[] = [];
  let offset = 0;
  const reader = (async () => {
    while (seen.length < LATENCY_RECORDS) {
      const batch = await consumer.fetch(output, 0, offset, { maxWaitMs: 1_000 });
      const now = performance.now();
      for (const r of batch.records) {
        const at = sent.get(Buffer.from(r.key ?? []).toString());
        if (at !== undefined) seen.push(now - at);
      }
      offset = batch.nextOffset;
    }
  })();
  // Let the task start before measuring.
  await new Promise((r) => setTimeout(r, 6_000));
  const producer = client.producer();
  for (let i = 0; i < LATENCY_RECORDS; i++) {
    sent.set(`k${i}`, performance.now());
    await producer.send({ topic: input, messages: [{ key: `k${i}`, value: `v${i}` }] });
    await new Promise((r) => setTimeout(r, 25));
  }
  await reader;
  await streams.close();
  seen.sort((a, b) => a - b);
  const at = (q: number) => Math.round(seen[Math.min(seen.length - 1, Math.floor(q * seen.length))] ?? NaN);
  return { p50: at(0.5), p99: at(0.99) };
};

try {
  const figures = {
    guarantee: GUARANTEE,
    records: RECORDS,
    statelessRecordsPerSecondPerTask: Math.round(await throughput('bench-stateless', stateless)),
    windowedCountRecordsPerSecondPerTask: Math.round(await throughput('bench-windowed', windowed)),
    endToEndLatencyMs: await latency(),
  };
  console.log(JSON.stringify(figures, null, 2));
} finally {
  await stack.stop();
}
