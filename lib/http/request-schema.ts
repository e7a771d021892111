/**
 * Run-time validation of request bodies against the schemas docs/openapi.json publishes
 * (lib/wire/schemas.ts): the schema a route declares is the check its requests pass, so the
 * document and the edge cannot disagree. A body that does not match is refused with 400
 * INVALID_REQUEST naming the first field that fails, before anything is read or written.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { invalidRequest } from '../../protocol/errors.js';
import type { SluiceError } from '../../protocol/errors.js';
import { SCHEMAS } from '../wire/schemas.js';

const DOCUMENT_ID = 'sluice:request-schemas';

let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

/** The validator of one named schema, compiled on first use (a cold start compiles only what it serves). */
const validatorOf = (schema: string): ValidateFunction => {
  let validate = compiled.get(schema);
  if (validate) return validate;
  if (!(schema in SCHEMAS)) throw new Error(`no schema ${schema} in lib/wire/schemas.ts`);
  if (!ajv) {
    // strict: false because the schemas carry OpenAPI's `components` wrapper and descriptions.
    ajv = new Ajv2020({ strict: false, allErrors: false });
    ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: SCHEMAS } });
  }
  validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/components/schemas/${schema}` });
  compiled.set(schema, validate);
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
