/**
 * What the managed services charge for the same traffic as a Sluice deployment: data in, data out per
 * consumer group, hourly charges, and (when a retention is given) the storage of what is kept. Prices
 * from bench/cost-prices.ts. "GB" is taken as GiB everywhere: Confluent says its GB is 2^30 bytes; for
 * AWS the 7 % difference is in the managed services' favour.
 */
import type { Prices } from './cost-prices.js';
import { PRICES } from './cost-prices.js';

/** AWS's month for hourly prices (730 hours). */
export const HOURS_PER_MONTH = 730;

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
  /** How long data is kept, hours. Absent: storage is left out (the comparison of moving data only). */
  retentionHours?: number;
}

export interface PerGiB {
  /** Dollars per GiB produced (and read `readFanout` times), hourly charges spread over the GiB of an hour. */
  usdPerGiB: number;
  hourly: number;
  /** Charges proportional to the bytes produced, storage for the retention included. */
  perGiB: number;
}

export const gibPerHour = (t: Traffic): number => (t.ingressMiBPerSec * 3600) / 1024;

const spread = (hourly: number, perGiB: number, t: Traffic): PerGiB => ({
  usdPerGiB: perGiB + hourly / gibPerHour(t),
  hourly,
  perGiB,
});

/** Dollars a month of this traffic costs at these per-GiB and hourly rates. */
export const perMonth = (p: PerGiB, t: Traffic): number =>
  (p.hourly + p.perGiB * gibPerHour(t)) * HOURS_PER_MONTH;

/** GiB-months stored per GiB produced, for data kept `hours`. */
const keptMonths = (hours: number): number => hours / HOURS_PER_MONTH;

/** Kinesis' default retention is 24 hours; beyond that, extended retention up to 7 days. */
const KINESIS_INCLUDED_HOURS = 24;
const KINESIS_EXTENDED_MAX_HOURS = 7 * 24;

export const kinesisOnDemand = (t: Traffic, prices: Prices = PRICES): PerGiB => {
  const p = prices.kinesisOnDemand;
  const hours = t.retentionHours ?? 0;
  if (hours > KINESIS_EXTENDED_MAX_HOURS)
    throw new RangeError('Kinesis long-term retention (beyond 7 days) is not priced here');
  const rounding = (Math.ceil(t.recordBytes / p.recordRoundingBytes) * p.recordRoundingBytes) / t.recordBytes;
  const retention = keptMonths(Math.max(0, hours - KINESIS_INCLUDED_HOURS)) * p.perGiBMonthExtendedRetention;
  return spread(
    p.perStreamHour * t.topics,
    p.perGiBIn * rounding + p.perGiBOut * t.readFanout + retention,
    t,
  );
};

export const mskServerless = (t: Traffic, prices: Prices = PRICES): PerGiB => {
  const p = prices.mskServerless;
  return spread(
    p.perClusterHour + p.perPartitionHour * t.partitions,
    p.perGiBIn + p.perGiBOut * t.readFanout + keptMonths(t.retentionHours ?? 0) * p.perGiBMonth,
    t,
  );
};

/** Assumed capacity of one eCKU (see PRICE_SOURCES: not published for Basic and Standard). */
export const ECKU_CAPACITY = { ingressMBps: 25, egressMBps: 75 } as const;

/** eCKUs the traffic needs at ECKU_CAPACITY (MB = 10^6 bytes, as Confluent's throughput limits). */
export const eckusFor = (t: Traffic): number => {
  const inMBps = (t.ingressMiBPerSec * 2 ** 20) / 1e6;
  return Math.max(
    1,
    Math.ceil(inMBps / ECKU_CAPACITY.ingressMBps),
    Math.ceil((inMBps * t.readFanout) / ECKU_CAPACITY.egressMBps),
  );
};

type ConfluentPlan = Prices['confluentBasic'] | Prices['confluentStandard'];

const confluent = (t: Traffic, plan: ConfluentPlan, eckus: number): PerGiB =>
  spread(
    plan.perEckuHour * Math.max(0, eckus - plan.freeEckus),
    plan.perGiBIn + plan.perGiBOut * t.readFanout + keptMonths(t.retentionHours ?? 0) * plan.perGiBMonth,
    t,
  );

/** Confluent Basic: the first eCKU is free; `eckus` defaults to what the traffic needs. */
export const confluentBasic = (t: Traffic, eckus = eckusFor(t), prices: Prices = PRICES): PerGiB =>
  confluent(t, prices.confluentBasic, eckus);

export const confluentStandard = (t: Traffic, eckus = eckusFor(t), prices: Prices = PRICES): PerGiB =>
  confluent(t, prices.confluentStandard, eckus);
