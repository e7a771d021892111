/**
 * The wait socket through the local stack `npm start` runs (DynamoDB Local, the S3 emulator, the local
 * gateway's WebSocket API and its stream emulation with both images), over real WebSockets: GET
 * /v1/cluster names it; a registration at a partition's end is told by the record that passes it, once;
 * hostile frames get error frames; a fetch naming the connection (from its hello) registers the
 * partitions it leaves caught up, and one with a wrong token is refused; the SDK's group consumer,
 * left caught up, is woken through it for every record; and under SLUICE_AUTH=iam an unsigned upgrade
 * is refused, a signed one waits only on topics it may read, and another caller cannot register on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SluiceClient } from '../../sdk/client.js';
import { localConnections } from '../../local/runtime.js';
import type { AuthStack } from './auth-stack.js';
import { API_ARN, arn, invokePolicy, startAuthStack } from './auth-stack.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

/** A WebSocket and the frames it received, in order. */
const open = async (url: string, headers: Record<string, string> = {}) => {
  const ws = new WebSocket(url, { headers });
  const frames: { type: string; [k: string]: unknown }[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data: Buffer) => {
    frames.push(JSON.parse(String(data)) as { type: string });
    for (const w of waiters.splice(0)) w();
  });
  const status = await new Promise<number>((resolve) => {
    ws.once('open', () => resolve(101));
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', () => resolve(0));
  });
  /** Resolves once `n` frames arrived (or rejects after `ms`). */
  const frameCount = (n: number, ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${frames.length} of ${n} frames`)), ms);
      const check = () => {
        if (frames.length >= n) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  return { ws, frames, status, frameCount };
};

describe('the wait socket on the local stack', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack();
  }, 120_000);
  afterAll(async () => {
    await t?.stack.stop();
  });

  it('is named by GET /v1/cluster, tells a registration once a record commits, and refuses bad frames', async () => {
    const cluster = await t.call('GET', '/v1/cluster');
    const waitUrl = cluster.json.waitUrl as string;
    expect(waitUrl).toBe(`${t.url.replace('http:', 'ws:')}/v1/wait`);
    const client = new SluiceClient({ url: t.url, waitUrl: false });
    await client.admin().createTopic({ name: 'ws-raw', partitions: 2 });
    await client.producer().sendBatch('ws-raw', 1, [{ value: 'before' }]);
    const s = await open(waitUrl);
    expect(s.status).toBe(101);
    s.ws.send('{"action":"wait"');
    s.ws.send(JSON.stringify({ action: 'listen' }));
    s.ws.send(
      JSON.stringify({ action: 'wait', partitions: [{ topic: 'ws-raw', partition: 0, fetchOffset: -1 }] }),
    );
    s.ws.send(
      JSON.stringify({ action: 'wait', partitions: [{ topic: 'ws-none', partition: 0, fetchOffset: 0 }] }),
    );
    await s.frameCount(4);
    expect(s.frames.map((f) => (f.error as { code: string }).code)).toEqual([
      'INVALID_REQUEST',
      'INVALID_REQUEST',
      'INVALID_REQUEST',
      'UNKNOWN_TOPIC_OR_PARTITION',
    ]);
    // At the end of both partitions: nothing is sent until a record commits.
    s.ws.send(
      JSON.stringify({
        action: 'wait',
        partitions: [
          { topic: 'ws-raw', partition: 0, fetchOffset: 0 },
          { topic: 'ws-raw', partition: 1, fetchOffset: 1 },
        ],
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(s.frames).toHaveLength(4);
    await client.producer().sendBatch('ws-raw', 1, [{ value: 'after' }]);
    await s.frameCount(5);
    expect(s.frames[4]).toEqual({
      type: 'ready',
      partitions: [{ topic: 'ws-raw', partition: 1, fetchOffset: 1 }],
    });
    // Each partition's registration is told by the record that passes it, once.
    await client.producer().sendBatch('ws-raw', 1, [{ value: 'again' }]);
    await client.producer().sendBatch('ws-raw', 0, [{ value: 'more' }]);
    await s.frameCount(6);
    await new Promise((r) => setTimeout(r, 300));
    expect(s.frames.slice(5)).toEqual([
      { type: 'ready', partitions: [{ topic: 'ws-raw', partition: 0, fetchOffset: 0 }] },
    ]);
    s.ws.close();
  });

  it('registers what a fetch naming the connection leaves caught up, and refuses a wrong token', async () => {
    const waitUrl = `${t.url.replace('http:', 'ws:')}/v1/wait`;
    const client = new SluiceClient({ url: t.url, waitUrl: false });
    await client.admin().createTopic({ name: 'ws-fetch', partitions: 2 });
    await client.producer().sendBatch('ws-fetch', 0, [{ value: 'a' }]);
    const s = await open(waitUrl);
    s.ws.send(JSON.stringify({ action: 'hello' }));
    await s.frameCount(1);
    const hello = s.frames[0] as { type: string; connectionId: string; token: string };
    expect(hello.type).toBe('hello');
    const fetch = (wait: { connectionId: string; token: string }) =>
      t.call('POST', '/v1/fetch', {
        partitions: [
          { topic: 'ws-fetch', partition: 0, offset: 0 },
          { topic: 'ws-fetch', partition: 1, offset: 0 },
        ],
        wait,
      });
    const refused = await fetch({ connectionId: hello.connectionId, token: 'not-the-token' });
    expect([refused.status, (refused.json.error as { code: string }).code]).toEqual([400, 'INVALID_REQUEST']);
    const answer = await fetch({ connectionId: hello.connectionId, token: hello.token });
    expect([answer.status, answer.json.error]).toEqual([200, undefined]);
    expect((answer.json.partitions as { waitingAt?: number }[]).map((p) => p.waitingAt)).toEqual([1, 0]);
    await client.producer().sendBatch('ws-fetch', 0, [{ value: 'b' }]);
    await s.frameCount(2);
    expect(s.frames[1]).toEqual({
      type: 'ready',
      partitions: [{ topic: 'ws-fetch', partition: 0, fetchOffset: 1 }],
    });
    s.ws.close();
  });

  it("wakes the SDK's caught-up group consumer for every record, without a long poll", async () => {
    const client = new SluiceClient({ url: t.url });
    await client.admin().createTopic({ name: 'ws-group', partitions: 3 });
    const consumer = client.consumer({ groupId: 'ws-group-readers', maxWaitMs: 20_000 });
    consumer.subscribe({ topics: ['ws-group'], fromBeginning: true });
    const got: string[] = [];
    const running = consumer.run({
      eachMessage: async ({ message }) => {
        got.push(new TextDecoder().decode(message.value!));
      },
    });
    const postedBefore = localConnections.posted;
    const sent: string[] = [];
    const producer = client.producer();
    for (let i = 0; i < 12; i++) {
      // Pauses long enough that the consumer is caught up and waiting on the socket each time.
      await new Promise((r) => setTimeout(r, 150));
      const value = `r${i}`;
      await producer.sendBatch('ws-group', i % 3, [{ value }]);
      sent.push(value);
    }
    const deadline = Date.now() + 15_000;
    while (got.length < sent.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await consumer.stop();
    await running;
    expect([...got].sort()).toEqual([...sent].sort());
    // It was woken through the socket (a long poll would have answered without a message).
    expect(localConnections.posted - postedBefore).toBeGreaterThanOrEqual(1);
  }, 60_000);
});

describe('the wait socket under SLUICE_AUTH=iam', () => {
  let a: AuthStack;
  beforeAll(async () => {
    a = await startAuthStack([
      { name: 'admin', policies: [invokePolicy([`${API_ARN}/*`])] },
      {
        name: 'reader',
        policies: [
          invokePolicy([arn('GET', '/v1/wait'), arn('GET', '/v1/topics/ws-mine/partitions/*/records')]),
        ],
      },
    ]);
  }, 120_000);
  afterAll(async () => {
    await a?.stop();
  });

  it('refuses an unsigned upgrade and checks READ on every topic a signed one waits on', async () => {
    const admin = new SluiceClient({
      url: a.stack.url,
      region: 'us-east-1',
      credentials: a.keys['admin']!,
      waitUrl: false,
    });
    await admin.admin().createTopic({ name: 'ws-mine', partitions: 1 });
    await admin.admin().createTopic({ name: 'ws-theirs', partitions: 1 });
    const url = `${a.stack.url.replace('http:', 'ws:')}/v1/wait`;
    expect((await open(url)).status).toBe(401);
    const { signedHeaders } = await import('../../sdk/sigv4.js');
    const headers = await signedHeaders({ region: 'us-east-1', credentials: a.keys['reader']! })(url);
    const s = await open(url, headers);
    expect(s.status).toBe(101);
    s.ws.send(
      JSON.stringify({ action: 'wait', partitions: [{ topic: 'ws-theirs', partition: 0, fetchOffset: 0 }] }),
    );
    await s.frameCount(1);
    expect((s.frames[0]!.error as { code: string }).code).toBe('TOPIC_AUTHORIZATION_FAILED');
    s.ws.send(
      JSON.stringify({ action: 'wait', partitions: [{ topic: 'ws-mine', partition: 0, fetchOffset: 0 }] }),
    );
    await new Promise((r) => setTimeout(r, 200));
    await admin.producer().sendBatch('ws-mine', 0, [{ value: 'x' }]);
    await s.frameCount(2);
    expect(s.frames[1]).toEqual({
      type: 'ready',
      partitions: [{ topic: 'ws-mine', partition: 0, fetchOffset: 0 }],
    });
    // Its token does not let another caller register on it.
    s.ws.send(JSON.stringify({ action: 'hello' }));
    await s.frameCount(3);
    const hello = s.frames[2] as { type: string; connectionId: string; token: string };
    expect(hello.type).toBe('hello');
    const other = admin.consumer();
    await expect(
      other.fetchMany([{ topic: 'ws-mine', partition: 0, offset: 1 }], {
        wait: { connectionId: hello.connectionId, token: hello.token },
      }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    s.ws.close();
  });
});
