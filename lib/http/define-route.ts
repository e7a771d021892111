/**
 * One definition per route: its method and path, the function that serves it, its Kafka ACL, its
 * request and response schemas, the Kafka error codes it answers with, and its handler. The route
 * table (API Gateway's routes, functions/route-table.ts), the OpenAPI document (lib/wire/openapi.ts)
 * and the ACL table are derived from the one list of these (functions/routes.ts), so a route
 * cannot exist in one and be missing from another.
 */
import type { ErrorCode } from '../../protocol/errors.js';
import { SluiceError } from '../../protocol/errors.js';
import type { RouteAcl } from '../auth/acl.js';
import { readJson } from './body.js';
import { EDGE_LIMITS } from './limits.js';
import { validateRequest } from './request-schema.js';
import type { HttpMethod, HttpRequest, HttpResponse, Route } from './types.js';
import { kafkaApiName } from '../telemetry/apis.js';
import type { ClientQuotaManager } from '../core/quotas/index.js';
import type { QuotaUse } from './quotas.js';
import { serveWithinQuotas } from './quotas.js';

/** The Lambda function that serves a route (API Gateway sends each function only its routes). */
export type Job = 'admin' | 'produce' | 'fetch' | 'groups' | 'connect';

export interface QueryParam {
  name: string;
  schema: Record<string, unknown>;
  description: string;
}

/** What a defined route's handler gets: the request, and its JSON body once it matched the schema. */
export type DefinedHandler = (
  request: HttpRequest,
  body: Record<string, unknown> | undefined,
) => Promise<HttpResponse>;

interface RouteFields<D> {
  method: HttpMethod;
  /** Path template with `{name}` segments, e.g. `/v1/topics/{topic}`. */
  path: string;
  job: Job;
  /** OpenAPI operationId. */
  id: string;
  summary: string;
  /** The schema (lib/wire/schemas.ts) a JSON body must match, or `batches` for RecordBatch bytes. */
  body?: string;
  /** An empty body is allowed (and not validated). */
  bodyOptional?: true;
  /** Produce routes: a body over this many bytes is RECORD_LIST_TOO_LARGE, before it is parsed. */
  maxRecordBytes?: (deps: D) => number;
  /** The body names further resources that lib/auth/acl.ts's impliedChecks authorizes. */
  bodyNamesResources?: true;
  /** The answer lists a group's topics: only those the caller may describe are left in. */
  listsGroupTopics?: true;
  query?: QueryParam[];
  headers?: { name: string; description: string }[];
  /** Success status → schema name, `empty`, or `fetch` (JSON or RecordBatch bytes). */
  ok: Record<number, string>;
  /** Error codes this route answers with (beyond the ones every route can). */
  errors: ErrorCode[];
  /**
   * The client quota the route spends beside request time (lib/http/quotas.ts): producer or consumer
   * bytes, or partition mutations.
   */
  quota?: (deps: D) => QuotaUse;
  /** Errors thrown while serving (validation included) pass through this (Connect adds `error_code`). */
  mapError?: (error: unknown) => unknown;
  handler: (deps: D) => DefinedHandler;
}

/** Health is public; every other route needs IAM (SigV4) and names its Kafka ACL. */
export type RouteDefinition<D> = RouteFields<D> &
  ({ public: true; acl?: undefined } | { public?: undefined; acl: RouteAcl });

/** Declares a route (an identity function: it exists so that each route is typed where it is written). */
export const defineRoute = <D>(definition: RouteDefinition<D>): RouteDefinition<D> => definition;

export const routeKey = (route: { method: string; path: string }): string => `${route.method} ${route.path}`;

const readBody = <D>(
  definition: RouteDefinition<D>,
  request: HttpRequest,
  maxRecordBytes: number | undefined,
): Record<string, unknown> | undefined => {
  if (maxRecordBytes !== undefined && request.body.length > maxRecordBytes) {
    throw new SluiceError(
      'RECORD_LIST_TOO_LARGE',
      `request body is ${request.body.length} bytes; this deployment accepts at most ${maxRecordBytes}`,
    );
  }
  if (definition.body === undefined || definition.body === 'batches') return undefined;
  if (definition.bodyOptional && request.body.length === 0) return undefined;
  const value = readJson(request, maxRecordBytes ?? EDGE_LIMITS.maxControlBodyBytes);
  validateRequest(definition.body, value);
  return value as Record<string, unknown>;
};

/** The route a router serves: the definition's handler over these dependencies, its body validated first. */
export const bindRoute = <D>(definition: RouteDefinition<D>, deps: D, quotas?: ClientQuotaManager): Route => {
  const handle = definition.handler(deps);
  const maxRecordBytes = definition.maxRecordBytes?.(deps);
  // Public routes (health) answer anyone and spend no quota.
  const quota = definition.public ? undefined : quotas;
  const use = definition.quota?.(deps);
  return {
    method: definition.method,
    pattern: definition.path,
    api: kafkaApiName(definition.id),
    ...(definition.mapError ? { mapError: definition.mapError } : {}),
    handler: async (request) => {
      try {
        const body = readBody(definition, request, maxRecordBytes);
        return quota
          ? await serveWithinQuotas(quota, use, request, body, () => handle(request, body))
          : await handle(request, body);
      } catch (error) {
        throw definition.mapError ? definition.mapError(error) : error;
      }
    },
  };
};

/** With `quotas`, every signed route is served within its caller's client quotas. */
export const bindRoutes = <D>(
  definitions: readonly RouteDefinition<D>[],
  deps: D,
  quotas?: ClientQuotaManager,
): Route[] => definitions.map((definition) => bindRoute(definition, deps, quotas));
