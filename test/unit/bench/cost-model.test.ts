import { describe, expect, it } from 'vitest';
import {
  PRICES,
  apiGatewayUnits,
  confluentBasic,
  kinesisOnDemand,
  modelledDurationMs,
  mskServerless,
  sluiceCost,
  sluicePerGiB,
} from '../../../bench/cost.js';

const MiB = 2 ** 20;

describe('sluiceCost', () => {
  it('prices each AWS dimension at the table’s rates', () => {
    const cost = sluiceCost({
      s3Puts: 2_000,
      s3Gets: 10_000,
      s3Lists: 1_000,
      dynamodbWriteUnits: 4_000_000,
      dynamodbReadUnits: 8_000_000,
      lambda: [
        { invocations: 1_000_000, memoryMb: 1024, totalDurationMs: 100_000_000 },
        { invocations: 500_000, memoryMb: 512, totalDurationMs: 10_000_000 },
      ],
      apiGatewayRequests: 3_000_000,
    });
    expect(cost.s3).toBeCloseTo(2 * 0.005 + 10 * 0.0004 + 0.005, 10);
    expect(cost.dynamodb).toBeCloseTo(4 * 0.625 + 8 * 0.125, 10);
    expect(cost.lambdaRequests).toBeCloseTo(1.5 * 0.2, 10);
    // 1 GB × 100,000 s + 0.5 GB × 10,000 s
    expect(cost.lambdaCompute).toBeCloseTo(105_000 * 0.0000133334, 8);
    expect(cost.apiGateway).toBeCloseTo(3, 10);
    expect(cost.total).toBeCloseTo(
      cost.s3 + cost.dynamodb + cost.lambdaRequests + cost.lambdaCompute + cost.apiGateway,
      10,
    );
  });
});

describe('apiGatewayUnits', () => {
  it('meters each call in 512 KB increments of its larger body, at least one', () => {
    expect(apiGatewayUnits(0, 0)).toBe(1);
    expect(apiGatewayUnits(512 * 1024, 100)).toBe(1);
    expect(apiGatewayUnits(512 * 1024 + 1, 100)).toBe(2);
    expect(apiGatewayUnits(200, MiB)).toBe(2);
    expect(apiGatewayUnits(4 * MiB, 0)).toBe(8);
  });
});

describe('sluicePerGiB', () => {
  const side = { requests: 1, s3Puts: 0, s3Gets: 0, writeUnits: 0, readUnits: 0, apiUnits: 1, durationMs: 0 };
  const counts = (batchBytes: number) => ({
    batchBytes,
    produce: {
      ...side,
      s3Puts: 1,
      writeUnits: 4,
      readUnits: 0.5,
      apiUnits: apiGatewayUnits(batchBytes, 0),
      durationMs: 50,
    },
    fetch: { ...side, requests: 1.5, s3Gets: 2, readUnits: 2, apiUnits: 2, durationMs: 30 },
  });

  it('scales per-batch counts by the batches a GiB takes', () => {
    const c = sluicePerGiB(counts(MiB));
    expect(c.batchesPerGiB).toBe(1024);
    expect(c.s3).toBeCloseTo((1024 * 0.005 + 2048 * 0.0004) / 1000, 12);
    expect(c.dynamodb).toBeCloseTo((1024 * 4 * 0.625 + 1024 * 2.5 * 0.125) / 1e6, 12);
    expect(c.apiGateway).toBeCloseTo((1024 * (2 + 2)) / 1e6, 12);
    expect(c.lambdaRequests).toBeCloseTo((1024 * 2.5 * 0.2) / 1e6, 12);
    expect(c.lambdaCompute).toBeCloseTo(1024 * 0.08 * PRICES.lambda.perGbSecond, 12);
  });

  it('costs less per GiB as batches grow, since every dimension but compute is per request', () => {
    const sizes = [64 * 1024, 256 * 1024, MiB, 4 * MiB];
    const totals = sizes.map((b) => sluicePerGiB(counts(b)).total);
    for (let i = 1; i < totals.length; i++) expect(totals[i]!).toBeLessThan(totals[i - 1]!);
    expect(sluicePerGiB(counts(64 * 1024)).s3 / sluicePerGiB(counts(MiB)).s3).toBeCloseTo(16, 10);
  });
});

describe('modelledDurationMs', () => {
  it('is a fixed part plus transfer time per MiB', () => {
    expect(modelledDurationMs('produce', 0)).toBe(25);
    expect(modelledDurationMs('produce', MiB)).toBe(45);
    expect(modelledDurationMs('fetch', 2 * MiB)).toBe(45);
  });
});

describe('managed services for the same traffic', () => {
  const traffic = { ingressMiBPerSec: 1, readFanout: 1, partitions: 4, recordBytes: 1024, topics: 1 };
  const gibPerHour = 3600 / 1024;

  it('Kinesis on-demand: stream-hours spread over the GiB of an hour, plus in and out per GiB', () => {
    const k = kinesisOnDemand(traffic);
    expect(k.perGiB).toBeCloseTo(0.08 + 0.04, 10);
    expect(k.usdPerGiB).toBeCloseTo(0.12 + 0.04 / gibPerHour, 10);
  });

  it('Kinesis rounds each record up to 1 KB, so small records cost more per byte', () => {
    const small = kinesisOnDemand({ ...traffic, recordBytes: 100 });
    expect(small.perGiB).toBeCloseTo(0.08 * 10.24 + 0.04, 8);
  });

  it('MSK Serverless: cluster and partition hours plus data in and out', () => {
    const m = mskServerless({ ...traffic, readFanout: 2 });
    expect(m.hourly).toBeCloseTo(0.75 + 4 * 0.0015, 10);
    expect(m.perGiB).toBeCloseTo(0.1 + 2 * 0.05, 10);
    expect(m.usdPerGiB).toBeCloseTo(0.2 + 0.756 / gibPerHour, 10);
  });

  it('Confluent Basic: the first eCKU is free, further ones are hourly', () => {
    expect(confluentBasic(traffic).usdPerGiB).toBeCloseTo(0.1, 10);
    expect(confluentBasic(traffic, 3).hourly).toBeCloseTo(0.28, 10);
  });

  it('hourly charges weigh less per GiB at higher throughput', () => {
    const slow = mskServerless({ ...traffic, ingressMiBPerSec: 0.1 }).usdPerGiB;
    const fast = mskServerless({ ...traffic, ingressMiBPerSec: 10 }).usdPerGiB;
    expect(slow).toBeGreaterThan(fast);
    expect(fast).toBeGreaterThan(0.15);
  });
});
