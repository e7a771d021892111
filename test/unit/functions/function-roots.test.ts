/**
 * Each deployed function's composition root (functions/<job>.ts) serves exactly the routes API Gateway
 * sends it (functions/route-table.ts), no more and no fewer, and works on its own: a topic created by
 * the admin function is produced to by the produce function and read by the fetch function, each over
 * services of its own on the same stores, as three Lambda containers would. Every API function, given
 * an authorizer (functions/authorizer.ts, IAM's on AWS), checks the resources its bodies name and a
 * delegated caller (Sluice-On-Behalf-Of), refuses delegation without one, and serves within the
 * callers' client quotas when they are on.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN_FUNCTION_ROUTES, adminRouter } from '../../../functions/admin.js';
import { CONNECT_FUNCTION_ROUTES, connectRouter } from '../../../functions/connect.js';
import { FETCH_FUNCTION_ROUTES, fetchRouter } from '../../../functions/fetch.js';
import { GROUPS_FUNCTION_ROUTES, groupsRouter } from '../../../functions/groups.js';
import { maintenanceOf } from '../../../functions/maintenance.js';
import { PRODUCE_FUNCTION_ROUTES, produceRouter } from '../../../functions/produce.js';
import { MemoryMetadataStore } from '../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../lib/adapters/memory/object-store.js';
import type { Job } from '../../../functions/route-table.js';
import { ROUTE_TABLE } from '../../../functions/route-table.js';
import type { Router } from '../../../lib/http/router.js';
import type { CallerContext, HttpResponse } from '../../../lib/http/types.js';
import type { Authorizer } from '../../../lib/auth/acl.js';
import type { SluiceDeps } from '../../../lib/services.js';
import { TestClock } from '../../support/log-support.js';
import { encodeRecordBatch } from '../../../protocol/record-batch/index.js';

const ROOTS: Record<Job, readonly { method: string; path: string }[]> = {
  admin: ADMIN_FUNCTION_ROUTES,
  produce: PRODUCE_FUNCTION_ROUTES,
  fetch: FETCH_FUNCTION_ROUTES,
  groups: GROUPS_FUNCTION_ROUTES,
  connect: CONNECT_FUNCTION_ROUTES,
};

const BUILDERS: Record<Job, (deps: SluiceDeps) => Router> = {
  admin: adminRouter,
  produce: produceRouter,
  fetch: fetchRouter,
  groups: groupsRouter,
  connect: connectRouter,
};

const deps = (more: Partial<SluiceDeps> = {}): SluiceDeps => {
  const clock = new TestClock();
  return {
    store: new MemoryMetadataStore(),
    objectStores: [new MemoryObjectStore('s0', undefined, clock)],
    clock,
    config: { clusterId: 'roots' },
    ...more,
  };
};

const request = (
  method: string,
  path: string,
  body?: unknown,
  query: Record<string, string> = {},
  headers: Record<string, string> = {},
  caller?: CallerContext,
) => ({
  method,
  path,
  query,
  headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers } as Record<
    string,
    string
  >,
  body: body === undefined ? new Uint8Array() : new TextEncoder().encode(JSON.stringify(body)),
  ...(caller ? { caller } : {}),
});

const GATEWAY = 'arn:aws:iam::111122223333:role/kafka-gateway';
const ALICE = 'arn:aws:iam::111122223333:user/alice';
const signedBy = (principalArn: string): CallerContext => ({
  principalArn,
  accountId: '111122223333',
  apiId: 'api',
  stage: '$default',
});

/** One signed route of each function, as a delegating Kafka gateway would send it. */
const DELEGATED: Record<Job, [string, string, unknown?]> = {
  admin: ['GET', '/v1/topics'],
  produce: ['POST', '/v1/topics/orders/records', { records: [{ value: 'x' }] }],
  fetch: ['POST', '/v1/fetch', { partitions: [{ topic: 'orders', partition: 0, offset: 0 }] }],
  groups: ['GET', '/v1/groups'],
  connect: ['GET', '/v1/connect/connectors'],
};

const errorCode = (response: HttpResponse) => (response.body as { error?: { code: string } }).error?.code;

const json = (response: HttpResponse): Record<string, unknown> => response.body as Record<string, unknown>;

