/**
 * What every deployed function builds from the environment the CDK app sets (SLUICE_* and AWS_*
 * variables): the storage adapters and the configuration, and the adapter of API Gateway v2 events to
 * a router. Each function's composition root (functions/<job>.ts) builds its services from these; the
 * local stack reads the same variables (local/runtime.ts) and wraps what it builds with its own layers.
 */
import { createAwsClients } from '../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../lib/adapters/aws/dynamodb-metadata-store.js';
import { S3ObjectStore } from '../lib/adapters/aws/s3-object-store.js';
import type { ApiGatewayV2Event, ApiGatewayV2Result } from '../lib/http/apigw.js';
import { requestFromEvent, resultFromResponse } from '../lib/http/apigw.js';
import type { Router } from '../lib/http/router.js';
import { systemClock } from '../lib/ports/clock.js';
import type { StorageMeter } from '../lib/ports/meter.js';
import type { MetadataStore } from '../lib/ports/metadata-store.js';
import type { ObjectStore } from '../lib/ports/object-store.js';
import type { SluiceConfig, SluiceDeps } from '../lib/services.js';
import { DEFAULT_MAX_REQUEST_BYTES, ENV, SEGMENT_STORE_ID, storeId } from '../infra/config.js';

export const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is required`);
  return value;
};

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
  const clients = createAwsClients();
  const buckets = required(ENV.buckets)
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  // Locally each store may be its own emulator process with its own endpoint (local/stack.ts).
  const storeEndpoints = process.env[ENV.storeEndpoints]?.split(',').filter(Boolean);
  const s3ClientFor = (endpoint: string | undefined) =>
    endpoint === undefined ? clients.s3 : createAwsClients({ endpoints: { s3: endpoint } }).s3;
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
  maxRequestBytes: positiveInteger(ENV.maxRequestBytes, DEFAULT_MAX_REQUEST_BYTES),
  replicaLagTimeMaxMs: positiveInteger(ENV.replicaLagTimeMaxMs, 30_000),
  sequenceGapWaitMs: SEQUENCE_GAP_WAIT_MS,
  // The produce that fills the tail answers first, then moves it (lib/core/log/append-commit.ts).
  materializeAfterAck: true,
  ...optionalMs(ENV.groupSessionTimeoutMs, 'sessionTimeoutMs'),
  ...optionalMs(ENV.groupHeartbeatIntervalMs, 'heartbeatIntervalMs'),
  orphanScanIntervalMs: ORPHAN_SCAN_INTERVAL_MS,
  ...optionalMs(ENV.orphanScanIntervalMs, 'orphanScanIntervalMs'),
});

/** Errors and warnings as JSON lines on stderr (CloudWatch Logs). */
export const logToStderr = (entry: Record<string, unknown>): void => console.error(JSON.stringify(entry));

/** Everything a composition root builds from, read from the environment (no authorizer). */
export const depsFromEnv = (storage: Storage = storageFromEnv()): SluiceDeps => ({
  store: storage.store,
  objectStores: storage.objectStores,
  ...(storage.segmentStore ? { segmentStore: storage.segmentStore } : {}),
  clock: systemClock,
  config: configFromEnv(),
  log: logToStderr,
});

/**
 * An API Gateway HTTP API handler over a router built on first use, once per container (the
 * composition root runs inside the first invocation, where its failure is an answer, not a crash).
 */
export const httpHandler = (build: () => Router) => {
  let router: Router | undefined;
  return async (event: ApiGatewayV2Event): Promise<ApiGatewayV2Result> => {
    router ??= build();
    return resultFromResponse(await router.handle(requestFromEvent(event)));
  };
};
