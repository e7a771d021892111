/**
 * Issue 23, class 2: every resource a Connect config names is authorized for the caller (READ on a
 * sink's topics and its group, READ on every topic for topics.regex, WRITE on a DLQ and on a source's
 * output topics, WRITE on every topic behind a routing SMT) at create and at update, and a policy
 * covering only some partitions (`?`) does not satisfy a body-named topic READ. Each refusal is the
 * Kafka code of the resource and leaves every stored item as it was.
 */
import { describe, expect, it } from 'vitest';
import { createSluice } from '../../../functions/app.js';
import { PolicyAuthorizer } from '../../../lib/auth/authorizer.js';
import type { PolicyDocument } from '../../../lib/auth/policy.js';
import { MemoryMetadataStore } from '../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../lib/adapters/memory/object-store.js';
import { TestClock } from '../../support/log-support.js';

const API = 'arn:aws:execute-api:us-east-1:1:api/$default';
const allow = (...paths: string[]): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: paths.map((p) => `${API}/${p}`) }],
});

const POLICIES: Record<string, PolicyDocument[]> = {
  connectOnly: [allow('*/v1/connect/*')],
  ordersReader: [
    allow(
      '*/v1/connect/*',
      'GET/v1/topics/orders/partitions/*/records',
      'POST/v1/groups/connect-sink/heartbeat',
      'POST/v1/topics/orders-dlq/records',
      'POST/v1/topics/pg-customers/records',
    ),
  ],
  questionMark: [allow('*/v1/connect/*', 'GET/v1/topics/orders/partitions/?/records', 'POST/v1/groups/*')],
  everything: [allow('*')],
};

