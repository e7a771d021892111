/**
 * What every deployed function builds from the environment the CDK app sets (SLUICE_* and AWS_*
 * variables): its telemetry (functions/telemetry.ts), the storage adapters over traced SDK clients,
 * the configuration, and the adapter of API Gateway v2 events to a router, run in the invocation's
 * telemetry scope. Each function's composition root (functions/<job>.ts) builds its services from
 * these; the local stack reads the same variables (local/runtime.ts) and wraps what it builds with its
 * own layers.
 */
import { createAwsClients } from '../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../lib/adapters/aws/dynamodb-metadata-store.js';
import { S3ObjectStore } from '../lib/adapters/aws/s3-object-store.js';
import type { ApiGatewayV2Event, ApiGatewayV2Result } from '../lib/http/apigw.js';
import { requestFromEvent, resultFromResponse } from '../lib/http/apigw.js';
import type { Job } from '../lib/http/define-route.js';
import type { Router } from '../lib/http/router.js';
import { systemClock } from '../lib/ports/clock.js';
import type { StorageMeter } from '../lib/ports/meter.js';
import type { MetadataStore } from '../lib/ports/metadata-store.js';
import type { ObjectStore } from '../lib/ports/object-store.js';
import type { SluiceConfig, SluiceDeps } from '../lib/services.js';
import { DEFAULT_MAX_REQUEST_BYTES, ENV, SEGMENT_STORE_ID, storeId } from '../lib/config/environment.js';
import type { InvocationKeys, TelemetrySink } from './telemetry.js';
import { PowertoolsTelemetry } from './telemetry.js';

export const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is required`);
  return value;
};

let telemetry: PowertoolsTelemetry | undefined;
let telemetrySink: TelemetrySink | undefined;

/** Logs, metrics and traces of this process (functions/telemetry.ts), built on first use. */
export const telemetryFromEnv = (): PowertoolsTelemetry =>
  (telemetry ??= new PowertoolsTelemetry(telemetrySink ? { sink: telemetrySink } : {}));

/**
 * Set only by the local stack (local/runtime.ts, local/connect-invocation.ts): where log records and
 * EMF documents go instead of stdout (undefined: stdout, as on Lambda). Takes effect for what is built
 * after it.
 */
export const setTelemetrySink = (sink: TelemetrySink | undefined): void => {
  telemetrySink = sink;
  telemetry = undefined;
};

/** Runs one invocation of a function in its telemetry scope (its keys on every line, its metrics at the end). */
export const instrumented = <T>(keys: InvocationKeys, invocation: () => Promise<T>): Promise<T> =>
  telemetryFromEnv().run(keys, invocation);

/** The stores the functions build from the environment. */
export interface Storage {
  store: MetadataStore;
  objectStores: readonly ObjectStore[];
  segmentStore?: ObjectStore;
}

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

const positiveInteger = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
};

/** The metadata table and the stores named by the environment; `meters` count their requests. */
export const storageFromEnv = (meters: { metadata?: StorageMeter; objects?: StorageMeter } = {}): Storage => {
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
  const s3ClientFor = (endpoint: string | undefined) =>
    endpoint === undefined ? clients.s3 : traced(createAwsClients({ endpoints: { s3: endpoint } })).s3;
  const objectMeter = meters.objects ? { meter: meters.objects } : {};
  const segmentBucket = process.env[ENV.segmentBucket];
  return {
    store: new DynamoMetadataStore({
      client: clients.dynamodb,
      tableName: required(ENV.tableName),
      ...(meters.metadata ? { meter: meters.metadata } : {}),
    }),
    objectStores: buckets.map(
      (bucket, i) =>
        new S3ObjectStore({
          client: s3ClientFor(storeEndpoints?.[i]),
          bucket,
          id: storeId(i),
          ...objectMeter,
        }),
    ),
    ...(segmentBucket
      ? {
          segmentStore: new S3ObjectStore({
            // Locally the segment store may be an emulator of its own (local/stack.ts).
            client: s3ClientFor(process.env[ENV.segmentEndpoint]),
            bucket: segmentBucket,
            id: SEGMENT_STORE_ID,
            ...objectMeter,
          }),
        }
      : {}),
  };
};

/** The configuration the environment sets. */
export const configFromEnv = (): SluiceConfig => ({
  clusterId: process.env[ENV.clusterId] ?? 'sluice',
  ...(process.env[ENV.waitUrl] ? { waitUrl: process.env[ENV.waitUrl] } : {}),
  maxRequestBytes: positiveInteger(ENV.maxRequestBytes, DEFAULT_MAX_REQUEST_BYTES),
  replicaLagTimeMaxMs: positiveInteger(ENV.replicaLagTimeMaxMs, 30_000),
  sequenceGapWaitMs: SEQUENCE_GAP_WAIT_MS,
  // The produce that fills the tail answers first, then moves it (lib/core/log/append-commit.ts).
  materializeAfterAck: true,
  ...optionalMs(ENV.groupSessionTimeoutMs, 'sessionTimeoutMs'),
  ...optionalMs(ENV.groupHeartbeatIntervalMs, 'heartbeatIntervalMs'),
  orphanScanIntervalMs: ORPHAN_SCAN_INTERVAL_MS,
  ...optionalMs(ENV.orphanScanIntervalMs, 'orphanScanIntervalMs'),
  // Client quotas are enforced wherever Sluice is deployed or started (docs/quotas.md).
  clientQuotas: {
    ...optionalMs(ENV.quotaWindowMs, 'windowMs'),
    ...optionalMs(ENV.quotaConfigTtlMs, 'configCacheTtlMs'),
  },
});

/** Everything a composition root builds from, read from the environment (no authorizer). */
export const depsFromEnv = (storage: Storage = storageFromEnv()): SluiceDeps => ({
  store: storage.store,
  objectStores: storage.objectStores,
  ...(storage.segmentStore ? { segmentStore: storage.segmentStore } : {}),
  clock: systemClock,
  config: configFromEnv(),
  telemetry: telemetryFromEnv(),
});

/** The part of Lambda's context object the telemetry reads (absent when the local stack calls). */
export interface InvocationContext {
  awsRequestId?: string;
}

/** The telemetry keys of one API invocation: the function, API Gateway's and Lambda's request ids. */
export const invocationKeys = (
  job: Job,
  event: ApiGatewayV2Event,
  context?: InvocationContext,
): InvocationKeys => ({
  function: job,
  ...(event.requestContext?.requestId ? { requestId: event.requestContext.requestId } : {}),
  ...(context?.awsRequestId ? { lambdaRequestId: context.awsRequestId } : {}),
});

/**
 * An API Gateway HTTP API handler of one function over a router built on first use, once per
 * container (the composition root runs inside the first invocation, where its failure is an answer,
 * not a crash), each invocation in its telemetry scope.
 */
export const httpHandler = (job: Job, build: () => Router) => {
  let router: Router | undefined;
  return async (event: ApiGatewayV2Event, context?: InvocationContext): Promise<ApiGatewayV2Result> =>
    instrumented(invocationKeys(job, event, context), async () => {
      router ??= build();
      return resultFromResponse(await router.handle(requestFromEvent(event)));
    });
};
