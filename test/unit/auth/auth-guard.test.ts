/**
 * The handler side of authorization, as it runs in Lambda: the caller comes from the event's IAM
 * authorizer context, and the router's guard checks body-named resources through the Authorizer port
 * before the route's handler (and so before any storage access).
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../lib/adapters/memory/object-store.js';
import { impliedChecks } from '../../../lib/auth/acl.js';
import type { Authorizer } from '../../../lib/auth/authorizer.js';
import { createSluice } from '../../../functions/app.js';
import type { ApiGatewayV2Event } from '../../../lib/http/apigw.js';
import { requestFromEvent } from '../../../lib/http/apigw.js';
import { describableTopicsOnly } from '../../../lib/auth/visibility.js';
import type { CallerContext } from '../../../lib/http/types.js';
import { TestClock } from '../../support/log-support.js';

const event = (over: Partial<ApiGatewayV2Event['requestContext']>, body: unknown): ApiGatewayV2Event => ({
  version: '2.0',
  routeKey: 'POST /v1/groups/{group}/heartbeat',
  rawPath: '/v1/groups/billing/heartbeat',
  rawQueryString: '',
  headers: { 'content-type': 'application/json' },
  requestContext: {
    http: { method: 'POST', path: '/v1/groups/billing/heartbeat' },
    requestId: 'r1',
    accountId: '123456789012',
    apiId: 'abc123',
    stage: '$default',
    ...over,
  },
  body: JSON.stringify(body),
  isBase64Encoded: false,
});

const IAM = { authorizer: { iam: { userArn: 'arn:aws:iam::111122223333:user/alice', accessKey: 'AKID' } } };
const JOIN = { memberId: null, memberEpoch: 0, subscribedTopics: ['orders', 'secret'], ownedPartitions: [] };

describe('the caller from the event', () => {
  it('is the IAM authorizer’s principal and the API the request reached', () => {
    expect(requestFromEvent(event(IAM, JOIN)).caller).toEqual({
      principalArn: 'arn:aws:iam::111122223333:user/alice',
      accountId: '123456789012',
      apiId: 'abc123',
      stage: '$default',
    });
  });

  it('is absent on a route without IAM authorization', () => {
    expect(requestFromEvent(event({}, JOIN)).caller).toBeUndefined();
  });
});

describe('implied checks', () => {
  it('names each body topic once, and nothing for malformed fields', () => {
    const checks = impliedChecks(
      'POST /v1/groups/{group}/heartbeat',
      {},
      {
        subscribedTopics: ['a', 'b', 'a', 7, null],
        ownedPartitions: [{ topic: 'b' }, { topic: 'c' }, 'x', null, { topic: 1 }],
      },
    );
    expect(checks.map((c) => `${c.operation} ${c.method} ${c.path}`)).toEqual([
      // Partition `*` and 2147483647: only a policy covering every partition (no `?`) allows both.
      'READ GET /v1/topics/a/partitions/*/records',
      'READ GET /v1/topics/a/partitions/2147483647/records',
      'READ GET /v1/topics/b/partitions/*/records',
      'READ GET /v1/topics/b/partitions/2147483647/records',
      'READ GET /v1/topics/c/partitions/*/records',
      'READ GET /v1/topics/c/partitions/2147483647/records',
    ]);
    // Kafka's Fetch: READ on each topic of its partitions, once each.
    expect(
      impliedChecks(
        'POST /v1/fetch',
        {},
        { partitions: [{ topic: 'x' }, { topic: 'y' }, { topic: 'x' }, { topic: 3 }, 'z'] },
      ).map((c) => `${c.operation} ${c.path}`),
    ).toEqual([
      'READ /v1/topics/x/partitions/*/records',
      'READ /v1/topics/x/partitions/2147483647/records',
      'READ /v1/topics/y/partitions/*/records',
      'READ /v1/topics/y/partitions/2147483647/records',
    ]);
    expect(impliedChecks('POST /v1/fetch', {}, { partitions: 'x' })).toEqual([]);
    expect(impliedChecks('POST /v1/groups/{group}/offsets', {}, { offsets: 'nope' })).toEqual([]);
    expect(impliedChecks('POST /v1/topics/{topic}/records', {}, { topic: 'x' })).toEqual([]);
    expect(impliedChecks('GET /v1/groups/{group}/offsets', { topic: 'a/b' }, undefined)[0]?.path).toBe(
      '/v1/topics/a%2Fb',
    );
    // OffsetDelete: DELETE on the group (its path) and READ on the query-named topic.
    const deleting = impliedChecks('DELETE /v1/groups/{group}/offsets', { topic: 'orders' }, undefined);
    expect(deleting.map((c) => `${c.operation} ${c.resourceType} ${c.method} ${c.path}`)).toEqual([
      'READ TOPIC GET /v1/topics/orders/partitions/*/records',
      'READ TOPIC GET /v1/topics/orders/partitions/2147483647/records',
    ]);
    expect(impliedChecks('DELETE /v1/groups/{group}/offsets', {}, undefined)).toEqual([]);
  });
});

