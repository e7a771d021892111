/**
 * Topic configs with Kafka's names, defaults and validation. Values travel as strings (as in Kafka's
 * AdminClient); each is parsed here once so a bad value fails with INVALID_CONFIG naming the key.
 */
import { SluiceError } from '../../../protocol/errors.js';

import type { CleanupPolicy, TopicConfig } from '../../../protocol/topic-config.js';
import { DEFAULT_TOPIC_CONFIG } from '../../../protocol/topic-config.js';

export type { CleanupPolicy, TopicConfig } from '../../../protocol/topic-config.js';
export { DEFAULT_TOPIC_CONFIG } from '../../../protocol/topic-config.js';

type Parser = (raw: string) => TopicConfig[keyof TopicConfig] | undefined;

const integer =
  (min: number): Parser =>
  (raw) =>
    /^-?\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) && Number(raw) >= min ? Number(raw) : undefined;

const oneOf =
  (...values: string[]): Parser =>
  (raw) =>
    values.includes(raw) ? (raw as CleanupPolicy) : undefined;

const PARSERS: Record<keyof TopicConfig, { parse: Parser; expect: string }> = {
  'retention.ms': { parse: integer(-1), expect: 'an integer ≥ -1 (ms; -1 = forever)' },
  'retention.bytes': { parse: integer(-1), expect: 'an integer ≥ -1 (bytes; -1 = unlimited)' },
  'cleanup.policy': {
    parse: (raw) =>
      oneOf('delete', 'compact', 'compact,delete')(raw === 'delete,compact' ? 'compact,delete' : raw),
    expect: 'delete, compact or compact,delete',
  },
  'segment.bytes': { parse: integer(14), expect: 'an integer ≥ 14' },
  'segment.ms': { parse: integer(1), expect: 'an integer ≥ 1' },
  'min.insync.replicas': { parse: integer(1), expect: 'an integer ≥ 1' },
  'max.message.bytes': { parse: integer(0), expect: 'an integer ≥ 0' },
  'message.timestamp.type': {
    parse: oneOf('CreateTime', 'LogAppendTime'),
    expect: 'CreateTime or LogAppendTime',
  },
  'delete.retention.ms': { parse: integer(0), expect: 'an integer ≥ 0' },
  'min.cleanable.dirty.ratio': {
    parse: (raw) => (/^(0|1|0?\.\d+|1\.0*)$/.test(raw) ? Number(raw) : undefined),
    expect: 'a number between 0 and 1',
  },
  'local.retention.ms': { parse: integer(-2), expect: 'an integer ≥ -2 (ms; -2 = retention.ms)' },
  'local.retention.bytes': { parse: integer(-2), expect: 'an integer ≥ -2 (bytes; -2 = retention.bytes)' },
  'unclean.leader.election.enable': {
    parse: (raw) => (raw === 'true' ? true : raw === 'false' ? false : undefined),
    expect: 'true or false',
  },
};

export const isConfigName = (name: string): name is keyof TopicConfig => Object.hasOwn(PARSERS, name);

/** Parses user-supplied overrides (strings, or numbers/booleans for convenience); throws INVALID_CONFIG. */
export const parseConfigOverrides = (input: unknown): Partial<TopicConfig> => {
  if (input === undefined) return {};
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new SluiceError(
      'INVALID_CONFIG',
      'configs must be an object of Kafka config names to string values',
    );
  }
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    if (!isConfigName(name)) {
      throw new SluiceError(
        'INVALID_CONFIG',
        `unknown topic config ${name}; supported: ${Object.keys(PARSERS).join(', ')}`,
      );
    }
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new SluiceError(
        'INVALID_CONFIG',
        `config ${name} must be a string, got ${value === null ? 'null' : typeof value}`,
      );
    }
    const parsed = PARSERS[name].parse(String(value));
    if (parsed === undefined) {
      throw new SluiceError(
        'INVALID_CONFIG',
        `config ${name}=${String(value)} is invalid; expected ${PARSERS[name].expect}`,
      );
    }
    out[name] = parsed;
  }
  return out as Partial<TopicConfig>;
};

export const effectiveConfig = (overrides: Partial<TopicConfig>): TopicConfig => ({
  ...DEFAULT_TOPIC_CONFIG,
  ...overrides,
});

/** Kafka's wire form: every value a string. */
export const configStrings = (config: Partial<TopicConfig>): Record<string, string> =>
  Object.fromEntries(Object.entries(config).map(([k, v]) => [k, String(v)]));
