/**
 * The Lambda sink through Connect's runtime on the local stack: a connector created over REST with
 * topics.regex invokes a real MSK handler (in the Invoke emulator) through Sluice's group
 * `connect-{name}`; the handler's partial batch response sends the poison record to the DLQ with
 * Connect's error headers while the rest is delivered exactly once and committed; a topic created
 * while the task runs, and one created between invocations, are both picked up.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectWorker } from '../../connect/worker/worker.js';
import { ConnectStateStore } from '../../connect/state-store.js';
import { sluiceFromEnv } from '../../local/runtime.js';
import { systemClock } from '../../lib/ports/clock.js';
import { SluiceClient } from '../../sdk/index.js';
import type { LambdaEmulator } from '../support/lambda-emulator.js';
import { startLambdaEmulator } from '../support/lambda-emulator.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

const HANDLER = fileURLToPath(new URL('../fixtures/lambda/msk-orders.ts', import.meta.url));
let emulator: LambdaEmulator;
let stack: TestStack;
let client: SluiceClient;
let dir: string;
let out: string;
const saved = process.env.AWS_ENDPOINT_URL_LAMBDA;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lambda-runtime-'));
  out = join(dir, 'orders.jsonl');
  [emulator, stack] = await Promise.all([
    startLambdaEmulator([
      { name: 'orders-fn', module: HANDLER, exportName: 'partialHandler', environment: { ORDERS_OUT: out } },
    ]),
    startTestStack(),
  ]);
  // The sink's client finds the emulator as any AWS SDK client would: the standard endpoint variable.
  process.env.AWS_ENDPOINT_URL_LAMBDA = emulator.endpoint;
  client = new SluiceClient({ url: stack.url });
}, 120_000);

afterAll(async () => {
  if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_LAMBDA;
  else process.env.AWS_ENDPOINT_URL_LAMBDA = saved;
  await Promise.all([emulator?.stop(), stack?.stack.stop()]);
  await rm(dir, { recursive: true, force: true });
});

const delivered = async () =>
  (await readFile(out, 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const r = JSON.parse(l) as { tp: string; offset: number; orderId: number };
      return `${r.tp}@${r.offset}#${r.orderId}`;
    })
    .sort();

const produce = async (topic: string, ids: number[], poison: number[] = []) => {
  const results = await client.producer().send({
    topic,
    messages: ids.map((id) => ({
      key: `o${id}`,
      value: JSON.stringify({ orderId: id, amount: poison.includes(id) ? -1 : id }),
      headers: [{ key: 'region', value: topic.slice(7) }],
    })),
  });
  return results.map((r, i) => {
    if (!('offset' in r)) throw new Error(`produce to ${topic} failed: ${r.error.code}`);
    return { id: ids[i]!, partition: r.partition, offset: r.offset };
  });
};

const expected = (
  topic: string,
  placed: { id: number; partition: number; offset: number }[],
  poison: number[] = [],
) => placed.filter((p) => !poison.includes(p.id)).map((p) => `${topic}-${p.partition}@${p.offset}#${p.id}`);

describe('Lambda sink through the Connect runtime', () => {
  it('delivers every topic matching topics.regex once, dead-letters the poison, commits the rest', async () => {
    const admin = client.admin();
    await admin.createTopic({ name: 'orders.eu', partitions: 2 });
    await admin.createTopic({ name: 'orders-dlq' });
    await admin.createTopic({ name: 'payments.eu' });
    const eu = await produce('orders.eu', [1, 2, 3, 4, 5, 6, 7, 8], [5]);
    await produce('payments.eu', [100]);
    const poison = eu.find((p) => p.id === 5)!;

    const created = await stack.call('POST', '/v1/connect/connectors', {
      name: 'orders-lambda',
      config: {
        'connector.class': 'AwsLambdaSinkConnector',
        'topics.regex': 'orders\\.[a-z]+',
        'aws.lambda.function.name': 'orders-fn',
        'aws.lambda.region': 'us-east-1',
        'aws.lambda.batch.size': '3',
        'errors.tolerance': 'all',
        'errors.deadletterqueue.topic.name': 'orders-dlq',
        'errors.deadletterqueue.context.headers.enable': 'true',
      },
    });
    expect(created.status).toBe(201);
    const worker = new ConnectWorker({
      state: new ConnectStateStore(sluiceFromEnv().store),
      client,
      clock: systemClock,
      workerId: 'test',
      budgetMs: 13_000,
      pollIntervalMs: 100,
    });
    // orders.us is created while the task runs: the task lists the topics again every 10 s.
    const running = worker.tick();
    await new Promise((r) => setTimeout(r, 1_500));
    await admin.createTopic({ name: 'orders.us' });
    const us = await produce('orders.us', [20, 21]);
    const outcomes = await running;
    expect(outcomes.map((o) => [o.connector, o.outcome, o.records])).toEqual([['orders-lambda', 'ran', 10]]);
    expect(await delivered()).toEqual(
      [...expected('orders.eu', eu, [5]), ...expected('orders.us', us)].sort(),
    );

    const [dead, ...more] = (await client.consumer().fetch('orders-dlq', 0, 0)).records;
    expect(more).toEqual([]);
    expect(Buffer.from(dead!.value!).toString('utf8')).toBe('{"orderId":5,"amount":-1}');
    expect(Buffer.from(dead!.key!).toString('utf8')).toBe('o5');
    const headers = Object.fromEntries(
      dead!.headers.map((h) => [h.key, h.value === null ? null : Buffer.from(h.value).toString('utf8')]),
    );
    expect(headers).toMatchObject({
      region: 'eu',
      '__connect.errors.topic': 'orders.eu',
      '__connect.errors.partition': String(poison.partition),
      '__connect.errors.offset': String(poison.offset),
      '__connect.errors.connector.name': 'orders-lambda',
      '__connect.errors.task.id': '0',
      '__connect.errors.stage': 'TASK_PUT',
      '__connect.errors.class.name': 'io.sluice.connect.aws.lambda.AwsLambdaSinkConnector',
      '__connect.errors.exception.class.name': 'BatchItemFailure',
      '__connect.errors.exception.message': `the function reported orders.eu-${poison.partition} offset ${poison.offset} failed`,
    });

    // orders.ca appears between invocations; the next one subscribes to it from the start.
    await admin.createTopic({ name: 'orders.ca' });
    const ca = await produce('orders.ca', [30, 31, 32]);
    const short = new ConnectWorker({
      state: new ConnectStateStore(sluiceFromEnv().store),
      client,
      clock: systemClock,
      workerId: 'test',
      budgetMs: 2_500,
      pollIntervalMs: 100,
    });
    expect((await short.tick()).map((o) => [o.outcome, o.records])).toEqual([['ran', 3]]);
    expect(await delivered()).toEqual(
      [...expected('orders.eu', eu, [5]), ...expected('orders.us', us), ...expected('orders.ca', ca)].sort(),
    );
    const offsets = (await stack.call('GET', '/v1/connect/connectors/orders-lambda/offsets')).json as {
      offsets: {
        partition: { kafka_topic: string; kafka_partition: number };
        offset: { kafka_offset: number };
      }[];
    };
    const highs = async (topic: string) =>
      (await admin.fetchTopicOffsets(topic)).map((p) => ({
        partition: { kafka_topic: topic, kafka_partition: p.partition },
        offset: { kafka_offset: p.high },
      }));
    const key = (o: { partition: { kafka_topic: string; kafka_partition: number } }) =>
      `${o.partition.kafka_topic}-${o.partition.kafka_partition}`;
    expect([...offsets.offsets].sort((a, b) => (key(a) < key(b) ? -1 : 1))).toEqual([
      ...(await highs('orders.ca')),
      ...(await highs('orders.eu')),
      ...(await highs('orders.us')),
    ]);
    expect(emulator.invocations.every((i) => i.status === 200)).toBe(true);
  });
});