describe('implied checks of the transaction routes (Kafka: WRITE on AddPartitionsToTxn topics, READ on the group)', () => {
  const show = (routeKey: string, body: unknown) =>
    impliedChecks(routeKey, {}, body).map((c) => `${c.operation} ${c.resourceType} ${c.resource}`);

  it('names every topic of AddPartitionsToTxn for WRITE, once each', () => {
    expect(
      show('POST /v1/transactions/{transactionalId}/partitions', {
        producerId: 1,
        producerEpoch: 0,
        topics: [
          { topic: 'orders', partitions: [0] },
          { topic: 'secret', partitions: [1] },
          { topic: 'orders' },
          'x',
        ],
      }),
    ).toEqual(['WRITE TOPIC orders', 'WRITE TOPIC secret']);
  });

  it('names the group of AddOffsetsToTxn for READ', () => {
    expect(show('POST /v1/transactions/{transactionalId}/groups', { groupId: 'billing' })).toEqual([
      'READ GROUP billing',
    ]);
  });

  it('names the group and each topic of TxnOffsetCommit for READ', () => {
    expect(
      show('POST /v1/transactions/{transactionalId}/offsets', {
        groupId: 'billing',
        offsets: [
          { topic: 'orders', partition: 0, offset: 1 },
          { topic: 'orders', partition: 1, offset: 1 },
        ],
      }),
    ).toEqual(['READ GROUP billing', 'READ TOPIC orders', 'READ TOPIC orders']);
  });

  it('refuses a transaction naming a topic the caller may not write, before anything is stored', async () => {
    const store = new MemoryMetadataStore();
    const authorizer: Authorizer = {
      allowed: async (_caller, checks) => checks.map((c) => c.resource !== 'secret'),
    };
    const clock = new TestClock();
    const sluice = createSluice({
      store,
      objectStores: [new MemoryObjectStore('s0', undefined, clock)],
      clock,
      config: { clusterId: 't' },
      authorizer,
    });
    const path = '/v1/transactions/tx-1/partitions';
    const response = await sluice.router('groups').handle(
      requestFromEvent({
        ...event(IAM, { producerId: 1, producerEpoch: 0, topics: [{ topic: 'secret', partitions: [0] }] }),
        routeKey: 'POST /v1/transactions/{transactionalId}/partitions',
        rawPath: path,
        requestContext: { ...event(IAM, {}).requestContext, http: { method: 'POST', path } },
      }),
    );
    expect(response).toMatchObject({
      status: 403,
      body: {
        error: { code: 'TOPIC_AUTHORIZATION_FAILED', message: 'not authorized to WRITE topic secret' },
      },
    });
    expect(store.meter.read().metadataReads).toBe(0);
    expect(store.dump()).toEqual([]);
  });
});

