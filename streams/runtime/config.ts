/** StreamsConfig: Kafka Streams' config names, parsed and checked once. */
import { SluiceError } from '../../protocol/errors.js';

export type ProcessingGuarantee = 'at_least_once' | 'exactly_once_v2';

export interface StreamsConfig {
  applicationId: string;
  /** The Sluice API's base URL (Kafka's bootstrap.servers). */
  bootstrapServers: string;
  processingGuarantee: ProcessingGuarantee;
  commitIntervalMs: number;
  /**
   * `auto.create.topics.enable`: create missing output topics at start, as a broker with Kafka's
   * setting of that name would on the first produce (default false: a missing one fails the start).
   */
  autoCreateTopics?: boolean;
}

/** Where a runner talks to when nothing says otherwise (the CLI's default too). */
export const DEFAULT_BOOTSTRAP_SERVERS = 'http://127.0.0.1:8787';

const KNOWN = [
  'application.id',
  'bootstrap.servers',
  'processing.guarantee',
  'commit.interval.ms',
  'auto.create.topics.enable',
];

export const parseStreamsConfig = (raw: Record<string, string>): StreamsConfig => {
  for (const name of Object.keys(raw)) {
    if (!KNOWN.includes(name)) throw invalid(`unknown config ${name} (known: ${KNOWN.join(', ')})`);
  }
  const applicationId = raw['application.id'];
  // The application id names a consumer group and prefixes internal topics, so it must fit both.
  if (applicationId === undefined || !/^[a-zA-Z0-9._-]{1,200}$/.test(applicationId))
    throw invalid('application.id is required: 1-200 characters of [a-zA-Z0-9._-]');
  const bootstrapServers = raw['bootstrap.servers'] ?? DEFAULT_BOOTSTRAP_SERVERS;
  if (!/^https?:\/\/[^\s]+$/.test(bootstrapServers))
    throw invalid(`bootstrap.servers must be the Sluice URL, not ${bootstrapServers}`);
  const guarantee = raw['processing.guarantee'] ?? 'at_least_once';
  if (guarantee !== 'at_least_once' && guarantee !== 'exactly_once_v2')
    throw invalid(`processing.guarantee must be at_least_once or exactly_once_v2, not ${guarantee}`);
  // Kafka's defaults: 30 s for at-least-once, 100 ms for exactly-once.
  const interval = raw['commit.interval.ms'] ?? (guarantee === 'exactly_once_v2' ? '100' : '30000');
  const commitIntervalMs = Number(interval);
  if (!/^\d+$/.test(interval) || !Number.isSafeInteger(commitIntervalMs))
    throw invalid(`commit.interval.ms must be a whole number of ms, not ${interval}`);
  const autoCreate = raw['auto.create.topics.enable'] ?? 'false';
  if (autoCreate !== 'true' && autoCreate !== 'false')
    throw invalid(`auto.create.topics.enable must be true or false, not ${autoCreate}`);
  return {
    applicationId,
    bootstrapServers,
    processingGuarantee: guarantee,
    commitIntervalMs,
    autoCreateTopics: autoCreate === 'true',
  };
};

const invalid = (message: string): SluiceError => new SluiceError('INVALID_CONFIG', message);
