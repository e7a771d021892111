/**
 * The Lambda entry of a Streams application: `streamsHandler(topology)` is the handler. The CDK
 * construct (infra/constructs/streams-app.ts) bundles a two-line entry around the app's module that
 * exports it. Each invocation is one bounded run (bounded-run.ts) of the same KafkaStreams runtime as
 * `npm run streams`: it joins the application's group, processes its tasks from their committed
 * offsets and state up to the high watermarks it found, commits, leaves the group and returns before
 * the function's deadline. The event only wakes it (the metadata table's DynamoDB Stream, filtered to
 * the app's source partitions): the run reads the watermarks itself, so a retried or coalesced event
 * does the same thing.
 *
 * Configuration, as the construct sets it (and as a test sets it against the local stack):
 * SLUICE_STREAMS_CONFIG (Kafka Streams' config names, as JSON), SLUICE_TABLE_NAME (state),
 * SLUICE_STREAMS_SIGV4_REGION (sign API calls; unset locally) and the AWS SDK's usual variables.
 */
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../../lib/adapters/aws/dynamodb-metadata-store.js';
import { SluiceError } from '../../protocol/errors.js';
import { ENV } from '../../infra/config.js';
import { SluiceClient, nodeHttpFetch } from '../../sdk/index.js';
import type { Topology } from '../topology.js';
import { MetadataStateBackend } from '../state/metadata-backend.js';
import type { StreamsConfig } from '../runtime/config.js';
import { parseStreamsConfig } from '../runtime/config.js';
import { KafkaStreams } from '../runtime/kafka-streams.js';
import type { BoundedRunReport } from './bounded-run.js';
import { runBounded } from './bounded-run.js';
import { committedPosition, sourceHighWatermarks } from './positions.js';
import { PowertoolsTelemetry } from '../../functions/telemetry.js';

/** The part of Lambda's context object a run uses. */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

/** What wakes a run: a DynamoDB Stream batch, or any event (a manual invoke drains the app too). */
export interface StreamsWakeup {
  Records?: readonly unknown[];
}

export interface StreamsRunResult extends BoundedRunReport {
  applicationId: string;
  /** Stream records in the event that woke the run. */
  wakeups: number;
  durationMs: number;
}

/**
 * Time kept back from the deadline for closing: the last commit of every task (an exactly_once_v2
 * transaction and its outbox produce) and leaving the group. A third of the time left when that is less.
 */
export const SHUTDOWN_RESERVE_MS = 10_000;

export interface StreamsWiring {
  config: StreamsConfig;
  client: SluiceClient;
  state: MetadataStateBackend;
}

/** The clients a container builds once, from the environment. */
export const streamsWiringFromEnv = (env: NodeJS.ProcessEnv = process.env): StreamsWiring => {
  const raw = env[ENV.streamsConfig];
  if (!raw) throw new SluiceError('INVALID_CONFIG', `${ENV.streamsConfig} is required`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new SluiceError('INVALID_CONFIG', `${ENV.streamsConfig} is not JSON`);
  }
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Array.isArray(parsed) ||
    Object.values(parsed).some((v) => typeof v !== 'string')
  )
    throw new SluiceError('INVALID_CONFIG', `${ENV.streamsConfig} must be an object of string configs`);
  const config = parseStreamsConfig(parsed as Record<string, string>);
  const tableName = env[ENV.tableName];
  if (!tableName) throw new SluiceError('INVALID_CONFIG', `${ENV.tableName} is required`);
  const region = env[ENV.streamsSigningRegion];
  const client = new SluiceClient({
    url: config.bootstrapServers,
    fetch: nodeHttpFetch(),
    ...(region ? { region } : {}),
  });
  const store = new DynamoMetadataStore({ client: createAwsClients().dynamodb, tableName });
  return { config, client, state: new MetadataStateBackend(store, config.applicationId) };
};

/** One bounded run of the app with these clients (what the handler does per invocation). */
export const runStreamsOnce = async (
  topology: Topology,
  wiring: StreamsWiring,
  context: LambdaContext,
  log: (line: string) => void = () => {},
): Promise<BoundedRunReport> => {
  const { config, client, state } = wiring;
  const streams = new KafkaStreams({ topology, config, client, state, log });
  const reserve = Math.min(SHUTDOWN_RESERVE_MS, Math.floor(context.getRemainingTimeInMillis() / 3));
  return runBounded({
    app: streams,
    highWatermarks: () => sourceHighWatermarks(topology, config, client),
    committed: (topic, partition) => committedPosition(topology, wiring, topic, partition),
    remainingMs: () => context.getRemainingTimeInMillis() - reserve,
  });
};

/** The Lambda handler of the app whose module exports `topology`. */
export const streamsHandler = (topology: () => Topology) => {
  let wiring: StreamsWiring | undefined;
  let built: Topology | undefined;
  const telemetry = new PowertoolsTelemetry();
  return async (event: StreamsWakeup, context: LambdaContext): Promise<StreamsRunResult> => {
    const started = Date.now();
    wiring ??= streamsWiringFromEnv();
    built ??= topology();
    const group = wiring.config.applicationId;
    return telemetry.run({ function: 'streams', group }, async () => {
      const log = (line: string) => telemetry.log('warn', line);
      const report = await runStreamsOnce(built!, wiring!, context, log);
      const result: StreamsRunResult = {
        applicationId: group,
        wakeups: event.Records?.length ?? 0,
        ...report,
        durationMs: Date.now() - started,
      };
      // Kafka Streams' process-total of this run; Sum over a period / the period is its process-rate.
      const processed = Object.values(report.processed).reduce((n, k) => n + k, 0);
      telemetry.metric('process-rate', processed, { group });
      telemetry.log('info', 'streams run', { streams: result });
      return result;
    });
  };
};
