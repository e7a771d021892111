/**
 * Generated per route: every route that takes a JSON body refuses, by its schema and before its
 * handler runs, a body that violates the schema (not an object, an unknown field, a field of the
 * wrong type, a missing required field), with the error docs/openapi.json documents for the route;
 * and lets a minimal valid body through to the handler. The route count is the same in the route
 * table, the OpenAPI document and the ACL table, because all three are derived from one list.
 */
import { describe, expect, it } from 'vitest';
import { ROUTE_ACLS, ROUTE_TABLE } from '../../../functions/route-table.js';
import { ROUTES } from '../../../functions/routes.js';
import type { RouteDeps } from '../../../functions/routes.js';
import { bindRoute } from '../../../lib/http/define-route.js';
import type { RouteDefinition } from '../../../lib/http/define-route.js';
import { Router } from '../../../lib/http/router.js';
import { json } from '../../../lib/http/types.js';
import { validateRequest } from '../../../lib/http/request-schema.js';
import { SCHEMAS } from '../../../lib/wire/schemas.js';
import { openApiDocument } from '../../../lib/wire/openapi.js';

/** A minimal body each request schema accepts (a new body schema needs one here). */
const VALID: Record<string, unknown> = {
  CreateTopic: { name: 't' },
  AlterTopic: {},
  ElectLeaders: { electionType: 'PREFERRED' },
  Produce: { records: [{ value: 'v' }] },
  InitProducerId: {},
  Heartbeat: { memberEpoch: 0 },
  CommitOffsets: { offsets: [] },
  ResetOffsets: { topic: 't', to: 'earliest' },
  CreateConnector: { name: 'c' },
  ConnectorConfig: { 'connector.class': 'FileStreamSource' },
  ConnectorOffsets: { offsets: [] },
  MultiFetch: { partitions: [{ topic: 't', partition: 0, offset: 0 }], isolationLevel: 'read_committed' },
  InitTransactionalProducerId: { transactionTimeoutMs: 60000 },
  AddPartitionsToTxn: { producerId: 1, producerEpoch: 0, topics: [{ topic: 't', partitions: [0] }] },
  AddOffsetsToTxn: { producerId: 1, producerEpoch: 0, groupId: 'g' },
  TxnOffsetCommit: { producerId: 1, producerEpoch: 0, groupId: 'g', offsets: [] },
  EndTxn: { producerId: 1, producerEpoch: 0, committed: true },
  ClassicMember: { memberId: 'm' },
  AlterClientQuotas: {
    entries: [{ entity: { user: null }, ops: [{ key: 'producer_byte_rate', value: 1024 }] }],
  },
};

interface ObjectSchema {
  required?: string[];
  additionalProperties?: unknown;
  properties?: Record<string, { type?: unknown; enum?: unknown; $ref?: unknown; oneOf?: unknown }>;
}

/** Bodies that violate a schema, each with what it violates, derived from the schema itself. */
const violations = (name: string): [string, unknown][] => {
  const schema = SCHEMAS[name] as ObjectSchema;
  const valid = VALID[name] as Record<string, unknown>;
  const cases: [string, unknown][] = [
    ['a JSON array, not an object', []],
    ['a JSON string, not an object', 'text'],
  ];
  if (schema.additionalProperties === false) cases.push(['an unknown field', { ...valid, notAField: 1 }]);
  else if (typeof schema.additionalProperties === 'object')
    cases.push(['a field of the wrong type', { ...valid, 'some.field': { nested: true } }]);
  for (const field of schema.required ?? []) {
    const { [field]: _, ...rest } = valid;
    cases.push([`no ${field}`, rest]);
  }
  for (const [field, property] of Object.entries(schema.properties ?? {})) {
    if (property.type === 'string' || property.enum !== undefined || property.$ref !== undefined)
      cases.push([`${field} of the wrong type`, { ...valid, [field]: { wrong: 'type' } }]);
  }
  return cases;
};

