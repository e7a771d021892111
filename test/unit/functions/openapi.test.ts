/**
 * docs/openapi.json against the code: it is what lib/wire/openapi.ts generates, it documents every route
 * of the route table and no other, and real answers of the in-process router — driven through the SDK
 * and by hand for the error cases — match its schemas, statuses and error codes.
 */
import { describe, expect, it } from 'vitest';
import { SLUICE_VERSION } from '../../../functions/app.js';
import { ROUTE_TABLE } from '../../../functions/route-table.js';
import { ROUTES } from '../../../functions/routes.js';
import { openApiDocument } from '../../../lib/wire/openapi.js';
import { SluiceClient } from '../../../sdk/client.js';
import type { Exchange } from '../../support/router-fetch.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

import type { Doc } from '../../support/openapi-conformance.js';
import { OPENAPI_DOC, conformanceProblems, routeName } from '../../support/openapi-conformance.js';

const doc: Doc = OPENAPI_DOC;

describe('docs/openapi.json', () => {
  it('is what lib/wire/openapi.ts generates (run `npm run openapi` after changing it)', () => {
    expect(doc).toEqual(openApiDocument(SLUICE_VERSION, ROUTES));
  });

  it('documents every route of the route table', () => {
    const missing = ROUTE_TABLE.filter(
      (r) => doc.paths[r.pattern]?.[r.method.toLowerCase()] === undefined,
    ).map(
      (r) =>
        `${routeName(r.method, r.pattern)} (job ${r.job}) is missing from docs/openapi.json: declare it with defineRoute in functions/routes.ts`,
    );
    expect(missing).toEqual([]);
  });

  it('documents no route the route table does not have', () => {
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
      ([pattern, ops]) => Object.keys(ops).map((method) => ({ method: method.toUpperCase(), pattern })),
    );
    const extra = documented
      .filter((d) => !ROUTE_TABLE.some((r) => r.method === d.method && r.pattern === d.pattern))
      .map((d) => `${routeName(d.method, d.pattern)} is documented but not in functions/route-table.ts`);
    expect(extra).toEqual([]);
  });
});

