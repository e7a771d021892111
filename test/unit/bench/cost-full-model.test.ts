import { describe, expect, it } from 'vitest';
import { DURATION_MODEL } from '../../../bench/cost.js';
import type { Bill, Deployment, Shape } from '../../../bench/cost-model.js';
import {
  SHAPES,
  billTotal,
  counts,
  cpuExtraMs,
  deployment as deployedAt,
  orphanScanPeriodSec,
  residencyHours,
  sluiceMonthly,
  usdPerGiBWrittenAndReadOnce,
} from '../../../bench/cost-model.js';
import type { MeasuredUsage } from '../../../bench/cost-usage.js';

/**
 * The deployment the dollars below were worked out by hand for: the memory sizes at which
 * DURATION_MODEL's durations are given (DURATION_REFERENCE_MB), so no CPU stretch applies; the deployed
 * sizes' stretch is checked on its own at the end.
 */
const deployment = (replicationFactor: number, storeClass: 'standard' | 'express'): Deployment => ({
  ...deployedAt(replicationFactor, storeClass),
  memoryMb: { produce: 1024, fetch: 1024, groups: 512, maintenance: 1024 },
});

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** Round counts, so every expected dollar below can be worked out by hand. */
const usageAt = (replicas: number): MeasuredUsage => ({
  options: {
    partitions: 2,
    replicas,
    batchBytes: MiB,
    recordBytes: 1024,
    requestsPerPartition: 41,
    groups: 2,
  },
  requestBytes: MiB,
  records: 1000,
  batches: 1,
  produce: counts({ puts: replicas, putBytes: replicas * MiB, writeUnits: 2 }),
  fetch: counts({ gets: 1, getBytes: MiB, readUnits: 1 }),
  stateReadUnits: 1,
  heartbeat: counts({ writeUnits: 1, readUnits: 3 }),
  commitPerPartition: counts({ writeUnits: 2, readUnits: 1 }),
  // A run with no data (not priced: every shape has data between runs), and one of a topic in use: the
  // failed scan claim's write unit and 7 read units per partition; a scan: a LIST per store (per 1,000
  // objects) and 3 read units per partition.
  idleRun: {
    fixed: { replica: counts({}), segment: counts({}), metadata: counts({ writeUnits: 1 }) },
    perPartition: { replica: counts({}), segment: counts({}), metadata: counts({ readUnits: 2 }) },
  },
  steadyRun: {
    fixed: { replica: counts({}), segment: counts({}), metadata: counts({ writeUnits: 1 }) },
    perPartition: { replica: counts({}), segment: counts({}), metadata: counts({ readUnits: 7 }) },
  },
  orphanScan: {
    fixed: { replica: counts({ lists: replicas }), segment: counts({ lists: 1 }), metadata: counts({}) },
    perPartition: { replica: counts({}), segment: counts({}), metadata: counts({ readUnits: 3 }) },
    readUnitsPerIndexByte: 0,
  },
  rollPerGiB: {
    replica: counts({ gets: 1024, getBytes: GiB }),
    segment: counts({ puts: 64, putBytes: GiB }),
    metadata: counts({ writeUnits: 500, readUnits: 500 }),
  },
  retirePerGiB: {
    replica: counts({ lists: 32, deletes: 16 }),
    metadata: counts({ writeUnits: 64, readUnits: 256 }),
  },
  expirePerGiB: {
    segment: counts({ lists: 16, deletes: 16 }),
    metadata: counts({ writeUnits: 256, readUnits: 128 }),
  },
  indexBytesPerGiB: 50_000,
  pageBytesPerGiB: 0,
  readUnitsPerIndexByte: 0,
});

const shape: Shape = {
  name: '1 MiB/s',
  ingressMiBPerSec: 1,
  retentionHours: 168,
  consumerGroups: 2,
  partitions: 4,
  membersPerGroup: 1,
  recordBytes: 1024,
};

const expectBill = (actual: Bill, expected: Partial<Bill>, digits: number) => {
  for (const [k, v] of Object.entries({
    s3Requests: 0,
    s3Transfer: 0,
    s3Storage: 0,
    dynamodb: 0,
    dynamodbStorage: 0,
    lambdaRequests: 0,
    lambdaCompute: 0,
    apiGateway: 0,
    ...expected,
  }))
    expect(actual[k as keyof Bill], k).toBeCloseTo(v, digits);
};

