/**
 * What a producer, a consumer and an administrator may invoke, as route paths for execute-api:Invoke
 * (Kafka's ACLs for those roles, after lib/auth/acl.ts). The CDK construct turns them into IAM
 * statements (SluiceApi.grantProduce …); tests turn them into local policy files, so the deployed
 * grants and the rules the local gateway enforces are one list.
 *
 * Names are LITERAL (`orders`) or PREFIXED (`orders-*`, Kafka's PREFIXED pattern type). IAM's `*`
 * also matches `/`, so a wildcard ending a path matches every path below it: `GET /v1/topics/orders-*`
 * would match every fetch path of those topics too. That is why a prefixed producer gets no topic DESCRIBE,
 * while a prefixed consumer does: what the wildcard also matches is what a consumer already holds. A
 * new GET route below a topic's or group's path must keep that true (test/infra/grants.test.ts).
 */
import { invalidRequest } from '../../protocol/errors.js';
import type { HttpMethod } from '../http/types.js';

export interface RouteGrant {
  method: HttpMethod | '*';
  /** Route path with IAM wildcards, e.g. `/v1/topics/orders-*\/records`. */
  path: string;
}

const TOPIC_PATTERN = /^(\*|[a-zA-Z0-9._-]{1,249}\*?)$/;

interface NamePattern {
  /** The path segment: the name percent-encoded, its trailing `*` kept as a wildcard. */
  segment: string;
  prefixed: boolean;
}

const namePattern = (name: string, kind: 'topic' | 'group'): NamePattern => {
  const prefixed = name.endsWith('*');
  const literal = prefixed ? name.slice(0, -1) : name;
  const valid =
    kind === 'topic'
      ? TOPIC_PATTERN.test(name) && literal !== '.' && literal !== '..'
      : name.length >= 1 && name.length <= 256 && !/[*?]/.test(literal) && /^[\x20-\x7e]+$/.test(name);
  if (!valid)
    throw invalidRequest(
      `${kind} ${JSON.stringify(name)} is neither a ${kind} name nor a prefix ending in * (Kafka's PREFIXED pattern)`,
    );
  return { segment: `${encodeURIComponent(literal)}${prefixed ? '*' : ''}`, prefixed };
};

/** WRITE on the topic(s) and IDEMPOTENT_WRITE on the cluster (InitProducerId); DESCRIBE for a literal name. */
export const produceGrants = (topic: string): RouteGrant[] => {
  const t = namePattern(topic, 'topic');
  return [
    { method: 'POST', path: `/v1/topics/${t.segment}/records` },
    { method: 'POST', path: `/v1/topics/${t.segment}/partitions/*/batches` },
    { method: 'POST', path: '/v1/producers' },
    // Who am I: the Kafka gateway's SASL token is a presigned call of it.
    { method: 'GET', path: '/v1/whoami' },
    ...(t.prefixed ? [] : [{ method: 'GET' as const, path: `/v1/topics/${t.segment}` }]),
  ];
};

/** READ and DESCRIBE on the topic(s); READ and DESCRIBE on the group(s): heartbeat, commit, reset, fetch offsets. */
export const consumeGrants = (topic: string, group: string): RouteGrant[] => {
  const t = namePattern(topic, 'topic');
  const g = namePattern(group, 'group');
  return [
    { method: 'GET', path: `/v1/topics/${t.segment}/partitions/*/records` },
    { method: 'GET', path: `/v1/topics/${t.segment}/partitions/*/offsets` },
    // Kafka's Fetch over many partitions (the SDK consumer's one long poll): the route itself is
    // DESCRIBE on the cluster, and READ on each topic its body names is checked against the fetch
    // path above, so this grants no topic beyond those.
    { method: 'POST', path: '/v1/fetch' },
    // Prefixed too: the only GET routes below a topic's path are the two above, already granted, and
    // its segments, DESCRIBE on the topic as this route is.
    { method: 'GET', path: `/v1/topics/${t.segment}` },
    { method: 'POST', path: `/v1/groups/${g.segment}/heartbeat` },
    { method: 'POST', path: `/v1/groups/${g.segment}/classic` },
    { method: 'POST', path: `/v1/groups/${g.segment}/offsets` },
    { method: 'GET', path: `/v1/groups/${g.segment}/offsets` },
    // kafka-consumer-groups --reset-offsets is an OffsetCommit: READ on the group, as for a consumer.
    { method: 'POST', path: `/v1/groups/${g.segment}/offsets/reset` },
    // Prefixed too: the only GET route below a group's path is its offsets, already granted.
    { method: 'GET', path: `/v1/groups/${g.segment}` },
    { method: 'GET', path: '/v1/whoami' },
  ];
};

/** CREATE on the cluster: create topics (a Streams app's repartition topics). */
export const createTopicGrants = (): RouteGrant[] => [{ method: 'POST', path: '/v1/topics' }];

/**
 * CLUSTER_ACTION: act for other principals (a Kafka gateway forwarding its SASL-authenticated clients'
 * requests, lib/auth/delegation.ts): for every principal, or for the ARNs matching `principals`
 * (IAM wildcards).
 */
export const delegateGrants = (principals = '*'): RouteGrant[] => [
  {
    method: 'POST',
    path: `/v1/delegation/${principals === '*' ? '*' : encodeURIComponent(principals).replace(/%2A/g, '*')}`,
  },
];

/**
 * A Kafka gateway's role: every route its clients may call, and acting for them. Sluice authorizes
 * each forwarded request as the client too, so a client gets no more than its own grants.
 */
export const kafkaGatewayGrants = (): RouteGrant[] => [{ method: '*', path: '/v1/*' }];

/** Every operation on every resource: Kafka's ALL on the cluster, topics and groups. */
export const adminGrants = (): RouteGrant[] => [{ method: '*', path: '/v1/*' }];