/** Every answer the router gives in a session that calls each route, successes and errors. */
const liveSession = async (): Promise<Exchange[]> => {
  const exchanges: Exchange[] = [];
  const { sluice } = memorySluice();
  const fetch = routerFetch(sluice.router(), (e) => exchanges.push(e));
  const client = new SluiceClient({ url: 'http://sluice.test', fetch, retry: { retries: 0 } });
  const admin = client.admin();
  const raw = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`http://sluice.test${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });

  await raw('GET', '/v1/health');
  await admin.cluster();
  await admin.createTopic({ name: 'orders', partitions: 2, configs: { 'retention.ms': '3600000' } });
  await raw('POST', '/v1/topics', { name: 'orders' }); // 409 TOPIC_ALREADY_EXISTS
  await raw('POST', '/v1/topics', { name: 'bad/name' }); // 400
  await raw('POST', '/v1/topics', '{not json'); // 400
  await admin.listTopics();
  await admin.describeTopic('orders');
  await raw('GET', '/v1/topics/nope'); // 404
  await admin.updateTopic('orders', { partitions: 3 });
  await raw('PATCH', '/v1/topics/orders', { partitions: 1 }); // 400 INVALID_PARTITIONS
  const producer = client.producer();
  await producer.send({
    topic: 'orders',
    messages: [{ key: 'k', value: 'v', headers: { h: 'x' } }, { value: null }],
  });
  await raw('POST', '/v1/topics/orders/records', { records: [{ value: 'x', partition: 9 }] });
  await raw('POST', '/v1/topics/nope/records', { records: [{ value: 'x' }] }); // 404
  await producer.sendBatch('orders', 0, [{ key: 'a', value: 'b' }]);
  await raw('POST', '/v1/topics/orders/partitions/0/batches', 'garbage', {
    'content-type': 'application/vnd.kafka.record-batch',
  });
  await raw('GET', '/v1/topics/orders/partitions/0/records?offset=0&encoding=base64');
  await client.consumer().fetch('orders', 0, 0);
  await raw('GET', '/v1/topics/orders/partitions/0/records?offset=99'); // 416
  await admin.fetchTopicOffsets('orders');
  await raw('GET', '/v1/topics/orders/partitions/0/offsets?at=earliest');
  await raw('GET', '/v1/topics/orders/partitions/0/offsets?at=1');
  const join = await raw('POST', '/v1/groups/billing/heartbeat', {
    memberId: null,
    memberEpoch: 0,
    subscribedTopics: ['orders'],
    ownedPartitions: [],
  });
  const member = (await join.json()) as { memberId: string; memberEpoch: number };
  await raw('POST', '/v1/groups/billing/heartbeat', { memberId: 'ghost', memberEpoch: 3 }); // 404
  await raw('POST', '/v1/groups/billing/offsets', {
    memberId: member.memberId,
    memberEpoch: member.memberEpoch,
    offsets: [{ topic: 'orders', partition: 0, offset: 1 }],
  });
  await raw('POST', '/v1/groups/billing/offsets', {
    memberId: member.memberId,
    memberEpoch: member.memberEpoch + 5,
    offsets: [{ topic: 'orders', partition: 0, offset: 1 }],
  }); // 409 STALE_MEMBER_EPOCH
  await admin.fetchOffsets('billing', 'orders');
  await admin.listGroups();
  await admin.describeGroup('billing');
  await raw('GET', '/v1/groups/nobody'); // 404
  await raw('POST', '/v1/groups/billing/offsets/reset', { topic: 'orders', to: 'earliest' }); // 409 NON_EMPTY_GROUP
  await raw('DELETE', '/v1/groups/billing'); // 409 NON_EMPTY_GROUP
  await admin.deleteOffsets('billing', 'orders', [0, 7]); // 200, GROUP_SUBSCRIBED_TO_TOPIC and UNKNOWN_TOPIC_OR_PARTITION
  await raw('DELETE', '/v1/groups/nobody/offsets?topic=orders'); // 404 GROUP_ID_NOT_FOUND
  await raw('DELETE', '/v1/groups/billing/offsets?topic=nope'); // 404 UNKNOWN_TOPIC_OR_PARTITION
  await raw('POST', '/v1/groups/billing/heartbeat', { memberId: member.memberId, memberEpoch: -1 });
  await admin.resetOffsets('billing', 'orders', { offset: 0 });
  await admin.deleteOffsets('billing', 'orders');
  await admin.deleteGroup('billing');
  await raw('POST', '/v1/producers');
  await admin.deleteTopic('orders');
  return exchanges;
};

describe('live answers of the router', () => {
  it('match the document: status listed, body valid, error code listed for its status', async () => {
    const exchanges = await liveSession();
    const { problems, seen } = conformanceProblems(exchanges);
    expect(problems).toEqual([]);
    // The session reaches every route of the table as it stood when this test was written.
    const covered = ROUTE_TABLE.map((r) => routeName(r.method, r.pattern)).filter((r) => !seen.has(r));
    expect(covered.filter((r) => KNOWN_ROUTES.includes(r))).toEqual([]);
    expect(exchanges).toHaveLength(42);
    expect(
      exchanges
        .filter((e) => e.status >= 400)
        .map((e) => `${e.status} ${(e.body as { error: { code: string } }).error.code}`),
    ).toEqual([
      '409 TOPIC_ALREADY_EXISTS',
      '400 INVALID_TOPIC_EXCEPTION',
      '400 INVALID_REQUEST',
      '404 UNKNOWN_TOPIC_OR_PARTITION',
      '400 INVALID_PARTITIONS',
      '404 UNKNOWN_TOPIC_OR_PARTITION',
      '404 UNKNOWN_TOPIC_OR_PARTITION',
      '400 CORRUPT_MESSAGE',
      '416 OFFSET_OUT_OF_RANGE',
      '404 UNKNOWN_MEMBER_ID',
      '409 STALE_MEMBER_EPOCH',
      '404 GROUP_ID_NOT_FOUND',
      '409 NON_EMPTY_GROUP',
      '409 NON_EMPTY_GROUP',
      '404 GROUP_ID_NOT_FOUND',
      '404 UNKNOWN_TOPIC_OR_PARTITION',
    ]);
    // OffsetDelete answers every asked partition, refused ones with their error.
    const deletes = exchanges.filter((e) => e.method === 'DELETE' && e.path === '/v1/groups/billing/offsets');
    const refused = {
      code: 'GROUP_SUBSCRIBED_TO_TOPIC',
      message: expect.stringMatching(/^member \S+ of group billing subscribes to orders; /),
      retriable: false,
    };
    expect(deletes.map((e) => [e.status, e.body])).toEqual([
      [
        200,
        {
          results: [
            { topic: 'orders', partition: 0, error: refused },
            {
              topic: 'orders',
              partition: 7,
              error: {
                code: 'UNKNOWN_TOPIC_OR_PARTITION',
                message: 'topic orders has no partition 7',
                retriable: false,
              },
            },
          ],
        },
      ],
      [404, expect.anything()],
      [200, { results: [0, 1, 2].map((partition) => ({ topic: 'orders', partition })) }],
    ]);
  });
});

const KNOWN_ROUTES = [
  'GET /v1/health',
  'GET /v1/cluster',
  'POST /v1/topics',
  'GET /v1/topics',
  'GET /v1/topics/{topic}',
  'PATCH /v1/topics/{topic}',
  'DELETE /v1/topics/{topic}',
  'POST /v1/topics/{topic}/records',
  'POST /v1/topics/{topic}/partitions/{partition}/batches',
  'POST /v1/producers',
  'GET /v1/topics/{topic}/partitions/{partition}/records',
  'GET /v1/topics/{topic}/partitions/{partition}/offsets',
  'POST /v1/groups/{group}/heartbeat',
  'POST /v1/groups/{group}/offsets',
  'GET /v1/groups/{group}/offsets',
  'POST /v1/groups/{group}/offsets/reset',
  'GET /v1/groups',
  'GET /v1/groups/{group}',
  'DELETE /v1/groups/{group}',
];
