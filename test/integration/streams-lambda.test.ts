/**
 * The examples through the Lambda handler path: the handler `streamsHandler(topology)` that the CDK
 * construct deploys, invoked with DynamoDB-Stream-shaped events and a Lambda context, its wiring built
 * from the environment exactly as in Lambda (here the local stack's gateway and DynamoDB table).
 * Invocations are repeated as the event source mapping would: again whenever a source partition's
 * high watermark moved since the last one started. Outputs are compared with the same golden files
 * as the test driver and the local runner, byte for byte and timestamp for timestamp, key by key
 * (records of different partitions have no order between them).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExampleName, GoldenRecord } from '../../examples/golden.js';
import { loadExample, outputTopicsOf, readGolden } from '../../examples/golden.js';
import { ENV } from '../../lib/config/environment.js';
import type { ConsumedRecord } from '../../sdk/index.js';
import { SluiceClient } from '../../sdk/index.js';
import type { LambdaContext, StreamsRunResult } from '../../streams/lambda/handler.js';
import { streamsHandler } from '../../functions/streams-app.js';
import { sourceTopicsOf } from '../../streams/lambda/positions.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;
let client: SluiceClient;

beforeAll(async () => {
  t = await startTestStack();
  client = new SluiceClient({ url: t.url });
});
afterAll(async () => {
  delete process.env[ENV.streamsConfig];
  await t?.stack.stop();
});

/**
 * Input partitions. Timestamps are compared too, so every input that feeds one repartition topic is
 * one partition: a word's count carries the largest timestamp its task has seen for the word, and
 * from two text-input partitions the order in which a word's records reach the repartition topic
 * (and so those timestamps, not the counts) would be a race, as in Kafka. streams.test.ts compares
 * values only and reads text-input from two partitions.
 */
const PARTITIONS: Record<ExampleName, Record<string, number>> = {
  'word-count': { 'text-input': 1 },
  'page-views': { 'page-views': 1 },
  'orders-enriched': { customers: 2, orders: 1 },
};

const contextFor = (budgetMs: number): LambdaContext => {
  const deadline = Date.now() + budgetMs;
  return { getRemainingTimeInMillis: () => deadline - Date.now() };
};

const b64 = (s: string | null): string | null =>
  s === null ? null : Buffer.from(s, 'utf8').toString('base64');
const raw = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString('base64'));

interface Exact {
  key: string | null;
  value: string | null;
  timestamp: number;
}

/** One key's records in order, as raw bytes (base64) and timestamps. */
const exactByKey = (records: (Exact & { topic: string })[]): Record<string, Exact[]> => {
  const out: Record<string, Exact[]> = {};
  for (const r of records)
    (out[`${r.topic}/${r.key}`] ??= []).push({ key: r.key, value: r.value, timestamp: r.timestamp });
  return out;
};

const readTopic = async (topic: string): Promise<ConsumedRecord[]> => {
  const consumer = client.consumer();
  const out: ConsumedRecord[] = [];
  for (const { partition } of (await client.admin().describeTopic(topic)).partitions) {
    for (let offset = 0; ;) {
      const batch = await consumer.fetch(topic, partition, offset);
      out.push(...batch.records);
      if (batch.nextOffset >= batch.highWatermark) break;
      offset = batch.nextOffset;
    }
  }
  return out;
};

/** A DynamoDB Stream record of a partition item, as the event source mapping delivers it. */
const streamRecord = (topic: string, partition: number, hw: number) => ({
  eventName: 'MODIFY',
  eventSource: 'aws:dynamodb',
  dynamodb: {
    Keys: { pk: { S: `P#${topic}-id#${partition}` }, sk: { S: 'STATE' } },
    NewImage: { topic: { S: topic }, partition: { N: String(partition) }, hw: { N: String(hw) } },
  },
});

/** A source's partitions' high watermarks; none for a repartition topic the first run has yet to create. */
const offsetsOf = (topic: string) =>
  client
    .admin()
    .fetchTopicOffsets(topic)
    .catch((e: unknown) => {
      if ((e as { code?: string }).code === 'UNKNOWN_TOPIC_OR_PARTITION') return [];
      throw e;
    });

const watermarks = async (topics: string[]): Promise<string> => {
  const all = await Promise.all(topics.map(offsetsOf));
  return JSON.stringify(all.map((ps) => ps.map((p) => p.high)));
};

/** Invokes until an invocation starts with no source watermark moved since the previous one started. */
const invokeLikeTheTrigger = async (
  handler: ReturnType<typeof streamsHandler>,
  sources: string[],
): Promise<StreamsRunResult[]> => {
  const results: StreamsRunResult[] = [];
  let seen = '';
  for (let i = 0; i < 6; i++) {
    const now = await watermarks(sources);
    if (now === seen) return results;
    seen = now;
    const records = (await Promise.all(sources.map(offsetsOf)))
      .flatMap((ps, j) => ps.map((p) => streamRecord(sources[j]!, p.partition, p.high)))
      .filter((r) => Number(r.dynamodb.NewImage.hw.N) > 0);
    results.push(await handler({ Records: records }, contextFor(60_000)));
  }
  throw new Error('the app kept writing its own sources after 6 invocations');
};

