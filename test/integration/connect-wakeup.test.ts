/**
 * Sinks triggered by new data, through the connect-worker handler on the local stack: an idle sink is
 * not invoked by the schedule, a stream batch naming its topic's partition items runs it until it has
 * caught up (not for the whole budget), a batch for other topics runs nothing, and a scheduled
 * invocation that runs other tasks starts an idle sink as soon as its topic advances.
 */
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduledTick } from '../../connect/worker/wakeup.js';
import { ConnectWorker } from '../../connect/worker/worker.js';
import { ConnectStateStore } from '../../connect/state-store.js';
import { handler } from '../../functions/connect-worker.js';
import { sluiceFromEnv } from '../../local/runtime.js';
import { systemClock } from '../../lib/ports/clock.js';
import { SluiceClient } from '../../sdk/index.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let stack: TestStack;
let client: SluiceClient;
let server: Server;
let sinkUrl: string;
const received: { path: string; values: unknown[] }[] = [];
const BUDGET_MS = 8_000;

beforeAll(async () => {
  process.env.SLUICE_CONNECT_BUDGET_MS = String(BUDGET_MS);
  process.env.SLUICE_CONNECT_LEASE_MS = '3000';
  process.env.SLUICE_CONNECT_SINK_IDLE_MS = '600';
  stack = await startTestStack();
  client = new SluiceClient({ url: stack.url });
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ path: req.url ?? '', values: JSON.parse(body) as unknown[] });
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sinkUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await stack?.stack.stop();
});

const sink = (name: string, topic: string) =>
  stack.call('POST', '/v1/connect/connectors', {
    name,
    config: { 'connector.class': 'HttpSinkConnector', topics: topic, 'http.api.url': `${sinkUrl}/${name}` },
  });

const streamEvent = async (topic: string, partitions: number[]) => {
  const { topicId } = (await stack.call('GET', `/v1/topics/${topic}`)).json as { topicId: string };
  return {
    Records: partitions.map((p) => ({
      eventSource: 'aws:dynamodb',
      eventName: 'MODIFY',
      dynamodb: { Keys: { pk: { S: `P#${topicId}#${p}` }, sk: { S: 'STATE' } } },
    })),
  };
};

const valuesOf = (name: string) => received.filter((r) => r.path === `/${name}`).flatMap((r) => r.values);

describe('sinks woken by new data', () => {
  it('the schedule skips an idle sink; a stream batch for its topic runs it until it caught up', async () => {
    await client.admin().createTopic({ name: 'wake', partitions: 2 });
    await client.admin().createTopic({ name: 'other' });
    expect((await sink('wake-sink', 'wake')).status).toBe(201);

    // Nothing to read: the scheduled invocation runs no task, and no group is even joined.
    expect(await handler({ source: 'aws.events', 'detail-type': 'Scheduled Event' })).toEqual([]);
    expect((await client.admin().listGroups()).map((g) => g.groupId)).not.toContain('connect-wake-sink');

    await client.producer().send({
      topic: 'wake',
      messages: [1, 2, 3].map((n) => ({ key: `k${n}`, value: JSON.stringify({ n }) })),
    });
    // A batch of another topic's partition items concerns no sink.
    expect(await handler(await streamEvent('other', [0]))).toEqual([]);

    const started = Date.now();
    const outcomes = await handler(await streamEvent('wake', [0, 1]));
    const took = Date.now() - started;
    expect(outcomes.map((o) => [o.connector, o.outcome, o.records])).toEqual([['wake-sink', 'ran', 3]]);
    expect(took).toBeLessThan(BUDGET_MS / 2);
    expect((valuesOf('wake-sink') as { n: number }[]).map((v) => v.n).sort()).toEqual([1, 2, 3]);

    // Caught up and committed: the next scheduled invocation has nothing for it again.
    expect(await handler({ source: 'aws.events' })).toEqual([]);
  });

  it('a scheduled invocation that runs other tasks starts an idle sink once its topic advances', async () => {
    await client.admin().createTopic({ name: 'busy' });
    await client.admin().createTopic({ name: 'quiet' });
    await client.producer().send({ topic: 'busy', messages: [{ value: JSON.stringify({ n: 1 }) }] });
    expect((await sink('busy-sink', 'busy')).status).toBe(201);
    expect((await sink('quiet-sink', 'quiet')).status).toBe(201);
    const worker = new ConnectWorker({
      state: new ConnectStateStore(sluiceFromEnv().store),
      client,
      clock: systemClock,
      workerId: 'watch',
      budgetMs: 6_000,
      leaseMs: 3_000,
      pollIntervalMs: 100,
    });
    // busy-sink lags and runs (for the budget: no idle exit here); quiet-sink is watched.
    const running = worker.tick({
      ...scheduledTick(client, { watchMs: 200, sinkIdleMs: 6_000 }),
      sinkIdleMs: undefined,
    });
    await new Promise((r) => setTimeout(r, 1_000));
    await client.producer().send({ topic: 'quiet', messages: [{ value: JSON.stringify({ n: 7 }) }] });
    const outcomes = await running;
    expect(
      outcomes
        .filter((o) => o.connector !== 'wake-sink')
        .map((o) => [o.connector, o.outcome, o.records])
        .sort(),
    ).toEqual([
      ['busy-sink', 'ran', 1],
      ['quiet-sink', 'ran', 1],
    ]);
    expect(outcomes.map((o) => o.connector)).not.toContain('wake-sink');
    expect(valuesOf('quiet-sink')).toEqual([{ n: 7 }]);
  });
});
