import { describe, expect, it } from 'vitest';
import { SluiceClient } from '../../../sdk/client.js';
import type { FetchLike } from '../../../sdk/transport.js';
import type { Admin } from '../../../sdk/admin.js';
import type {
  CommittedOffset,
  GroupDescription,
  GroupSummary,
  ListOffsetsResult,
} from '../../../lib/wire/types.js';

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

  it('retries reads and idempotent writes, but a create or delete only after an answer that changed nothing', async () => {
    const unavailable = [
      503,
      { error: { code: 'NOT_ENOUGH_REPLICAS', message: 'down', retriable: true } },
    ] as [number, unknown];
    const throttled = [
      429,
      { error: { code: 'THROTTLING_QUOTA_EXCEEDED', message: 'slow down', retriable: true } },
    ] as [number, unknown];
    // A 503 may have taken effect: a create, delete, topic change or group delete is not sent again.
    for (const call of [
      (a: Admin) => a.createTopic({ name: 'a.b' }),
      (a: Admin) => a.deleteTopic('a.b'),
      (a: Admin) => a.updateTopic('a.b', { partitions: 4 }),
      (a: Admin) => a.deleteGroup('g'),
    ]) {
      const { admin, seen } = fake([unavailable, [200, description]]);
      await expect(call(admin)).rejects.toMatchObject({ code: 'NOT_ENOUGH_REPLICAS', attempts: 1 });
      expect(seen).toHaveLength(1);
    }
    // A 429 says nothing was done: the create goes again.
    const created = fake([throttled, [201, description]]);
    expect(await created.admin.createTopic({ name: 'a.b' })).toEqual(description);
    expect(created.seen).toHaveLength(2);
    // Idempotent calls go again after a 503.
    for (const [call, answer] of [
      [(a: Admin) => a.setOffsets('g', [{ topic: 't', partition: 0, offset: 3 }]), { results: [] }],
      [(a: Admin) => a.resetOffsets('g', 't', 'earliest'), { offsets: [] }],
      [(a: Admin) => a.deleteOffsets('g', 't'), { results: [] }],
      [(a: Admin) => a.listOffsets('t', 0, 'latest'), { offset: 3, timestamp: -1 }],
      [(a: Admin) => a.health(), { status: 'ok' }],
    ] as const) {
      const { admin, seen } = fake([unavailable, [200, answer]]);
      await call(admin);
      expect(seen).toHaveLength(2);
    }
  });

  it('answers the API’s body types, unwrapped', async () => {
    const group = {
      groupId: 'g',
      state: 'EMPTY',
      groupEpoch: 3,
      assignor: 'range',
      members: [],
      offsets: [{ topic: 't', partition: 0, committedOffset: 4, highWatermark: 9, lag: 5 }],
    };
    const committed = [{ topic: 't', partition: 0, offset: 0, metadata: '' }];
    const { admin, seen } = fake([
      [200, { groups: [{ groupId: 'g', state: 'EMPTY', members: 0 }] }],
      [200, group],
      [200, { offsets: committed }],
      [200, { results: [{ topic: 't', partition: 0 }] }],
      [200, { offset: null, timestamp: null }],
    ]);
    const groups: GroupSummary[] = await admin.listGroups();
    expect(groups).toEqual([{ groupId: 'g', state: 'EMPTY', members: 0 }]);
    const described: GroupDescription = await admin.describeGroup('g/1');
    expect(described.offsets[0]?.lag).toBe(5);
    const reset: CommittedOffset[] = await admin.resetOffsets('g', 't', 'earliest');
    expect(reset).toEqual(committed);
    expect(await admin.setOffsets('g', [{ topic: 't', partition: 0, offset: 7 }])).toEqual([
      { topic: 't', partition: 0 },
    ]);
    const found: ListOffsetsResult = await admin.listOffsets('a/b', 1, 1_700_000_000_000, 'read_committed');
    expect(found).toEqual({ offset: null, timestamp: null });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET http://h:1/v1/groups',
      'GET http://h:1/v1/groups/g%2F1',
      'POST http://h:1/v1/groups/g/offsets/reset',
      'POST http://h:1/v1/groups/g/offsets',
      'GET http://h:1/v1/topics/a%2Fb/partitions/1/offsets?at=1700000000000&isolationLevel=read_committed',
    ]);
    expect(seen[3]!.body).toEqual({ offsets: [{ topic: 't', partition: 0, offset: 7 }] });
  });
});
