import { describe, expect, it } from 'vitest';
import { encodeRecordBatch, withBaseOffset } from '../../../protocol/record-batch/index.js';
import { SluiceClient } from '../../../sdk/client.js';
import type { ConsumedRecord } from '../../../sdk/types.js';
import type { FetchLike } from '../../../sdk/transport.js';
import { withMultiFetch } from '../../support/multi-fetch-fake.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));

interface Request {
  method: string;
  url: URL;
  json: Record<string, unknown> | undefined;
}

type Answer = { status: number; json?: unknown; bytes?: Uint8Array; headers?: Record<string, string> };

/**
 * A fake Sluice with one log per partition: stored in batches of `batchSize` records; binary fetch
 * returns whole batches like the server. Other routes go to `route`.
 */
const fakeSluice = (
  logs: Record<string, string[]>,
  route: (req: Request) => Answer | undefined = () => undefined,
  batchSize = 2,
) => {
  const requests: Request[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    const json =
      typeof init.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
    const req = { method: init.method ?? 'GET', url, json };
    requests.push(req);
    const answer = route(req) ?? serveLog(url);
    if (answer.status === 0) {
      // A long poll that found nothing: wait a little (or until cancelled) and answer empty.
      await new Promise((r) => setTimeout(r, 5));
      if (init.signal?.aborted) throw new DOMException('aborted', 'AbortError');
    }
    const status = answer.status === 0 ? 200 : answer.status;
    const body = answer.bytes ?? (answer.json === undefined ? null : JSON.stringify(answer.json));
    return new Response(body, { status, headers: answer.headers ?? {} });
  };
  const serveLog = (url: URL): Answer => {
    const m = /^\/v1\/topics\/([^/]+)\/partitions\/(\d+)\/(records|offsets)$/.exec(url.pathname);
    if (!m)
      return { status: 404, json: { error: { code: 'NOT_FOUND', message: url.pathname, retriable: false } } };
    const log = logs[`${m[1]}-${m[2]}`] ?? [];
    if (m[3] === 'offsets')
      return {
        status: 200,
        json: { offset: url.searchParams.get('at') === 'earliest' ? 0 : log.length, timestamp: -1 },
      };
    const offset = Number(url.searchParams.get('offset'));
    if (offset > log.length) {
      return {
        status: 416,
        json: {
          error: { code: 'OFFSET_OUT_OF_RANGE', message: 'out', retriable: false },
          logStartOffset: 0,
          highWatermark: log.length,
        },
      };
    }
    const headers = (next: number) => ({
      'sluice-high-watermark': String(log.length),
      'sluice-log-start-offset': '0',
      'sluice-next-offset': String(next),
    });
    if (offset === log.length)
      return {
        status: Number(url.searchParams.get('maxWaitMs')) > 0 ? 0 : 200,
        bytes: new Uint8Array(0),
        headers: headers(offset),
      };
    const base = Math.floor(offset / batchSize) * batchSize;
    const values = log.slice(base, base + batchSize);
    const batch = withBaseOffset(
      encodeRecordBatch(
        values.map((v, i) => ({
          key: utf8(`k${base + i}`),
          value: utf8(v),
          headers: [{ key: 'h', value: utf8('x') }],
          timestamp: 1_000 + base + i,
        })),
      ),
      base,
    );
    return { status: 200, bytes: batch, headers: headers(base + values.length) };
  };
  /** The bodies of POST /v1/fetch, which the fake answers by asking serveLog per partition. */
  const polls: Record<string, unknown>[] = [];
  const multi = withMultiFetch(fetch);
  const client = new SluiceClient({
    url: 'http://sluice.test',
    fetch: async (input, init) => {
      if (new URL(input).pathname === '/v1/fetch') polls.push(JSON.parse(String(init.body)));
      return multi(input, init);
    },
    retry: { retries: 2, sleep: async () => {} },
  });
  return { client, requests, polls };
};

const topicDescription = (name: string, partitions: number) => ({
  status: 200,
  json: {
    name,
    topicId: 'id',
    replicationFactor: 1,
    configs: {},
    partitions: Array.from({ length: partitions }, (_, p) => ({
      partition: p,
      logStartOffset: 0,
      highWatermark: 0,
    })),
  },
});

const until = async (condition: () => boolean, timeoutMs = 2_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
};

describe('Consumer.fetch', () => {
  it('decodes whole batches and drops records before the requested offset', async () => {
    const { client, requests } = fakeSluice({ 't-0': ['a', 'b', 'c', 'd', 'e'] });
    const batch = await client.consumer().fetch('t', 0, 3, { maxBytes: 100 });
    expect(batch.records.map((r) => [r.offset, text(r.key), text(r.value), r.timestamp])).toEqual([
      [3, 'k3', 'd', 1_003],
    ]);
    expect(batch.records[0]!.headers).toEqual([{ key: 'h', value: utf8('x') }]);
    expect(batch).toMatchObject({
      topic: 't',
      partition: 0,
      nextOffset: 4,
      highWatermark: 5,
      logStartOffset: 0,
    });
    expect(requests[0]!.url.search).toBe('?offset=3&maxBytes=100&maxWaitMs=0');
  });

  it('surfaces OFFSET_OUT_OF_RANGE with the partition bounds', async () => {
    const { client } = fakeSluice({ 't-0': ['a'] });
    await expect(client.consumer().fetch('t', 0, 9)).rejects.toMatchObject({
      code: 'OFFSET_OUT_OF_RANGE',
      details: { highWatermark: 1 },
    });
  });
});

