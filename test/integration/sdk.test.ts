/**
 * The SDK against the local stack over real HTTP: admin, JSON and binary produce with answers lost on
 * the way back (the retry must not duplicate), and consumers reading everything exactly once in order.
 */
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SluiceClient } from '../../sdk/client.js';
import { nodeHttpFetch } from '../../sdk/node-http.js';
import type { FetchLike } from '../../sdk/transport.js';
import type { ConsumedRecord } from '../../sdk/types.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;
const text = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('utf8'));

beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stack.stop();
});

/** A fetch that lets matching requests reach the server but loses the first `count` answers. */
const losingAnswers = (matches: (url: string, init: RequestInit) => boolean, count: number) => {
  let lost = 0;
  const fetch: FetchLike = async (url, init) => {
    const response = await globalThis.fetch(url, init);
    if (matches(url, init) && lost < count) {
      lost++;
      await response.arrayBuffer();
      throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
    }
    return response;
  };
  return { fetch, lost: () => lost };
};

const client = (fetch?: FetchLike) =>
  new SluiceClient({
    url: t.url,
    ...(fetch ? { fetch } : {}),
    retry: { retries: 4, initialRetryTimeMs: 10 },
  });

describe('SDK admin', () => {
  it('creates, lists, describes, grows and deletes a topic', async () => {
    const admin = client().admin();
    const created = await admin.createTopic({
      name: 'sdk-admin',
      partitions: 2,
      configs: { 'retention.ms': '3600000' },
    });
    expect(created.partitions.map((p) => p.partition)).toEqual([0, 1]);
    expect(created.configs['retention.ms']).toBe('3600000');
    expect((await admin.listTopics()).find((x) => x.name === 'sdk-admin')).toEqual({
      name: 'sdk-admin',
      partitions: 2,
      replicationFactor: 1,
    });
    expect((await admin.updateTopic('sdk-admin', { partitions: 3 })).partitions).toHaveLength(3);
    await expect(admin.createTopic({ name: 'sdk-admin' })).rejects.toMatchObject({
      code: 'TOPIC_ALREADY_EXISTS',
      status: 409,
      retriable: false,
    });
    expect((await admin.cluster()).stores.map((s) => s.id)).toEqual(['s0']);
    await admin.deleteTopic('sdk-admin');
    await expect(admin.describeTopic('sdk-admin')).rejects.toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      status: 404,
    });
  });
});

