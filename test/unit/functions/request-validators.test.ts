/**
 * The request body validators are compiled ahead of time (local/request-validators.ts) into
 * lib/http/validators/*.js. A schema change without `npm run validators` would leave the edge checking
 * the old schema: each committed file must be exactly what the generator writes now, every JSON body a
 * route names must have a validator, and each generated module must be imported by the route module it
 * was generated for.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  VALIDATORS_DIR,
  VALIDATOR_MODULES,
  bodySchemasOf,
  uncoveredBodySchemas,
  validatorModuleSource,
} from '../../../local/request-validators.js';
import { validateRequest } from '../../../lib/http/request-schema.js';
import { ROUTES } from '../../../functions/routes.js';

const ROOT = new URL('../../../', import.meta.url);

/** The route module that imports each generated module. */
const IMPORTER: Record<string, string> = {
  admin: 'lib/http/routes/admin.ts',
  connect: 'connect/rest.ts',
  groups: 'lib/http/routes/groups.ts',
  produce: 'lib/http/routes/produce.ts',
  fetch: 'lib/http/routes/fetch.ts',
  quotas: 'lib/http/routes/quotas.ts',
  replication: 'lib/http/routes/replication.ts',
  transactions: 'lib/http/routes/transactions.ts',
};

describe('precompiled request validators', () => {
  it('the committed files are the ones the schemas generate now (npm run validators)', () => {
    const committed = readdirSync(new URL(`${VALIDATORS_DIR}/`, ROOT))
      .filter((f) => f.endsWith('.js'))
      .sort();
    expect(committed).toEqual(
      Object.keys(VALIDATOR_MODULES)
        .map((m) => `${m}.js`)
        .sort(),
    );
    for (const name of Object.keys(VALIDATOR_MODULES)) {
      const file = readFileSync(new URL(`${VALIDATORS_DIR}/${name}.js`, ROOT), 'utf8');
      // toBe on the whole text would print 100 KiB; compare, then say which file is stale.
      expect(
        file === validatorModuleSource(name),
        `${VALIDATORS_DIR}/${name}.js is stale: run npm run validators`,
      ).toBe(true);
    }
  });

  it('every JSON body a route names has a generated validator', () => {
    expect(uncoveredBodySchemas()).toEqual([]);
  });

  it.each(Object.keys(IMPORTER))('%s is imported by its route module', (name) => {
    const source = readFileSync(new URL(IMPORTER[name]!, ROOT), 'utf8');
    expect(source).toMatch(new RegExp(`^import '[./]*(lib/http/)?validators/${name}\\.js';$`, 'm'));
  });

  it('every route body is validated once the routes are imported', () => {
    for (const schema of bodySchemasOf(ROUTES))
      expect(() => validateRequest(schema, [])).toThrow(/\(schema /);
  });

  it('a schema no route module registered is an error, not a pass', () => {
    expect(() => validateRequest('NoSuchSchema', {})).toThrow(/no validator for schema NoSuchSchema/);
  });

  it('refuses with the messages the run-time compiler gave (measured on e5e9779)', () => {
    expect(() => validateRequest('Produce', { records: [{ value: 'v', partition: -1 }] })).toThrow(
      'records[0].partition must be >= 0 (schema Produce)',
    );
    expect(() => validateRequest('Produce', { records: [], acks: 2 })).toThrow(
      'records must NOT have fewer than 1 items (schema Produce)',
    );
    expect(() => validateRequest('Produce', { records: [{}], acks: 2 })).toThrow(
      'acks must be equal to one of the allowed values: "all", "-1", -1, "1", 1 (schema Produce)',
    );
    expect(() => validateRequest('CreateTopic', { name: 't', extra: 1 })).toThrow(
      'request has unknown field(s): extra (schema CreateTopic)',
    );
    expect(() => validateRequest('EndTxn', { producerId: 1, producerEpoch: 0 })).toThrow(
      'committed is required (schema EndTxn)',
    );
    expect(() => validateRequest('CreateConnector', { name: '' })).toThrow(
      'name must NOT have fewer than 1 characters (schema CreateConnector)',
    );
    expect(() => validateRequest('CreateTopic', { name: 't' })).not.toThrow();
  });
});