const setup = async () => {
  const store = new MemoryMetadataStore();
  const clock = new TestClock();
  const sluice = createSluice({
    store,
    objectStores: [new MemoryObjectStore('s0', undefined, clock)],
    clock,
    config: { clusterId: 'test' },
    authorizer: new PolicyAuthorizer({
      region: 'us-east-1',
      policiesFor: (arn) => POLICIES[arn.split('/')[1]!] ?? [],
    }),
  });
  const router = sluice.router();
  const call = async (who: string, method: string, path: string, body?: unknown) => {
    const reply = await router.handle({
      method,
      path,
      query: {},
      headers: {},
      body: body === undefined ? new Uint8Array() : new Uint8Array(Buffer.from(JSON.stringify(body))),
      caller: { principalArn: `arn:aws:iam::1:user/${who}`, accountId: '1', apiId: 'api', stage: '$default' },
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return reply as { status: number; body: any };
  };
  for (const name of ['orders', 'secret', 'orders-dlq', 'pg-customers'])
    expect((await call('everything', 'POST', '/v1/topics', { name, partitions: 1 })).status).toBe(201);
  const snapshot = () =>
    store
      .dump()
      .map((i) => JSON.stringify(i))
      .sort();
  return { call, snapshot };
};

const sink = (extra: Record<string, string>) => ({
  'connector.class': 'S3SinkConnector',
  's3.bucket.name': 'archive',
  'flush.size': '10',
  ...extra,
});
const source = (extra: Record<string, string>) => ({
  'connector.class': 'JdbcSourceConnector',
  'connection.url': 'postgresql://127.0.0.1:5432/shop',
  'table.whitelist': 'customers',
  mode: 'incrementing',
  'incrementing.column.name': 'id',
  'topic.prefix': 'pg-',
  ...extra,
});
const ROUTER = {
  transforms: 'r',
  'transforms.r.type': 'org.apache.kafka.connect.transforms.RegexRouter',
  'transforms.r.regex': '(.*)',
  'transforms.r.replacement': 'secret',
};

describe('resources named in a connector config are authorized for the caller', () => {
  const refused: [string, string, Record<string, string>, string, string][] = [
    [
      'a sink of a topic it may not read',
      'connectOnly',
      sink({ topics: 'secret' }),
      'TOPIC_AUTHORIZATION_FAILED',
      'READ topic secret',
    ],
    [
      'a sink of one readable and one unreadable topic',
      'ordersReader',
      sink({ topics: 'orders,secret' }),
      'TOPIC_AUTHORIZATION_FAILED',
      'READ topic secret',
    ],
    [
      'a topics.regex sink without READ on every topic',
      'ordersReader',
      sink({ 'topics.regex': 'orders.*' }),
      'TOPIC_AUTHORIZATION_FAILED',
      'READ topic *',
    ],
    [
      'a sink whose DLQ it may not write',
      'ordersReader',
      sink({ topics: 'orders', 'errors.deadletterqueue.topic.name': 'secret' }),
      'TOPIC_AUTHORIZATION_FAILED',
      'WRITE topic secret',
    ],
    [
      'a source writing a topic it may not write',
      'connectOnly',
      source({}),
      'TOPIC_AUTHORIZATION_FAILED',
      'WRITE topic pg-customers',
    ],
    [
      'a source with a routing SMT',
      'ordersReader',
      source(ROUTER),
      'TOPIC_AUTHORIZATION_FAILED',
      'WRITE topic *',
    ],
    [
      'a sink whose group it may not join',
      'questionMark',
      sink({ topics: 'orders' }),
      'TOPIC_AUTHORIZATION_FAILED',
      'READ topic orders',
    ],
  ];

  it.each(refused)(
    'refuses %s at create and at update, storing nothing',
    async (_, who, config, code, what) => {
      const s = await setup();
      const before = s.snapshot();
      const created = await s.call(who, 'POST', '/v1/connect/connectors', { name: 'sink', config });
      expect([created.status, created.body.error.code, created.body.error.message]).toEqual([
        403,
        code,
        `not authorized to ${what}`,
      ]);
      // Connect's clients read Connect's own two fields, on the guard's refusals as on any other error.
      expect([created.body.error_code, created.body.message]).toEqual([403, `not authorized to ${what}`]);
      const put = await s.call(who, 'PUT', '/v1/connect/connectors/sink/config', config);
      expect([put.status, put.body.error.code, put.body.error_code]).toEqual([403, code, 403]);
      expect(s.snapshot()).toEqual(before);
    },
  );

  it('refuses an update that widens an allowed sink to a topic the caller may not read', async () => {
    const s = await setup();
    const ok = await s.call('ordersReader', 'POST', '/v1/connect/connectors', {
      name: 'sink',
      config: sink({ topics: 'orders' }),
    });
    expect(ok.status).toBe(201);
    const before = s.snapshot();
    const widened = await s.call(
      'ordersReader',
      'PUT',
      '/v1/connect/connectors/sink/config',
      sink({ topics: 'orders,secret' }),
    );
    expect([widened.status, widened.body.error.code]).toEqual([403, 'TOPIC_AUTHORIZATION_FAILED']);
    expect(s.snapshot()).toEqual(before);
    expect((await s.call('ordersReader', 'GET', '/v1/connect/connectors/sink/config')).body.topics).toBe(
      'orders',
    );
  });

  it('allows what the caller holds: a sink of orders with its group and DLQ, a source to pg-customers', async () => {
    const s = await setup();
    const config = sink({ topics: 'orders', 'errors.deadletterqueue.topic.name': 'orders-dlq' });
    expect(
      (await s.call('ordersReader', 'POST', '/v1/connect/connectors', { name: 'sink', config })).status,
    ).toBe(201);
    expect((await s.call('ordersReader', 'PUT', '/v1/connect/connectors/pg/config', source({}))).status).toBe(
      201,
    );
    expect(
      (
        await s.call('everything', 'POST', '/v1/connect/connectors', {
          name: 'all',
          config: sink({ 'topics.regex': '.*x' }),
        })
      ).status,
    ).toBe(201);
  });

  it('refuses altering sink offsets of a topic the caller may not read', async () => {
    const s = await setup();
    expect(
      (
        await s.call('everything', 'POST', '/v1/connect/connectors', {
          name: 'sink',
          config: sink({ topics: 'secret' }),
        })
      ).status,
    ).toBe(201);
    const before = s.snapshot();
    const reply = await s.call('ordersReader', 'PATCH', '/v1/connect/connectors/sink/offsets', {
      offsets: [{ partition: { kafka_topic: 'secret', kafka_partition: 0 }, offset: { kafka_offset: 0 } }],
    });
    expect([reply.status, reply.body.error.code]).toEqual([403, 'TOPIC_AUTHORIZATION_FAILED']);
    expect(s.snapshot()).toEqual(before);
  });
});

describe('a `?` in a policy covers one-character partitions only', () => {
  it('does not satisfy the body-named READ of a heartbeat or of a connector', async () => {
    const s = await setup();
    const before = s.snapshot();
    const beat = await s.call('questionMark', 'POST', '/v1/groups/g/heartbeat', {
      memberEpoch: 0,
      subscribedTopics: ['orders'],
    });
    expect([beat.status, beat.body.error.code]).toEqual([403, 'TOPIC_AUTHORIZATION_FAILED']);
    const commit = await s.call('questionMark', 'POST', '/v1/groups/g/offsets', {
      offsets: [{ topic: 'orders', partition: 0, offset: 0 }],
    });
    expect([commit.status, commit.body.error.code]).toEqual([403, 'TOPIC_AUTHORIZATION_FAILED']);
    expect(s.snapshot()).toEqual(before);
  });
});