describe('Consumer.run without a group', () => {
  it('reads every partition from the beginning, in offset order per partition', async () => {
    const { client, polls } = fakeSluice({ 't-0': ['a', 'b', 'c'], 't-1': ['x', 'y'] }, (req) =>
      req.url.pathname === '/v1/topics/t' ? topicDescription('t', 2) : undefined,
    );
    const consumer = client.consumer({ maxWaitMs: 10 });
    consumer.subscribe({ topics: ['t'], fromBeginning: true });
    const seen: ConsumedRecord[] = [];
    const running = consumer.run({ eachMessage: async ({ message }) => void seen.push(message) });
    await until(() => seen.length === 5);
    await consumer.stop();
    await running;
    const byPartition = (p: number) =>
      seen.filter((r) => r.partition === p).map((r) => `${r.offset}:${text(r.value)}`);
    expect(byPartition(0)).toEqual(['0:a', '1:b', '2:c']);
    expect(byPartition(1)).toEqual(['0:x', '1:y']);
    expect(consumer.assignment()).toEqual([]);
    // One long poll over both partitions at a time (Kafka's Fetch), never one per partition.
    expect(polls.length).toBeGreaterThan(1);
    for (const poll of polls) {
      expect((poll['partitions'] as { partition: number }[]).map((p) => p.partition).sort()).toEqual([0, 1]);
      expect(poll['maxWaitMs']).toBe(10);
    }
  });

  it('starts at the end without fromBeginning, and resets past-the-end seeks', async () => {
    const logs = { 't-0': ['a', 'b'] };
    const { client } = fakeSluice(logs, (req) =>
      req.url.pathname === '/v1/topics/t' ? topicDescription('t', 1) : undefined,
    );
    const consumer = client.consumer({ maxWaitMs: 10 });
    consumer.subscribe({ topics: ['t'] });
    consumer.seek({ topic: 't', partition: 0, offset: 50 });
    const seen: string[] = [];
    const running = consumer.run({
      eachBatch: async ({ batch }) => void seen.push(...batch.records.map((r) => text(r.value)!)),
    });
    await until(() => consumer.positions()[0]?.offset === 2);
    logs['t-0'].push('c');
    await until(() => seen.length === 1);
    await consumer.stop();
    await running;
    expect(seen).toEqual(['c']);
  });

  it('fails run with the handler’s error and stops fetching', async () => {
    const { client, requests } = fakeSluice({ 't-0': ['a', 'b'] }, (req) =>
      req.url.pathname === '/v1/topics/t' ? topicDescription('t', 1) : undefined,
    );
    const consumer = client.consumer({ maxWaitMs: 10 });
    consumer.subscribe({ topics: ['t'], fromBeginning: true });
    await expect(
      consumer.run({ eachMessage: async () => Promise.reject(new Error('handler broke')) }),
    ).rejects.toThrow('handler broke');
    const fetches = requests.length;
    await new Promise((r) => setTimeout(r, 30));
    expect(requests.length).toBe(fetches);
  });
});

