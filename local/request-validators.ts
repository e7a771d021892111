/**
 * Request body validators compiled ahead of time. Each module that declares routes with JSON bodies
 * gets a generated module, lib/http/validators/<name>.js: the schemas (lib/wire/schemas.ts) its routes
 * name compiled by ajv's standalone code generation into plain functions, with the options the edge
 * once compiled with at run time (the first error only; OpenAPI's `components` wrapper and
 * descriptions allowed), registered with lib/http/request-schema.ts when the route module imports it.
 * So a deployed function carries no JSON Schema compiler, and only the validators of the route
 * modules it serves. Build time only: `npm run validators` writes the files, and
 * test/unit/functions/request-validators.test.ts fails when one differs from what this generates.
 */
import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CONNECT_ROUTES } from '../connect/rest.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import { ADMIN_ROUTES } from '../lib/http/routes/admin.js';
import { GROUP_ROUTES } from '../lib/http/routes/groups.js';
import { FETCH_ROUTES } from '../lib/http/routes/fetch.js';
import { PRODUCE_ROUTES } from '../lib/http/routes/produce.js';
import { QUOTA_ROUTES } from '../lib/http/routes/quotas.js';
import { REPLICATION_ROUTES } from '../lib/http/routes/replication.js';
import { TRANSACTION_ROUTES } from '../lib/http/routes/transactions.js';
import { ROUTES } from '../functions/routes.js';
import { SCHEMAS } from '../lib/wire/schemas.js';

/** Where the generated modules live, relative to the repository root. */
export const VALIDATORS_DIR = 'lib/http/validators';

/**
 * Each generated module and the routes of the module that imports it (`import
 * '<relative path>/validators/<name>.js'` in that route module).
 */
export const VALIDATOR_MODULES: Readonly<Record<string, readonly RouteDefinition<never>[]>> = {
  admin: ADMIN_ROUTES as readonly RouteDefinition<never>[],
  connect: CONNECT_ROUTES as readonly RouteDefinition<never>[],
  groups: GROUP_ROUTES as readonly RouteDefinition<never>[],
  produce: PRODUCE_ROUTES as readonly RouteDefinition<never>[],
  fetch: FETCH_ROUTES as readonly RouteDefinition<never>[],
  quotas: QUOTA_ROUTES as readonly RouteDefinition<never>[],
  replication: REPLICATION_ROUTES as readonly RouteDefinition<never>[],
  transactions: TRANSACTION_ROUTES as readonly RouteDefinition<never>[],
};

const DOCUMENT_ID = 'sluice:request-schemas';

// ajv's CommonJS modules, loaded as CommonJS: the same under tsx, vitest and tsc's NodeNext typing.
const require = createRequire(import.meta.url);
const standaloneCode = (
  require('ajv/dist/standalone/index.js') as {
    default: (ajv: Ajv2020, refs: Readonly<Record<string, string>>) => string;
  }
).default;

/** The JSON body schemas of these routes, sorted. */
export const bodySchemasOf = (routes: readonly { body?: string }[]): string[] =>
  [
    ...new Set(routes.map((r) => r.body).filter((b): b is string => b !== undefined && b !== 'batches')),
  ].sort();

/** Every JSON body schema a route of the API names must have a generated validator. */
export const uncoveredBodySchemas = (): string[] => {
  const covered = new Set(Object.values(VALIDATOR_MODULES).flatMap(bodySchemasOf));
  return bodySchemasOf(ROUTES).filter((s) => !covered.has(s));
};

/** The text of lib/http/validators/<name>.js. */
export const validatorModuleSource = (name: string): string => {
  const routes = VALIDATOR_MODULES[name];
  if (!routes) throw new Error(`no validator module ${name}`);
  const schemas = bodySchemasOf(routes);
  for (const schema of schemas) {
    if (!(schema in SCHEMAS)) throw new Error(`route body ${schema} has no schema in lib/wire/schemas.ts`);
    if (!/^[A-Z][A-Za-z0-9]*$/.test(schema)) throw new Error(`schema name ${schema} is not an identifier`);
  }
  const ajv = new Ajv2020({
    strict: false,
    allErrors: false,
    code: { source: true, esm: true, lines: true },
  });
  // Ajv2020 always tracks which properties and items each validator evaluated, for
  // unevaluatedProperties/unevaluatedItems; no schema of the API uses them (checked here), so the
  // generated validators leave the bookkeeping out.
  if (/"unevaluated(Properties|Items)"/.test(JSON.stringify(SCHEMAS)))
    throw new Error('a schema uses unevaluatedProperties/Items: the validators must track evaluation again');
  (ajv.opts as { unevaluated?: boolean }).unevaluated = false;
  ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: SCHEMAS } });
  let code = standaloneCode(
    ajv,
    Object.fromEntries(schemas.map((s) => [s, `${DOCUMENT_ID}#/components/schemas/${s}`])),
  );
  const functions = [...code.matchAll(/^export const (\w+) = (\w+);$/gm)].map((m) => [m[1]!, m[2]!]);
  // Exports become one registration (the route module imports this file for that effect).
  code = code.replace(/^"use strict";\n/, '').replace(/^export const (\w+) = (\w+);$/gm, '');
  // Each error names the schema keyword it failed at (schemaPath); lib/http/request-schema.ts words a
  // refusal from the instance path, keyword, params and message only, so the bundles carry none.
  code = code.replace(/schemaPath:"(?:[^"\\\n]|\\.)*",/g, '');
  // ajv's run-time helper for string lengths (in code points), copied in: the module imports no ajv.
  const helpers = [...code.matchAll(/require\("ajv\/dist\/runtime\/(\w+)"\)\.default/g)].map((m) => m[1]!);
  for (const helper of new Set(helpers)) {
    if (helper !== 'ucs2length') throw new Error(`unexpected ajv runtime helper ${helper}`);
  }
  code = code.replace(/require\("ajv\/dist\/runtime\/ucs2length"\)\.default/g, 'ucs2length');
  return [
    `// Generated by \`npm run validators\` (local/request-validators.ts) from lib/wire/schemas.ts: do not edit.`,
    `import { registerRequestValidators } from '../request-schema.js';`,
    ...(helpers.length > 0 ? [String(require('ajv/dist/runtime/ucs2length').default)] : []),
    code.trim(),
    `registerRequestValidators({ ${functions.map(([s, f]) => `${s}: ${f}`).join(', ')} });`,
    '',
  ].join('\n');
};