describe('Lambda CPU share below a whole vCPU', () => {
  it('stretches only the CPU part of a duration, by the ratio of the CPU shares', () => {
    // 1,769 MB is a whole vCPU; the durations are given at 1,024 MB.
    expect(cpuExtraMs(10, 1024)).toBe(0);
    expect(cpuExtraMs(10, 512)).toBeCloseTo(10 * (1769 / 512 - 1769 / 1024), 12);
    expect(cpuExtraMs(10, 256)).toBeCloseTo(10 * (1769 / 256 - 1769 / 1024), 12);
    // From a whole vCPU up the share stops growing: the stretch is 1, below the reference's.
    expect(cpuExtraMs(10, 3008)).toBeCloseTo(10 * (1 - 1769 / 1024), 12);
  });

  it('prices the deployed sizes (produce 512 MB, fetch 256 MB) with their stretch', () => {
    const atReference = usdPerGiBWrittenAndReadOnce(deployment(1, 'standard'), usageAt(1), DURATION_MODEL);
    const deployed = usdPerGiBWrittenAndReadOnce(deployedAt(1, 'standard'), usageAt(1), DURATION_MODEL);
    expect(deployedAt(1, 'standard').memoryMb).toMatchObject({ produce: 512, fetch: 256, groups: 256 });
    // Everything but compute is the same; compute changes with memory and the stretch.
    expect({ ...deployed, lambdaCompute: 0 }).toEqual({ ...atReference, lambdaCompute: 0 });
    expect(deployed.lambdaCompute).not.toBeCloseTo(atReference.lambdaCompute, 6);
  });

  it('stretches the roll’s CPU part, and only that, at a maintenance size below 1,024 MB', () => {
    const at = (maintenance: number) =>
      usdPerGiBWrittenAndReadOnce(
        { ...deployment(1, 'standard'), memoryMb: { ...deployment(1, 'standard').memoryMb, maintenance } },
        usageAt(1),
        DURATION_MODEL,
      ).lambdaCompute;
    // The GiB's roll: 1,024 MiB × 20 ms at 1 GB, or × (20 ms + 11.6 ms of CPU stretched) at 0.5 GB,
    // at $0.0000133334 per GB-s.
    const roll = (gb: number, msPerMiB: number) => gb * ((1024 * msPerMiB) / 1000) * 0.0000133334;
    expect(at(512) - at(1024)).toBeCloseTo(
      roll(0.5, 20 + 11.6 * (1769 / 512 - 1769 / 1024)) - roll(1, 20),
      12,
    );
  });
});

describe('usdPerGiBWrittenAndReadOnce', () => {
  it('prices 1,024 produce and fetch requests of 1 MiB and the GiB’s roll, retirement and expiry', () => {
    const b = usdPerGiBWrittenAndReadOnce(deployment(1, 'standard'), usageAt(1), DURATION_MODEL);
    expectBill(
      b,
      {
        // 1,024 PUTs + 1,024 GETs; the roll's 1,024 GETs, 64 segment PUTs and 80 LISTs
        s3Requests: 0.00512 + 0.0004096 + 0.0009696,
        dynamodb: 0.00128 + 0.000128 + 0.000623,
        lambdaRequests: 0.0004096,
        // produce 45 ms, fetch 30 ms, roll 20 ms per MiB, all at 1 GB and $0.0000133334 per GB-s
        lambdaCompute: 0.000614403072 + 0.000409602048 + 0.000273068032,
        // 2 units (512 KB each) per MiB request, each way
        apiGateway: 0.004096,
      },
      12,
    );
    expect(billTotal(b)).toBeCloseTo(0.014332873152, 12);
  });

  it('charges Express One Zone per byte moved as well as per request', () => {
    const b = usdPerGiBWrittenAndReadOnce(deployment(3, 'express'), usageAt(3), DURATION_MODEL);
    // 3,072 PUTs at $0.00113 and 1,024 GETs at $0.00003 per 1,000; roll: 1,024 GETs + 32 LISTs on
    // Express, 64 PUTs + 16 LISTs on the Standard segment store
    expect(b.s3Requests).toBeCloseTo(
      (3072 * 0.00113 + 1024 * 0.00003 + 1024 * 0.00003 + 32 * 0.00113 + 80 * 0.005) / 1000,
      12,
    );
    // 3 GiB uploaded; 1 GiB fetched + 1 GiB read back by the roll
    expect(b.s3Transfer).toBeCloseTo(3 * 0.0032 + 2 * 0.0006, 12);
  });

  it('refuses counts measured at another replication factor', () => {
    expect(() => usdPerGiBWrittenAndReadOnce(deployment(3, 'standard'), usageAt(1), DURATION_MODEL)).toThrow(
      'counts measured at RF=1, priced at RF=3',
    );
  });
});

