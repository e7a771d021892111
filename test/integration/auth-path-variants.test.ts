/**
 * Issue 23, class 1 through `npm start`'s gateway in SLUICE_AUTH=iam mode: the path that is authorized
 * is exactly the path that is routed. For every route of the route table, a principal denied that
 * route's canonical path (an explicit Deny beside Allow *) and a principal allowed everything send every
 * non-canonical spelling of it, signed for that very spelling: each answers 404 before any policy or
 * handler, none reaches a handler, and nothing stored changes (before/after snapshot).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ARN, arn, invokePolicy, startAuthStack } from './auth-stack.js';
import type { AuthStack } from './auth-stack.js';
import { routeVariants } from '../support/path-variants.js';

const routes = routeVariants();
let t: AuthStack;

beforeAll(async () => {
  t = await startAuthStack([
    { name: 'allowed', policies: [invokePolicy([`${API_ARN}/*`])] },
    {
      name: 'denied',
      policies: [
        invokePolicy(
          [`${API_ARN}/*`],
          routes.map((r) => arn(r.spec.method, r.path)),
        ),
      ],
    },
  ]);
  expect(
    (await t.call('allowed', 'POST', '/v1/topics', { body: { name: 'orders', partitions: 1 } })).status,
  ).toBe(201);
  const produced = await t.call('allowed', 'POST', '/v1/topics/orders/records', {
    body: { records: [{ value: 'secret' }] },
  });
  expect(produced.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe('path variants over every route, allowed and denied', () => {
  it('refuses the canonical path of every non-public route to the denied principal (the Deny is real)', async () => {
    const answers = [];
    for (const r of routes) {
      const reply = await t.call('denied', r.spec.method, r.path, { raw: true });
      answers.push([r.key, r.spec.public ? 200 : 403, reply.status]);
    }
    expect(answers.filter(([, want, got]) => want !== got)).toEqual([]);
  });

  it.each(['denied', 'allowed'])(
    'answers 404 to every variant for the %s principal, reaching no handler and changing nothing',
    async (principal) => {
      const before = await t.snapshot();
      const wrong = [];
      let sent = 0;
      for (const r of routes) {
        for (const v of r.variants) {
          const reply = await t.call(principal, r.spec.method, v.path, { raw: true });
          sent += 1;
          if (reply.status !== 404 || reply.json?.error?.code !== 'NOT_FOUND')
            wrong.push({ route: r.key, variant: v.kind, path: v.path, status: reply.status });
        }
      }
      expect(sent).toBeGreaterThan(1000);
      expect(wrong).toEqual([]);
      expect(await t.snapshot()).toEqual(before);
    },
    300_000,
  );
});
