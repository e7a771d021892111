/**
 * Latency models of AWS storage for the local stack and the benchmarks: per-operation latency
 * distributions for S3 Standard, S3 Express One Zone and DynamoDB, so a run on one machine waits the
 * way a Lambda function in the same region would. Figures under a model are modelled, never AWS
 * measurements; the sources of each number are in bench/README.md ("Latency models").
 *
 * Each operation's fixed part is a log-normal fitted through a published median and p99 (log-normal
 * because service latencies are right-skewed and never negative); bodies add a transfer time at a
 * per-request throughput.
 */
import type { Random } from '../fault/random.js';

export const LATENCY_MODELS = ['none', 'standard', 'express'] as const;
export type LatencyModelName = (typeof LATENCY_MODELS)[number];

/** A latency distribution by its median and 99th percentile, in ms. */
export interface Distribution {
  p50Ms: number;
  p99Ms: number;
}

export type ObjectOp = 'put' | 'get' | 'delete' | 'list';
export type MetadataOp = 'get' | 'put' | 'update' | 'delete' | 'query' | 'transact' | 'batchWrite';

export interface LatencyModel {
  name: LatencyModelName;
  object: Record<ObjectOp, Distribution>;
  /** Per-request transfer throughput of the object store, MiB/s (PUT bodies and GET ranges). */
  objectMiBPerSec: number;
  metadata: Record<MetadataOp, Distribution>;
}

const dynamodb: Record<MetadataOp, Distribution> = {
  get: { p50Ms: 3, p99Ms: 8 },
  put: { p50Ms: 5, p99Ms: 12 },
  update: { p50Ms: 5, p99Ms: 12 },
  delete: { p50Ms: 5, p99Ms: 12 },
  query: { p50Ms: 5, p99Ms: 15 },
  // A transaction is two underlying operations (prepare, commit), as DynamoDB bills it.
  transact: { p50Ms: 10, p99Ms: 25 },
  batchWrite: { p50Ms: 8, p99Ms: 20 },
};

const zero: Distribution = { p50Ms: 0, p99Ms: 0 };

export const latencyModels: Record<LatencyModelName, LatencyModel> = {
  none: {
    name: 'none',
    object: { put: zero, get: zero, delete: zero, list: zero },
    objectMiBPerSec: Number.POSITIVE_INFINITY,
    metadata: {
      get: zero,
      put: zero,
      update: zero,
      delete: zero,
      query: zero,
      transact: zero,
      batchWrite: zero,
    },
  },
  standard: {
    name: 'standard',
    object: {
      put: { p50Ms: 60, p99Ms: 250 },
      get: { p50Ms: 40, p99Ms: 200 },
      delete: { p50Ms: 30, p99Ms: 150 },
      list: { p50Ms: 50, p99Ms: 200 },
    },
    objectMiBPerSec: 100,
    metadata: dynamodb,
  },
  express: {
    name: 'express',
    object: {
      put: { p50Ms: 5, p99Ms: 9 },
      get: { p50Ms: 3, p99Ms: 8 },
      delete: { p50Ms: 4, p99Ms: 9 },
      list: { p50Ms: 5, p99Ms: 9 },
    },
    objectMiBPerSec: 100,
    metadata: dynamodb,
  },
};

export const parseLatencyModel = (raw: string | undefined): LatencyModelName => {
  const name = (raw ?? 'none').trim() || 'none';
  if (!(LATENCY_MODELS as readonly string[]).includes(name)) {
    throw new Error(`unknown latency model ${JSON.stringify(raw)}: use one of ${LATENCY_MODELS.join(', ')}`);
  }
  return name as LatencyModelName;
};

/** z of the 99th percentile of the standard normal. */
const Z99 = 2.3263478740408408;

/** One draw from the log-normal through `d`'s median and p99 (Box–Muller on a seeded source). */
export const sampleMs = (d: Distribution, random: Random): number => {
  if (d.p50Ms <= 0) return 0;
  const sigma = Math.log(d.p99Ms / d.p50Ms) / Z99;
  const u1 = Math.max(random(), Number.MIN_VALUE);
  const u2 = random();
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return d.p50Ms * Math.exp(sigma * z);
};

/** Milliseconds to move `bytes` at the model's per-request throughput. */
export const transferMs = (model: LatencyModel, bytes: number): number =>
  Number.isFinite(model.objectMiBPerSec) ? (bytes / (1024 * 1024) / model.objectMiBPerSec) * 1000 : 0;
