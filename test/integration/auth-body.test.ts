/**
 * Resources named in bodies and queries (heartbeat subscriptions and owned partitions, committed and
 * reset topics, the offsets query's topic) are checked as well as the path; and the producer and
 * consumer grants of lib/auth/grants.ts — the lists the CDK grants are made of — allow what they name,
 * LITERAL or PREFIXED, and nothing else. Through the local gateway in SLUICE_AUTH=iam mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeGrants, produceGrants } from '../../lib/auth/grants.js';
import type { AuthStack, Snapshot } from './auth-stack.js';
import { API_ARN, grantArns, invokePolicy, startAuthStack } from './auth-stack.js';

let t: AuthStack;
beforeAll(async () => {
  t = await startAuthStack([
    { name: 'admin', policies: [invokePolicy([`${API_ARN}/*`])] },
    {
      name: 'consumer',
      policies: [
        invokePolicy(
          grantArns([...consumeGrants('orders', 'billing'), ...consumeGrants('payments-*', 'etl-*')]),
        ),
      ],
    },
    { name: 'producer', policies: [invokePolicy(grantArns(produceGrants('orders-*')))] },
    { name: 'auditor', policies: [invokePolicy(grantArns(consumeGrants('orders', 'audit')))] },
  ]);
  for (const name of ['orders', 'secret', 'payments', 'payments-eu', 'orders-eu', 'ordersx']) {
    expect((await t.call('admin', 'POST', '/v1/topics', { body: { name, partitions: 1 } })).status).toBe(201);
  }
});
afterAll(async () => {
  await t?.stop();
});

const join = (topics: string[], owned: { topic: string; partitions: number[] }[] = []) => ({
  memberId: null,
  memberEpoch: 0,
  subscribedTopics: topics,
  ownedPartitions: owned,
});

/** The handler ran (one invocation) but refused before reading or writing anything. */
const unchangedButInvoked = (before: Snapshot, after: Snapshot) =>
  expect(after).toEqual({ ...before, invocations: before.invocations + 1 });

const refused = async (
  principal: string,
  verb: string,
  path: string,
  body: unknown,
  status: number,
  code: string,
  message?: string,
) => {
  const before = await t.snapshot();
  const reply = await t.call(principal, verb, path, body === undefined ? {} : { body });
  expect({ status: reply.status, code: reply.json.error.code }).toEqual({ status, code });
  if (message !== undefined) expect(reply.json.error.message).toBe(message);
  return { before, reply };
};

describe('resources named in a body or query', () => {
  it.each([
    ['a subscription', '/v1/groups/billing/heartbeat', join(['orders', 'secret'])],
    [
      'an owned partition',
      '/v1/groups/billing/heartbeat',
      join(['orders'], [{ topic: 'secret', partitions: [0] }]),
    ],
    [
      'an offset commit',
      '/v1/groups/billing/offsets',
      {
        offsets: [
          { topic: 'orders', partition: 0, offset: 0 },
          { topic: 'secret', partition: 0, offset: 0 },
        ],
      },
    ],
    ['an offsets reset', '/v1/groups/billing/offsets/reset', { topic: 'secret', to: 'earliest' }],
  ])('refuses %s naming a topic the caller may not read, before any lookup', async (_, path, body) => {
    const { before } = await refused(
      'consumer',
      'POST',
      path,
      body,
      403,
      'TOPIC_AUTHORIZATION_FAILED',
      'not authorized to READ topic secret',
    );
    unchangedButInvoked(before, await t.snapshot());
  });

  it('refuses the offsets query for a topic the caller may not describe, and answers the one it may', async () => {
    const { before } = await refused(
      'consumer',
      'GET',
      '/v1/groups/billing/offsets?topic=secret',
      undefined,
      403,
      'TOPIC_AUTHORIZATION_FAILED',
      'not authorized to DESCRIBE topic secret',
    );
    unchangedButInvoked(before, await t.snapshot());
    const ok = await t.call('consumer', 'GET', '/v1/groups/billing/offsets?topic=orders');
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ offsets: [] });
  });

  it('answers a subscription to an existing and to a missing topic alike', async () => {
    const a = await t.call('consumer', 'POST', '/v1/groups/billing/heartbeat', { body: join(['secret']) });
    const b = await t.call('consumer', 'POST', '/v1/groups/billing/heartbeat', { body: join(['nosuch']) });
    expect(a.status).toBe(403);
    expect(b.status).toBe(403);
    expect(JSON.stringify(b.json).replace('nosuch', 'X')).toBe(JSON.stringify(a.json).replace('secret', 'X'));
  });

  it('leaves a malformed body to the handler: 400, nothing about any resource', async () => {
    const reply = await t.call('consumer', 'POST', '/v1/groups/billing/heartbeat', {
      body: new TextEncoder().encode('{"subscribedTopics": ["secret"'),
      contentType: 'application/json',
    });
    expect(reply.status).toBe(400);
    expect(reply.json.error.code).toBe('INVALID_REQUEST');
  });

  it('lets a subscription to allowed topics join', async () => {
    const reply = await t.call('consumer', 'POST', '/v1/groups/billing/heartbeat', {
      body: join(['orders']),
    });
    expect(reply.status).toBe(200);
    expect(reply.json.memberEpoch).toBeGreaterThan(0);
  });
});

