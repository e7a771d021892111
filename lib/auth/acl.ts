/**
 * Kafka ACLs on IAM: which Kafka operation on which resource each route of the route table is, and
 * which further resources a request names in its body or query. Every check is a route-shaped
 * (method, path) pair, so one `execute-api:Invoke` policy on route paths decides both: API Gateway
 * checks the request's own path, and the handler checks the implied paths through the Authorizer port.
 */
import type { ErrorCode } from '../../protocol/errors.js';
import { SluiceError } from '../../protocol/errors.js';
import type { CallerContext, HttpMethod } from '../http/types.js';

/** Kafka's AclOperation names (the ones Sluice's routes need). */
export type AclOperation =
  | 'READ'
  | 'WRITE'
  | 'CREATE'
  | 'DELETE'
  | 'ALTER'
  | 'DESCRIBE'
  | 'DESCRIBE_CONFIGS'
  | 'ALTER_CONFIGS'
  | 'IDEMPOTENT_WRITE'
  /** What a broker's own principal holds: here, a Kafka gateway acting for its clients (lib/auth/delegation.ts). */
  | 'CLUSTER_ACTION'
  /** A route without an ACL: its path is still checked, as API Gateway checks it. */
  | 'ALL';

/** Kafka's ResourceType names. */
export type AclResourceType = 'TOPIC' | 'GROUP' | 'CLUSTER' | 'TRANSACTIONAL_ID';

/** Kafka names the one cluster resource `kafka-cluster`. */
export const CLUSTER_RESOURCE = 'kafka-cluster';

export interface RouteAcl {
  operation: AclOperation;
  resourceType: AclResourceType;
  /** The path parameter that names the resource; absent for the cluster. */
  param?: 'topic' | 'group' | 'app' | 'transactionalId';
}

/**
 * Route (`METHOD pattern`) → the Kafka ACL its path grants: the ACL table, derived from the route
 * definitions (functions/routes.ts), which name each route's ACL beside its handler.
 */
export const aclTable = (
  routes: readonly { method: HttpMethod; path: string; acl?: RouteAcl | undefined }[],
): Readonly<Record<string, RouteAcl>> =>
  Object.fromEntries(routes.flatMap((r) => (r.acl ? [[`${r.method} ${r.path}`, r.acl] as const] : [])));

/**
 * The Authorizer port: may this caller invoke these route-shaped checks? (lib/auth/authorizer.ts has
 * the local implementation, lib/adapters/aws/iam-authorizer.ts IAM's.)
 */
export interface Authorizer {
  /** One answer per check, in order: true when the caller's policies allow `execute-api:Invoke`. */
  allowed(caller: CallerContext, checks: readonly AccessCheck[]): Promise<boolean[]>;
}

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
 * no ACL is checked on its path all the same, refused as CLUSTER (fail closed, never open).
 */
export const routeCheck = (
  route: { method: HttpMethod; acl?: RouteAcl | undefined },
  path: string,
  params: Readonly<Record<string, string>>,
): AccessCheck => {
  const acl = route.acl ?? { operation: 'ALL', resourceType: 'CLUSTER' };
  return {
    operation: acl.operation,
    resourceType: acl.resourceType,
    resource: acl.param ? (params[acl.param] ?? '') : CLUSTER_RESOURCE,
    method: route.method,
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
    case 'POST /v1/groups/{group}/classic':
      topics.push(...strings(fields['subscribedTopics']));
      topics.push(...objects(fields['ownedPartitions']).flatMap((o) => strings([o['topic']])));
      break;
    case 'POST /v1/groups/{group}/offsets':
      topics.push(...objects(fields['offsets']).flatMap((o) => strings([o['topic']])));
      break;
    case 'POST /v1/groups/{group}/offsets/reset':
      topics.push(...strings([fields['topic']]));
      break;
    case 'POST /v1/fetch':
      topics.push(...objects(fields['partitions']).flatMap((o) => strings([o['topic']])));
      break;
    case 'DELETE /v1/groups/{group}/offsets':
      topics.push(...strings([query['topic']]));
      break;
    case 'GET /v1/groups/{group}/offsets':
      return query['topic'] === undefined ? [] : [topicDescribe(query['topic'])];
    // Kafka's AddPartitionsToTxn needs WRITE on each topic; AddOffsetsToTxn READ on the group;
    // TxnOffsetCommit READ on the group and on each topic it commits (as OffsetCommit does).
    case 'POST /v1/transactions/{transactionalId}/partitions':
      return [...new Set(objects(fields['topics']).flatMap((o) => strings([o['topic']])))].map(topicWrite);
    case 'POST /v1/transactions/{transactionalId}/groups':
      return strings([fields['groupId']]).map(groupRead);
    case 'POST /v1/transactions/{transactionalId}/offsets':
      return [
        ...strings([fields['groupId']]).map(groupRead),
        ...[...new Set(objects(fields['offsets']).flatMap((o) => strings([o['topic']])))].flatMap(topicReads),
      ];
    default:
      return [];
  }
  return [...new Set(topics)].flatMap(topicReads);
};

const REFUSAL: Record<AclResourceType, ErrorCode> = {
  TOPIC: 'TOPIC_AUTHORIZATION_FAILED',
  GROUP: 'GROUP_AUTHORIZATION_FAILED',
  CLUSTER: 'CLUSTER_AUTHORIZATION_FAILED',
  TRANSACTIONAL_ID: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
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
