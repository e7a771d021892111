/**
 * The API as an OpenAPI 3.1 document (docs/openapi.json is this, written by `npm run openapi`): every
 * route, its bodies, its statuses and the Kafka error codes each status carries, derived from the
 * route definitions (lib/http/define-route.ts), so a route cannot be served without being documented.
 * A test holds the document to live answers.
 */
import { ERROR_CODES } from '../../protocol/errors.js';
import type { ErrorCode } from '../../protocol/errors.js';
import { RECORD_BATCH_MEDIA_TYPE } from '../http/encoding.js';
import { STATUS_BY_CODE } from '../http/status.js';
import { COMMON_ERRORS } from '../http/routes/errors.js';
import { SCHEMAS } from './schemas.js';

const JSON_TYPE = 'application/json';

/** What the document needs of a route definition (lib/http/define-route.ts). */
export interface Operation {
  method: string;
  path: string;
  id: string;
  summary: string;
  public?: boolean | undefined;
  /** A schema name for a JSON body, or `batches` for RecordBatch bytes. */
  body?: string | undefined;
  bodyOptional?: boolean | undefined;
  query?: { name: string; schema: Record<string, unknown>; description: string }[] | undefined;
  headers?: { name: string; description: string }[] | undefined;
  /** Success status → schema name, `empty`, or `fetch` (JSON or RecordBatch bytes). */
  ok: Record<number, string>;
  /** Error codes this operation answers with (beyond the ones every operation can). */
  errors: readonly ErrorCode[];
}

const PATH_PARAMS: Record<string, { schema: Record<string, unknown>; description: string }> = {
  topic: { schema: { type: 'string', pattern: '^[a-zA-Z0-9._-]{1,249}$' }, description: 'topic name' },
  partition: { schema: { type: 'integer', minimum: 0 }, description: 'partition number' },
  group: { schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'group id' },
  connector: { schema: { type: 'string', minLength: 1 }, description: 'connector name' },
  task: { schema: { type: 'integer', minimum: 0 }, description: 'task id' },
  plugin: { schema: { type: 'string', minLength: 1 }, description: 'connector class, full or short name' },
};

const jsonContent = (schema: string) => ({
  [JSON_TYPE]: { schema: { $ref: `#/components/schemas/${schema}` } },
});

const successResponse = (status: number, kind: string) => {
  if (kind === 'empty') return { description: 'done; no body' };
  if (kind === 'fetch') {
    const header = (description: string) => ({ description, schema: { type: 'integer' } });
    return {
      description: 'records (JSON), or whole RecordBatches (bytes) with the numbers in headers',
      headers: {
        'Sluice-High-Watermark': header('with record-batch bodies'),
        'Sluice-Log-Start-Offset': header('with record-batch bodies'),
        'Sluice-Next-Offset': header('with record-batch bodies'),
      },
      content: {
        ...jsonContent('FetchResult'),
        [RECORD_BATCH_MEDIA_TYPE]: { schema: { type: 'string', contentMediaType: RECORD_BATCH_MEDIA_TYPE } },
      },
    };
  }
  return { description: status === 201 ? 'created' : 'ok', content: jsonContent(kind) };
};

/** Error responses by status, each listing the Kafka codes it carries. */
const errorResponses = (codes: readonly ErrorCode[]): Record<string, unknown> => {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...COMMON_ERRORS, ...codes])) {
    const status = STATUS_BY_CODE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [
        String(status),
        {
          description: list.sort().join(', '),
          'x-kafka-error-codes': list,
          content: jsonContent('Error'),
        },
      ]),
  );
};

const operation = (op: Operation) => {
  const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    ...PATH_PARAMS[name!],
  }));
  const parameters = [
    ...pathParams,
    ...(op.query ?? []).map((p) => ({ ...p, in: 'query', required: false })),
    ...(op.headers ?? []).map((h) => ({
      ...h,
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 128 },
    })),
  ];
  const body =
    op.body === undefined
      ? {}
      : op.body === 'batches'
        ? {
            requestBody: {
              required: true,
              content: {
                [RECORD_BATCH_MEDIA_TYPE]: {
                  schema: { type: 'string', contentMediaType: RECORD_BATCH_MEDIA_TYPE },
                },
              },
            },
          }
        : { requestBody: { required: !op.bodyOptional, content: jsonContent(op.body) } };
  return {
    operationId: op.id,
    summary: op.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...body,
    ...(op.public ? { security: [] } : {}),
    responses: {
      ...Object.fromEntries(
        Object.entries(op.ok).map(([status, kind]) => [status, successResponse(Number(status), kind)]),
      ),
      ...errorResponses(op.errors),
    },
  };
};

/** The OpenAPI 3.1 document of the API, derived from the route definitions (functions/routes.ts). */
export const openApiDocument = (version: string, routes: readonly Operation[]): Record<string, unknown> => {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of routes) (paths[op.path] ??= {})[op.method.toLowerCase()] = operation(op);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sluice HTTP API',
      version,
      description:
        'Apache Kafka\'s model over HTTP. Errors are `{"error": {code, message, retriable}}` with Kafka\'s error names; see docs/api.md.',
    },
    servers: [{ url: 'http://127.0.0.1:8787', description: 'npm start' }],
    security: [{ sigv4: [] }],
    paths,
    components: {
      securitySchemes: {
        sigv4: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'AWS SigV4, service execute-api (IAM authorization)',
        },
      },
      schemas: SCHEMAS,
    },
    'x-kafka-error-codes': Object.fromEntries(
      (Object.keys(ERROR_CODES) as ErrorCode[])
        .sort()
        .map((code) => [code, { status: STATUS_BY_CODE[code], retriable: ERROR_CODES[code].retriable }]),
    ),
  };
};
