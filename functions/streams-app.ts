/**
 * Composition root of a Streams app's function (infra/constructs/streams-app.ts): the config and the
 * clients from the environment the construct sets (and a test sets against the local stack) —
 * SLUICE_STREAMS_CONFIG (Kafka Streams' config names, as JSON), SLUICE_TABLE_NAME (state),
 * SLUICE_STREAMS_SIGV4_REGION (sign API calls; unset locally) and the AWS SDK's usual variables —
 * handed to the bounded-run handler of streams/lambda, which knows none of them.
 */
import { createAwsClients } from '../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../lib/adapters/aws/dynamodb-metadata-store.js';
import { ENV } from '../lib/config/environment.js';
import { SluiceError } from '../protocol/errors.js';
import { SluiceClient, nodeHttpFetch } from '../sdk/index.js';
import { boundedRunHandler } from '../streams/lambda/handler.js';
import type { StreamsWiring } from '../streams/lambda/handler.js';
import { parseStreamsConfig } from '../streams/runtime/config.js';
import { MetadataStateBackend } from '../streams/state/metadata-backend.js';
import type { Topology } from '../streams/topology.js';
import { PowertoolsTelemetry } from './telemetry.js';

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

/** The Lambda handler of the app whose module exports `topology`, wired from the environment. */
export const streamsHandler = (topology: () => Topology) =>
  boundedRunHandler(topology, () => streamsWiringFromEnv(), new PowertoolsTelemetry());
