/**
 * The settings every connector has (Kafka's ConnectorConfig, SinkConnectorConfig) and the one
 * validation that POST/PUT config and the validate endpoint share: common settings, the plugin's own,
 * the SMT chain, and the checks across them.
 */
import { SluiceError } from '../protocol/errors.js';
import type { ConfigInfos, ConfigKey } from './config-def.js';
import { addError, between, listOf, nonNegativeInt, oneOf, validateConfig } from './config-def.js';
import { EDGE_LIMITS, isValidTopicName } from '../lib/http/limits.js';
import { CONVERTERS, JSON_CONVERTER, STRING_CONVERTER } from './converters.js';
import type { AnyPlugin } from './plugin.js';
import { findPlugin } from './plugins.js';
import { validateChain } from './transforms/chain.js';
import type { TopicRegex } from './topic-regex.js';
import { compileTopicRegex, topicRegexError } from './topic-regex.js';

const common = (name: string, partial: Omit<ConfigKey, 'name' | 'group'>, group = 'Common'): ConfigKey => ({
  name,
  group,
  ...partial,
});

/**
 * Sluice's bounds on what one connector config may ask for, checked at create, update and validate so
 * a config fails up front with a 400 rather than later in DynamoDB or in every task:
 * - `name`: a sink's consumer group is `connect-{name}` and group ids are at most 255 characters
 *   (lib/http/limits.ts), so a name is at most 247.
 * - `tasks.max`: Kafka's ConfigDef types it INT (at most 2^31-1) with no further bound; Sluice computes
 *   every task's config for `GET …/tasks` and runs each task, so it allows at most 64.
 * - the config's size: it is stored in one DynamoDB item (400 KB) and copied into each task's config,
 *   so its JSON is at most 64 KiB.
 */
export const CONNECT_LIMITS = {
  maxNameChars: EDGE_LIMITS.maxGroupIdLength - 'connect-'.length,
  maxTasks: 64,
  maxConfigBytes: 64 * 1024,
} as const;

const CONNECTOR_NAME = new RegExp(`^[^\\p{Cc}/]{1,${CONNECT_LIMITS.maxNameChars}}$`, 'u');

export const COMMON_KEYS: readonly ConfigKey[] = [
  common('name', {
    type: 'STRING',
    importance: 'HIGH',
    documentation: 'Globally unique name to use for this connector.',
    validate: (v) =>
      CONNECTOR_NAME.test(v)
        ? undefined
        : `must be 1-${CONNECT_LIMITS.maxNameChars} characters without / or controls (its consumer group connect-{name} is at most ${EDGE_LIMITS.maxGroupIdLength})`,
  }),
  common('connector.class', {
    type: 'STRING',
    importance: 'HIGH',
    documentation: 'Name of the connector class.',
  }),
  common('tasks.max', {
    type: 'INT',
    default: '1',
    importance: 'HIGH',
    documentation: `Maximum number of tasks to use for this connector (Sluice allows at most ${CONNECT_LIMITS.maxTasks}).`,
    validate: between(1, CONNECT_LIMITS.maxTasks),
  }),
  common('key.converter', {
    type: 'CLASS',
    default: STRING_CONVERTER,
    importance: 'LOW',
    documentation: 'Converter class for keys.',
    validate: oneOf(CONVERTERS),
    recommended: CONVERTERS,
  }),
  common('value.converter', {
    type: 'CLASS',
    default: JSON_CONVERTER,
    importance: 'LOW',
    documentation: 'Converter class for values (JsonConverter reads schemaless JSON).',
    validate: oneOf(CONVERTERS),
    recommended: CONVERTERS,
  }),
  common(
    'transforms',
    { type: 'LIST', default: '', importance: 'LOW', documentation: 'Aliases of the SMTs.' },
    'Transforms',
  ),
  common(
    'predicates',
    { type: 'LIST', default: '', importance: 'LOW', documentation: 'Aliases of the predicates.' },
    'Predicates',
  ),
  common(
    'errors.retry.timeout',
    {
      type: 'LONG',
      default: '0',
      importance: 'MEDIUM',
      documentation: 'Maximum ms a failed operation is retried; 0 retries never, -1 forever.',
      validate: (v) => (Number(v) >= -1 ? undefined : 'Value must be at least -1'),
    },
    'Error Handling',
  ),
  common(
    'errors.retry.delay.max.ms',
    {
      type: 'LONG',
      default: '60000',
      importance: 'MEDIUM',
      documentation: 'Maximum backoff between retries.',
      validate: nonNegativeInt,
    },
    'Error Handling',
  ),
  common(
    'errors.tolerance',
    {
      type: 'STRING',
      default: 'none',
      importance: 'MEDIUM',
      documentation: 'none fails the task on the first bad record; all skips bad records.',
      validate: oneOf(['none', 'all']),
      recommended: ['none', 'all'],
    },
    'Error Handling',
  ),
  common(
    'errors.log.enable',
    { type: 'BOOLEAN', default: 'false', importance: 'MEDIUM', documentation: 'Log each failed record.' },
    'Error Handling',
  ),
  common(
    'errors.log.include.messages',
    {
      type: 'BOOLEAN',
      default: 'false',
      importance: 'MEDIUM',
      documentation: 'Include the record in the log.',
    },
    'Error Handling',
  ),
];

