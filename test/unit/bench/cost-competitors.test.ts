import { describe, expect, it } from 'vitest';
import {
  confluentBasic,
  confluentStandard,
  eckusFor,
  kinesisOnDemand,
  mskServerless,
  perMonth,
} from '../../../bench/cost-competitors.js';
import { PRICE_SOURCES, PRICES } from '../../../bench/cost-prices.js';

const week = {
  ingressMiBPerSec: 1,
  readFanout: 2,
  partitions: 4,
  recordBytes: 1024,
  topics: 1,
  retentionHours: 168,
};
const gibPerMonth = (1 * 730 * 3600) / 1024;

describe('managed services with 7 days of retention and two groups', () => {
  it('Kinesis on-demand bills extended retention for the 6 days past the first 24 hours', () => {
    const k = kinesisOnDemand(week);
    expect(k.perGiB).toBeCloseTo(0.08 + 2 * 0.04 + (144 / 730) * 0.1, 12);
    expect(perMonth(k, week)).toBeCloseTo(0.04 * 730 + gibPerMonth * (0.16 + (144 / 730) * 0.1), 8);
    expect(perMonth(k, week)).toBeCloseTo(490.45, 2);
  });

  it('Kinesis retention past 7 days is long-term retention, which is not priced here', () => {
    expect(() => kinesisOnDemand({ ...week, retentionHours: 169 })).toThrow(RangeError);
  });

  it('MSK Serverless stores the week at $0.10 per GiB-month beside cluster, partition and data charges', () => {
    const m = mskServerless(week);
    expect(m.hourly).toBeCloseTo(0.75 + 4 * 0.0015, 12);
    expect(m.perGiB).toBeCloseTo(0.1 + 2 * 0.05 + (168 / 730) * 0.1, 12);
    expect(perMonth(m, week)).toBeCloseTo(1124.25, 1);
  });

  it('Confluent needs one eCKU per 25 MB/s in or 75 MB/s out (MB = 10^6 bytes)', () => {
    expect(eckusFor(week)).toBe(1);
    // 100 MiB/s = 104.86 MB/s in → 5; out 209.7 MB/s → 3
    expect(eckusFor({ ...week, ingressMiBPerSec: 100 })).toBe(5);
    // 20 MiB/s = 20.97 MB/s in → 1; read by 8 groups, 167.8 MB/s out → 3
    expect(eckusFor({ ...week, ingressMiBPerSec: 20, readFanout: 8 })).toBe(3);
  });

  it('Confluent Basic: first eCKU free; Standard: every eCKU billed, cheaper storage', () => {
    const fast = { ...week, ingressMiBPerSec: 100 };
    expect(confluentBasic(fast).hourly).toBeCloseTo(4 * 0.14, 12);
    expect(confluentStandard(fast).hourly).toBeCloseTo(5 * 0.75, 12);
    expect(confluentBasic(week).perGiB).toBeCloseTo(0.05 + 2 * 0.05 + (168 / 730) * 0.08, 12);
    expect(confluentStandard(week).perGiB).toBeCloseTo(0.05 + 2 * 0.05 + (168 / 730) * 0.03, 12);
    expect(perMonth(confluentStandard(week), week)).toBeCloseTo(
      547.5 + gibPerMonth * (0.15 + (168 / 730) * 0.03),
      8,
    );
  });

  it('without a retention, storage stays out (the moving-data comparison of the OMB report)', () => {
    const { retentionHours: _kept, ...moving } = week;
    expect(kinesisOnDemand(moving).perGiB).toBeCloseTo(0.16, 12);
    expect(mskServerless(moving).perGiB).toBeCloseTo(0.2, 12);
  });
});

describe('PRICE_SOURCES', () => {
  it('names a source and a basis for every price, read on the table’s date', () => {
    expect(PRICE_SOURCES.length).toBe(18);
    for (const s of PRICE_SOURCES) {
      expect(s.read).toBe(PRICES.readOn);
      expect(s.source.length).toBeGreaterThan(20);
      expect(['primary', 'secondary', 'assumption']).toContain(s.basis);
    }
    expect(PRICE_SOURCES.filter((s) => s.basis === 'assumption').map((s) => s.item)).toEqual([
      'S3 Express One Zone LIST',
      'Kinesis on-demand data out (shared-throughput consumers)',
      'Confluent eCKUs needed',
    ]);
  });
});