describe('per-function composition roots', () => {
  it.each(Object.keys(ROOTS) as Job[])(
    'the %s function serves exactly its routes of the route table',
    (job) => {
      const served = ROOTS[job].map((r) => `${r.method} ${r.path}`);
      const table = ROUTE_TABLE.filter((r) => r.job === job).map((r) => `${r.method} ${r.pattern}`);
      expect(served).toEqual(table);
    },
  );

  it('every route of the table is served by one function', () => {
    const served = Object.values(ROOTS).flatMap((routes) => routes.map((r) => `${r.method} ${r.path}`));
    expect(served.sort()).toEqual(ROUTE_TABLE.map((r) => `${r.method} ${r.pattern}`).sort());
  });

  it('admin, produce and fetch, each over services of its own, create, write and read a topic', async () => {
    const shared = deps();
    const admin = adminRouter(shared);
    const produce = produceRouter(shared);
    const fetch = fetchRouter(shared);
    expect(
      (await admin.handle(request('POST', '/v1/topics', { name: 'orders', partitions: 1 }))).status,
    ).toBe(201);
    const produced = await produce.handle(
      request('POST', '/v1/topics/orders/records', { records: [{ partition: 0, value: 'hello' }] }),
    );
    expect(produced.status).toBe(200);
    const read = await fetch.handle(
      request('GET', '/v1/topics/orders/partitions/0/records', undefined, { offset: '0' }),
    );
    expect(read.status).toBe(200);
    expect((json(read)['records'] as { value: string }[]).map((r) => r.value)).toEqual(['hello']);
  });

  // The transaction coordinator is the groups function's; the produce function checks a transactional
  // batch against the transaction log alone (lib/core/transactions/verify.ts), with no coordinator.
  it('a transaction runs across the groups function (its coordinator) and the produce function (its batches)', async () => {
    const shared = deps();
    const admin = adminRouter(shared);
    const groups = groupsRouter(shared);
    const produce = produceRouter(shared);
    const fetch = fetchRouter(shared);
    expect((await admin.handle(request('POST', '/v1/topics', { name: 'out', partitions: 2 }))).status).toBe(
      201,
    );
    const init = await groups.handle(
      request('POST', '/v1/transactions/tx/producer', { transactionTimeoutMs: 60_000 }),
    );
    expect(init.status).toBe(200);
    const producer = json(init) as { producerId: number; producerEpoch: number };
    const batch = (value: string, producerEpoch = producer.producerEpoch) => ({
      ...request(
        'POST',
        '/v1/topics/out/partitions/0/batches',
        undefined,
        {},
        {
          'content-type': 'application/vnd.kafka.record-batch',
        },
      ),
      body: encodeRecordBatch([{ key: null, value: Buffer.from(value), timestamp: 1 }], {
        producerId: producer.producerId,
        producerEpoch,
        baseSequence: 0,
        isTransactional: true,
      }),
    });
    // Not yet in the transaction: refused by the produce function, nothing written.
    const early = await produce.handle(batch('early'));
    expect([early.status, errorCode(early)]).toEqual([409, 'INVALID_TXN_STATE']);
    expect(
      (
        await groups.handle(
          request('POST', '/v1/transactions/tx/partitions', {
            ...producer,
            topics: [{ topic: 'out', partitions: [0] }],
          }),
        )
      ).status,
    ).toBe(204);
    // A fenced epoch is refused, then the current one is written.
    const stale = await produce.handle(batch('stale', producer.producerEpoch + 1));
    expect(errorCode(stale)).toBe('INVALID_PRODUCER_EPOCH');
    expect((await produce.handle(batch('committed'))).status).toBe(200);
    const committed = () =>
      fetch.handle(
        request('GET', '/v1/topics/out/partitions/0/records', undefined, {
          offset: '0',
          isolationLevel: 'read_committed',
        }),
      );
    expect(json(await committed())['records']).toEqual([]);
    const end = await groups.handle(
      request('POST', '/v1/transactions/tx/end', { ...producer, committed: true }),
    );
    expect(end.status).toBe(200);
    expect((json(await committed())['records'] as { value: string }[]).map((r) => r.value)).toEqual([
      'committed',
    ]);
    // The produce function serves none of the coordinator's routes.
    expect(
      (await produce.handle(request('POST', '/v1/transactions/tx/end', { ...producer, committed: true })))
        .status,
    ).toBe(404);
  });

  it("a function answers 404 for another function's route, and validates its own bodies", async () => {
    const produce = produceRouter(deps());
    expect((await produce.handle(request('GET', '/v1/cluster'))).status).toBe(404);
    const bad = await produce.handle(request('POST', '/v1/topics/orders/records', { records: 'not a list' }));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(json(bad))).toContain('INVALID_REQUEST');
    const fetch = fetchRouter(deps());
    expect((await fetch.handle(request('POST', '/v1/topics/orders/records', { records: [] }))).status).toBe(
      404,
    );
  });

  it('groups, connect and maintenance build and answer on their own', async () => {
    expect((await groupsRouter(deps()).handle(request('GET', '/v1/groups'))).status).toBe(200);
    expect((await connectRouter(deps()).handle(request('GET', '/v1/connect/connectors'))).status).toBe(200);
    expect((await maintenanceOf(deps()).run()).errors).toEqual([]);
  });

  it.each(Object.keys(ROOTS) as Job[])(
    'the %s function refuses a delegated request when it has no authorizer',
    async (job) => {
      const [method, path, body] = DELEGATED[job];
      const response = await BUILDERS[job](deps()).handle(
        request(method, path, body, {}, { 'sluice-on-behalf-of': ALICE }, signedBy(GATEWAY)),
      );
      expect([response.status, errorCode(response)]).toEqual([403, 'CLUSTER_AUTHORIZATION_FAILED']);
    },
  );

  it.each(Object.keys(ROOTS) as Job[])(
    'the %s function checks a delegated caller with its authorizer: the delegation, then the route as the principal',
    async (job) => {
      const asked: string[] = [];
      const authorizer: Authorizer = {
        allowed: async (caller, checks) =>
          checks.map((c) => {
            asked.push(`${caller.principalArn.split('/').at(-1)} ${c.method} ${c.path}`);
            return caller.principalArn === GATEWAY;
          }),
      };
      const [method, path, body] = DELEGATED[job];
      const response = await BUILDERS[job](deps({ authorizer })).handle(
        request(method, path, body, {}, { 'sluice-on-behalf-of': ALICE }, signedBy(GATEWAY)),
      );
      expect(response.status).toBe(403);
      expect(asked).toEqual([
        `kafka-gateway POST /v1/delegation/${encodeURIComponent(ALICE)}`,
        `alice ${method} ${path}`,
      ]);
    },
  );

  it("the fetch function checks the topics POST /v1/fetch names in its body, as the caller's own", async () => {
    const asked: string[] = [];
    const authorizer: Authorizer = {
      allowed: async (_caller, checks) =>
        checks.map((c) => {
          asked.push(`${c.operation} ${c.resourceType} ${c.resource}`);
          return c.resource !== 'secret';
        }),
    };
    const response = await fetchRouter(deps({ authorizer })).handle(
      request(
        'POST',
        '/v1/fetch',
        { partitions: [{ topic: 'secret', partition: 0, offset: 0 }] },
        {},
        {},
        signedBy(ALICE),
      ),
    );
    expect([response.status, errorCode(response)]).toEqual([403, 'TOPIC_AUTHORIZATION_FAILED']);
    expect(asked.length).toBeGreaterThan(0);
    expect(new Set(asked)).toEqual(new Set(['READ TOPIC secret']));
  });

  it('the produce and fetch functions serve within the client quotas the admin function stores', async () => {
    const shared = deps({ config: { clusterId: 'roots', clientQuotas: {} } });
    const admin = adminRouter(shared);
    await admin.handle(request('POST', '/v1/topics', { name: 'orders', partitions: 1 }));
    const set = await admin.handle(
      request('POST', '/v1/client-quotas', {
        entries: [
          {
            entity: { 'client-id': 'noisy' },
            ops: [
              { key: 'producer_byte_rate', value: 1000 },
              { key: 'consumer_byte_rate', value: 1000 },
            ],
          },
        ],
      }),
    );
    expect(set.status).toBe(200);
    const noisy = { 'kafka-client-id': 'noisy' };
    const body = { records: Array.from({ length: 4 }, (_, i) => ({ value: `${i}`.padEnd(500, 'x') })) };
    const produce = produceRouter(shared);
    const first = await produce.handle(request('POST', '/v1/topics/orders/records', body, {}, noisy));
    expect(first.status).toBe(200);
    expect((json(first)['throttle_time_ms'] as number) > 0).toBe(true);
    const refused = await produce.handle(request('POST', '/v1/topics/orders/records', body, {}, noisy));
    expect([refused.status, errorCode(refused)]).toEqual([429, 'THROTTLING_QUOTA_EXCEEDED']);
    const fetch = fetchRouter(shared);
    const read = { partitions: [{ topic: 'orders', partition: 0, offset: 0 }] };
    expect((await fetch.handle(request('POST', '/v1/fetch', read, {}, noisy))).status).toBe(200);
    expect((await fetch.handle(request('POST', '/v1/fetch', read, {}, noisy))).status).toBe(429);
    // Without quotas configured the same requests are served.
    const free = deps();
    await adminRouter(free).handle(request('POST', '/v1/topics', { name: 'orders', partitions: 1 }));
    for (let i = 0; i < 3; i++)
      expect(
        (await produceRouter(free).handle(request('POST', '/v1/topics/orders/records', body, {}, noisy)))
          .status,
      ).toBe(200);
  });
});
