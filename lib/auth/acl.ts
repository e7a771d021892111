/**
 * Kafka ACLs on IAM: which Kafka operation on which resource each route of the route table is, and
 * which further resources a request names in its body or query. Every check is a route-shaped
 * (method, path) pair, so one `execute-api:Invoke` policy on route paths decides both: API Gateway
 * checks the request's own path, and the handler checks the implied paths through the Authorizer port.
 */
import type { ErrorCode } from '../../protocol/errors.js';
import { SluiceError } from '../../protocol/errors.js';
import type { HttpMethod } from '../http/types.js';

/** Kafka's AclOperation names (the ones Sluice's routes need). */
export type AclOperation =
  | 'READ'
  | 'WRITE'
  | 'CREATE'
  | 'DELETE'
  | 'ALTER'
  | 'DESCRIBE'
  | 'IDEMPOTENT_WRITE'
  /** A route without a row in ROUTE_ACLS: its path is still checked, as API Gateway checks it. */
  | 'ALL';

/** Kafka's ResourceType names. */
export type AclResourceType = 'TOPIC' | 'GROUP' | 'CLUSTER';

/** Kafka names the one cluster resource `kafka-cluster`. */
export const CLUSTER_RESOURCE = 'kafka-cluster';

export interface RouteAcl {
  operation: AclOperation;
  resourceType: AclResourceType;
  /** The path parameter that names the resource; absent for the cluster. */
  param?: 'topic' | 'group' | 'app';
}