describe('Consumer.run in a group', () => {
  it('joins, starts at committed offsets, commits on stop and leaves', async () => {
    const heartbeats: Record<string, unknown>[] = [];
    const commits: unknown[] = [];
    const { client } = fakeSluice({ 't-0': ['a', 'b', 'c', 'd'], 't-1': ['x'] }, (req) => {
      const p = req.url.pathname;
      if (p === '/v1/groups/g%201/heartbeat') {
        heartbeats.push(req.json!);
        const joining = req.json!['memberEpoch'] === 0;
        return {
          status: 200,
          json: {
            memberId: 'm1',
            memberEpoch: req.json!['memberEpoch'] === -1 ? -1 : 5,
            heartbeatIntervalMs: 10,
            assignment: joining ? { topicPartitions: [{ topic: 't', partitions: [0, 1] }] } : null,
          },
        };
      }
      if (p === '/v1/groups/g%201/offsets' && req.method === 'GET') {
        return { status: 200, json: { offsets: [{ topic: 't', partition: 0, offset: 2, metadata: '' }] } };
      }
      if (p === '/v1/groups/g%201/offsets') {
        commits.push(req.json);
        return { status: 200, json: { results: [] } };
      }
      return undefined;
    });
    const consumer = client.consumer({ groupId: 'g 1', maxWaitMs: 10, autoCommitIntervalMs: 0 });
    consumer.subscribe({ topics: ['t'], fromBeginning: true });
    const seen: string[] = [];
    const running = consumer.run({
      eachMessage: async ({ partition, message }) => void seen.push(`${partition}:${message.offset}`),
    });
    await until(() => seen.length === 3);
    await until(() => heartbeats.length >= 3);
    await consumer.stop();
    await running;

    expect(seen.sort()).toEqual(['0:2', '0:3', '1:0']);
    expect(heartbeats[0]).toMatchObject({
      memberId: null,
      memberEpoch: 0,
      subscribedTopics: ['t'],
      ownedPartitions: [],
    });
    expect(heartbeats[2]).toMatchObject({
      memberId: 'm1',
      memberEpoch: 5,
      subscribedTopics: null,
      ownedPartitions: [{ topic: 't', partitions: [0, 1] }],
    });
    expect(heartbeats.at(-1)).toMatchObject({ memberId: 'm1', memberEpoch: -1 });
    expect(commits).toEqual([
      {
        memberId: 'm1',
        memberEpoch: 5,
        offsets: [
          { topic: 't', partition: 0, offset: 4, metadata: '' },
          { topic: 't', partition: 1, offset: 1, metadata: '' },
        ],
      },
    ]);
  });

  it('commits a revoked partition before the heartbeat that releases it', async () => {
    const events: string[] = [];
    let beat = 0;
    const { client } = fakeSluice({ 't-0': ['a'], 't-1': ['b'] }, (req) => {
      const p = req.url.pathname;
      if (p.endsWith('/heartbeat')) {
        beat++;
        const owned = JSON.stringify(req.json!['ownedPartitions']);
        events.push(`heartbeat ${owned}`);
        const assignment =
          beat === 1
            ? [{ topic: 't', partitions: [0, 1] }]
            : beat === 4
              ? [{ topic: 't', partitions: [1] }]
              : null;
        return {
          status: 200,
          json: {
            memberId: 'm',
            memberEpoch: beat >= 4 ? 2 : 1,
            heartbeatIntervalMs: 15,
            assignment: assignment && { topicPartitions: assignment },
          },
        };
      }
      if (p.startsWith('/v1/groups/') && p.endsWith('/offsets') && req.method === 'GET')
        return { status: 200, json: { offsets: [] } };
      if (p.startsWith('/v1/groups/') && p.endsWith('/offsets')) {
        events.push(
          `commit ${JSON.stringify((req.json!['offsets'] as { partition: number; offset: number }[]).map((o) => [o.partition, o.offset]))}`,
        );
        return { status: 200, json: { results: [] } };
      }
      return undefined;
    });
    const consumer = client.consumer({ groupId: 'g', maxWaitMs: 10, autoCommitIntervalMs: 0 });
    consumer.subscribe({ topics: ['t'], fromBeginning: true });
    const running = consumer.run({ eachMessage: async () => {} });
    await until(() => events.filter((e) => e.startsWith('heartbeat')).length >= 6);
    await consumer.stop();
    await running;
    const revokeCommit = events.indexOf('commit [[0,1]]');
    expect(revokeCommit).toBeGreaterThan(0);
    expect(events[revokeCommit - 1]).toBe('heartbeat [{"topic":"t","partitions":[0,1]}]');
    expect(events[revokeCommit + 1]).toBe('heartbeat [{"topic":"t","partitions":[1]}]');
  });

  it('drops its partitions without committing when fenced, and rejoins with epoch 0', async () => {
    const bodies: Record<string, unknown>[] = [];
    let commits = 0;
    const { client } = fakeSluice({ 't-0': ['a', 'b'] }, (req) => {
      const p = req.url.pathname;
      if (p.endsWith('/heartbeat')) {
        bodies.push(req.json!);
        const n = bodies.length;
        if (n === 3)
          return {
            status: 409,
            json: { error: { code: 'FENCED_MEMBER_EPOCH', message: 'fenced', retriable: false } },
          };
        const assignment =
          req.json!['memberEpoch'] === 0 ? { topicPartitions: [{ topic: 't', partitions: [0] }] } : null;
        return {
          status: 200,
          json: { memberId: 'm', memberEpoch: n < 3 ? 1 : 3, heartbeatIntervalMs: 10, assignment },
        };
      }
      if (p.startsWith('/v1/groups/') && p.endsWith('/offsets') && req.method === 'GET')
        return { status: 200, json: { offsets: [] } };
      if (p.startsWith('/v1/groups/') && p.endsWith('/offsets'))
        return (commits++, { status: 200, json: { results: [] } });
      return undefined;
    });
    const consumer = client.consumer({ groupId: 'g', maxWaitMs: 10, autoCommitIntervalMs: 0 });
    consumer.subscribe({ topics: ['t'], fromBeginning: true });
    const running = consumer.run({ eachMessage: async () => {} });
    await until(() => bodies.length >= 5);
    expect(bodies[3]).toMatchObject({ memberId: 'm', memberEpoch: 0, ownedPartitions: [] });
    expect(commits).toBe(0);
    await consumer.stop();
    await running;
  });
});