describe('SDK producer and consumer', () => {
  it('retries a JSON send whose answer was lost without writing it twice', async () => {
    await client().admin().createTopic({ name: 'sdk-json', partitions: 1 });
    const lossy = losingAnswers((url) => url.endsWith('/records'), 1);
    const producer = client(lossy.fetch).producer();
    const first = await producer.send({
      topic: 'sdk-json',
      messages: [{ key: 'k', value: 'one' }, { value: new Uint8Array([0, 1, 2]) }],
    });
    const second = await producer.send({
      topic: 'sdk-json',
      messages: [{ value: 'two', headers: { h: 'v' } }],
    });
    expect(lossy.lost()).toBe(1);
    expect(first.map((r) => ('offset' in r ? r.offset : -1))).toEqual([0, 1]);
    expect(second.map((r) => ('offset' in r ? r.offset : -1))).toEqual([2]);

    const batch = await client().consumer().fetch('sdk-json', 0, 0);
    expect(
      batch.records.map((r) => [r.offset, text(r.key), r.value && Buffer.from(r.value).toString('hex')]),
    ).toEqual([
      [0, 'k', Buffer.from('one').toString('hex')],
      [1, null, '000102'],
      [2, null, Buffer.from('two').toString('hex')],
    ]);
    expect(batch.records[2]!.headers.map((h) => [h.key, text(h.value)])).toEqual([['h', 'v']]);
    expect(batch.highWatermark).toBe(3);
  });

  it('retries binary batches whose answers were lost: every record once, in send order', async () => {
    await client().admin().createTopic({ name: 'sdk-binary', partitions: 2 });
    const lossy = losingAnswers((url) => url.endsWith('/batches'), 3);
    const producer = client(lossy.fetch).producer();
    const sends = Array.from({ length: 10 }, (_, i) =>
      producer.sendBatch(
        'sdk-binary',
        i % 2,
        Array.from({ length: 5 }, (_, j) => ({ key: `k${i}`, value: `m${i}-${j}` })),
      ),
    );
    const results = await Promise.all(sends);
    expect(lossy.lost()).toBe(3);
    expect(results.filter((_, i) => i % 2 === 0).map((r) => r.baseOffset)).toEqual([0, 5, 10, 15, 20]);
    expect(results.filter((_, i) => i % 2 === 1).map((r) => [r.baseOffset, r.lastOffset])).toEqual([
      [0, 4],
      [5, 9],
      [10, 14],
      [15, 19],
      [20, 24],
    ]);

    const consumer = client().consumer({ maxWaitMs: 200 });
    consumer.subscribe({ topics: ['sdk-binary'], fromBeginning: true });
    const seen: ConsumedRecord[] = [];
    const running = consumer.run({ eachBatch: async ({ batch }) => void seen.push(...batch.records) });
    const deadline = Date.now() + 20_000;
    while (seen.length < 50 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await consumer.stop();
    await running;
    for (const partition of [0, 1]) {
      const mine = seen.filter((r) => r.partition === partition);
      expect(mine.map((r) => r.offset)).toEqual(Array.from({ length: 25 }, (_, i) => i));
      const sent = Array.from({ length: 5 }, (_, s) =>
        Array.from({ length: 5 }, (_, j) => `m${2 * s + partition}-${j}`),
      ).flat();
      expect(mine.map((r) => text(r.value))).toEqual(sent);
    }
  });

  it('joins a consumer group, reads from committed offsets and commits on stop', async () => {
    await client().admin().createTopic({ name: 'sdk-group', partitions: 2 });
    const producer = client().producer();
    for (const p of [0, 1])
      await producer.sendBatch('sdk-group', p, [{ value: `a${p}` }, { value: `b${p}` }]);

    const read = async (expected: number): Promise<string[]> => {
      const consumer = client().consumer({ groupId: 'sdk-g', maxWaitMs: 200 });
      consumer.subscribe({ topics: ['sdk-group'], fromBeginning: true });
      const seen: string[] = [];
      const running = consumer.run({
        eachMessage: async ({ message }) => void seen.push(text(message.value)!),
      });
      const deadline = Date.now() + 3_000;
      while (Date.now() < deadline && consumer.assignment().flatMap((a) => a.partitions).length < 2)
        await new Promise((r) => setTimeout(r, 20));
      // Until the records expected came (a loaded machine answers a first fetch slowly), then a little
      // more so that any record beyond them would show.
      const until = Date.now() + 10_000;
      while (Date.now() < until && seen.length < expected) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 500));
      await consumer.stop();
      await running;
      return seen.sort();
    };
    expect(await read(4)).toEqual(['a0', 'a1', 'b0', 'b1']);
    for (const p of [0, 1]) await producer.sendBatch('sdk-group', p, [{ value: `c${p}` }]);
    expect(await read(2)).toEqual(['c0', 'c1']);
    expect(
      (await client().admin().fetchOffsets('sdk-g', 'sdk-group')).map((o) => [o.partition, o.offset]).sort(),
    ).toEqual([
      [0, 3],
      [1, 3],
    ]);
  });
});

describe('nodeHttpFetch (the SDK on node:http)', () => {
  const nodeClient = (options: { requestTimeoutMs?: number; url?: string } = {}) =>
    new SluiceClient({
      url: options.url ?? t.url,
      fetch: nodeHttpFetch({ maxSockets: 4 }),
      retry: { retries: 0 },
      ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    });

  it('produces binary batches and reads them back like the default fetch', async () => {
    const c = nodeClient();
    await c.admin().createTopic({ name: 'sdk-node-http', partitions: 1 });
    const value = new Uint8Array(300_000).map((_, i) => i & 0xff);
    const sent = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        c.producer().sendBatch('sdk-node-http', 0, [{ key: `k${i}`, value }]),
      ),
    );
    expect(sent.map((r) => r.baseOffset).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5]);
    const read = await client().consumer().fetch('sdk-node-http', 0, 0);
    expect(read.records).toHaveLength(6);
    expect(Buffer.from(read.records[3]!.value!).equals(Buffer.from(value))).toBe(true);
    const again = await c.consumer().fetch('sdk-node-http', 0, 4);
    expect(again.records.map((r) => r.offset)).toEqual([4, 5]);
  });

  it('turns error answers into the same SluiceErrors', async () => {
    await expect(nodeClient().admin().describeTopic('sdk-node-http-missing')).rejects.toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      status: 404,
      retriable: false,
    });
  });

  it('cancels on abort, times out a silent server and fails fast on a closed port', async () => {
    const c = nodeClient();
    await c.admin().createTopic({ name: 'sdk-node-http-wait', partitions: 1 });
    // A long poll on an empty partition holds the request open until it is cancelled.
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    await expect(
      c.consumer().fetch('sdk-node-http-wait', 0, 0, { maxWaitMs: 5_000, signal: abort.signal }),
    ).rejects.toMatchObject({ code: 'ABORTED', retriable: false });

    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      await expect(
        nodeClient({ url: `http://127.0.0.1:${port}`, requestTimeoutMs: 200 })
          .admin()
          .listTopics(),
      ).rejects.toMatchObject({ code: 'REQUEST_TIMED_OUT', retriable: true });
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    await expect(nodeClient({ url: 'http://127.0.0.1:9' }).admin().listTopics()).rejects.toMatchObject({
      code: 'NETWORK_EXCEPTION',
      retriable: true,
    });
  });
});