describe('the router guard', () => {
  const setup = () => {
    const store = new MemoryMetadataStore();
    const asked: string[][] = [];
    const authorizer: Authorizer = {
      allowed: async (caller: CallerContext, checks) => {
        asked.push(checks.map((c) => `${caller.principalArn} ${c.resource}`));
        return checks.map((c) => c.resource !== 'secret');
      },
    };
    const clock = new TestClock();
    const sluice = createSluice({
      store,
      objectStores: [new MemoryObjectStore('s0', undefined, clock)],
      clock,
      config: { clusterId: 't' },
      authorizer,
    });
    return { store, asked, router: sluice.router('groups') };
  };

  it('refuses a body naming a topic the caller may not read, before the handler touches storage', async () => {
    const { store, asked, router } = setup();
    const response = await router.handle(requestFromEvent(event(IAM, JOIN)));
    expect(response).toMatchObject({
      status: 403,
      body: {
        error: {
          code: 'TOPIC_AUTHORIZATION_FAILED',
          message: 'not authorized to READ topic secret',
          retriable: false,
        },
      },
    });
    expect(asked).toEqual([
      [
        'arn:aws:iam::111122223333:user/alice orders',
        'arn:aws:iam::111122223333:user/alice orders',
        'arn:aws:iam::111122223333:user/alice secret',
        'arn:aws:iam::111122223333:user/alice secret',
      ],
    ]);
    expect(store.meter.read().metadataReads).toBe(0);
    expect(store.dump()).toEqual([]);
  });

  it('fails closed: a body naming resources without a caller is a 401', async () => {
    const { store, router } = setup();
    const response = await router.handle(requestFromEvent(event({}, JOIN)));
    expect(response).toMatchObject({ status: 401, body: { error: { code: 'SASL_AUTHENTICATION_FAILED' } } });
    expect(store.meter.read().metadataReads).toBe(0);
  });

  it('lets an allowed body through to the handler', async () => {
    const { router } = setup();
    const response = await router.handle(
      requestFromEvent(event(IAM, { ...JOIN, subscribedTopics: ['orders'] })),
    );
    expect(response.status).toBe(200);
  });
});

describe('group listings', () => {
  const authorizer: Authorizer = { allowed: async (_, checks) => checks.map((c) => c.resource === 'orders') };
  const caller: CallerContext = {
    principalArn: 'arn:aws:iam::1:user/a',
    accountId: '1',
    apiId: 'x',
    stage: '$default',
  };

  it('leave out undescribable topics from offsets, subscriptions and assignments, keeping the rest', async () => {
    const body = {
      groupId: 'g',
      members: [
        {
          memberId: 'm',
          subscribedTopics: ['secret', 'orders'],
          assignment: {
            topicPartitions: [
              { topic: 'secret', partitions: [0] },
              { topic: 'orders', partitions: [1] },
            ],
          },
        },
        { memberId: 'n', subscribedTopics: ['secret'], assignment: null },
      ],
      offsets: [
        { topic: 'secret', partition: 0 },
        { topic: 'orders', partition: 1 },
      ],
    };
    const filtered = await describableTopicsOnly(authorizer, caller, { status: 200, body });
    expect(filtered.body).toEqual({
      groupId: 'g',
      members: [
        {
          memberId: 'm',
          subscribedTopics: ['orders'],
          assignment: { topicPartitions: [{ topic: 'orders', partitions: [1] }] },
        },
        { memberId: 'n', subscribedTopics: [], assignment: null },
      ],
      offsets: [{ topic: 'orders', partition: 1 }],
    });
    expect((await describableTopicsOnly(authorizer, undefined, { status: 200, body })).body).toMatchObject({
      offsets: [],
    });
  });

  it('pass errors and bodies that list no topics through untouched', async () => {
    const error = { status: 404, body: { error: { code: 'GROUP_ID_NOT_FOUND' } } };
    expect(await describableTopicsOnly(authorizer, caller, error)).toBe(error);
    const empty = { status: 200, body: { offsets: [] } };
    expect(await describableTopicsOnly(authorizer, caller, empty)).toBe(empty);
  });
});

