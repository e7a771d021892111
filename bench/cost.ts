/**
 * The cost model: counted requests → dollars, beside what managed Kafka-like services charge for the
 * same traffic. Prices are us-east-1 list prices in USD, read on 2026-11-29 from:
 *   S3 Standard requests      https://aws.amazon.com/s3/pricing/ (PUT/COPY/POST/LIST $0.005 per 1,000; GET $0.0004 per 1,000)
 *   DynamoDB on-demand        https://aws.amazon.com/dynamodb/pricing/on-demand/ ($0.625 per million WRU, $0.125 per million RRU)
 *   Lambda (arm64, as infra/) https://aws.amazon.com/lambda/pricing/ ($0.20 per million requests, $0.0000133334 per GB-s)
 *   API Gateway HTTP API      https://aws.amazon.com/api-gateway/pricing/ ($1.00 per million, first 300M; metered in 512 KB increments)
 *   Kinesis on-demand (Standard) https://aws.amazon.com/kinesis/data-streams/pricing/ ($0.04 per stream-hour, $0.08 per GB in
 *                             with each record rounded up to 1 KB, $0.04 per GB out; On-demand Advantage is cheaper, not modelled)
 *   MSK Serverless            https://aws.amazon.com/msk/pricing/ ($0.75 per cluster-hour, $0.0015 per partition-hour,
 *                             $0.10 per GB in, $0.05 per GB out)
 *   Confluent Cloud Basic     https://www.confluent.io/pricing/ (first eCKU free then $0.14 per eCKU-hour, $0.05 per GB in and out)
 * Storage at rest ($/GB-month) is left out on every side: the comparison is of moving data, not keeping it.
 * Providers' "GB" is taken as GiB (Confluent says so explicitly; for AWS the difference is 7 %, in their favour).
 */

export const PRICES = {
  readOn: '2026-11-29',
  region: 'us-east-1',
  s3: { perThousandPuts: 0.005, perThousandGets: 0.0004, perThousandLists: 0.005 },
  dynamodb: { perMillionWriteUnits: 0.625, perMillionReadUnits: 0.125 },
  lambda: { perMillionRequests: 0.2, perGbSecond: 0.0000133334 },
  apiGateway: { perMillionRequests: 1.0, meteringIncrementBytes: 512 * 1024 },
  kinesisOnDemand: { perStreamHour: 0.04, perGiBIn: 0.08, perGiBOut: 0.04, recordRoundingBytes: 1024 },
  mskServerless: { perClusterHour: 0.75, perPartitionHour: 0.0015, perGiBIn: 0.1, perGiBOut: 0.05 },
  confluentBasic: { perEckuHour: 0.14, freeEckus: 1, perGiBIn: 0.05, perGiBOut: 0.05 },
} as const;

export type Prices = typeof PRICES;

/**
 * Storage at rest and S3 Express One Zone's request prices, for the tiered-storage comparison of
 * bench/segments.ts (us-east-1, read on 2026-12-01 from https://aws.amazon.com/s3/pricing/ and the S3
 * FAQ's Express One Zone examples): Standard $0.023 per GB-month (first 50 TB); Express One Zone
 * $0.11 per GB-month, PUT $0.00113 and GET $0.00003 per 1,000, plus $0.0032 per GB uploaded and
 * $0.0006 per GB retrieved.
 */
export const STORAGE_PRICES = {
  readOn: '2026-12-01',
  s3StandardPerGiBMonth: 0.023,
  s3Express: {
    perGiBMonth: 0.11,
    perThousandPuts: 0.00113,
    perThousandGets: 0.00003,
    perGiBUploaded: 0.0032,
    perGiBRetrieved: 0.0006,
  },
} as const;

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

/** Sustained traffic to price a managed service for. */
export interface Traffic {
  /** MiB/s written (and, per consumer group, read). */
  ingressMiBPerSec: number;
  /** Consumer groups reading everything once each. */
  readFanout: number;
  partitions: number;
  /** Mean record size, for Kinesis' per-record rounding. */
  recordBytes: number;
  /** Streams (Kinesis) or topics; Kinesis bills per stream. */
  topics: number;
}

export interface PerGiB {
  /** Dollars per GiB produced (and read `readFanout` times), hourly charges spread over the GiB of an hour. */
  usdPerGiB: number;
  hourly: number;
  perGiB: number;
}

const gibPerHour = (t: Traffic): number => (t.ingressMiBPerSec * 3600) / 1024;

const spread = (hourly: number, perGiB: number, t: Traffic): PerGiB => ({
  usdPerGiB: perGiB + hourly / gibPerHour(t),
  hourly,
  perGiB,
});

export const kinesisOnDemand = (t: Traffic, prices: Prices = PRICES): PerGiB => {
  const p = prices.kinesisOnDemand;
  const rounding = (Math.ceil(t.recordBytes / p.recordRoundingBytes) * p.recordRoundingBytes) / t.recordBytes;
  return spread(p.perStreamHour * t.topics, p.perGiBIn * rounding + p.perGiBOut * t.readFanout, t);
};

export const mskServerless = (t: Traffic, prices: Prices = PRICES): PerGiB => {
  const p = prices.mskServerless;
  return spread(
    p.perClusterHour + p.perPartitionHour * t.partitions,
    p.perGiBIn + p.perGiBOut * t.readFanout,
    t,
  );
};

/**
 * Confluent Basic: eCKUs scale with load; we assume the traffic fits the free first eCKU unless told
 * how many it needs (Confluent does not publish a fixed MB/s per eCKU for Basic).
 */
export const confluentBasic = (t: Traffic, eckus = 1, prices: Prices = PRICES): PerGiB => {
  const p = prices.confluentBasic;
  return spread(p.perEckuHour * Math.max(0, eckus - p.freeEckus), p.perGiBIn + p.perGiBOut * t.readFanout, t);
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
 * Lambda duration we assume in AWS for a request moving `bytes` (local emulator timings say nothing
 * about AWS): a fixed part for the DynamoDB round trips plus S3 transfer at the rate a single Lambda
 * stream sustains. Documented in docs/benchmarks.md; change it here to see its weight.
 */
export const DURATION_MODEL = {
  produce: { fixedMs: 25, msPerMiB: 20 },
  fetch: { fixedMs: 15, msPerMiB: 15 },
} as const;

export const modelledDurationMs = (job: 'produce' | 'fetch', bytes: number): number =>
  DURATION_MODEL[job].fixedMs + (DURATION_MODEL[job].msPerMiB * bytes) / 2 ** 20;
