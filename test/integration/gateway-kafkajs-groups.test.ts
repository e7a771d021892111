/**
 * kafkajs (a client this project did not write) as a group of consumers through the Kafka gateway:
 * two members share the topic's partitions, the group rebalances when one leaves and the other takes
 * everything, and a member that starts later resumes from the committed offsets, which are the same
 * ones the HTTP API shows.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LocalStack } from '../../local/stack.js';
import { startLocalStack } from '../../local/stack.js';
import { call } from './stack.js';

let stack: LocalStack;
let kafka: Kafka;

beforeAll(async () => {
  const suffix = randomUUID().slice(0, 8);
  stack = await startLocalStack({
    port: 0,
    kafkaPort: 0,
    maintenanceIntervalMs: 0,
    env: {
      ...process.env,
      AWS_ENDPOINT_URL_S3: inject('s3Endpoint'),
      AWS_ENDPOINT_URL_DYNAMODB: inject('dynamodbEndpoint'),
      SLUICE_TABLE_NAME: `kjs-${suffix}`,
      SLUICE_BUCKETS: `kjs-${suffix}`,
      SLUICE_SEGMENT_BUCKET: `kjs-${suffix}-segments`,
    },
  });
  kafka = new Kafka({
    clientId: 'kjs-groups',
    brokers: [stack.kafka!.bootstrap],
    logLevel: process.env['GW2_DEBUG'] ? logLevel.WARN : logLevel.NOTHING,
  });
  expect((await call(stack.url, 'POST', '/v1/topics', { name: 'kjs', partitions: 4 })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const until = async (what: string, done: () => boolean | Promise<boolean>, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

interface Seen {
  member: string;
  partition: number;
  offset: number;
  value: string;
}

const member = async (name: string, seen: Seen[]): Promise<Consumer> => {
  // One client per member, as separate applications would be: kafkajs keeps committed offsets per
  // client and group, shared by every consumer of that client.
  const client = new Kafka({
    clientId: `kjs-${name}`,
    brokers: [stack.kafka!.bootstrap],
    logLevel: process.env['GW2_DEBUG'] ? logLevel.WARN : logLevel.NOTHING,
  });
  const consumer = client.consumer({
    groupId: 'kg',
    sessionTimeout: 30_000,
    heartbeatInterval: 500,
    retry: { retries: 10 },
  });
  consumer.on(consumer.events.CRASH, (e) => {
    const err = e.payload.error as Error & { originalError?: Error; cause?: Error };
    if (process.env['GW2_DEBUG'])
      console.log('CRASH', err.originalError?.stack ?? err.cause?.stack ?? err.stack);
  });
  await consumer.connect();
  await consumer.subscribe({ topic: 'kjs', fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      seen.push({
        member: name,
        partition,
        offset: Number(message.offset),
        value: message.value?.toString() ?? '',
      });
    },
  });
  return consumer;
};

const produce = async (from: number, count: number) => {
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  await producer.send({
    topic: 'kjs',
    messages: Array.from({ length: count }, (_, i) => ({ key: `k${from + i}`, value: `v${from + i}` })),
  });
  await producer.disconnect();
};

describe('kafkajs consumer group through the gateway', () => {
  it('shares partitions, rebalances when a member leaves, and resumes from committed offsets', async () => {
    const seen: Seen[] = [];
    const a = await member('a', seen);
    const b = await member('b', seen);
    // Produce once both members hold their share, so each partition has had one reader.
    await until('a stable group of two, every partition assigned', async () => {
      const g = (await call(stack.url, 'GET', '/v1/groups/kg')).json;
      const assigned = (g.members ?? []).flatMap(
        (m: { assignment: { topicPartitions: { partitions: number[] }[] } }) =>
          m.assignment.topicPartitions.flatMap((tp) => tp.partitions),
      );

      return g.state === 'STABLE' && g.members.length === 2 && assigned.length === 4;
    });
    await produce(0, 200);
    await until('200 records', () => new Set(seen.map((s) => s.value)).size === 200);
    // Both members took part; each partition was read by one member only.
    const readers = new Map<number, Set<string>>();
    for (const s of seen) readers.set(s.partition, (readers.get(s.partition) ?? new Set()).add(s.member));
    expect(new Set(seen.map((s) => s.member))).toEqual(new Set(['a', 'b']));
    for (const [, who] of readers) expect(who.size).toBe(1);

    // b leaves: a takes every partition and reads what comes next.
    await b.disconnect();
    const before = seen.length;
    await produce(200, 100);
    await until('the next 100 records', () => new Set(seen.map((s) => s.value)).size === 300);
    expect(new Set(seen.slice(before).map((s) => s.member))).toEqual(new Set(['a']));
    await a.disconnect();

    // The committed offsets are the group's over HTTP: every partition at its high watermark.
    const topic = (await call(stack.url, 'GET', '/v1/topics/kjs')).json;
    const committed = (await call(stack.url, 'GET', '/v1/groups/kg/offsets')).json.offsets;
    expect(
      committed.map((o: { partition: number; offset: number }) => [o.partition, o.offset]).sort(),
    ).toEqual(
      topic.partitions
        .map((p: { partition: number; highWatermark: number }) => [p.partition, p.highWatermark])
        .sort(),
    );

    // A new member resumes there: it reads only what is produced from now on.
    const later: Seen[] = [];
    const c = await member('c', later);
    await produce(300, 20);
    await until('20 more records', () => later.length >= 20);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(later.map((s) => s.value).sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `v${300 + i}`).sort(),
    );
    await c.disconnect();
    expect((await call(stack.url, 'GET', '/v1/groups/kg')).json.members).toEqual([]);
  }, 180_000);
});
