/**
 * Builds Sluice once per Lambda container (module scope) from the environment the CDK app sets, and
 * adapts API Gateway v2 events to the router. The local stack sets the same variables and imports the
 * same handlers.
 */
import { createAwsClients } from '../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../lib/adapters/aws/dynamodb-metadata-store.js';
import { S3ObjectStore } from '../lib/adapters/aws/s3-object-store.js';
import type { Sluice } from '../lib/app.js';
import { createSluice } from '../lib/app.js';
import type { ApiGatewayV2Event, ApiGatewayV2Result } from '../lib/http/apigw.js';
import { requestFromEvent, resultFromResponse } from '../lib/http/apigw.js';
import type { Job } from '../lib/http/route-table.js';
import type { Authorizer } from '../lib/auth/authorizer.js';
import { IAMClient } from '@aws-sdk/client-iam';
import { IamSimulationAuthorizer } from '../lib/adapters/aws/iam-authorizer.js';
import { systemClock } from '../lib/ports/clock.js';
import type { MetadataStore } from '../lib/ports/metadata-store.js';
import type { ObjectStore } from '../lib/ports/object-store.js';
import { StorageMeter } from '../lib/ports/meter.js';
import { DEFAULT_MAX_REQUEST_BYTES, ENV, SEGMENT_STORE_ID, storeId } from '../infra/config.js';
import type { InvocationKeys, TelemetrySink } from './telemetry.js';
import { PowertoolsTelemetry } from './telemetry.js';

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is required`);
  return value;
};

let instance: Sluice | undefined;
let authorizer: Authorizer | undefined;
let telemetry: PowertoolsTelemetry | undefined;
let telemetrySink: TelemetrySink | undefined;

/** Logs, metrics and traces of this process (functions/telemetry.ts), built on first use. */
export const telemetryFromEnv = (): PowertoolsTelemetry =>
  (telemetry ??= new PowertoolsTelemetry(telemetrySink ? { sink: telemetrySink } : {}));

/**
 * For the local stack: where log records and EMF documents go instead of stdout (undefined: stdout,
 * as on Lambda). The next request builds Sluice with it.
 */
export const setTelemetrySink = (sink: TelemetrySink | undefined): void => {
  telemetrySink = sink;
  telemetry = undefined;
  instance = undefined;
};

/** Runs one invocation of a function in its telemetry scope (its keys on every line, its metrics at the end). */
export const instrumented = <T>(keys: InvocationKeys, invocation: () => Promise<T>): Promise<T> =>
  telemetryFromEnv().run(keys, invocation);

/**
 * The authorizer of body-named resources (lib/auth). The local stack sets its policy evaluator here
 * when SLUICE_AUTH=iam; the next request builds Sluice with it.
 */
export const setAuthorizer = (value: Authorizer | undefined): void => {
  authorizer = value;
  instance = undefined;
};

/** The stores the handlers build from the environment. */
export interface Storage {
  store: MetadataStore;
  objectStores: readonly ObjectStore[];
}

/**
 * A layer over the stores, set only by the local stack (fault injection for the soak test, the AWS
 * latency model): Lambda never sets one, so neither layer is in a deployed bundle.
 */
export type StorageLayer = (storage: Storage) => Storage;
let storageLayer: StorageLayer | undefined;

/** For the local stack: wrap the stores of the next instance built (undefined removes the layer). */
export const setStorageLayer = (layer: StorageLayer | undefined): void => {
  storageLayer = layer;
  instance = undefined;
};

/** The layer set now, so a benchmark can add one of its own outside it. */
export const currentStorageLayer = (): StorageLayer | undefined => storageLayer;

/**
 * Runs each invocation inside a scope, set only by the benchmarks on the in-process local stack (a
 * trace context that storage calls can find): Lambda never sets one.
 */
export type InvocationScope = (
  job: Job,
  event: ApiGatewayV2Event,
  invoke: () => Promise<ApiGatewayV2Result>,
) => Promise<ApiGatewayV2Result>;
let invocationScope: InvocationScope | undefined;

/** For the benchmarks: wrap every invocation from now on (undefined removes the scope). */
export const setInvocationScope = (scope: InvocationScope | undefined): void => {
  invocationScope = scope;
};

/**
 * This process's storage request counters and handler invocations per job. In Lambda they only live
 * as long as a container; the benchmarks read them when they run the local stack in-process.
 */
export const meters = { metadata: new StorageMeter(), objects: new StorageMeter() };
export const invocations: Record<Job, number> = { admin: 0, produce: 0, fetch: 0, groups: 0, connect: 0 };

/**
 * A commit ahead of its producer's sequence waits up to this long for the batches before it: the SDK's
 * producer keeps up to 5 requests in flight per partition, and over HTTP they need not arrive in order.
 */
const SEQUENCE_GAP_WAIT_MS = 100;
/**
 * Orphans are objects of produces that died before their commit; they are collected 15 minutes after
 * they were written at the earliest, so an hourly scan leaves them at most 75 minutes, and spares a
 * listing of every store and a read of every index page each minute (docs/cost.md).
 */
const ORPHAN_SCAN_INTERVAL_MS = 60 * 60_000;

/** An optional positive integer setting of the environment, as `{ [key]: value }` or nothing. */
const optionalMs = <K extends string>(name: string, key: K): Partial<Record<K, number>> => {
  const text = process.env[name];
  if (text === undefined || text === '') return {};
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return { [key]: value } as Partial<Record<K, number>>;
};

/** The process's Sluice, built on first use from SLUICE_* and AWS_* variables. */
export const sluiceFromEnv = (): Sluice => {
  if (instance) return instance;
  const telemetry = telemetryFromEnv();
  // With active X-Ray tracing every S3 and DynamoDB call is a subsegment (functions/telemetry.ts).
  const traced = (c: ReturnType<typeof createAwsClients>) => ({
    s3: telemetry.traced(c.s3),
    dynamodb: telemetry.traced(c.dynamodb),
  });
  const clients = traced(createAwsClients());
  const buckets = required(ENV.buckets)
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  // Locally each store may be its own emulator process with its own endpoint (local/stack.ts).
  const storeEndpoints = process.env[ENV.storeEndpoints]?.split(',').filter(Boolean);
  const s3ClientFor = (i: number) => {
    const endpoint = storeEndpoints?.[i];
    return endpoint === undefined ? clients.s3 : traced(createAwsClients({ endpoints: { s3: endpoint } })).s3;
  };
  const replicaLagTimeMaxMs = Number(process.env[ENV.replicaLagTimeMaxMs] ?? 30_000);
  if (!Number.isSafeInteger(replicaLagTimeMaxMs) || replicaLagTimeMaxMs < 1) {
    throw new Error(`${ENV.replicaLagTimeMaxMs} must be a positive integer`);
  }
  const maxRequestBytes = Number(process.env[ENV.maxRequestBytes] ?? DEFAULT_MAX_REQUEST_BYTES);
  if (!Number.isSafeInteger(maxRequestBytes) || maxRequestBytes < 1) {
    throw new Error(`${ENV.maxRequestBytes} must be a positive integer`);
  }
  const segmentBucket = process.env[ENV.segmentBucket];
  const built: Storage = {
    store: new DynamoMetadataStore({
      client: clients.dynamodb,
      tableName: required(ENV.tableName),
      meter: meters.metadata,
    }),
    objectStores: buckets.map(
      (bucket, i) =>
        new S3ObjectStore({ client: s3ClientFor(i), bucket, id: storeId(i), meter: meters.objects }),
    ),
  };
  const storage = storageLayer ? storageLayer(built) : built;
  instance = createSluice({
    store: storage.store,
    objectStores: storage.objectStores,
    ...(segmentBucket
      ? {
          segmentStore: new S3ObjectStore({
            // Locally the segment store may be an emulator of its own (local/stack.ts).
            client:
              process.env[ENV.segmentEndpoint] === undefined
                ? clients.s3
                : traced(createAwsClients({ endpoints: { s3: process.env[ENV.segmentEndpoint] } })).s3,
            bucket: segmentBucket,
            id: SEGMENT_STORE_ID,
            meter: meters.objects,
          }),
        }
      : {}),
    clock: systemClock,
    config: {
      clusterId: process.env[ENV.clusterId] ?? 'sluice',
      maxRequestBytes,
      replicaLagTimeMaxMs,
      sequenceGapWaitMs: SEQUENCE_GAP_WAIT_MS,
      ...optionalMs(ENV.groupSessionTimeoutMs, 'sessionTimeoutMs'),
      ...optionalMs(ENV.groupHeartbeatIntervalMs, 'heartbeatIntervalMs'),
      orphanScanIntervalMs: ORPHAN_SCAN_INTERVAL_MS,
      ...optionalMs(ENV.orphanScanIntervalMs, 'orphanScanIntervalMs'),
      // Client quotas are enforced wherever Sluice is deployed or started (docs/quotas.md).
      clientQuotas: {
        ...optionalMs(ENV.quotaWindowMs, 'windowMs'),
        ...optionalMs(ENV.quotaConfigTtlMs, 'configCacheTtlMs'),
      },
    },
    telemetry,
    ...(authorizer
      ? { authorizer }
      : process.env[ENV.authorizer] === 'iam'
        ? { authorizer: iamAuthorizer() }
        : {}),
  });
  return instance;
};

/** Body-named resources checked by IAM's policy simulator, for the caller API Gateway authenticated. */
const iamAuthorizer = (): Authorizer =>
  new IamSimulationAuthorizer({
    client: new IAMClient({}),
    region: required('AWS_REGION'),
    clock: systemClock,
  });

/** For tests and the local stack: drop the cached instance so the next call rebuilds it. */
export const resetSluice = (): void => {
  instance = undefined;
};

/** The part of Lambda's context object the telemetry reads (absent when the local stack calls). */
export interface InvocationContext {
  awsRequestId?: string;
}

/** An API Gateway HTTP API handler serving one job's routes. */
export const httpHandler = (job: Job) => {
  return async (event: ApiGatewayV2Event, context?: InvocationContext): Promise<ApiGatewayV2Result> => {
    invocations[job] += 1;
    const invoke = () =>
      instrumented(
        {
          function: job,
          ...(event.requestContext?.requestId ? { requestId: event.requestContext.requestId } : {}),
          ...(context?.awsRequestId ? { lambdaRequestId: context.awsRequestId } : {}),
        },
        async () => resultFromResponse(await sluiceFromEnv().router(job).handle(requestFromEvent(event))),
      );
    return invocationScope ? invocationScope(job, event, invoke) : invoke();
  };
};
