/**
 * Sluice's requests priced: counted S3 requests, DynamoDB units, Lambda invocations and time, API
 * Gateway units → dollars. The price table and its sources are bench/cost-prices.ts; the managed
 * services' side is bench/cost-competitors.ts; the full per-month model (storage, replicas, rolls,
 * consumer groups) is bench/cost-model.ts.
 */
import type { Durations } from './cost-model.js';
import type { Prices } from './cost-prices.js';
import { PRICES } from './cost-prices.js';

export { PRICES, STORAGE_PRICES } from './cost-prices.js';
export type { Prices } from './cost-prices.js';
export type { PerGiB, Traffic } from './cost-competitors.js';
export { confluentBasic, confluentStandard, kinesisOnDemand, mskServerless } from './cost-competitors.js';

/** Memory of each function as infra/constructs/sluice-functions.ts sizes it. */
export const FUNCTION_MEMORY_MB = {
  admin: 512,
  produce: 1024,
  fetch: 1024,
  groups: 512,
  maintenance: 1024,
} as const;

export interface LambdaUsage {
  invocations: number;
  memoryMb: number;
  /** Billed duration summed over the invocations (Lambda bills per ms). */
  totalDurationMs: number;
}

/** What Sluice did, in the units AWS bills. */
export interface SluiceUsage {
  s3Puts: number;
  s3Gets: number;
  s3Lists?: number;
  dynamodbWriteUnits: number;
  dynamodbReadUnits: number;
  lambda: LambdaUsage[];
  apiGatewayRequests: number;
}

export interface SluiceCost {
  s3: number;
  dynamodb: number;
  lambdaRequests: number;
  lambdaCompute: number;
  apiGateway: number;
  total: number;
}

export const sluiceCost = (usage: SluiceUsage, prices: Prices = PRICES): SluiceCost => {
  const s3 =
    (usage.s3Puts * prices.s3.perThousandPuts +
      usage.s3Gets * prices.s3.perThousandGets +
      (usage.s3Lists ?? 0) * prices.s3.perThousandLists) /
    1_000;
  const dynamodb =
    (usage.dynamodbWriteUnits * prices.dynamodb.perMillionWriteUnits +
      usage.dynamodbReadUnits * prices.dynamodb.perMillionReadUnits) /
    1e6;
  const invocations = usage.lambda.reduce((s, l) => s + l.invocations, 0);
  const lambdaRequests = (invocations * prices.lambda.perMillionRequests) / 1e6;
  const gbSeconds = usage.lambda.reduce((s, l) => s + (l.memoryMb / 1024) * (l.totalDurationMs / 1000), 0);
  const lambdaCompute = gbSeconds * prices.lambda.perGbSecond;
  const apiGateway = (usage.apiGatewayRequests * prices.apiGateway.perMillionRequests) / 1e6;
  return {
    s3,
    dynamodb,
    lambdaRequests,
    lambdaCompute,
    apiGateway,
    total: s3 + dynamodb + lambdaRequests + lambdaCompute + apiGateway,
  };
};

/**
 * API Gateway HTTP API billing units of one call: a request is metered in 512 KB increments; we count
 * the larger of the request and the response body (a produce sends the bytes, a fetch receives them).
 */
export const apiGatewayUnits = (
  requestBytes: number,
  responseBytes: number,
  prices: Prices = PRICES,
): number => {
  const unit = prices.apiGateway.meteringIncrementBytes;
  return Math.max(1, Math.ceil(requestBytes / unit), Math.ceil(responseBytes / unit));
};

/** What one side (produce or fetch) costs per batch of data, as measured by the meters. */
export interface SideCounts {
  /** HTTP requests (Lambda invocations) per batch. */
  requests: number;
  s3Puts: number;
  s3Gets: number;
  writeUnits: number;
  readUnits: number;
  /** API Gateway billing units per batch. */
  apiUnits: number;
  /** Lambda duration per batch (all its requests). */
  durationMs: number;
}

/** Requests a batch of `batchBytes` costs Sluice to produce and to read once. */
export interface PerBatchCounts {
  batchBytes: number;
  produce: SideCounts;
  fetch: SideCounts;
}

/** Dollars per GiB written once and read once in batches of `batchBytes`, from per-batch counts. */
export const sluicePerGiB = (
  c: PerBatchCounts,
  prices: Prices = PRICES,
): SluiceCost & { batchesPerGiB: number } => {
  const n = 2 ** 30 / c.batchBytes;
  const { produce: p, fetch: f } = c;
  const cost = sluiceCost(
    {
      s3Puts: (p.s3Puts + f.s3Puts) * n,
      s3Gets: (p.s3Gets + f.s3Gets) * n,
      dynamodbWriteUnits: (p.writeUnits + f.writeUnits) * n,
      dynamodbReadUnits: (p.readUnits + f.readUnits) * n,
      lambda: [
        {
          invocations: p.requests * n,
          memoryMb: FUNCTION_MEMORY_MB.produce,
          totalDurationMs: p.durationMs * n,
        },
        {
          invocations: f.requests * n,
          memoryMb: FUNCTION_MEMORY_MB.fetch,
          totalDurationMs: f.durationMs * n,
        },
      ],
      apiGatewayRequests: (p.apiUnits + f.apiUnits) * n,
    },
    prices,
  );
  return { ...cost, batchesPerGiB: n };
};

/**
 * Lambda duration we assume in AWS (local emulator timings say nothing about AWS): for produce and
 * fetch a fixed part for the DynamoDB round trips plus S3 transfer at the rate a single Lambda stream
 * sustains; a group call is a few DynamoDB round trips; a maintenance run reads every partition's
 * state, queries the index it walks, and moves what it rolls; an orphan scan makes three more round
 * trips per partition and lists its stores a page at a time. Documented in docs/cost.md; change it
 * here to see its weight, or pass measured durations to bench:cost.
 */
export const DURATION_MODEL = {
  // At 1,024 MB. cpuMsPerMiB / cpuMs: the functions' own CPU on a whole core, from
  // `npm run bench:function-cpu` (2.25, 1.91 and 1.5 ms) times 3 for what it leaves out (the SDK's
  // signing, checksums and TLS over 1 MiB, three replica PUTs).
  produce: { fixedMs: 25, msPerMiB: 20, cpuMsPerMiB: 6.75 },
  fetch: { fixedMs: 15, msPerMiB: 15, cpuMsPerMiB: 5.75 },
  groups: { fixedMs: 20, cpuMs: 4.5 },
  // The roll's CPU: 3.88 ms per MiB on a whole core (bench:function-cpu), times 3 as above (a GET and a
  // PUT per MiB). A run's own CPU besides (0.1 ms, and 0.05 ms per partition) is nothing beside its waits.
  maintenance: {
    fixedMsPerRun: 200,
    msPerPartition: 30,
    msPerMiBRolled: 20,
    cpuMsPerMiBRolled: 11.6,
    msPerListPage: 30,
    msPerMiBIndexRead: 20,
    msPerPartitionScanned: 15,
  },
} as const satisfies Durations;

export const modelledDurationMs = (job: 'produce' | 'fetch', bytes: number): number =>
  DURATION_MODEL[job].fixedMs + (DURATION_MODEL[job].msPerMiB * bytes) / 2 ** 20;
