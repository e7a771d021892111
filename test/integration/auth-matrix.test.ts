/**
 * The authorization matrix: every route of functions/route-table.ts × (allowed, implicitly denied,
 * explicitly denied, unsigned, tampered body or query, tampered date, expired) through `npm start`'s
 * gateway in SLUICE_AUTH=iam mode, over real sockets against DynamoDB Local and s3rver. Every refusal must leave every table
 * item and object as it was, and must not reach the handler at all (no invocation, no read).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecordBatch } from '../../protocol/record-batch/index.js';
import { ROUTE_ACLS, ROUTE_TABLE } from '../../functions/route-table.js';
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../../lib/adapters/aws/dynamodb-metadata-store.js';
import { registerStores } from '../../streams/query/registry.js';
import { MetadataStateBackend } from '../../streams/state/metadata-backend.js';
import { partitionForKey } from '../../protocol/partitioner.js';
import type { AuthStack, CallOptions } from './auth-stack.js';
import { API_ARN, arn, invokePolicy, startAuthStack } from './auth-stack.js';

/** One concrete request per route, in route-table order, and the answer it gets when allowed. */
interface Row {
  key: string;
  path: string;
  body?: unknown;
  contentType?: string;
  status: number;
}

const CONNECT = '/v1/connect/connectors';
const SINK = {
  'connector.class': 'S3SinkConnector',
  topics: 'orders',
  's3.bucket.name': 'archive',
  'flush.size': '10',
};
const HEARTBEAT = { memberId: null, memberEpoch: 0, subscribedTopics: ['orders'], ownedPartitions: [] };
const ROWS: Row[] = [
  { key: 'GET /v1/health', path: '/v1/health', status: 200 },
  { key: 'GET /v1/cluster', path: '/v1/cluster', status: 200 },
  { key: 'GET /v1/whoami', path: '/v1/whoami', status: 200 },
  { key: 'POST /v1/topics', path: '/v1/topics', body: { name: 'fresh', partitions: 1 }, status: 201 },
  { key: 'GET /v1/topics', path: '/v1/topics', status: 200 },
  { key: 'GET /v1/topics/{topic}', path: '/v1/topics/orders', status: 200 },
  { key: 'PATCH /v1/topics/{topic}', path: '/v1/topics/orders', body: { partitions: 3 }, status: 200 },
  { key: 'DELETE /v1/topics/{topic}', path: '/v1/topics/victim', status: 204 },
  {
    key: 'POST /v1/topics/{topic}/elect-leaders',
    path: '/v1/topics/orders/elect-leaders',
    body: { electionType: 'PREFERRED' },
    status: 200,
  },
  { key: 'GET /v1/topics/{topic}/segments', path: '/v1/topics/orders/segments', status: 200 },
  {
    key: 'POST /v1/topics/{topic}/records',
    path: '/v1/topics/orders/records',
    body: { records: [{ key: 'k', value: 'v' }] },
    status: 200,
  },
  {
    key: 'POST /v1/topics/{topic}/partitions/{partition}/batches',
    path: '/v1/topics/orders/partitions/0/batches',
    body: encodeRecordBatch([
      { key: Buffer.from('k'), value: Buffer.from('batch'), timestamp: 1_700_000_000_000 },
    ]),
    contentType: 'application/vnd.kafka.record-batch',
    status: 200,
  },
  { key: 'POST /v1/producers', path: '/v1/producers', status: 200 },
  {
    key: 'POST /v1/fetch',
    path: '/v1/fetch',
    body: { partitions: [{ topic: 'orders', partition: 0, offset: 0 }] },
    status: 200,
  },
  {
    key: 'GET /v1/topics/{topic}/partitions/{partition}/records',
    path: '/v1/topics/orders/partitions/0/records?offset=0',
    status: 200,
  },
  {
    key: 'GET /v1/topics/{topic}/partitions/{partition}/offsets',
    path: '/v1/topics/orders/partitions/0/offsets?at=latest',
    status: 200,
  },
  // Transactions: the producer id 999999 was never issued, so the writes answer INVALID_PRODUCER_ID_MAPPING.
  {
    key: 'POST /v1/transactions/{transactionalId}/producer',
    path: '/v1/transactions/tx-a/producer',
    body: { transactionTimeoutMs: 60_000 },
    status: 200,
  },
  {
    key: 'POST /v1/transactions/{transactionalId}/partitions',
    path: '/v1/transactions/tx-a/partitions',
    body: { producerId: 999_999, producerEpoch: 0, topics: [{ topic: 'orders', partitions: [0] }] },
    status: 409,
  },
  {
    key: 'POST /v1/transactions/{transactionalId}/groups',
    path: '/v1/transactions/tx-a/groups',
    body: { producerId: 999_999, producerEpoch: 0, groupId: 'billing' },
    status: 409,
  },
  {
    key: 'POST /v1/transactions/{transactionalId}/offsets',
    path: '/v1/transactions/tx-a/offsets',
    body: {
      producerId: 999_999,
      producerEpoch: 0,
      groupId: 'billing',
      memberId: null,
      generationId: -1,
      offsets: [{ topic: 'orders', partition: 0, offset: 0 }],
    },
    status: 409,
  },
  {
    key: 'POST /v1/transactions/{transactionalId}/end',
    path: '/v1/transactions/tx-a/end',
    body: { producerId: 999_999, producerEpoch: 0, committed: true },
    status: 409,
  },
  { key: 'GET /v1/transactions', path: '/v1/transactions', status: 200 },
  { key: 'GET /v1/transactions/{transactionalId}', path: '/v1/transactions/tx-a', status: 200 },
  // Interactive queries: the 'wordcount' application's stores are registered in beforeAll.
  {
    key: 'GET /v1/streams/{app}/stores/{store}/keys/{key}',
    path: '/v1/streams/wordcount/stores/counts/keys/hello',
    status: 200,
  },
  {
    key: 'GET /v1/streams/{app}/stores/{store}/keys',
    path: '/v1/streams/wordcount/stores/counts/keys?from=a&to=z',
    status: 200,
  },
  { key: 'GET /v1/streams', path: '/v1/streams', status: 200 },
  { key: 'GET /v1/streams/{app}', path: '/v1/streams/wordcount', status: 200 },
  {
    key: 'POST /v1/groups/{group}/heartbeat',
    path: '/v1/groups/billing/heartbeat',
    body: HEARTBEAT,
    status: 200,
  },
  {
    key: 'POST /v1/groups/{group}/classic',
    path: '/v1/groups/payroll/classic',
    body: { memberId: 'classic-1', memberEpoch: null, subscribedTopics: ['orders'] },
    status: 200,
  },
  {
    key: 'POST /v1/groups/{group}/offsets',
    path: '/v1/groups/ledger/offsets',
    body: { offsets: [{ topic: 'orders', partition: 0, offset: 1 }] },
    status: 200,
  },
  { key: 'GET /v1/groups/{group}/offsets', path: '/v1/groups/ledger/offsets', status: 200 },
  {
    key: 'DELETE /v1/groups/{group}/offsets',
    path: '/v1/groups/ledger/offsets?topic=orders&partitions=0',
    status: 200,
  },
  {
    key: 'POST /v1/groups/{group}/offsets/reset',
    path: '/v1/groups/ledger/offsets/reset',
    body: { topic: 'orders', to: 'earliest' },
    status: 200,
  },
  { key: 'GET /v1/groups', path: '/v1/groups', status: 200 },
  { key: 'GET /v1/groups/{group}', path: '/v1/groups/billing', status: 200 },
  { key: 'DELETE /v1/groups/{group}', path: '/v1/groups/ledger', status: 204 },
  // Connect: 'mirror' and 'gone' exist from beforeAll; the rows run in route-table order.
  { key: 'GET /v1/connect/connectors', path: CONNECT, status: 200 },
  { key: 'POST /v1/connect/connectors', path: CONNECT, body: { name: 'fresh', config: SINK }, status: 201 },
  { key: 'GET /v1/connect/connectors/{connector}', path: `${CONNECT}/mirror`, status: 200 },
  { key: 'DELETE /v1/connect/connectors/{connector}', path: `${CONNECT}/gone`, status: 204 },
  { key: 'GET /v1/connect/connectors/{connector}/config', path: `${CONNECT}/mirror/config`, status: 200 },
  {
    key: 'PUT /v1/connect/connectors/{connector}/config',
    path: `${CONNECT}/mirror/config`,
    body: SINK,
    status: 200,
  },
  { key: 'GET /v1/connect/connectors/{connector}/status', path: `${CONNECT}/mirror/status`, status: 200 },
  { key: 'GET /v1/connect/connectors/{connector}/tasks', path: `${CONNECT}/mirror/tasks`, status: 200 },
  {
    key: 'GET /v1/connect/connectors/{connector}/tasks/{task}/status',
    path: `${CONNECT}/mirror/tasks/0/status`,
    status: 200,
  },
  {
    key: 'POST /v1/connect/connectors/{connector}/tasks/{task}/restart',
    path: `${CONNECT}/mirror/tasks/0/restart`,
    status: 204,
  },
  { key: 'PUT /v1/connect/connectors/{connector}/pause', path: `${CONNECT}/mirror/pause`, status: 202 },
  { key: 'PUT /v1/connect/connectors/{connector}/resume', path: `${CONNECT}/mirror/resume`, status: 202 },
  { key: 'PUT /v1/connect/connectors/{connector}/stop', path: `${CONNECT}/mirror/stop`, status: 204 },
  { key: 'POST /v1/connect/connectors/{connector}/restart', path: `${CONNECT}/mirror/restart`, status: 204 },
  { key: 'GET /v1/connect/connectors/{connector}/offsets', path: `${CONNECT}/mirror/offsets`, status: 200 },
  {
    key: 'PATCH /v1/connect/connectors/{connector}/offsets',
    path: `${CONNECT}/mirror/offsets`,
    body: {
      offsets: [{ partition: { kafka_topic: 'orders', kafka_partition: 0 }, offset: { kafka_offset: 0 } }],
    },
    status: 200,
  },
  {
    key: 'DELETE /v1/connect/connectors/{connector}/offsets',
    path: `${CONNECT}/mirror/offsets`,
    status: 200,
  },
  { key: 'GET /v1/connect/connector-plugins', path: '/v1/connect/connector-plugins', status: 200 },
  {
    key: 'PUT /v1/connect/connector-plugins/{plugin}/config/validate',
    path: '/v1/connect/connector-plugins/S3SinkConnector/config/validate',
    body: SINK,
    status: 200,
  },
  { key: 'GET /v1/client-quotas', path: '/v1/client-quotas', status: 200 },
  {
    key: 'POST /v1/client-quotas',
    path: '/v1/client-quotas',
    body: { entries: [{ entity: { user: 'alice' }, ops: [{ key: 'producer_byte_rate', value: 1048576 }] }] },
    status: 200,
  },
];

