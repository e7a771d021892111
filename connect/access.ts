/**
 * Kafka's ACLs for what a connector config names (docs/authorization.md, Connect's rows): the caller
 * who creates or reconfigures a connector must hold every permission the connector will use, checked
 * by the router's guard (lib/auth/authorizer.ts) before the handler stores anything.
 * - a sink READs each topic of `topics` and is its group `connect-{name}` (READ on the group);
 * - `topics.regex` subscribes to every topic that matches, now or later: the caller must be allowed
 *   READ on every topic (`/v1/topics/*`), so no expansion can reach a topic the caller could not read;
 * - a sink WRITEs its dead-letter queue `errors.deadletterqueue.topic.name`;
 * - a source WRITEs each topic it produces to (the plugin's `outputTopics`); a routing SMT
 *   (RegexRouter, TimestampRouter) can send records to any topic, so with one the caller must be
 *   allowed WRITE on every topic;
 * - altering a sink's offsets READs the topics the offsets name.
 * Nothing in the runtime creates topics, so no config needs CREATE.
 */
import type { AccessCheck } from '../lib/auth/acl.js';
import { groupRead, topicReads, topicWrite } from '../lib/auth/acl.js';
import type { BodyChecks } from '../lib/auth/authorizer.js';
import type { HttpRequest } from '../lib/http/types.js';
import { listOf } from './config-def.js';
import { groupIdOf } from './tasks.js';
import { findPlugin } from './plugins.js';

/** The topic name that stands for "every topic": `*` is a literal in the checked ARN. */
export const ANY_TOPIC = '*';

const ROUTING_SMTS = new Set([
  'org.apache.kafka.connect.transforms.RegexRouter',
  'org.apache.kafka.connect.transforms.TimestampRouter',
]);

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const text = (config: Record<string, unknown>, key: string): string =>
  typeof config[key] === 'string' ? (config[key] as string).trim() : '';

const routes = (config: Record<string, unknown>): boolean =>
  listOf(text(config, 'transforms')).some((alias) =>
    ROUTING_SMTS.has(text(config, `transforms.${alias}.type`)),
  );

/** Every permission a connector with this config uses (an unknown plugin names nothing: it is refused). */
export const connectorChecks = (name: string, config: Record<string, unknown>): AccessCheck[] => {
  const plugin = findPlugin(text(config, 'connector.class'));
  if (!plugin) return [];
  const strings = Object.fromEntries(
    Object.entries(config).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  if (plugin.type === 'sink') {
    const regex = text(config, 'topics.regex');
    const read = regex ? [ANY_TOPIC] : listOf(text(config, 'topics'));
    const dlq = text(config, 'errors.deadletterqueue.topic.name');
    return [
      ...[...new Set(read)].flatMap(topicReads),
      groupRead(groupIdOf(name)),
      ...(dlq ? [topicWrite(dlq)] : []),
    ];
  }
  const written = routes(config) ? [ANY_TOPIC] : (plugin.outputTopics?.(strings) ?? [ANY_TOPIC]);
  return [...new Set(written)].map(topicWrite);
};

const configOf = (value: unknown): Record<string, unknown> => (isMap(value) ? value : {});

/** The body checks of Connect's routes that name resources, for impliedAccessGuard. */
export const CONNECT_BODY_CHECKS: Readonly<Record<string, BodyChecks>> = {
  'POST /v1/connect/connectors': (_: HttpRequest, body: unknown) => {
    const fields = configOf(body);
    return typeof fields['name'] === 'string'
      ? connectorChecks(fields['name'], configOf(fields['config']))
      : [];
  },
  'PUT /v1/connect/connectors/{connector}/config': (request: HttpRequest, body: unknown) =>
    connectorChecks(request.params['connector'] ?? '', configOf(body)),
  'PATCH /v1/connect/connectors/{connector}/offsets': (_: HttpRequest, body: unknown) => {
    const offsets = configOf(body)['offsets'];
    const topics = (Array.isArray(offsets) ? offsets : [])
      .map((o) => (isMap(o) && isMap(o['partition']) ? o['partition']['kafka_topic'] : undefined))
      .filter((t): t is string => typeof t === 'string');
    return [...new Set(topics)].flatMap(topicReads);
  },
};