describe('consumer grants', () => {
  it('allow reading the literal topic and using the literal group, nothing more', async () => {
    expect((await t.call('consumer', 'GET', '/v1/topics/orders/partitions/0/records?offset=0')).status).toBe(
      200,
    );
    expect(
      (await t.call('consumer', 'GET', '/v1/topics/orders/partitions/0/offsets?at=earliest')).status,
    ).toBe(200);
    expect((await t.call('consumer', 'GET', '/v1/topics/orders')).status).toBe(200);
    expect((await t.call('consumer', 'GET', '/v1/groups/billing')).status).toBe(200);
    for (const [verb, path, body, code] of [
      ['POST', '/v1/topics/orders/records', { records: [{ value: 'x' }] }, 'TOPIC_AUTHORIZATION_FAILED'],
      ['GET', '/v1/topics/secret/partitions/0/records?offset=0', undefined, 'TOPIC_AUTHORIZATION_FAILED'],
      ['DELETE', '/v1/topics/orders', undefined, 'TOPIC_AUTHORIZATION_FAILED'],
      ['DELETE', '/v1/groups/billing', undefined, 'GROUP_AUTHORIZATION_FAILED'],
      ['POST', '/v1/groups/other/heartbeat', join(['orders']), 'GROUP_AUTHORIZATION_FAILED'],
      ['GET', '/v1/groups', undefined, 'CLUSTER_AUTHORIZATION_FAILED'],
      ['POST', '/v1/producers', undefined, 'CLUSTER_AUTHORIZATION_FAILED'],
    ] as const) {
      const { before } = await refused('consumer', verb, path, body, 403, code);
      expect(await t.snapshot(), `${verb} ${path}`).toEqual(before);
    }
  });

  it('allow PREFIXED topics and groups by their prefix only', async () => {
    const ok = await t.call('consumer', 'POST', '/v1/groups/etl-1/heartbeat', {
      body: join(['payments-eu']),
    });
    expect(ok.status).toBe(200);
    expect(
      (await t.call('consumer', 'GET', '/v1/topics/payments-eu/partitions/0/records?offset=0')).status,
    ).toBe(200);
    // `payments-*` is the prefix "payments-": the topic "payments" is not under it.
    await refused(
      'consumer',
      'POST',
      '/v1/groups/etl-1/heartbeat',
      join(['payments']),
      403,
      'TOPIC_AUTHORIZATION_FAILED',
    );
    await refused(
      'consumer',
      'POST',
      '/v1/groups/etl/heartbeat',
      join(['payments-eu']),
      403,
      'GROUP_AUTHORIZATION_FAILED',
    );
  });
});

describe('producer grants', () => {
  it('allow writing PREFIXED topics and initializing producer ids, and no reading', async () => {
    const ok = await t.call('producer', 'POST', '/v1/topics/orders-eu/records', {
      body: { records: [{ value: 'x' }] },
    });
    expect(ok.status).toBe(200);
    expect(ok.json.results).toEqual([{ partition: 0, offset: 0, timestamp: expect.any(Number) }]);
    expect((await t.call('producer', 'POST', '/v1/producers')).status).toBe(200);
    for (const [verb, path, body] of [
      ['POST', '/v1/topics/ordersx/records', { records: [{ value: 'x' }] }],
      ['POST', '/v1/topics/orders/records', { records: [{ value: 'x' }] }],
      ['GET', '/v1/topics/orders-eu/partitions/0/records?offset=0', undefined],
      // A prefixed producer gets no DESCRIBE: `GET /v1/topics/orders-*` would match every fetch path too.
      ['GET', '/v1/topics/orders-eu', undefined],
    ] as const) {
      const { before } = await refused('producer', verb, path, body, 403, 'TOPIC_AUTHORIZATION_FAILED');
      expect(await t.snapshot(), `${verb} ${path}`).toEqual(before);
    }
  });
});

describe('group listings', () => {
  it('show a group’s offsets, subscriptions and assignments only for topics the caller may describe', async () => {
    const commit = await t.call('admin', 'POST', '/v1/groups/audit/offsets', {
      body: {
        offsets: [
          { topic: 'orders', partition: 0, offset: 1 },
          { topic: 'secret', partition: 0, offset: 2 },
        ],
      },
    });
    expect(commit.status).toBe(200);
    const all = await t.call('admin', 'GET', '/v1/groups/audit/offsets');
    expect(all.json.offsets.map((o: { topic: string }) => o.topic)).toEqual(['orders', 'secret']);
    const seen = await t.call('auditor', 'GET', '/v1/groups/audit/offsets');
    expect(seen.status).toBe(200);
    expect(seen.json).toEqual({ offsets: [{ topic: 'orders', partition: 0, offset: 1, metadata: '' }] });
    // A member subscribed to both: its description names `secret` only to a caller who may describe it.
    const joined = await t.call('admin', 'POST', '/v1/groups/audit/heartbeat', {
      body: join(['orders', 'secret']),
    });
    expect(joined.status).toBe(200);
    const full = await t.call('admin', 'GET', '/v1/groups/audit');
    expect(full.json.members[0].subscribedTopics).toEqual(['orders', 'secret']);
    expect(
      full.json.members[0].assignment.topicPartitions.map((tp: { topic: string }) => tp.topic).sort(),
    ).toEqual(['orders', 'secret']);
    const described = await t.call('auditor', 'GET', '/v1/groups/audit');
    expect(described.status).toBe(200);
    expect(described.json.offsets.map((o: { topic: string }) => o.topic)).toEqual(['orders']);
    expect(described.json.members[0].subscribedTopics).toEqual(['orders']);
    expect(described.json.members[0].assignment).toEqual({
      topicPartitions: [{ topic: 'orders', partitions: [0] }],
    });
    expect(JSON.stringify(described.json)).not.toContain('secret');
  });
});
