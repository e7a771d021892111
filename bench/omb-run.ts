/**
 * One OMB-style workload run against a target: topics, one consumer group per subscription, producers
 * at the workload's rate for the duration, and OMB's result document (bench/omb.ts, bench/latency.ts).
 */
import { basename } from 'node:path';
import { SluiceClient } from '../sdk/client.js';
import { nodeHttpFetch } from '../sdk/node-http.js';
import type { FetchLike } from '../sdk/transport.js';
import type { MeteredCall } from './metered-fetch.js';
import { meteredFetch } from './metered-fetch.js';
import { BenchConsumers, newConsumerRecorder } from './omb-consumer.js';
import type { BenchProducerOptions, ProducerRecorder } from './omb-producer.js';
import { BenchProducer, newProducerRecorder } from './omb-producer.js';
import type { OmbResult } from './omb-report.js';
import { buildResult } from './omb-report.js';
import type { BenchTarget, Readings } from './target.js';
import type { Workload } from './workload.js';
import { withDefaults } from './workload.js';

/** The workload's producers for one topic, each at `rate` messages/s (0: as fast as they can), until `untilMs`. */
export const runProducers = async (
  client: SluiceClient,
  w: ReturnType<typeof withDefaults>,
  topic: string,
  rate: number,
  recorder: ProducerRecorder,
  untilMs: number,
  wrapSend?: BenchProducerOptions['wrapSend'],
): Promise<void> => {
  const options: BenchProducerOptions = {
    topic,
    partitions: w.partitionsPerTopic,
    messageSize: w.messageSize,
    rate,
    batchBytes: w.batchBytes,
    lingerMs: w.lingerMs,
    maxInFlight: w.maxInFlightRequests,
    ...(wrapSend ? { wrapSend } : {}),
  };
  await Promise.all(
    Array.from({ length: w.producersPerTopic }, () =>
      new BenchProducer(
        client.producer({ maxInFlightRequests: w.maxInFlightRequests }),
        options,
        recorder,
      ).run(untilMs),
    ),
  );
};

export interface WorkloadRun {
  file: string;
  workload: Workload;
  result: OmbResult;
  storage: Readings;
  /** Every HTTP call the producers and consumers made, from the moment both were ready. */
  calls: MeteredCall[];
  publishedBytes: number;
  measuredSeconds: number;
  /** When the measured part began (epoch ms): what came before was warm-up. */
  startMs: number;
}

export const runWorkload = async (
  target: BenchTarget,
  file: string,
  workload: Workload,
  {
    seconds,
    warmupSeconds,
    wrapFetch = (f) => f,
    wrapSend,
    onMeasuring,
  }: {
    seconds: number;
    warmupSeconds: number;
    /** Around the metered fetch (the latency benchmark's traces). */
    wrapFetch?: (fetch: FetchLike) => FetchLike;
    wrapSend?: BenchProducerOptions['wrapSend'];
    /** Called when the warm-up ends. */
    onMeasuring?: () => void;
  },
): Promise<WorkloadRun> => {
  const w = withDefaults(workload);
  const metered = meteredFetch(wrapFetch(nodeHttpFetch()));
  const client = new SluiceClient({ url: target.url, fetch: metered.fetch });
  const runId = `omb-${basename(file, '.json').slice(0, 40)}-${Date.now().toString(36)}`;
  const topics = Array.from({ length: w.topics }, (_, i) => `${runId}-t${i}`);
  for (const name of topics)
    await client
      .admin()
      .createTopic({ name, partitions: w.partitionsPerTopic, replicationFactor: w.replicationFactor });
  const producerRecorder = newProducerRecorder();
  const consumerRecorder = newConsumerRecorder();
  const consumers = new BenchConsumers(client, consumerRecorder);
  console.error(`[${runId}] starting ${w.subscriptionsPerTopic * w.consumerPerSubscription} consumer(s)…`);
  await consumers.start({
    runId,
    topics,
    partitionsPerTopic: w.partitionsPerTopic,
    subscriptions: w.subscriptionsPerTopic,
    consumersPerSubscription: w.consumerPerSubscription,
    maxWaitMs: w.maxWaitMs,
  });
  target.meterDelta();
  metered.calls.length = 0;
  const perProducerRate = w.producerRate / (w.topics * w.producersPerTopic);
  const startMs = Date.now() + warmupSeconds * 1000;
  const endMs = startMs + seconds * 1000;
  const measuring = onMeasuring ? setTimeout(onMeasuring, startMs - Date.now()) : undefined;
  console.error(`[${runId}] producing for ${warmupSeconds} s warm-up + ${seconds} s…`);
  await Promise.all(
    topics.map((topic) => runProducers(client, w, topic, perProducerRate, producerRecorder, endMs, wrapSend)),
  );
  clearTimeout(measuring);
  // Let the consumers catch up (bounded), so consume rates and end-to-end latency cover every message.
  const total = (s: { values: number[] }) => s.values.reduce((a, b) => a + b, 0);
  const published = total(producerRecorder.published);
  const drainUntil = Date.now() + 60_000;
  while (total(consumerRecorder.consumed) < published * w.subscriptionsPerTopic && Date.now() < drainUntil) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await consumers.stop();
  const storage = target.meterDelta();
  const result = buildResult({
    workload: w.name,
    driver: 'sluice (SDK over node:http, binary RecordBatch v2, idempotent, acks=all)',
    messageSize: w.messageSize,
    topics: w.topics,
    partitions: w.partitionsPerTopic,
    producersPerTopic: w.producersPerTopic,
    consumersPerTopic: w.subscriptionsPerTopic * w.consumerPerSubscription,
    startMs,
    endMs,
    producers: producerRecorder,
    consumers: consumerRecorder,
  });
  return {
    file,
    workload,
    result,
    storage,
    calls: metered.calls,
    publishedBytes: published * w.messageSize,
    measuredSeconds: seconds,
    startMs,
  };
};
