/**
 * The example applications through the local stack: golden inputs produced with the SDK, the
 * KafkaStreams runtime with its state in the stack's DynamoDB table, outputs read back with the SDK and
 * compared with the golden outputs the test driver writes. Records of one key keep their order;
 * records of different partitions have none, so outputs are compared key by key.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExampleName, GoldenRecord } from '../../examples/golden.js';
import { byKey, loadExample, outputTopicsOf, readGolden } from '../../examples/golden.js';
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../../lib/adapters/aws/dynamodb-metadata-store.js';
import { SluiceClient } from '../../sdk/index.js';
import { parseStreamsConfig } from '../../streams/runtime/config.js';
import { KafkaStreams } from '../../streams/runtime/kafka-streams.js';
import { MetadataStateBackend } from '../../streams/state/metadata-backend.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;
let client: SluiceClient;

beforeAll(async () => {
  t = await startTestStack();
  client = new SluiceClient({ url: t.url });
});
afterAll(async () => {
  await t?.stack.stop();
});

const text = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString('utf8'));

/**
 * Input topics and their partition counts. Suppression runs on each task's own stream time, so page
 * views use one partition; orders use one so that each customer's orders reach the repartition topic
 * in one producer's order (from two source partitions their order there would be a race, as in Kafka).
 */
const PARTITIONS: Record<ExampleName, Record<string, number>> = {
  'word-count': { 'text-input': 2 },
  'page-views': { 'page-views': 1 },
  'orders-enriched': { customers: 2, orders: 1 },
};

const produceInputs = async (inputs: GoldenRecord[]): Promise<void> => {
  const producer = client.producer();
  for (const r of inputs)
    await producer.send({
      topic: r.topic,
      messages: [{ key: r.key, value: r.value, timestamp: r.timestamp }],
    });
};

const readAll = async (topic: string, expected: number, timeoutMs: number): Promise<GoldenRecord[]> => {
  const consumer = client.consumer();
  const { partitions } = await client.admin().describeTopic(topic);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const records: GoldenRecord[] = [];
    for (const { partition } of partitions) {
      let offset = 0;
      for (;;) {
        const batch = await consumer.fetch(topic, partition, offset);
        for (const r of batch.records)
          records.push({ topic, key: text(r.key), value: text(r.value), timestamp: r.timestamp });
        if (batch.nextOffset >= batch.highWatermark) break;
        offset = batch.nextOffset;
      }
    }
    if (records.length >= expected || Date.now() > deadline) return records;
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('examples through the local stack', () => {
  const cases = (['at_least_once', 'exactly_once_v2'] as const).flatMap((guarantee) =>
    (['word-count', 'page-views', 'orders-enriched'] as const).map((name) => [name, guarantee] as const),
  );
  it.each(cases)('%s (%s) writes its golden outputs, key by key', async (name, guarantee) => {
    const suffix = randomUUID().slice(0, 6);
    const admin = client.admin();
    for (const [topic, partitions] of Object.entries(PARTITIONS[name]))
      await admin.createTopic({ name: topic, partitions });
    const topology = await loadExample(name);
    for (const topic of outputTopicsOf(topology)) await admin.createTopic({ name: topic, partitions: 2 });
    const golden = await readGolden(name, 'output');
    await produceInputs(await readGolden(name, 'input'));
    const store = new DynamoMetadataStore({
      client: createAwsClients({ endpoints: { dynamodb: t.stack.endpoints.dynamodb } }).dynamodb,
      tableName: t.stack.tableName,
    });
    const config = parseStreamsConfig({
      'application.id': `${name}-${suffix}`,
      'bootstrap.servers': t.url,
      'commit.interval.ms': '100',
      'processing.guarantee': guarantee,
    });
    const streams = new KafkaStreams({
      topology,
      config,
      client,
      state: new MetadataStateBackend(store, config.applicationId),
    });
    await streams.start();
    const outputs: GoldenRecord[] = [];
    for (const topic of outputTopicsOf(topology))
      outputs.push(...(await readAll(topic, golden.filter((g) => g.topic === topic).length, 45_000)));
    await streams.close();
    expect(streams.state).toBe('NOT_RUNNING');
    // Every input record was processed by some task (repartitioned records count again downstream).
    const processed = Object.values(streams.processed()).reduce((a, b) => a + b, 0);
    expect(processed).toBeGreaterThanOrEqual((await readGolden(name, 'input')).length);
    expect(byKey(outputs)).toEqual(byKey(golden));
    expect(outputs.length).toBe(golden.length);
    // Inputs are named by the examples; each test cleans up so the next can create them again.
    for (const topic of [...Object.keys(PARTITIONS[name]), ...outputTopicsOf(topology)])
      await admin.deleteTopic(topic);
  });
});
