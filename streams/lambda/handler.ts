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
 * The clients and the config come in as a StreamsWiring: the composition root of the function
 * (functions/streams-app.ts) builds it from the environment, a test may build its own. Nothing here
 * knows the environment, the AWS SDK or the deployment.
 */
import type { ResourceKeys, Telemetry } from '../../lib/ports/telemetry.js';
import type { SluiceClient } from '../../sdk/index.js';
import type { Topology } from '../topology.js';
import type { MetadataStateBackend } from '../state/metadata-backend.js';
import type { StreamsConfig } from '../runtime/config.js';
import { KafkaStreams } from '../runtime/kafka-streams.js';
import type { BoundedRunReport } from './bounded-run.js';
import { runBounded } from './bounded-run.js';
import { committedPosition, sourceHighWatermarks } from './positions.js';

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

/** Telemetry that scopes one invocation (functions/telemetry.ts's PowertoolsTelemetry on Lambda). */
export interface InvocationTelemetry extends Telemetry {
  run<T>(keys: ResourceKeys & { function?: string }, invocation: () => Promise<T>): Promise<T>;
}

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

/**
 * The Lambda handler of the app whose module exports `topology`; `wiring` is called once, on the
 * first invocation (the container keeps its clients).
 */
export const boundedRunHandler = (
  topology: () => Topology,
  wiringOf: () => StreamsWiring,
  telemetry: InvocationTelemetry,
) => {
  let wiring: StreamsWiring | undefined;
  let built: Topology | undefined;
  return async (event: StreamsWakeup, context: LambdaContext): Promise<StreamsRunResult> => {
    const started = Date.now();
    wiring ??= wiringOf();
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
