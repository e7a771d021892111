/**
 * Issue 23, class 1 on the Lambda side: the router serves only canonical paths. API Gateway builds the
 * ARN its IAM authorizer evaluates from the path as sent and routes `/x/` to `GET /x`, so the handler
 * is the last line: every non-canonical spelling of every route of the route table answers 404 before
 * any guard or handler runs, and changes nothing. The canonical path itself is routed.
 */
import { describe, expect, it } from 'vitest';
import { createSluice } from '../../../functions/app.js';
import type { AccessCheck } from '../../../lib/auth/acl.js';
import type { Authorizer } from '../../../lib/auth/authorizer.js';
import { MemoryMetadataStore } from '../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../lib/adapters/memory/object-store.js';
import { canonicalRequestPath } from '../../../lib/http/request-path.js';
import { TestClock } from '../../support/log-support.js';
import { routeVariants } from '../../support/path-variants.js';

/** A body that would change something if a variant ever reached its handler. */
const BODIES: Record<string, unknown> = {
  'POST /v1/topics': { name: 'fresh', partitions: 1 },
  'PATCH /v1/topics/{topic}': { partitions: 3 },
  'POST /v1/topics/{topic}/records': { records: [{ value: 'v' }] },
  'POST /v1/groups/{group}/offsets': { offsets: [{ topic: 'orders', partition: 0, offset: 1 }] },
  'POST /v1/groups/{group}/heartbeat': { memberEpoch: 0, subscribedTopics: ['orders'] },
  'POST /v1/connect/connectors': {
    name: 'fresh',
    config: { 'connector.class': 'S3SinkConnector', topics: 'orders', 's3.bucket.name': 'b' },
  },
};

const setup = async () => {
  const store = new MemoryMetadataStore();
  const clock = new TestClock();
  const objects = new MemoryObjectStore('s0', undefined, clock);
  const checks: AccessCheck[] = [];
  // The guard's authorizer allows everything and records what it was asked: a variant asks nothing.
  const authorizer: Authorizer = {
    allowed: (_, asked) => {
      checks.push(...asked);
      return Promise.resolve(asked.map(() => true));
    },
  };
  let id = 0;
  const sluice = createSluice({
    store,
    objectStores: [objects],
    clock,
    config: { clusterId: 'test', topicCacheTtlMs: 60_000 },
    newId: () => `id-${++id}`,
    authorizer,
  });
  const router = sluice.router();
  const call = (method: string, path: string, body?: unknown) =>
    router.handle({
      method,
      path,
      query: {},
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? new Uint8Array() : new Uint8Array(Buffer.from(JSON.stringify(body))),
      caller: {
        principalArn: 'arn:aws:iam::111122223333:user/alice',
        accountId: '1',
        apiId: 'a',
        stage: '$default',
      },
    });
  expect((await call('POST', '/v1/topics', { name: 'orders', partitions: 1 })).status).toBe(201);
  expect((await call('POST', '/v1/topics/orders/records', { records: [{ value: 'a' }] })).status).toBe(200);
  const snapshot = () => ({
    items: store
      .dump()
      .map((i) => JSON.stringify(i))
      .sort(),
    objects: objects.keys(),
  });
  return { call, checks, snapshot };
};

describe('canonical request paths', () => {
  it.each([
    ['/v1/topics/orders', true],
    ['/v1/groups/a%20b/offsets', true],
    ['/v1/groups/caf%C3%A9', true],
    ['/v1/topics/orders/', false],
    ['/v1//topics', false],
    ['/v1/./topics', false],
    ['/v1/x/../topics', false],
    ['/v1/%2E%2E/topics', false],
    ['/v1/topics/%6Frders', false],
    ['/v1/groups/caf%c3%a9', false],
    ['/v1/groups/a%2Fb', false],
    ['/v1/topics\\orders', false],
    ['/v1/groups/%E0%A4%A', false],
    ['v1/topics', false],
  ])('%s canonical: %s', (path, canonical) => {
    expect('path' in canonicalRequestPath(path)).toBe(canonical);
  });
});

describe('every route of the route table, every path variant', () => {
  const routes = routeVariants();

  it('enumerates every route and many variants of each', () => {
    expect(routes.length).toBeGreaterThanOrEqual(42);
    for (const r of routes) expect(r.variants.length, r.key).toBeGreaterThanOrEqual(15);
  });

  it.each(routes.map((r) => [r.key, r] as const))(
    '%s: the canonical path is routed, every variant is 404 and changes nothing',
    async (key, { spec, path, variants }) => {
      const s = await setup();
      const body = BODIES[key];
      const routed = await s.call(spec.method, path, body);
      // Routed: whatever the handler answers, it is not the router's "no route".
      const routedBody = routed.body as { error?: { code?: string; message?: string } } | undefined;
      expect(routedBody?.error?.message ?? '', key).not.toMatch(/^no route/);
      const fresh = await setup();
      const before = fresh.snapshot();
      const answers = [];
      for (const variant of variants) {
        const reply = await fresh.call(spec.method, variant.path, body);
        const error = (reply.body as { error?: { code?: string } } | undefined)?.error;
        answers.push({ kind: variant.kind, path: variant.path, status: reply.status, code: error?.code });
      }
      expect(answers).toEqual(
        variants.map((v) => ({ kind: v.kind, path: v.path, status: 404, code: 'NOT_FOUND' })),
      );
      expect(fresh.checks).toEqual([]);
      expect(fresh.snapshot()).toEqual(before);
    },
  );
});