const PARAMS: Record<string, string> = {
  topic: 't',
  partition: '0',
  group: 'g',
  app: 'a',
  store: 's',
  key: 'k',
  connector: 'c',
  task: '0',
  plugin: 'FileStreamSource',
};

const concretePath = (pattern: string): string =>
  pattern.replace(/\{(\w+)\}/g, (_, name: string) => PARAMS[name] ?? 'x');

const DOC = openApiDocument('test', ROUTES) as {
  paths: Record<string, Record<string, { responses: Record<string, { 'x-kafka-error-codes'?: string[] }> }>>;
};

/** The route served with a handler that only records that it ran: validation is all that is tested. */
const stubbed = (definition: RouteDefinition<RouteDeps>, ran: string[]) =>
  new Router([
    bindRoute(
      {
        ...definition,
        handler: () => async (request, body) => {
          ran.push(request.path);
          return json(200, { body });
        },
      },
      { maxRequestBytes: 1 << 20 } as RouteDeps,
    ),
  ]);

const call = (router: Router, definition: RouteDefinition<RouteDeps>, body: unknown) =>
  router.handle({
    method: definition.method,
    path: concretePath(definition.path),
    query: {},
    headers: { 'content-type': 'application/json' },
    body: new TextEncoder().encode(JSON.stringify(body)),
  });

const jsonBodied = ROUTES.filter((r) => r.body !== undefined && r.body !== 'batches');

describe('request schemas, per route', () => {
  it('cover every route that takes a JSON body, each with a valid sample', () => {
    expect(jsonBodied.length).toBeGreaterThanOrEqual(11);
    expect(jsonBodied.filter((r) => !(r.body! in VALID)).map((r) => r.body)).toEqual([]);
  });

  for (const definition of jsonBodied) {
    const key = `${definition.method} ${definition.path}`;
    const schema = definition.body!;
    describe(`${key} (${schema})`, () => {
      it('lets a minimal valid body through to the handler', async () => {
        const ran: string[] = [];
        const response = await call(stubbed(definition, ran), definition, VALID[schema]);
        expect(response.status).toBe(200);
        expect(ran).toEqual([concretePath(definition.path)]);
        expect(response.body).toEqual({ body: VALID[schema] });
      });

      for (const [what, body] of violations(schema)) {
        it(`refuses ${what} by the schema with the documented error, before the handler`, async () => {
          const ran: string[] = [];
          const response = await call(stubbed(definition, ran), definition, body);
          const expected = (() => {
            try {
              validateRequest(schema, body);
              return undefined;
            } catch (error) {
              return (error as Error).message;
            }
          })();
          expect(expected).toMatch(new RegExp(`\\(schema ${schema}\\)$`));
          expect(response.status).toBe(400);
          expect(response.body).toMatchObject({
            error: { code: 'INVALID_REQUEST', message: expected, retriable: false },
          });
          expect(ran).toEqual([]);
          const documented =
            DOC.paths[definition.path]![definition.method.toLowerCase()]!.responses['400']![
              'x-kafka-error-codes'
            ];
          expect(documented).toContain('INVALID_REQUEST');
        });
      }
    });
  }
});

describe('the one list of routes', () => {
  it('gives the route table, the OpenAPI document and the ACL table the same routes', () => {
    const documented = Object.entries(DOC.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const table = ROUTE_TABLE.map((r) => `${r.method} ${r.pattern}`);
    const publicRoutes = ROUTE_TABLE.filter((r) => r.public).map((r) => `${r.method} ${r.pattern}`);
    expect(publicRoutes).toEqual(['GET /v1/health']);
    expect(table).toHaveLength(ROUTES.length);
    expect(documented.sort()).toEqual([...table].sort());
    expect(Object.keys(ROUTE_ACLS).sort()).toEqual(table.filter((k) => !publicRoutes.includes(k)).sort());
    expect(new Set(table).size).toBe(table.length);
  });
});