const method = (row: Row): string => row.key.split(' ')[0]!;
const pathOnly = (row: Row): string => row.path.split('?')[0]!;
const rowArns = ROWS.map((row) => arn(method(row), pathOnly(row)));

const CODES = {
  TOPIC: 'TOPIC_AUTHORIZATION_FAILED',
  GROUP: 'GROUP_AUTHORIZATION_FAILED',
  CLUSTER: 'CLUSTER_AUTHORIZATION_FAILED',
  TRANSACTIONAL_ID: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
};

let t: AuthStack;
beforeAll(async () => {
  t = await startAuthStack([
    { name: 'admin', policies: [invokePolicy([`${API_ARN}/*`])] },
    // Exactly the matrix's requests, plus READ on orders for the group routes' body-named checks and
    // READ on the sink connectors' groups connect-{name} for what the Connect configs name.
    {
      name: 'app',
      policies: [
        invokePolicy([
          ...rowArns,
          arn('GET', '/v1/topics/orders/partitions/*/records'),
          arn('POST', '/v1/groups/connect-*/heartbeat'),
        ]),
      ],
    },
    // Allowed something else only: an implicit deny on every row.
    { name: 'outsider', policies: [invokePolicy([arn('GET', '/v1/topics/unrelated')])] },
    // Allowed everything, then an explicit Deny on every row: Deny wins.
    { name: 'fenced', policies: [invokePolicy([`${API_ARN}/*`]), invokePolicy([], rowArns)] },
  ]);
  for (const [name, partitions] of [
    ['orders', 2],
    ['victim', 1],
  ] as const) {
    expect((await t.call('admin', 'POST', '/v1/topics', { body: { name, partitions } })).status).toBe(201);
  }
  const store = new DynamoMetadataStore({
    client: createAwsClients({ endpoints: { dynamodb: t.stack.endpoints.dynamodb } }).dynamodb,
    tableName: t.stack.tableName,
  });
  await registerStores(store, 'wordcount', {
    partitions: 2,
    stores: { counts: { kind: 'key-value', subTopology: 0, keyFormat: 'string', valueFormat: 'json' } },
  });
  const hello = Buffer.from('hello');
  await new MetadataStateBackend(store, 'wordcount').write(`0_${partitionForKey(hello, 2)}`, [
    {
      store: 'counts',
      key: hello.toString('hex'),
      entry: { key: hello.toString('hex'), value: Buffer.from('3'), timestamp: 1 },
    },
  ]);
  for (const name of ['mirror', 'gone']) {
    const body = { name, config: SINK };
    expect((await t.call('admin', 'POST', CONNECT, { body })).status).toBe(201);
  }
});
afterAll(async () => {
  await t?.stop();
});

