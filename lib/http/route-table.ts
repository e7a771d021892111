/**
 * Which function serves which route: API Gateway's route table. The CDK app and the local gateway both
 * read it, so a route cannot exist in one and not the other.
 */
import type { HttpMethod } from './types.js';

export type Job = 'admin' | 'produce' | 'fetch' | 'groups' | 'connect';

export interface RouteSpec {
  method: HttpMethod;
  pattern: string;
  job: Job;
  /** Health is public; everything else needs IAM (SigV4) in AWS. */
  public?: boolean;
}

export const ROUTE_TABLE: readonly RouteSpec[] = [
  { method: 'GET', pattern: '/v1/health', job: 'admin', public: true },
  { method: 'GET', pattern: '/v1/cluster', job: 'admin' },
  { method: 'POST', pattern: '/v1/topics', job: 'admin' },
  { method: 'GET', pattern: '/v1/topics', job: 'admin' },
  { method: 'GET', pattern: '/v1/topics/{topic}', job: 'admin' },
  { method: 'PATCH', pattern: '/v1/topics/{topic}', job: 'admin' },
  { method: 'DELETE', pattern: '/v1/topics/{topic}', job: 'admin' },
  { method: 'POST', pattern: '/v1/topics/{topic}/elect-leaders', job: 'admin' },
  { method: 'POST', pattern: '/v1/topics/{topic}/records', job: 'produce' },
  { method: 'POST', pattern: '/v1/topics/{topic}/partitions/{partition}/batches', job: 'produce' },
  { method: 'POST', pattern: '/v1/producers', job: 'produce' },
  { method: 'GET', pattern: '/v1/topics/{topic}/partitions/{partition}/records', job: 'fetch' },
  { method: 'GET', pattern: '/v1/topics/{topic}/partitions/{partition}/offsets', job: 'fetch' },
  // Interactive queries (streams/query/) are reads of the metadata table, as fetch's are.
  { method: 'GET', pattern: '/v1/streams/{app}/stores/{store}/keys/{key}', job: 'fetch' },
  { method: 'GET', pattern: '/v1/streams/{app}/stores/{store}/keys', job: 'fetch' },
  { method: 'POST', pattern: '/v1/groups/{group}/heartbeat', job: 'groups' },
  { method: 'POST', pattern: '/v1/groups/{group}/offsets', job: 'groups' },
  { method: 'GET', pattern: '/v1/groups/{group}/offsets', job: 'groups' },
  { method: 'DELETE', pattern: '/v1/groups/{group}/offsets', job: 'groups' },
  { method: 'POST', pattern: '/v1/groups/{group}/offsets/reset', job: 'groups' },
  { method: 'GET', pattern: '/v1/groups', job: 'groups' },
  { method: 'GET', pattern: '/v1/groups/{group}', job: 'groups' },
  { method: 'DELETE', pattern: '/v1/groups/{group}', job: 'groups' },
  // Kafka Connect's REST API (connect/rest.ts).
  { method: 'GET', pattern: '/v1/connect/connectors', job: 'connect' },
  { method: 'POST', pattern: '/v1/connect/connectors', job: 'connect' },
  { method: 'GET', pattern: '/v1/connect/connectors/{connector}', job: 'connect' },
  { method: 'DELETE', pattern: '/v1/connect/connectors/{connector}', job: 'connect' },
  { method: 'GET', pattern: '/v1/connect/connectors/{connector}/config', job: 'connect' },
  { method: 'PUT', pattern: '/v1/connect/connectors/{connector}/config', job: 'connect' },
  { method: 'GET', pattern: '/v1/connect/connectors/{connector}/status', job: 'connect' },
  { method: 'GET', pattern: '/v1/connect/connectors/{connector}/tasks', job: 'connect' },
  { method: 'GET', pattern: '/v1/connect/connectors/{connector}/tasks/{task}/status', job: 'connect' },
  { method: 'POST', pattern: '/v1/connect/connectors/{connector}/tasks/{task}/restart', job: 'connect' },
  { method: 'PUT', pattern: '/v1/connect/connectors/{connector}/pause', job: 'connect' },
  { method: 'PUT', pattern: '/v1/connect/connectors/{connector}/resume', job: 'connect' },
  { method: 'PUT', pattern: '/v1/connect/connectors/{connector}/stop', job: 'connect' },
  { method: 'POST', pattern: '/v1/connect/connectors/{connector}/restart', job: 'connect' },
  { method: 'GET', pattern: '/v1/connect/connectors/{connector}/offsets', job: 'connect' },
  { method: 'PATCH', pattern: '/v1/connect/connectors/{connector}/offsets', job: 'connect' },
  { method: 'DELETE', pattern: '/v1/connect/connectors/{connector}/offsets', job: 'connect' },
  { method: 'GET', pattern: '/v1/connect/connector-plugins', job: 'connect' },
  { method: 'PUT', pattern: '/v1/connect/connector-plugins/{plugin}/config/validate', job: 'connect' },
];

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
