/**
 * Which function serves which route: API Gateway's route table, and the Kafka ACL each route's path
 * grants. Both are derived from the one list of route definitions (functions/routes.ts); the CDK
 * app and the local gateway both read them, so a route cannot exist in one and not the other.
 */
import { aclTable } from '../lib/auth/acl.js';
import type { RouteAcl } from '../lib/auth/acl.js';
import type { Job } from '../lib/http/define-route.js';
import { routeKey } from '../lib/http/define-route.js';
import { ROUTES } from './routes.js';
import type { HttpMethod } from '../lib/http/types.js';

export type { Job } from '../lib/http/define-route.js';

export interface RouteSpec {
  method: HttpMethod;
  pattern: string;
  job: Job;
  /** Health is public; everything else needs IAM (SigV4) in AWS. */
  public?: boolean;
  /** The Kafka ACL the route's path grants (absent only on public routes). */
  acl?: RouteAcl;
}

export const ROUTE_TABLE: readonly RouteSpec[] = ROUTES.map((route) => ({
  method: route.method,
  pattern: route.path,
  job: route.job,
  ...(route.public ? { public: true } : {}),
  ...(route.acl ? { acl: route.acl } : {}),
}));

/** Route (`METHOD pattern`) → the Kafka ACL its path grants. */
export const ROUTE_ACLS: Readonly<Record<string, RouteAcl>> = aclTable(ROUTES);

/** Routes whose bodies name resources (the authorizer parses these bodies once more for the check). */
export const BODY_NAMED_ROUTES: ReadonlySet<string> = new Set(
  ROUTES.filter((r) => r.bodyNamesResources).map(routeKey),
);

/** Answers that list a group's topics (when no single `?topic=` was asked for and checked). */
export const OFFSET_LISTINGS: ReadonlySet<string> = new Set(
  ROUTES.filter((r) => r.listsGroupTopics).map(routeKey),
);

const compiled = ROUTE_TABLE.map((spec) => ({
  spec,
  regex: new RegExp(`^${spec.pattern.replace(/\{[a-zA-Z]+\}/g, '[^/]+')}$`),
}));

/**
 * The route a canonical path (lib/http/request-path.ts) maps to; undefined when none. Only canonical
 * paths are ever matched, so a trailing `/` or `//` matches nothing here either.
 */
export const matchRoute = (method: string, path: string): RouteSpec | undefined =>
  compiled.find(({ spec, regex }) => spec.method === method && regex.test(path))?.spec;

/** Whether any route has this canonical path (for 405 vs 404). */
export const pathExists = (path: string): boolean => compiled.some(({ regex }) => regex.test(path));
