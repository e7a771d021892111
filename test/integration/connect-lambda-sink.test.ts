/**
 * The Lambda sink task against the Invoke emulator (test/support/lambda-emulator.ts) running a real
 * handler written for MSK (test/fixtures/lambda/msk-orders.ts), through @aws-sdk/client-lambda: the
 * exact event shape, function errors isolated by bisection, the partial batch response, retries, the
 * payload limits, throttling, timeouts and asynchronous invocations.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LambdaSinkSettings } from '../../connect/connectors/lambda-sink.js';
import { LambdaSinkTask, lambdaSinkSettingsOf } from '../../connect/connectors/lambda-sink.js';
import {
  BYTES_CONVERTER,
  JSON_CONVERTER,
  STRING_CONVERTER,
  createConverter,
} from '../../connect/converters.js';
import type { SinkRecord, TaskContext } from '../../connect/plugin.js';
import { createLambdaInvoker } from '../../lib/adapters/aws/lambda-invoker.js';
import { InvokeFailure } from '../../lib/ports/function-invoker.js';
import type { LambdaEmulator } from '../support/lambda-emulator.js';
import { startLambdaEmulator } from '../support/lambda-emulator.js';

const HANDLER = fileURLToPath(new URL('../fixtures/lambda/msk-orders.ts', import.meta.url));
let emulator: LambdaEmulator;
let dir: string;
const out = (name: string) => join(dir, `${name}.jsonl`);
const fn = (
  name: string,
  exportName: string,
  extra: { timeoutMs?: number; reservedConcurrency?: number } = {},
) => ({
  name,
  module: HANDLER,
  exportName,
  environment: { ORDERS_OUT: out(name) },
  ...extra,
});
const NAMES = ['orders', 'orders-partial', 'events', 'counts', 'slow', 'single'] as const;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lambda-sink-'));
  emulator = await startLambdaEmulator([
    fn('orders', 'handler'),
    fn('orders-partial', 'partialHandler'),
    fn('events', 'eventHandler'),
    fn('counts', 'countHandler', { timeoutMs: 10_000 }),
    fn('slow', 'slowHandler', { timeoutMs: 300 }),
    // Busy long enough for the SDK's own retries of a 429 (three attempts, well under a second).
    fn('single', 'slowHandler', { timeoutMs: 6_000, reservedConcurrency: 1 }),
  ]);
}, 60_000);

afterAll(async () => {
  await emulator?.stop();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  emulator.invocations.length = 0;
  for (const name of NAMES) await writeFile(out(name), '');
});

const lines = async (name: string): Promise<Record<string, unknown>[]> =>
  (await readFile(out(name), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const UTF8 = new TextEncoder();
const order = (
  topic: string,
  partition: number,
  offset: number,
  value: unknown,
  key: string | null = `k${offset}`,
): SinkRecord => ({
  topic,
  originalTopic: topic,
  kafkaPartition: partition,
  kafkaOffset: offset,
  timestamp: 1_700_000_000_000 + offset,
  key,
  value,
  headers: [{ key: 'source', value: 'web', bytes: UTF8.encode('web') }],
});
const orders = (n: number, poison: readonly number[] = []) =>
  Array.from({ length: n }, (_, i) =>
    order('orders', 0, i, poison.includes(i) ? { orderId: i, amount: -1 } : { orderId: i, amount: i * 10 }),
  );

const errants: { offset: number; name: string; message: string }[] = [];
const context: TaskContext = {
  connector: 'lambda-test',
  task: 0,
  log: () => {},
  reportErrant: async (r, e) =>
    void errants.push({ offset: r.kafkaOffset, name: (e as Error).name, message: (e as Error).message }),
};
beforeEach(() => void (errants.length = 0));

const task = (
  functionName: string,
  overrides: Record<string, string> = {},
  valueConverter = JSON_CONVERTER,
): LambdaSinkTask => {
  const settings: LambdaSinkSettings = lambdaSinkSettingsOf(
    { 'aws.lambda.function.name': functionName, 'aws.lambda.region': 'us-east-1', ...overrides },
    'lambda-test',
  );
  return new LambdaSinkTask(
    createLambdaInvoker({ endpoint: emulator.endpoint, region: 'us-east-1' }),
    settings,
    context,
    {
      key: createConverter(STRING_CONVERTER),
      value: createConverter(valueConverter),
    },
  );
};

const offsetsOf = (rows: Record<string, unknown>[]) => rows.map((r) => r['offset']);

describe('Lambda sink: the MSK event', () => {
  it('hands the function exactly the event of the MSK event source mapping', async () => {
    const binary = new Uint8Array([0, 255, 1, 128]);
    const records: SinkRecord[] = [
      order('orders', 1, 7, { orderId: 7, amount: 70 }),
      {
        ...order('orders', 0, 3, null, null),
        headers: [{ key: 'bin', value: '\u0000\ufffd', bytes: binary }],
      },
      order('orders', 1, 8, { orderId: 8, amount: 80 }),
    ];
    await task('events', { 'aws.lambda.bootstrap.servers': 'b-1.sluice:9098,b-2.sluice:9098' }).put(records);
    expect(await lines('events')).toEqual([
      {
        eventSource: 'aws:kafka',
        eventSourceArn: 'arn:aws:kafka:us-east-1::cluster/sluice/lambda-test',
        bootstrapServers: 'b-1.sluice:9098,b-2.sluice:9098',
        records: {
          'orders-1': [
            {
              topic: 'orders',
              partition: 1,
              offset: 7,
              timestamp: 1_700_000_000_007,
              timestampType: 'CREATE_TIME',
              key: Buffer.from('k7').toString('base64'),
              value: Buffer.from('{"orderId":7,"amount":70}').toString('base64'),
              headers: [{ source: [119, 101, 98] }],
            },
            {
              topic: 'orders',
              partition: 1,
              offset: 8,
              timestamp: 1_700_000_000_008,
              timestampType: 'CREATE_TIME',
              key: Buffer.from('k8').toString('base64'),
              value: Buffer.from('{"orderId":8,"amount":80}').toString('base64'),
              headers: [{ source: [119, 101, 98] }],
            },
          ],
          // A tombstone without a key: both fields left out, as AWS does; binary header bytes kept.
          'orders-0': [
            {
              topic: 'orders',
              partition: 0,
              offset: 3,
              timestamp: 1_700_000_000_003,
              timestampType: 'CREATE_TIME',
              headers: [{ bin: [0, 255, 1, 128] }],
            },
          ],
        },
      },
    ]);
  });

  it('SelfManagedKafka events carry no eventSourceArn', async () => {
    await task('events', { 'aws.lambda.event.source': 'SelfManagedKafka' }).put([order('t', 0, 0, 1)]);
    const [event] = await lines('events');
    expect(Object.keys(event!).sort()).toEqual(['bootstrapServers', 'eventSource', 'records']);
    expect(event!['eventSource']).toBe('SelfManagedKafka');
  });

  it('runs the MSK handler unchanged, aws.lambda.batch.size records per invocation, in offset order', async () => {
    const sink = task('orders', { 'aws.lambda.batch.size': '4' });
    await sink.put(orders(10));
    const rows = await lines('orders');
    expect(offsetsOf(rows)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(rows[2]).toEqual({
      tp: 'orders-0',
      offset: 2,
      key: 'k2',
      orderId: 2,
      amount: 20,
      headers: { source: 'web' },
      source: 'msk',
    });
    expect(emulator.invocations.map((i) => [i.status, i.functionError ?? null])).toEqual([
      [200, null],
      [200, null],
      [200, null],
    ]);
    expect(sink.invocations).toBe(3);
    expect(await sink.flush()).toEqual([]);
    expect(errants).toEqual([]);
  });
});

describe('Lambda sink: failures', () => {
  it('a function error is bisected down to the poison record, which is retried and then reported errant', async () => {
    const sink = task('orders', { 'aws.lambda.batch.size': '10' });
    await sink.put(orders(10, [4]));
    // [0-9] fails, [0-4] fails, [0-2] ok, [3-4] fails, [3] ok, [4] three times (two retries), [5-9] ok.
    expect(sink.invocations).toBe(9);
    expect(emulator.invocations.filter((i) => i.functionError === 'Unhandled')).toHaveLength(6);
    const counts = new Map<unknown, number>();
    for (const r of await lines('orders')) counts.set(r['offset'], (counts.get(r['offset']) ?? 0) + 1);
    // At least once, as with the ESM: a failed batch's good records run again before the split finds the poison.
    expect([...counts.entries()].sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual([
      [0, 3],
      [1, 3],
      [2, 3],
      [3, 4],
      [5, 1],
      [6, 1],
      [7, 1],
      [8, 1],
      [9, 1],
    ]);
    expect(errants).toEqual([{ offset: 4, name: 'Error', message: 'order at orders-0/4 is not valid' }]);
  });

  it('a partial batch response retries from the reported record only; good records run once', async () => {
    const sink = task('orders-partial', { 'aws.lambda.batch.size': '10' });
    await sink.put(orders(10, [4]));
    // [0-9] reports 4, [4-6] reports 4, [4-5] reports 4, [4] three times, [5], [6], [7-9].
    expect(sink.invocations).toBe(9);
    expect(offsetsOf(await lines('orders-partial'))).toEqual([0, 1, 2, 3, 5, 6, 7, 8, 9]);
    expect(errants).toEqual([
      { offset: 4, name: 'BatchItemFailure', message: 'the function reported orders-0 offset 4 failed' },
    ]);
  });

  it('without bisection the failed rest of the batch is retried, then reported errant whole', async () => {
    const sink = task('orders-partial', {
      'aws.lambda.batch.size': '10',
      'aws.lambda.bisect.batch.on.function.error': 'false',
      'aws.lambda.maximum.retry.attempts': '1',
    });
    await sink.put(orders(10, [4]));
    expect(sink.invocations).toBe(2);
    expect(offsetsOf(await lines('orders-partial'))).toEqual([0, 1, 2, 3]);
    expect(errants.map((e) => e.offset)).toEqual([4, 5, 6, 7, 8, 9]);
  });

  it('a put retried after a failure does not send what was already delivered', async () => {
    const sink = task('orders', { 'aws.lambda.batch.size': '5' });
    await sink.put(orders(5));
    await sink.put(orders(10));
    expect(offsetsOf(await lines('orders'))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await sink.close();
    await sink.put(orders(2));
    expect(offsetsOf(await lines('orders'))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]);
  });

  it('with function.response.types empty a partial response counts as success', async () => {
    const sink = task('orders-partial', { 'aws.lambda.function.response.types': '' });
    await sink.put(orders(6, [2]));
    // The handler reported 2 and left 3-5 for the retry that never comes: lost to the function.
    expect(offsetsOf(await lines('orders-partial'))).toEqual([0, 1]);
    expect(errants).toEqual([]);
  });

  it('a timed-out function is a function error (Sandbox.Timedout), its environment replaced', async () => {
    const sink = task('slow', { 'aws.lambda.maximum.retry.attempts': '0' });
    await sink.put([order('t', 0, 0, 1)]);
    expect(errants).toEqual([
      {
        offset: 0,
        name: 'Sandbox.Timedout',
        message: expect.stringMatching(/Task timed out after 0\.30 seconds$/),
      },
    ]);
  });

  it('an unknown function fails the put for good; throttling is retriable', async () => {
    await expect(task('nope').put([order('t', 0, 0, 1)])).rejects.toEqual(
      new InvokeFailure('the function nope could not be invoked: no such function', false, 404),
    );
    const invoker = createLambdaInvoker({ endpoint: emulator.endpoint, region: 'us-east-1' });
    const first = invoker.invoke({
      functionName: 'single',
      invocationType: 'RequestResponse',
      payload: UTF8.encode('{}'),
    });
    // Wait until the first holds the only environment (on a loaded machine its request can be late).
    while (emulator.busy('single') === 0) await new Promise((r) => setTimeout(r, 20));
    // The SDK retries a 429 itself (three attempts) before the task sees it.
    await expect(task('single').put([order('t', 0, 0, 1)])).rejects.toMatchObject({
      name: 'RetriableConnectError',
      retriable: true,
      message: 'the function single could not be invoked: throttled',
    });
    expect((await first).functionError).toBe('Unhandled');
    expect(emulator.invocations.filter((i) => i.status === 429).length).toBeGreaterThanOrEqual(1);
  });
});

describe('Lambda sink: payload limits', () => {
  it('cuts batches below 6 MB and dead-letters a record too large for any invocation', async () => {
    const big = (offset: number, mb: number) =>
      order('blobs', 0, offset, new Uint8Array(Math.round(mb * 1024 * 1024)).fill(65 + offset), null);
    const sink = task('counts', { 'aws.lambda.batch.size': '20' }, BYTES_CONVERTER);
    // Each 1.4 MiB value is 1.87 MiB in base64: three fit in one 6 MB event, not four.
    await sink.put([big(0, 1.4), big(1, 1.4), big(2, 5), big(3, 1.4), big(4, 1.4), big(5, 1.4)]);
    expect((await lines('counts')).map((l) => l['count'])).toEqual([3, 2]);
    expect(emulator.invocations.every((i) => i.payloadBytes <= 6_291_456)).toBe(true);
    expect(errants).toEqual([
      { offset: 2, name: 'RecordTooLargeException', message: expect.stringMatching(/at most 6291456$/) },
    ]);
  });

  it('the emulator refuses what Lambda refuses: 413 above 6 MB, 400 for a body that is not JSON', async () => {
    const invoker = createLambdaInvoker({ endpoint: emulator.endpoint, region: 'us-east-1' });
    await expect(
      invoker.invoke({
        functionName: 'counts',
        invocationType: 'RequestResponse',
        payload: UTF8.encode(`"${'x'.repeat(6_291_456)}"`),
      }),
    ).rejects.toEqual(
      new InvokeFailure('the function counts could not be invoked: the payload is too large', false, 413),
    );
    await expect(
      invoker.invoke({
        functionName: 'counts',
        invocationType: 'RequestResponse',
        payload: UTF8.encode('{not json'),
      }),
    ).rejects.toEqual(
      new InvokeFailure(
        'the function counts could not be invoked: the payload is not valid JSON',
        false,
        400,
      ),
    );
  });

  it('async invocations are accepted (202) and run in the background, batches below 1 MB', async () => {
    const sink = task('counts', { 'aws.lambda.invocation.type': 'async' }, BYTES_CONVERTER);
    const value = (offset: number) => order('blobs', 0, offset, new Uint8Array(400 * 1024).fill(66), null);
    await sink.put([value(0), value(1), value(2), value(3), value(4)]);
    await emulator.idle();
    // 400 KiB values are 534 KiB in base64: one per 1 MB event.
    expect((await lines('counts')).map((l) => l['count'])).toEqual([1, 1, 1, 1, 1]);
    expect(emulator.invocations.map((i) => [i.invocationType, i.status])).toEqual(
      Array(5).fill(['Event', 202]),
    );
  });
});