export const SINK_KEYS: readonly ConfigKey[] = [
  common('topics', {
    type: 'LIST',
    default: '',
    importance: 'HIGH',
    documentation: 'Topics to consume; exactly one of topics and topics.regex.',
  }),
  common('topics.regex', {
    type: 'STRING',
    default: '',
    importance: 'HIGH',
    documentation:
      'Consume every topic whose whole name matches this regular expression, including topics created later; exactly one of topics and topics.regex.',
    validate: topicRegexError,
  }),
  common(
    'errors.deadletterqueue.topic.name',
    {
      type: 'STRING',
      default: '',
      importance: 'MEDIUM',
      documentation: 'Topic for records that failed.',
      validate: (v) =>
        isValidTopicName(v.trim()) ? undefined : 'must be a topic name: 1-249 of [a-zA-Z0-9._-], not . or ..',
    },
    'Error Handling',
  ),
  common(
    'errors.deadletterqueue.context.headers.enable',
    {
      type: 'BOOLEAN',
      default: 'false',
      importance: 'MEDIUM',
      documentation: 'Add __connect.errors.* headers.',
    },
    'Error Handling',
  ),
];

export const keysOf = (plugin: AnyPlugin): ConfigKey[] => [
  ...COMMON_KEYS,
  ...(plugin.type === 'sink' ? SINK_KEYS : []),
  ...plugin.configKeys,
];

/** Connect's validate answer for a config (plugin named by connector.class or the path). */
export const validateConnectorConfig = (plugin: AnyPlugin, config: Record<string, string>): ConfigInfos => {
  const infos = validateConfig(plugin.class, keysOf(plugin), config);
  const chain = validateChain(config);
  infos.configs.push(...chain);
  infos.error_count += chain.reduce((n, c) => n + c.value.errors.length, 0);
  infos.groups.push(...new Set(chain.map((c) => c.definition.group)));
  if (plugin.type === 'sink') validateSinkTopics(config, infos);
  plugin.crossValidate?.(config, infos);
  return infos;
};

/**
 * A sink's topics.regex as Java's `Pattern.matcher(name).matches()` reads it: the whole name must
 * match. Compiled by RE2 (connect/topic-regex.ts): linear-time matching, bounded patterns.
 */
export const topicPattern = (regex: string): TopicRegex => compileTopicRegex(regex);

/** Kafka's SinkConnectorConfig.validate: one of topics and topics.regex, and never the DLQ topic. */
const validateSinkTopics = (config: Record<string, string>, infos: ConfigInfos): void => {
  const topics = listOf(config['topics'] ?? '');
  const regex = (config['topics.regex'] ?? '').trim();
  const both = (message: string) => {
    addError(infos, 'topics', message);
    addError(infos, 'topics.regex', message);
  };
  if (topics.length > 0 && regex)
    both('topics and topics.regex are mutually exclusive options, but both are set.');
  if (topics.length === 0 && !regex) both('Must configure one of topics or topics.regex');
  const dlq = (config['errors.deadletterqueue.topic.name'] ?? '').trim();
  if (!dlq) return;
  if (topics.includes(dlq))
    addError(
      infos,
      'errors.deadletterqueue.topic.name',
      'The DLQ topic cannot be one of the consumed topics.',
    );
  let matches = false;
  try {
    matches = regex !== '' && topicPattern(regex).matches(dlq);
  } catch {
    return; // the regex's own error is reported already
  }
  if (matches)
    addError(
      infos,
      'topics.regex',
      `The DLQ topic '${dlq}' may not be included in the regex matching the topics ('topics.regex=${regex}') consumed by the connector`,
    );
};

/** Every config value must be a string, as in Connect's REST API. */
export const parseConfigMap = (value: unknown, where = 'config'): Record<string, string> => {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new SluiceError('INVALID_REQUEST', `${where} must be an object of string values`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    else throw new SluiceError('INVALID_REQUEST', `${where}.${k} must be a string`);
  }
  return out;
};

/** A config over CONNECT_LIMITS.maxConfigBytes is refused before anything else looks at it. */
export const checkConfigSize = (config: Record<string, string>): void => {
  const bytes = Buffer.byteLength(JSON.stringify(config));
  if (bytes > CONNECT_LIMITS.maxConfigBytes)
    throw new SluiceError(
      'INVALID_CONFIG',
      `Connector configuration is ${bytes} bytes; the limit is ${CONNECT_LIMITS.maxConfigBytes} bytes`,
      { details: { error_code: 400 } },
    );
};

/**
 * Validates a config for create/update: the connector.class must name a plugin, and every error is
 * listed in one 400 INVALID_CONFIG, in the words Connect uses.
 */
export const checkConnectorConfig = (
  config: Record<string, string>,
): { plugin: AnyPlugin; infos: ConfigInfos } => {
  checkConfigSize(config);
  const className = config['connector.class'];
  if (!className) throw new SluiceError('INVALID_CONFIG', 'Connector config contains no connector type');
  const plugin = findPlugin(className);
  if (!plugin)
    throw new SluiceError(
      'INVALID_CONFIG',
      `Failed to find any class that implements Connector and which name matches ${className}`,
    );
  const infos = validateConnectorConfig(plugin, config);
  if (infos.error_count > 0) {
    const messages = infos.configs.flatMap((c) => c.value.errors.map((e) => `${c.value.name}: ${e}`));
    throw new SluiceError(
      'INVALID_CONFIG',
      `Connector configuration is invalid and contains the following ${infos.error_count} error(s):\n${messages.join('\n')}`,
      { details: { error_code: 400 } },
    );
  }
  return { plugin, infos };
};