describe('sluiceMonthly', () => {
  // Priced with one long poll per partition (the SDK before issue 28), as these hand-worked figures are.
  const month = sluiceMonthly(
    shape,
    { ...deployment(1, 'standard'), longPollPer: 'partition' },
    usageAt(1),
    DURATION_MODEL,
  );

  it('produces 2,566.4 GiB a month at 1 MiB/s (730 hours)', () => {
    expect(month.gibPerMonth).toBeCloseTo(2566.40625, 10);
  });

  it('prices produce and the two groups’ reads per request', () => {
    expectBill(
      month.byActivity.produce,
      {
        s3Requests: 13.14,
        dynamodb: 3.285,
        lambdaRequests: 0.5256,
        lambdaCompute: 1.576807884,
        apiGateway: 5.256,
      },
      6,
    );
    expectBill(
      month.byActivity.consume,
      { s3Requests: 2.1024, dynamodb: 0.657, lambdaRequests: 1.0512, apiGateway: 10.512 },
      6,
    );
  });

  it('bills 8 long polls (2 groups × 4 partitions) for the whole month, reading the partition item every 100 ms', () => {
    // A batch every 4 s per partition: within the 5 s wait, so no poll comes back empty.
    expectBill(month.byActivity.consumerWaiting, { dynamodb: 26.0829, lambdaCompute: 280.3214016 }, 6);
  });

  it('prices heartbeats and auto-commits every 5 s per member', () => {
    expectBill(
      month.byActivity.groups,
      {
        dynamodb: 6.8328,
        lambdaRequests: 0.42048,
        // 2,102,400 calls × 0.5 GB × (20 ms + the 4.5 ms of CPU stretched at 512 MB against 1,024 MB:
        // 4.5 × (1769/512 − 1769/1024) ≈ 7.77 ms) at $0.0000133334 per GB-s
        lambdaCompute: 2_102_400 * 0.5 * ((20 + 4.5 * (1769 / 512 - 1769 / 1024)) / 1000) * 0.0000133334,
        apiGateway: 2.1024,
      },
      6,
    );
  });

  it('prices 43,800 maintenance runs, 730 of them scanning for orphans, and the work of 2,566 GiB', () => {
    // Replica copies stay 1 + 1/120 + 0.25 + 0.5 h: 6.18 GiB held per store = 6,330 objects (7 pages);
    // 590.7 GiB of segments = 37,806 segments (38 pages): 45 LISTs a scan, none on other runs. The
    // work: 1,024 GETs + 32 LISTs + 80 segment PUTs and LISTs per GiB.
    expectBill(
      month.byActivity.maintenance,
      {
        s3Requests: 2566.40625 * 0.0009696 + (45 * 730 * 0.005) / 1000,
        // the work's 820 WRU and 884 RRU per GiB; a claim per run; 28 RRU a run, 12 more a scan
        dynamodb: 2566.40625 * 0.000623 + 43_800 * 0.625e-6 + (43_800 * 28 + 730 * 12) * 0.125e-6,
        lambdaRequests: 0.00876,
        // rolls at 20 ms per MiB; a run 200 + 4 × 30 ms + 28 read units of index at 20 ms per MiB; a
        // scan 4 × 15 ms + 45 LIST pages × 30 ms + 12 read units
        lambdaCompute:
          ((2566.40625 * 1024 * 20 +
            43_800 * (200 + 120 + (20 * 28 * 4096) / MiB) +
            730 * (60 + 45 * 30 + (20 * 12 * 4096) / MiB)) /
            1000) *
          0.0000133334,
      },
      9,
    );
    expect(month.byActivity.maintenance.lambdaCompute).toBeCloseTo(0.902695138453125, 12);
  });

  it('prices the replica stores’ LISTs at Express rates and the segment store’s at Standard ones', () => {
    const express = sluiceMonthly(shape, deployment(3, 'express'), usageAt(3), DURATION_MODEL);
    // 21 replica pages (3 stores × 7) and 38 segment pages a scan; the GiB's roll reads 1 GiB back
    expect(express.byActivity.maintenance.s3Requests).toBeCloseTo(
      (2566.40625 * (1024 * 0.00003 + 32 * 0.00113 + 80 * 0.005) + 730 * (21 * 0.00113 + 38 * 0.005)) / 1000,
      9,
    );
    expect(express.byActivity.maintenance.s3Transfer).toBeCloseTo(2566.40625 * 0.0006, 6);
  });

  it('walks the index retention reads every run and the one the scan reads once an hour', () => {
    const walking = { ...usageAt(1), readUnitsPerIndexByte: 1 / 4096 };
    const base = usageAt(1);
    const scanning = { ...base, orphanScan: { ...base.orphanScan, readUnitsPerIndexByte: 1 / 4096 } };
    const a = sluiceMonthly(shape, deployment(1, 'standard'), base, DURATION_MODEL);
    const b = sluiceMonthly(shape, deployment(1, 'standard'), walking, DURATION_MODEL);
    const c = sluiceMonthly(shape, deployment(1, 'standard'), scanning, DURATION_MODEL);
    // 590.7 GiB of segments × 50,000 index bytes per GiB = 29.5 MB: 7,211 read units a walk
    const walk = (590.71484375 * 50_000) / 4096;
    expect(b.byActivity.maintenance.dynamodb - a.byActivity.maintenance.dynamodb).toBeCloseTo(
      (walk * 43_800 * 0.125) / 1e6,
      9,
    );
    expect(c.byActivity.maintenance.dynamodb - a.byActivity.maintenance.dynamodb).toBeCloseTo(
      (walk * 730 * 0.125) / 1e6,
      9,
    );
  });

  it('scans on every run at orphanScanIntervalSec 0, as before the hourly scan', () => {
    const d = { ...deployment(1, 'standard'), orphanScanIntervalSec: 0 };
    expect(orphanScanPeriodSec(d)).toBe(60);
    expect(orphanScanPeriodSec(deployment(1, 'standard'))).toBe(3600);
    // An interval between runs waits for the next whole run.
    expect(orphanScanPeriodSec({ ...d, orphanScanIntervalSec: 90 })).toBe(120);
    const every = sluiceMonthly(shape, d, usageAt(1), DURATION_MODEL);
    // 1 + 1/120 + 0.25 + 1/120 h held: 4.45 GiB = 4,560 objects (5 pages), 38 segment pages a run
    expect(residencyHours(shape, d).replica).toBeCloseTo(1 + 0.25 + 1 / 60, 12);
    expect(every.byActivity.maintenance.s3Requests).toBeCloseTo(
      2566.40625 * 0.0009696 + (43 * 43_800 * 0.005) / 1000,
      9,
    );
    expect(every.byActivity.maintenance.dynamodb).toBeCloseTo(
      2566.40625 * 0.000623 + 43_800 * 0.625e-6 + 43_800 * 40 * 0.125e-6,
      9,
    );
  });

  it('stores the replica copies for local retention plus grace, the segments for the retention', () => {
    // 6.181640625 GiB of replica copies and 590.71484375 GiB of segments at $0.023
    expectBill(month.byActivity.storage, { s3Storage: 13.728619140625, dynamodbStorage: 0.0068768258643 }, 9);
    // Before the hourly scan, 383.2169428: maintenance 15.3748918 → 5.3447337, storage +0.0397559
    // …and the groups' CPU stretched at 512 MB (above): +0.1089598885
    const groupsStretch = 2_102_400 * 0.5 * ((4.5 * (1769 / 512 - 1769 / 1024)) / 1000) * 0.0000133334;
    expect(month.total).toBeCloseTo(
      383.21694280078935 - 15.374891808075 + 5.344733732203125 + 0.039755859375 + groupsStretch,
      6,
    );
    expect(month.usdPerGiB).toBeCloseTo((373.2265405842925 + groupsStretch) / 2566.40625, 10);
  });

  it('prices RF=3 Express: three PUTs and uploads per request, three replica copies at Express prices', () => {
    const express = sluiceMonthly(shape, deployment(3, 'express'), usageAt(3), DURATION_MODEL);
    const requests = 2566.40625 * 1024;
    expect(express.byActivity.produce.s3Requests).toBeCloseTo((3 * requests * 0.00113) / 1000, 6);
    expect(express.byActivity.produce.s3Transfer).toBeCloseTo(3 * 2566.40625 * 0.0032, 6);
    const perHour = 2566.40625 / 730;
    const replicaHours = 1 + 1 / 120 + 0.25 + 0.5;
    expect(express.byActivity.storage.s3Storage).toBeCloseTo(
      perHour * replicaHours * 3 * 0.11 + perHour * (168 + 32 / 3600 + 1 / 60) * 0.023,
      9,
    );
  });

  it('counts the polls that time out when batches arrive further apart than the 5 s wait', () => {
    // 0.25 MiB/s over 4 partitions: a 1 MiB batch every 16 s per partition → 4 polls per batch.
    const slow = sluiceMonthly(
      { ...shape, ingressMiBPerSec: 0.25 },
      { ...deployment(1, 'standard'), longPollPer: 'member' },
      usageAt(1),
      DURATION_MODEL,
    );
    const fetches = 2 * ((2566.40625 / 4) * 1024);
    expect(slow.byActivity.consumerWaiting.lambdaRequests).toBeCloseTo((3 * fetches * 0.2) / 1e6, 9);
    expect(slow.byActivity.consumerWaiting.apiGateway).toBeCloseTo((3 * fetches) / 1e6, 9);
  });

  it('prices the what-if of one long poll per member at a quarter of the waiting here', () => {
    const perMember = sluiceMonthly(
      shape,
      { ...deployment(1, 'standard'), longPollPer: 'member' },
      usageAt(1),
      DURATION_MODEL,
    );
    expect(perMember.byActivity.consumerWaiting.lambdaCompute).toBeCloseTo(280.3214016 / 4, 6);
  });

  it('waits on the WebSocket by default: idle members cost their connection, a re-check every 5 minutes and a new socket every 2 hours', () => {
    expect(deployment(1, 'standard').longPollPer).toBe('websocket');
    // Next to nothing arrives: 2 members, 2,628,000 s. Re-checks 17,520 (an empty fetch each, naming
    // the connection: no frame), connections 730 (hello in and out), 87,600 connection minutes.
    const idle = sluiceMonthly(
      { ...shape, ingressMiBPerSec: 1e-9 },
      deployment(1, 'standard'),
      usageAt(1),
      DURATION_MODEL,
    );
    const api = idle.byActivity.consumerWaiting.apiGateway;
    expect(api).toBeCloseTo(17_520 / 1e6 + (2 * 730) / 1e6 + (87_600 * 0.25) / 1e6, 6);
    expect(idle.byActivity.consumerWaiting.lambdaCompute).toBeLessThan(0.01);
  });

  it('sends a member one frame a wake, at most as many wakes as stream batches, and writes a registration per partition a wake moved', () => {
    // Registering after every fetch (pacedFetchMs 0), as the SDK does below the pacing rate.
    const waiting = (ingressMiBPerSec: number) =>
      sluiceMonthly(
        { ...shape, ingressMiBPerSec },
        { ...deployment(1, 'standard'), pacedFetchMs: 0 },
        usageAt(1),
        DURATION_MODEL,
      ).byActivity.consumerWaiting;
    // Frames: wakes = 1 / (1/min(λ, 4) + busy) a member-second, so they grow with the rate up to the
    // stream's 4 batches a second and no further.
    expect(waiting(2).apiGateway).toBeLessThan(waiting(4).apiGateway);
    expect(waiting(64).apiGateway).toBeCloseTo(waiting(8).apiGateway, 9);
    // Past that, each wake's fetch has moved more partitions: more registrations, the same frames.
    expect(waiting(64).dynamodb).toBeGreaterThan(2 * waiting(8).dynamodb);
  });

  it('paces a member whose batches come at λ ≥ ln 20 / pacedFetchMs: only lulls register, each an empty fetch, a registering one and a frame per owned partition', () => {
    expect(deployment(1, 'standard').pacedFetchMs).toBe(500);
    const waiting = (ingressMiBPerSec: number, pacedFetchMs = 500) =>
      sluiceMonthly(
        { ...shape, ingressMiBPerSec },
        { ...deployment(1, 'standard'), pacedFetchMs },
        usageAt(1),
        DURATION_MODEL,
      ).byActivity.consumerWaiting;
    const month = 2_628_000;
    // Each of the 2 members (1 per group) gets 6.4 batches a second: 6.4 × 0.5 s = 3.2 ≥ ln 20, so it
    // fetches every 500 ms and e^−3.2 of those fetches find nothing.
    const lulls = ((2 * Math.exp(-3.2)) / 0.5) * month;
    const connects = (2 * month) / 7200;
    const paced = waiting(6.4);
    // Two empty fetches a lull (API requests), a frame per owned partition (4), the connections' hello
    // frames and minutes.
    expect(paced.apiGateway).toBeCloseTo((2 * lulls + 4 * lulls + 2 * connects + 87_600 * 0.25) / 1e6, 9);
    // The notifier's 4 invocations a second, the wait function thrice a connection, the empty fetches.
    expect(paced.lambdaRequests).toBeCloseTo(((4 * month + 3 * connects + 2 * lulls) * 0.2) / 1e6, 9);
    // Just below the rule (5.9 × 0.5 = 2.95 < ln 20) it registers after every fetch, as with pacing off.
    expect(billTotal(waiting(5.9))).toBeCloseTo(billTotal(waiting(5.9, 0)), 9);
    expect(billTotal(waiting(6.4))).toBeLessThan(billTotal(waiting(6.4, 0)) / 3);
    // Far above it, a lull almost never comes: the connections and the notifier are what is left.
    const busy = waiting(64);
    expect(busy.apiGateway).toBeCloseTo((2 * connects + 87_600 * 0.25) / 1e6, 9);
  });

  it('bills x86_64 at its own GB-s price', () => {
    const x86 = sluiceMonthly(
      shape,
      { ...deployment(1, 'standard'), architecture: 'x86_64' },
      usageAt(1),
      DURATION_MODEL,
    );
    expect(x86.byActivity.produce.lambdaCompute).toBeCloseTo(2566.40625 * 1024 * 0.045 * 0.0000166667, 6);
  });
});

