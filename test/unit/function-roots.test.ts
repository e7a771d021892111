/**
 * Each deployed function's composition root (functions/<job>.ts) serves exactly the routes API Gateway
 * sends it (lib/http/route-table.ts), no more and no fewer, and works on its own: a topic created by
 * the admin function is produced to by the produce function and read by the fetch function, each over
 * services of its own on the same stores, as three Lambda containers would.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN_FUNCTION_ROUTES, adminRouter } from '../../functions/admin.js';
import { CONNECT_FUNCTION_ROUTES, connectRouter } from '../../functions/connect.js';
import { FETCH_FUNCTION_ROUTES, fetchRouter } from '../../functions/fetch.js';
import { GROUPS_FUNCTION_ROUTES, groupsRouter } from '../../functions/groups.js';
import { maintenanceOf } from '../../functions/maintenance.js';
import { PRODUCE_FUNCTION_ROUTES, produceRouter } from '../../functions/produce.js';
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import type { Job } from '../../lib/http/route-table.js';
import { ROUTE_TABLE } from '../../lib/http/route-table.js';
import type { HttpResponse } from '../../lib/http/types.js';
import type { SluiceDeps } from '../../lib/services.js';
import { TestClock } from './log-support.js';

const ROOTS: Record<Job, readonly { method: string; path: string }[]> = {
  admin: ADMIN_FUNCTION_ROUTES,
  produce: PRODUCE_FUNCTION_ROUTES,
  fetch: FETCH_FUNCTION_ROUTES,
  groups: GROUPS_FUNCTION_ROUTES,
  connect: CONNECT_FUNCTION_ROUTES,
};

const deps = (): SluiceDeps => {
  const clock = new TestClock();
  return {
    store: new MemoryMetadataStore(),
    objectStores: [new MemoryObjectStore('s0', undefined, clock)],
    clock,
    config: { clusterId: 'roots' },
  };
};

const request = (method: string, path: string, body?: unknown, query: Record<string, string> = {}) => ({
  method,
  path,
  query,
  headers: (body === undefined ? {} : { 'content-type': 'application/json' }) as Record<string, string>,
  body: body === undefined ? new Uint8Array() : new TextEncoder().encode(JSON.stringify(body)),
});

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
});