describe('requests on behalf of another principal (Sluice-On-Behalf-Of)', () => {
  const GATEWAY = 'arn:aws:iam::111122223333:role/kafka-gateway';
  const ALICE = 'arn:aws:iam::111122223333:user/alice';
  const setup = (allowed: (caller: CallerContext, path: string) => boolean, withAuthorizer = true) => {
    const clock = new TestClock(1_000_000);
    const store = new MemoryMetadataStore();
    const asked: string[] = [];
    const authorizer: Authorizer = {
      allowed: async (caller, checks) =>
        checks.map((c) => {
          asked.push(`${caller.principalArn.split(/[/:]/).at(-1)} ${c.method} ${c.path}`);
          return allowed(caller, `${c.method} ${c.path}`);
        }),
    };
    const sluice = createSluice({
      store,
      objectStores: [new MemoryObjectStore('s0', undefined, clock)],
      clock,
      config: { clusterId: 't' },
      ...(withAuthorizer ? { authorizer } : {}),
    });
    return { asked, router: sluice.router('admin') };
  };
  const asGateway = (onBehalfOf: string): ApiGatewayV2Event => ({
    ...event({ authorizer: { iam: { userArn: GATEWAY } } }, { name: 'fresh', partitions: 1 }),
    routeKey: 'POST /v1/topics',
    rawPath: '/v1/topics',
    headers: { 'content-type': 'application/json', 'sluice-on-behalf-of': onBehalfOf },
    requestContext: {
      ...event({}, {}).requestContext,
      authorizer: { iam: { userArn: GATEWAY } },
      http: { method: 'POST', path: '/v1/topics' },
    },
  });
  const code = (response: { body?: unknown }) => (response.body as { error?: { code: string } }).error?.code;

  it('is refused unless the signer may delegate, before anything else is asked', async () => {
    const { asked, router } = setup(() => false);
    const response = await router.handle(requestFromEvent(asGateway(ALICE)));
    expect([response.status, code(response)]).toEqual([403, 'CLUSTER_AUTHORIZATION_FAILED']);
    expect(asked).toEqual([`kafka-gateway POST /v1/delegation/${encodeURIComponent(ALICE)}`]);
  });

  it('is authorized as the named principal: its own route check decides, not the signer’s', async () => {
    const { asked, router } = setup(
      (caller, path) => caller.principalArn === GATEWAY || path !== 'POST /v1/topics',
    );
    const response = await router.handle(requestFromEvent(asGateway(ALICE)));
    expect([response.status, code(response)]).toEqual([403, 'CLUSTER_AUTHORIZATION_FAILED']);
    expect(asked).toEqual([
      `kafka-gateway POST /v1/delegation/${encodeURIComponent(ALICE)}`,
      'alice POST /v1/topics',
    ]);
    // Allowed, the handler answers, with the signer's and the principal's rights both checked.
    const allowed = setup(() => true);
    const list = asGateway(ALICE);
    const listed = await allowed.router.handle(
      requestFromEvent({
        ...list,
        routeKey: 'GET /v1/topics',
        body: '',
        requestContext: { ...list.requestContext, http: { method: 'GET', path: '/v1/topics' } },
      }),
    );
    expect([listed.status, listed.body]).toEqual([200, { topics: [] }]);
    expect(allowed.asked).toEqual([
      `kafka-gateway POST /v1/delegation/${encodeURIComponent(ALICE)}`,
      'alice GET /v1/topics',
    ]);
  });

  it('refuses a name that is no IAM principal, and the header where nothing checks principals', async () => {
    const { router } = setup(() => true);
    const bad = await router.handle(requestFromEvent(asGateway('*')));
    expect([bad.status, code(bad)]).toEqual([400, 'INVALID_REQUEST']);
    const open = setup(() => true, false);
    const refused = await open.router.handle(requestFromEvent(asGateway(ALICE)));
    expect([refused.status, code(refused)]).toEqual([403, 'CLUSTER_AUTHORIZATION_FAILED']);
  });
});