describe('residencyHours', () => {
  it('keeps replica copies for local retention, or until the roll when that comes later, then until a scan', () => {
    const d = deployment(1, 'standard');
    // Retired at a run (half a minute on average), deleted by the first scan past the 15-minute
    // grace (half an hour on average).
    expect(residencyHours(shape, d).replica).toBeCloseTo(1 + 1 / 120 + 0.25 + 0.5, 12);
    // 1 KiB/s into one partition: a 16 MiB segment fills in 16,384 s, so the roll comes after an hour.
    const trickle = { ...shape, ingressMiBPerSec: 1 / 1024, partitions: 1 };
    const fill = 16_384 / 3600;
    expect(residencyHours(trickle, d).replica).toBeCloseTo(fill / 2 + 1 / 120 + 1 / 120 + 0.25 + 0.5, 12);
    expect(residencyHours(trickle, d).segment).toBeCloseTo(168 + fill / 2 + 1 / 60, 12);
  });

  it('rolls an open segment after segment.ms however little it holds', () => {
    const idle = { ...shape, ingressMiBPerSec: 1e-9, partitions: 1 };
    expect(residencyHours(idle, deployment(1, 'standard')).segment).toBeCloseTo(168 + 84 + 1 / 60, 9);
  });
});

describe('SHAPES', () => {
  it('are the issue’s three steady rates with 7-day retention and 2 groups', () => {
    expect(SHAPES.map((s) => [s.ingressMiBPerSec, s.partitions, s.membersPerGroup])).toEqual([
      [1, 4, 1],
      [10, 16, 2],
      [100, 64, 8],
    ]);
    for (const s of SHAPES)
      expect([s.retentionHours, s.consumerGroups, s.recordBytes]).toEqual([168, 2, 1024]);
  });
});
