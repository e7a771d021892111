/** Kafka's routing SMTs and Filter, and the predicates a transform can be conditioned on. */
import type { ConfigKey } from '../config-def.js';
import type { PredicateFactory, TransformFactory } from './types.js';
import { TransformError } from './types.js';
import type { TopicRegex } from '../topic-regex.js';
import { compileTopicRegex, topicRegexError } from '../topic-regex.js';

const stringKey = (name: string, documentation: string, fallback?: string): ConfigKey => ({
  name,
  type: 'STRING',
  ...(fallback !== undefined ? { default: fallback } : {}),
  importance: 'HIGH',
  documentation,
  group: 'Transform',
});

/** Java's Matcher.matches(): the whole topic must match, not a part of it (RE2: linear time). */
const whole = (pattern: string): TopicRegex => compileTopicRegex(pattern);

const regexRouter: TransformFactory = {
  class: 'org.apache.kafka.connect.transforms.RegexRouter',
  configKeys: [
    { ...stringKey('regex', 'Regular expression to use for matching'), validate: topicRegexError },
    stringKey('replacement', 'Replacement string ($1 for the first group)'),
  ],
  create: (config) => {
    const regex = whole(config['regex'] ?? '');
    const replacement = config['replacement'] ?? '';
    return (record) =>
      regex.matches(record.topic)
        ? { ...record, topic: regex.replaceFirst(record.topic, replacement) }
        : record;
  },
};

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** The SimpleDateFormat letters TimestampRouter configs use in practice, in UTC. */
const formatTimestamp = (format: string, ms: number): string => {
  const d = new Date(ms);
  const fields: Record<string, string> = {
    yyyy: pad(d.getUTCFullYear(), 4),
    MM: pad(d.getUTCMonth() + 1, 2),
    dd: pad(d.getUTCDate(), 2),
    HH: pad(d.getUTCHours(), 2),
    mm: pad(d.getUTCMinutes(), 2),
    ss: pad(d.getUTCSeconds(), 2),
  };
  return format.replace(/yyyy|MM|dd|HH|mm|ss/g, (token) => fields[token]!);
};

const timestampRouter: TransformFactory = {
  class: 'org.apache.kafka.connect.transforms.TimestampRouter',
  configKeys: [
    stringKey('topic.format', 'Format string with ${topic} and ${timestamp}', '${topic}-${timestamp}'),
    stringKey('timestamp.format', 'SimpleDateFormat pattern (yyyy MM dd HH mm ss), UTC', 'yyyyMMdd'),
  ],
  create: (config) => {
    const topicFormat = config['topic.format'] ?? '${topic}-${timestamp}';
    const timestampFormat = config['timestamp.format'] ?? 'yyyyMMdd';
    return (record) => {
      if (!Number.isFinite(record.timestamp)) throw new TransformError('TimestampRouter needs a timestamp');
      const topic = topicFormat
        .replaceAll('${topic}', record.topic)
        .replaceAll('${timestamp}', formatTimestamp(timestampFormat, record.timestamp));
      return { ...record, topic };
    };
  },
};

const filter: TransformFactory = {
  class: 'org.apache.kafka.connect.transforms.Filter',
  configKeys: [],
  // Drops every record it is applied to; a predicate narrows which (see transform chain).
  create: () => () => null,
};

export const ROUTING_TRANSFORMS: readonly TransformFactory[] = [regexRouter, timestampRouter, filter];

export const PREDICATES: readonly PredicateFactory[] = [
  {
    class: 'org.apache.kafka.connect.transforms.predicates.TopicNameMatches',
    configKeys: [{ ...stringKey('pattern', 'Regex the topic name must match'), validate: topicRegexError }],
    create: (config) => {
      const pattern = whole(config['pattern'] ?? '');
      return (record) => pattern.matches(record.topic);
    },
  },
  {
    class: 'org.apache.kafka.connect.transforms.predicates.HasHeaderKey',
    configKeys: [stringKey('name', 'The header name')],
    create: (config) => {
      const name = config['name'] ?? '';
      return (record) => record.headers.some((h) => h.key === name);
    },
  },
  {
    class: 'org.apache.kafka.connect.transforms.predicates.RecordIsTombstone',
    configKeys: [],
    create: () => (record) => record.value === null,
  },
];
