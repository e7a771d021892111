/**
 * Topic configs with Kafka's names, defaults and validation. Values travel as strings (as in Kafka's
 * AdminClient); each is parsed here once so a bad value fails with INVALID_CONFIG naming the key.
 */
import { SluiceError } from '../../../protocol/errors.js';

export type CleanupPolicy = 'delete' | 'compact' | 'compact,delete';

export interface TopicConfig {
  'retention.ms': number;
  'retention.bytes': number;
  'cleanup.policy': CleanupPolicy;
  'segment.bytes': number;
  'segment.ms': number;
  'min.insync.replicas': number;
  'max.message.bytes': number;
  'message.timestamp.type': 'CreateTime' | 'LogAppendTime';
  'delete.retention.ms': number;
  /** Kafka's log cleaner threshold: the dirty share of the log at which a compaction pass runs. */
  'min.cleanable.dirty.ratio': number;
  /** How long rolled data also stays in the replica stores (KIP-405; -2 = as long as retention.ms). */
  'local.retention.ms': number;
  /** Bytes of rolled data the replica stores keep per partition (-2 = as retention.bytes). */
  'local.retention.bytes': number;
  'unclean.leader.election.enable': boolean;
}

export const DEFAULT_TOPIC_CONFIG: TopicConfig = {
  'retention.ms': 604_800_000,
  'retention.bytes': -1,
  'cleanup.policy': 'delete',
  // 16 MiB, not Kafka's 1 GiB: a segment is one object that compaction rewrites whole and a Lambda holds
  // in memory while rolling it; 16 MiB already makes a 4 MiB fetch one ranged GET.
  'segment.bytes': 16_777_216,
  'segment.ms': 604_800_000,
  'min.insync.replicas': 1,
  'max.message.bytes': 1_048_588,
  'message.timestamp.type': 'CreateTime',
  'delete.retention.ms': 86_400_000,
  'min.cleanable.dirty.ratio': 0.5,
  // An hour, not Kafka's -2: replica stores are S3 Express One Zone (about 5x Standard's storage price),
  // and once a segment is rolled reads go to it; the copy serves reads while the segment store fails.
  'local.retention.ms': 3_600_000,
  'local.retention.bytes': -2,
  'unclean.leader.election.enable': false,
};

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