const flipLastByte = (body: Uint8Array): Uint8Array => {
  const copy = Uint8Array.from(body);
  copy[copy.length - 1] = copy[copy.length - 1]! ^ 0x20;
  return copy;
};

/** After signing: change a body byte, or add a query parameter to a request without a body. */
const tamper: CallOptions['tamper'] = ({ path, body, headers }) =>
  body && body.length > 0
    ? { path, body: flipLastByte(body), headers }
    : { path: `${path}${path.includes('?') ? '&' : '?'}offset=1`, body, headers };

/** After signing: move X-Amz-Date one second (inside the window: only the signature can tell). */
const redate: CallOptions['tamper'] = (sent) => {
  const at = sent.headers['x-amz-date']!;
  const seconds = (Number(at.slice(13, 15)) + 1) % 60;
  return {
    ...sent,
    headers: { ...sent.headers, 'x-amz-date': `${at.slice(0, 13)}${String(seconds).padStart(2, '0')}Z` },
  };
};

const SIXTEEN_MINUTES_AGO = () => new Date(Date.now() - 16 * 60 * 1000);

describe('every route × every way in', () => {
  it('covers every route of the route table, each with an ACL', () => {
    expect(ROWS.map((r) => r.key)).toEqual(ROUTE_TABLE.map((s) => `${s.method} ${s.pattern}`));
    expect(Object.keys(ROUTE_ACLS).sort()).toEqual(
      ROUTE_TABLE.filter((s) => !s.public)
        .map((s) => `${s.method} ${s.pattern}`)
        .sort(),
    );
  });

  for (const row of ROWS) {
    const acl = ROUTE_ACLS[row.key];
    it(`${row.key}: refused six ways with nothing written or read, then allowed`, async () => {
      const base = { body: row.body, ...(row.contentType ? { contentType: row.contentType } : {}) };
      const cases: [string, string | undefined, CallOptions, number, string][] = acl
        ? [
            ['implicit deny', 'outsider', base, 403, CODES[acl.resourceType]],
            ['explicit deny', 'fenced', base, 403, CODES[acl.resourceType]],
            ['unsigned', undefined, base, 401, 'SASL_AUTHENTICATION_FAILED'],
            ['tampered', 'app', { ...base, tamper }, 401, 'SASL_AUTHENTICATION_FAILED'],
            ['tampered date', 'app', { ...base, tamper: redate }, 401, 'SASL_AUTHENTICATION_FAILED'],
            [
              'expired',
              'app',
              { ...base, signedAt: SIXTEEN_MINUTES_AGO() },
              401,
              'SASL_AUTHENTICATION_FAILED',
            ],
          ]
        : [];
      for (const [what, principal, options, status, code] of cases) {
        const before = await t.snapshot();
        const reply = await t.call(principal, method(row), row.path, options);
        expect({ what, status: reply.status, code: reply.json?.error?.code }).toEqual({ what, status, code });
        expect(reply.json.error.retriable).toBe(false);
        expect(await t.snapshot(), what).toEqual(before);
      }
      if (!acl) {
        // The public health probe: every caller, signed or not, valid or not, gets the same 200.
        for (const principal of [undefined, 'outsider', 'fenced']) {
          expect((await t.call(principal, 'GET', row.path)).status).toBe(200);
        }
        expect((await t.call('app', 'GET', row.path, { signedAt: SIXTEEN_MINUTES_AGO() })).status).toBe(200);
      }
      const allowed = await t.call('app', method(row), row.path, base);
      expect({ status: allowed.status, body: allowed.json }).toMatchObject({ status: row.status });
    });
  }
});

describe('a refused caller learns nothing about existence', () => {
  const pairs: [string, string, string][] = [
    ['GET', '/v1/topics/orders', '/v1/topics/ghost'],
    ['DELETE', '/v1/topics/orders', '/v1/topics/ghost'],
    [
      'GET',
      '/v1/topics/orders/partitions/0/records?offset=0',
      '/v1/topics/ghost/partitions/0/records?offset=0',
    ],
    ['GET', '/v1/groups/billing', '/v1/groups/ghost'],
    ['GET', '/v1/groups/billing/offsets', '/v1/groups/ghost/offsets'],
  ];
  it.each(pairs)('%s %s and its missing twin get the same answer', async (verb, existing, missing) => {
    const name = (path: string) => path.split('/')[3]!;
    const a = await t.call('outsider', verb, existing);
    const b = await t.call('outsider', verb, missing);
    expect(a.status).toBe(403);
    expect(b.status).toBe(a.status);
    expect(JSON.stringify(b.json).replaceAll(name(missing), 'X')).toBe(
      JSON.stringify(a.json).replaceAll(name(existing), 'X'),
    );
  });
});
