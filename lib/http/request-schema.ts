/**
 * Validation of request bodies against the schemas docs/openapi.json publishes (lib/wire/schemas.ts):
 * the schema a route declares is the check its requests pass, so the document and the edge cannot
 * disagree. A body that does not match is refused with 400 INVALID_REQUEST naming the first field that
 * fails, before anything is read or written.
 *
 * The validators are compiled ahead of time (local/request-validators.ts, `npm run validators`) into
 * lib/http/validators/<module>.js, which each route module imports: importing one registers its
 * validators here. So a function carries no JSON Schema compiler and only the validators of the routes
 * it serves (test/infra/bundle.test.ts); test/unit/functions/request-validators.test.ts fails when a generated
 * file is stale.
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import { invalidRequest } from '../../protocol/errors.js';
import type { SluiceError } from '../../protocol/errors.js';

/** A compiled validator, as ajv's standalone code generation writes it. */
export interface RequestValidator {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

const validators = new Map<string, RequestValidator>();

/** Called by the generated modules (lib/http/validators/*.js) when a route module imports them. */
export const registerRequestValidators = (table: Readonly<Record<string, RequestValidator>>): void => {
  for (const [schema, validate] of Object.entries(table)) validators.set(schema, validate);
};

const validatorOf = (schema: string): RequestValidator => {
  const validate = validators.get(schema);
  if (!validate)
    throw new Error(
      `no validator for schema ${schema}: its route module imports none (npm run validators writes lib/http/validators)`,
    );
  return validate;
};

/** `/records/0/headers` → `records[0].headers`, as the API's messages name fields. */
const fieldName = (pointer: string): string =>
  pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((name, s) => (/^\d+$/.test(s) ? `${name}[${s}]` : name === '' ? s : `${name}.${s}`), '');

const describeError = (error: ErrorObject): string => {
  const where = fieldName(error.instancePath);
  if (error.keyword === 'additionalProperties') {
    const field = (error.params as { additionalProperty: string }).additionalProperty;
    return `${where || 'request'} has unknown field(s): ${field}`;
  }
  if (error.keyword === 'required') {
    const field = (error.params as { missingProperty: string }).missingProperty;
    return `${where ? `${where}.` : ''}${field} is required`;
  }
  const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
  const detail = allowed
    ? `${error.message}: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`
    : error.message;
  return `${where || 'request body'} ${detail ?? 'is not valid'}`;
};

/** Refuses (400 INVALID_REQUEST, naming the first failing field and the schema) a value that does not match. */
export const validateRequest = (schema: string, value: unknown): void => {
  const validate = validatorOf(schema);
  if (validate(value)) return;
  throw schemaRefusal(schema, validate.errors?.[0]);
};

const schemaRefusal = (schema: string, error: ErrorObject | undefined): SluiceError =>
  invalidRequest(`${error ? describeError(error) : 'request body does not match'} (schema ${schema})`);