const setUp = async (name: ExampleName, guarantee: string) => {
  const applicationId = `${name}-lambda-${randomUUID().slice(0, 6)}`;
  const admin = client.admin();
  for (const [topic, partitions] of Object.entries(PARTITIONS[name]))
    await admin.createTopic({ name: topic, partitions });
  const topology = await loadExample(name);
  for (const topic of outputTopicsOf(topology)) await admin.createTopic({ name: topic, partitions: 2 });
  const producer = client.producer();
  for (const r of await readGolden(name, 'input'))
    await producer.send({
      topic: r.topic,
      messages: [{ key: r.key, value: r.value, timestamp: r.timestamp }],
    });
  process.env[ENV.streamsConfig] = JSON.stringify({
    'application.id': applicationId,
    'bootstrap.servers': t.url,
    'processing.guarantee': guarantee,
  });
  const handler = streamsHandler(() => topology);
  return { applicationId, topology, handler, sources: sourceTopicsOf(topology, applicationId) };
};

const outputsOf = async (name: ExampleName) => {
  const topology = await loadExample(name);
  const outputs: (Exact & { topic: string })[] = [];
  for (const topic of outputTopicsOf(topology))
    for (const r of await readTopic(topic))
      outputs.push({ topic, key: raw(r.key), value: raw(r.value), timestamp: r.timestamp });
  return outputs;
};

const goldenExact = (golden: GoldenRecord[]) =>
  golden.map((g) => ({ topic: g.topic, key: b64(g.key), value: b64(g.value), timestamp: g.timestamp }));

/** The example's outputs equal its golden file, key by key, bytes and timestamps, none extra. */
const expectGoldenOutputs = async (name: ExampleName): Promise<number> => {
  const golden = await readGolden(name, 'output');
  const outputs = await outputsOf(name);
  expect(exactByKey(outputs)).toEqual(exactByKey(goldenExact(golden)));
  expect(outputs.length).toBe(golden.length);
  return golden.length;
};

const tearDown = async (name: ExampleName) => {
  const topology = await loadExample(name);
  for (const topic of [...Object.keys(PARTITIONS[name]), ...outputTopicsOf(topology)])
    await client.admin().deleteTopic(topic);
};

describe('examples through the Lambda handler', () => {
  const cases = (['at_least_once', 'exactly_once_v2'] as const).flatMap((guarantee) =>
    (['word-count', 'page-views', 'orders-enriched'] as const).map((name) => [name, guarantee] as const),
  );
  it.each(cases)('%s (%s) writes its golden outputs, byte for byte', async (name, guarantee) => {
    const { handler, sources, topology } = await setUp(name, guarantee);
    try {
      const results = await invokeLikeTheTrigger(handler, sources);
      // A repartitioning app may need a second wake-up: under at_least_once (commit.interval.ms 30 s)
      // the first run's closing commit is what writes the repartition topic; under exactly_once_v2
      // (100 ms) the first run may commit, see the repartition topic grow and process it itself.
      const repartitions = topology.internalTopics().length > 0;
      if (!repartitions) expect(results.length).toBe(1);
      else if (guarantee === 'at_least_once') expect(results.length).toBe(2);
      else expect([1, 2]).toContain(results.length);
      // The wake-up that the first run's own repartition writes cause may find them processed already.
      expect(results.map((r) => r.caughtUp)).toEqual(results.map(() => true));
      expect(results[0]?.rounds).toBeGreaterThanOrEqual(1);
      const count = await expectGoldenOutputs(name);

      // A spurious wake-up (a watermark-less change, a retried batch) finds nothing and writes nothing.
      const again = await handler({ Records: [] }, contextFor(60_000));
      expect(again).toMatchObject({ rounds: 0, caughtUp: true, wakeups: 0 });
      expect(Object.values(again.processed).reduce((a, b) => a + b, 0)).toBe(0);
      expect((await outputsOf(name)).length).toBe(count);
    } finally {
      await tearDown(name);
    }
  });

  it('two invocations at once (two stream shards) share the group, process each input once, write each output once', async () => {
    const name = 'word-count';
    const { sources, topology } = await setUp(name, 'exactly_once_v2');
    try {
      // Two containers: two handlers, each with its own clients, members of the one group.
      const [a, b] = [streamsHandler(() => topology), streamsHandler(() => topology)];
      const both = await Promise.all([
        a({ Records: [] }, contextFor(60_000)),
        b({ Records: [] }, contextFor(60_000)),
      ]);
      // Each run waited for its watermarks, processed by itself or committed by the other.
      expect(both.map((r) => r.caughtUp)).toEqual([true, true]);
      // The six input lines went through task 0_0 once in all: whoever ran it resumed where the other
      // committed.
      expect(both.reduce((n, r) => n + (r.processed['0_0'] ?? 0), 0)).toBe(6);
      const results = await invokeLikeTheTrigger(a, sources);
      expect(results.map((r) => r.caughtUp)).toEqual(results.map(() => true));
      await expectGoldenOutputs(name);
    } finally {
      await tearDown(name);
    }
  });

  it('a run out of time closes cleanly, fails retriably, and the retry finishes with no duplicate', async () => {
    const name = 'word-count';
    const { handler, sources } = await setUp(name, 'exactly_once_v2');
    try {
      // No time at all past the shutdown reserve: the run starts, cannot reach its watermarks, closes.
      const error = await handler({ Records: [] }, { getRemainingTimeInMillis: () => 0 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as { code?: string }).code).toBe('REQUEST_TIMED_OUT');
      expect((error as { retriable?: boolean }).retriable).toBe(true);
      const results = await invokeLikeTheTrigger(handler, sources);
      expect([1, 2]).toContain(results.length);
      await expectGoldenOutputs(name);
    } finally {
      await tearDown(name);
    }
  });
});