/** Route (`METHOD pattern` of lib/http/route-table.ts) → the Kafka ACL its path grants. */
export const ROUTE_ACLS: Readonly<Record<string, RouteAcl>> = {
  'GET /v1/cluster': { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
  'POST /v1/topics': { operation: 'CREATE', resourceType: 'CLUSTER' },
  'GET /v1/topics': { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
  'GET /v1/topics/{topic}': { operation: 'DESCRIBE', resourceType: 'TOPIC', param: 'topic' },
  'PATCH /v1/topics/{topic}': { operation: 'ALTER', resourceType: 'TOPIC', param: 'topic' },
  'DELETE /v1/topics/{topic}': { operation: 'DELETE', resourceType: 'TOPIC', param: 'topic' },
  // Kafka's ElectLeaders needs ALTER on the cluster.
  'POST /v1/topics/{topic}/elect-leaders': { operation: 'ALTER', resourceType: 'CLUSTER' },
  'POST /v1/topics/{topic}/records': { operation: 'WRITE', resourceType: 'TOPIC', param: 'topic' },
  'POST /v1/topics/{topic}/partitions/{partition}/batches': {
    operation: 'WRITE',
    resourceType: 'TOPIC',
    param: 'topic',
  },
  'POST /v1/producers': { operation: 'IDEMPOTENT_WRITE', resourceType: 'CLUSTER' },
  'GET /v1/topics/{topic}/partitions/{partition}/records': {
    operation: 'READ',
    resourceType: 'TOPIC',
    param: 'topic',
  },
  'GET /v1/topics/{topic}/partitions/{partition}/offsets': {
    operation: 'DESCRIBE',
    resourceType: 'TOPIC',
    param: 'topic',
  },
  // A Streams application's state belongs to its group (application.id): reading it is describing it.
  'GET /v1/streams/{app}/stores/{store}/keys/{key}': {
    operation: 'DESCRIBE',
    resourceType: 'GROUP',
    param: 'app',
  },
  'GET /v1/streams/{app}/stores/{store}/keys': { operation: 'DESCRIBE', resourceType: 'GROUP', param: 'app' },
  'POST /v1/groups/{group}/heartbeat': { operation: 'READ', resourceType: 'GROUP', param: 'group' },
  'POST /v1/groups/{group}/offsets': { operation: 'READ', resourceType: 'GROUP', param: 'group' },
  'GET /v1/groups/{group}/offsets': { operation: 'DESCRIBE', resourceType: 'GROUP', param: 'group' },
  'DELETE /v1/groups/{group}/offsets': { operation: 'DELETE', resourceType: 'GROUP', param: 'group' },
  'POST /v1/groups/{group}/offsets/reset': { operation: 'READ', resourceType: 'GROUP', param: 'group' },
  'GET /v1/groups': { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
  'GET /v1/groups/{group}': { operation: 'DESCRIBE', resourceType: 'GROUP', param: 'group' },
  'DELETE /v1/groups/{group}': { operation: 'DELETE', resourceType: 'GROUP', param: 'group' },
  // Kafka Connect's REST API has no Kafka ACLs of its own; a connector is cluster configuration, so
  // reading it is DESCRIBE and changing it ALTER on the cluster (the route path still scopes the policy).
  ...Object.fromEntries(
    [
      'GET /v1/connect/connectors',
      'GET /v1/connect/connectors/{connector}',
      'GET /v1/connect/connectors/{connector}/config',
      'GET /v1/connect/connectors/{connector}/status',
      'GET /v1/connect/connectors/{connector}/tasks',
      'GET /v1/connect/connectors/{connector}/tasks/{task}/status',
      'GET /v1/connect/connectors/{connector}/offsets',
      'GET /v1/connect/connector-plugins',
      'PUT /v1/connect/connector-plugins/{plugin}/config/validate',
    ].map((route) => [route, { operation: 'DESCRIBE', resourceType: 'CLUSTER' } as const]),
  ),
  ...Object.fromEntries(
    [
      'POST /v1/connect/connectors',
      'DELETE /v1/connect/connectors/{connector}',
      'PUT /v1/connect/connectors/{connector}/config',
      'POST /v1/connect/connectors/{connector}/tasks/{task}/restart',
      'PUT /v1/connect/connectors/{connector}/pause',
      'PUT /v1/connect/connectors/{connector}/resume',
      'PUT /v1/connect/connectors/{connector}/stop',
      'POST /v1/connect/connectors/{connector}/restart',
      'PATCH /v1/connect/connectors/{connector}/offsets',
      'DELETE /v1/connect/connectors/{connector}/offsets',
    ].map((route) => [route, { operation: 'ALTER', resourceType: 'CLUSTER' } as const]),
  ),
};

/** One permission to check: the Kafka ACL, and the route path whose `execute-api:Invoke` grants it. */
export interface AccessCheck {
  operation: AclOperation;
  resourceType: AclResourceType;
  resource: string;
  method: HttpMethod;
  /** Percent-encoded request path, e.g. `/v1/topics/orders/partitions/*\/records`. */
  path: string;
}

const seg = (name: string): string => encodeURIComponent(name);

/**
 * READ on a topic named in a body is checked as fetching from it, on every partition: only a policy
 * covering all partitions may satisfy it. The path is checked twice, with partition `*` (literal in
 * the checked ARN) and with partition 2147483647: IAM's `?` matches exactly one character, so
 * `partitions/?/records` matches the first but not the second, and any policy pattern that matches
 * both a one-character and a ten-character partition needs a `*`. A principal that may not fetch a
 * topic cannot subscribe to it, commit offsets for it, or have a connector read it either.
 */
export const topicReads = (topic: string): AccessCheck[] =>
  ['*', '2147483647'].map((partition) => ({
    operation: 'READ',
    resourceType: 'TOPIC',
    resource: topic,
    method: 'GET',
    path: `/v1/topics/${seg(topic)}/partitions/${partition}/records`,
  }));

/** The first of topicReads (partition `*`), for a caller checking one path. */
export const topicRead = (topic: string): AccessCheck => topicReads(topic)[0]!;

/** WRITE on a topic named in a body is checked as producing records to it. */
export const topicWrite = (topic: string): AccessCheck => ({
  operation: 'WRITE',
  resourceType: 'TOPIC',
  resource: topic,
  method: 'POST',
  path: `/v1/topics/${seg(topic)}/records`,
});

/** READ on a group named in a body (a sink connector's `connect-{name}`) is checked as its heartbeat. */
export const groupRead = (group: string): AccessCheck => ({
  operation: 'READ',
  resourceType: 'GROUP',
  resource: group,
  method: 'POST',
  path: `/v1/groups/${seg(group)}/heartbeat`,
});

/** DESCRIBE on a topic is checked as describing it. */
export const topicDescribe = (topic: string): AccessCheck => ({
  operation: 'DESCRIBE',
  resourceType: 'TOPIC',
  resource: topic,
  method: 'GET',
  path: `/v1/topics/${seg(topic)}`,
});

/**
 * The check of a request's own path (what API Gateway's AWS_IAM authorizer decides). A route that has
 * no ACL row yet is checked on its path all the same, refused as CLUSTER (fail closed, never open).
 */
export const routeCheck = (
  routeKey: string,
  path: string,
  params: Readonly<Record<string, string>>,
): AccessCheck => {
  const acl = ROUTE_ACLS[routeKey] ?? { operation: 'ALL', resourceType: 'CLUSTER' };
  const method = routeKey.slice(0, routeKey.indexOf(' ')) as HttpMethod;
  return {
    operation: acl.operation,
    resourceType: acl.resourceType,
    resource: acl.param ? (params[acl.param] ?? '') : CLUSTER_RESOURCE,
    method,
    path,
  };
};

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

const objects = (value: unknown): Record<string, unknown>[] =>
  Array.isArray(value)
    ? value.filter((v): v is Record<string, unknown> => v !== null && typeof v === 'object')
    : [];

/**
 * The further resources a request names beyond its path. Reads only the fields that name resources
 * and ignores malformed ones: the handler's own validation answers those with a 400, which says
 * nothing about any resource.
 */
export const impliedChecks = (
  routeKey: string,
  query: Readonly<Record<string, string>>,
  body: unknown,
): AccessCheck[] => {
  const fields = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const topics: string[] = [];
  switch (routeKey) {
    case 'POST /v1/groups/{group}/heartbeat':
      topics.push(...strings(fields['subscribedTopics']));
      topics.push(...objects(fields['ownedPartitions']).flatMap((o) => strings([o['topic']])));
      break;
    case 'POST /v1/groups/{group}/offsets':
      topics.push(...objects(fields['offsets']).flatMap((o) => strings([o['topic']])));
      break;
    case 'POST /v1/groups/{group}/offsets/reset':
      topics.push(...strings([fields['topic']]));
      break;
    case 'DELETE /v1/groups/{group}/offsets':
      topics.push(...strings([query['topic']]));
      break;
    case 'GET /v1/groups/{group}/offsets':
      return query['topic'] === undefined ? [] : [topicDescribe(query['topic'])];
    default:
      return [];
  }
  return [...new Set(topics)].flatMap(topicReads);
};

/** Routes whose bodies name resources (the handler parses these bodies once more for the check). */
export const BODY_NAMED_ROUTES: ReadonlySet<string> = new Set([
  'POST /v1/groups/{group}/heartbeat',
  'POST /v1/groups/{group}/offsets',
  'POST /v1/groups/{group}/offsets/reset',
]);

const REFUSAL: Record<AclResourceType, ErrorCode> = {
  TOPIC: 'TOPIC_AUTHORIZATION_FAILED',
  GROUP: 'GROUP_AUTHORIZATION_FAILED',
  CLUSTER: 'CLUSTER_AUTHORIZATION_FAILED',
};

/**
 * The answer to a denied check. It names only what the caller asked for and is the same whether the
 * resource exists or not: it is decided before anything is looked up.
 */
export const refusal = (check: AccessCheck): SluiceError =>
  new SluiceError(
    REFUSAL[check.resourceType],
    check.operation === 'ALL'
      ? `not authorized to call ${check.method} ${check.path}`
      : check.resourceType === 'CLUSTER'
        ? `not authorized to ${check.operation} the cluster`
        : `not authorized to ${check.operation} ${check.resourceType.toLowerCase()} ${check.resource}`,
  );
