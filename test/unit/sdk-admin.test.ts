import { describe, expect, it } from 'vitest';
import { SluiceClient } from '../../sdk/client.js';
import type { FetchLike } from '../../sdk/transport.js';

const description = {
  name: 'a.b',
  topicId: 'id-1',
  replicationFactor: 1,
  configs: { 'retention.ms': '1000' },
  partitions: [
    {
      partition: 0,
      leader: 's0',
      leaderEpoch: 0,
      replicas: ['s0'],
      isr: ['s0'],
      logStartOffset: 2,
      highWatermark: 9,
    },
    {
      partition: 1,
      leader: 's0',
      leaderEpoch: 0,
      replicas: ['s0'],
      isr: ['s0'],
      logStartOffset: 0,
      highWatermark: 4,
    },
  ],
};

const fake = (answers: [number, unknown][]) => {
  const seen: { method: string; url: string; body: unknown }[] = [];
  const fetch: FetchLike = async (url, init) => {
    seen.push({
      method: init.method!,
      url,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    const [status, body] = answers.shift() ?? [
      500,
      { error: { code: 'UNKNOWN_SERVER_ERROR', message: 'no answer left', retriable: false } },
    ];
    return new Response(body === undefined ? null : JSON.stringify(body), { status });
  };
  return {
    admin: new SluiceClient({
      url: 'http://h:1',
      fetch,
      retry: { retries: 2, sleep: async () => {} },
    }).admin(),
    seen,
  };
};

describe('Admin', () => {
  it('creates a topic with defaults written out', async () => {
    const { admin, seen } = fake([[201, description]]);
    expect(await admin.createTopic({ name: 'a.b', configs: { 'retention.ms': '1000' } })).toEqual(
      description,
    );
    expect(seen).toEqual([
      {
        method: 'POST',
        url: 'http://h:1/v1/topics',
        body: { name: 'a.b', partitions: 1, replicationFactor: 1, configs: { 'retention.ms': '1000' } },
      },
    ]);
  });

  it('lists, describes, updates and deletes with encoded names', async () => {
    const { admin, seen } = fake([
      [200, { topics: [{ name: 'a.b', partitions: 2, replicationFactor: 1 }] }],
      [200, description],
      [200, description],
      [204, undefined],
    ]);
    expect(await admin.listTopics()).toEqual([{ name: 'a.b', partitions: 2, replicationFactor: 1 }]);
    await admin.describeTopic('x/y');
    await admin.updateTopic('a.b', { partitions: 3 });
    await admin.deleteTopic('a.b');
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET http://h:1/v1/topics',
      'GET http://h:1/v1/topics/x%2Fy',
      'PATCH http://h:1/v1/topics/a.b',
      'DELETE http://h:1/v1/topics/a.b',
    ]);
    expect(seen[2]!.body).toEqual({ partitions: 3 });
  });

  it('reports partition offsets as low/high watermarks', async () => {
    const { admin } = fake([[200, description]]);
    expect(await admin.fetchTopicOffsets('a.b')).toEqual([
      { partition: 0, low: 2, high: 9 },
      { partition: 1, low: 0, high: 4 },
    ]);
  });

  it('retries a retriable error and surfaces a definite one at once', async () => {
    const retried = fake([
      [503, { error: { code: 'COORDINATOR_NOT_AVAILABLE', message: 'later', retriable: true } }],
      [200, { clusterId: 'c', version: '0.1.0', stores: [] }],
    ]);
    expect((await retried.admin.cluster()).clusterId).toBe('c');
    expect(retried.seen).toHaveLength(2);
    const definite = fake([
      [409, { error: { code: 'TOPIC_ALREADY_EXISTS', message: 'exists', retriable: false } }],
    ]);
    await expect(definite.admin.createTopic({ name: 'a.b' })).rejects.toMatchObject({
      code: 'TOPIC_ALREADY_EXISTS',
      status: 409,
    });
    expect(definite.seen).toHaveLength(1);
  });

  it('resets group offsets with the API’s body', async () => {
    const { admin, seen } = fake([[200, { offsets: [] }]]);
    await admin.resetOffsets('g', 't', { offset: 5 });
    expect(seen[0]).toEqual({
      method: 'POST',
      url: 'http://h:1/v1/groups/g/offsets/reset',
      body: { topic: 't', to: { offset: 5 } },
    });
  });
});
