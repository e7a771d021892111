/** The topic admin contract of API.md, over real HTTP through the local API Gateway. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stack.stop();
});

const expectError = (
  reply: { status: number; json: { error: { code: string; message: string; retriable: boolean } } },
  status: number,
  code: string,
) => {
  expect(reply.status).toBe(status);
  expect(reply.json.error.code).toBe(code);
  expect(typeof reply.json.error.message).toBe('string');
  expect(reply.json.error.message.length).toBeGreaterThan(0);
  expect(typeof reply.json.error.retriable).toBe('boolean');
};

describe('health and cluster', () => {
  it('answers health', async () => {
    const r = await t.call('GET', '/v1/health');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'ok' });
  });

  it('describes the cluster and its stores', async () => {
    const r = await t.call('GET', '/v1/cluster');
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['clusterId', 'stores', 'version', 'waitUrl']);
    // The local stack serves the wait socket beside the API (docs/api.md "Waiting on a WebSocket").
    expect(r.json.waitUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/v1\/wait$/);
    expect(r.json.stores).toEqual([{ id: 's0', location: `s3://${t.stack.buckets[0]}`, kind: 'standard' }]);
  });

  it('answers unknown routes with the error envelope', async () => {
    expectError(await t.call('GET', '/v1/nope'), 404, 'NOT_FOUND');
    expectError(await t.call('GET', '/'), 404, 'NOT_FOUND');
    expectError(await t.call('PUT', '/v1/topics'), 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('topics', () => {
  it('creates a topic and describes it exactly', async () => {
    const r = await t.call('POST', '/v1/topics', {
      name: 'orders',
      partitions: 3,
      replicationFactor: 1,
      configs: { 'retention.ms': '3600000' },
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.json).sort()).toEqual([
      'configs',
      'name',
      'partitions',
      'replicationFactor',
      'topicId',
    ]);
    expect(r.json.name).toBe('orders');
    expect(r.json.replicationFactor).toBe(1);
    expect(r.json.configs['retention.ms']).toBe('3600000');
    expect(r.json.configs['cleanup.policy']).toBe('delete');
    expect(r.json.partitions).toEqual(
      [0, 1, 2].map((partition) => ({
        partition,
        leader: 's0',
        leaderEpoch: 0,
        replicas: ['s0'],
        isr: ['s0'],
        osr: [],
        logEndOffsets: { s0: 0 },
        logStartOffset: 0,
        highWatermark: 0,
      })),
    );
    const described = await t.call('GET', '/v1/topics/orders');
    expect(described.status).toBe(200);
    expect(described.json).toEqual(r.json);
  });

  it('lists topics', async () => {
    await t.call('POST', '/v1/topics', { name: 'audit.log-v1' });
    const r = await t.call('GET', '/v1/topics');
    expect(r.status).toBe(200);
    expect(r.json.topics).toEqual(
      expect.arrayContaining([
        { name: 'orders', partitions: 3, replicationFactor: 1 },
        { name: 'audit.log-v1', partitions: 1, replicationFactor: 1 },
      ]),
    );
  });

  it('rejects a duplicate name with 409', async () => {
    expectError(await t.call('POST', '/v1/topics', { name: 'orders' }), 409, 'TOPIC_ALREADY_EXISTS');
  });

  it.each([
    [{ name: '' }, 400, 'INVALID_TOPIC_EXCEPTION'],
    [{ name: '.' }, 400, 'INVALID_TOPIC_EXCEPTION'],
    [{ name: '..' }, 400, 'INVALID_TOPIC_EXCEPTION'],
    [{ name: 'a b' }, 400, 'INVALID_TOPIC_EXCEPTION'],
    [{ name: 'x'.repeat(250) }, 400, 'INVALID_TOPIC_EXCEPTION'],
    [{ name: 'ok', partitions: 0 }, 400, 'INVALID_PARTITIONS'],
    [{ name: 'ok', partitions: 1.5 }, 400, 'INVALID_PARTITIONS'],
    [{ name: 'ok', partitions: '3' }, 400, 'INVALID_PARTITIONS'],
    [{ name: 'ok', replicationFactor: 2 }, 400, 'INVALID_REPLICATION_FACTOR'],
    [{ name: 'ok', configs: { 'retention.mss': '1' } }, 400, 'INVALID_CONFIG'],
    [{ name: 'ok', configs: { 'cleanup.policy': 'shred' } }, 400, 'INVALID_CONFIG'],
    [{ name: 'ok', configs: { 'retention.ms': 'soon' } }, 400, 'INVALID_CONFIG'],
    [{ name: 'ok', configs: { 'min.insync.replicas': '2' } }, 400, 'INVALID_CONFIG'],
    [{ name: 'ok', extra: true }, 400, 'INVALID_REQUEST'],
  ])('rejects %j and creates nothing', async (body, status, code) => {
    expectError(await t.call('POST', '/v1/topics', body), status, code);
    const listed = await t.call('GET', '/v1/topics');
    expect(listed.json.topics.map((x: { name: string }) => x.name)).not.toContain('ok');
  });

  it('rejects malformed JSON and changes nothing', async () => {
    const before = await t.call('GET', '/v1/topics');
    expectError(await t.call('POST', '/v1/topics', '{"name": "half'), 400, 'INVALID_REQUEST');
    expectError(await t.call('POST', '/v1/topics', '[1,2]'), 400, 'INVALID_REQUEST');
    expectError(await t.call('POST', '/v1/topics', ''), 400, 'INVALID_REQUEST');
    expectError(await t.call('PATCH', '/v1/topics/orders', '{"partitions":'), 400, 'INVALID_REQUEST');
    expect((await t.call('GET', '/v1/topics')).json).toEqual(before.json);
    expect((await t.call('GET', '/v1/topics/orders')).json.partitions).toHaveLength(3);
  });

  it('grows partitions and changes configs with PATCH, never shrinks', async () => {
    const r = await t.call('PATCH', '/v1/topics/orders', {
      partitions: 5,
      configs: { 'cleanup.policy': 'compact' },
    });
    expect(r.status).toBe(200);
    expect(r.json.partitions).toHaveLength(5);
    expect(r.json.partitions[4]).toMatchObject({ partition: 4, highWatermark: 0, logStartOffset: 0 });
    expect(r.json.configs['cleanup.policy']).toBe('compact');
    expect(r.json.configs['retention.ms']).toBe('3600000');
    expectError(await t.call('PATCH', '/v1/topics/orders', { partitions: 2 }), 400, 'INVALID_PARTITIONS');
    expectError(
      await t.call('PATCH', '/v1/topics/orders', { configs: { nope: '1' } }),
      400,
      'INVALID_CONFIG',
    );
    expectError(
      await t.call('PATCH', '/v1/topics/orders', { partitions: 6, configs: { nope: '1' } }),
      400,
      'INVALID_CONFIG',
    );
    const after = await t.call('GET', '/v1/topics/orders');
    expect(after.json.partitions).toHaveLength(5);
    expectError(
      await t.call('PATCH', '/v1/topics/missing', { partitions: 2 }),
      404,
      'UNKNOWN_TOPIC_OR_PARTITION',
    );
  });

  it('deletes a topic, its data, and lets the name be reused at once', async () => {
    const created = await t.call('POST', '/v1/topics', { name: 'ephemeral', partitions: 2 });
    const produced = await t.call('POST', '/v1/topics/ephemeral/records', {
      records: [{ value: 'old', partition: 1 }],
    });
    expect(produced.status).toBe(200);
    const deleted = await t.call('DELETE', '/v1/topics/ephemeral');
    expect(deleted.status).toBe(204);
    expect(deleted.bytes.length).toBe(0);
    expectError(await t.call('GET', '/v1/topics/ephemeral'), 404, 'UNKNOWN_TOPIC_OR_PARTITION');
    expectError(await t.call('DELETE', '/v1/topics/ephemeral'), 404, 'UNKNOWN_TOPIC_OR_PARTITION');
    expectError(
      await t.call('GET', '/v1/topics/ephemeral/partitions/1/records?offset=0'),
      404,
      'UNKNOWN_TOPIC_OR_PARTITION',
    );

    const again = await t.call('POST', '/v1/topics', { name: 'ephemeral', partitions: 2 });
    expect(again.status).toBe(201);
    expect(again.json.topicId).not.toBe(created.json.topicId);
    expect(again.json.partitions[1].highWatermark).toBe(0);
    const fetched = await t.call('GET', '/v1/topics/ephemeral/partitions/1/records?offset=0');
    expect(fetched.json.records).toEqual([]);
  });
});
