/**
 * Turns recorded samples into the OpenMessaging Benchmark's result document (its TestResult fields):
 * one entry per 10-second window for rates and latencies, then the aggregate over the whole test.
 * Latencies are milliseconds except publish delay, which OMB reports in microseconds.
 */
import type { ConsumerRecorder } from './omb-consumer.js';
import type { ProducerRecorder } from './omb-producer.js';
import type { TimedSamples } from './stats.js';
import { quantile, round } from './stats.js';

export const WINDOW_MS = 10_000;

const PERCENTILES = [
  ['50pct', 0.5],
  ['75pct', 0.75],
  ['95pct', 0.95],
  ['99pct', 0.99],
  ['999pct', 0.999],
  ['9999pct', 0.9999],
  ['99999pct', 0.99999],
] as const;

const QUANTILE_MAP = [1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100];

export type OmbResult = Record<string, unknown> & {
  publishRate: number[];
  consumeRate: number[];
  aggregatedPublishLatency99pct: number;
  aggregatedEndToEndLatency99pct: number;
};

interface Stats {
  Avg: number;
  Max: number;
  [pct: string]: number;
}

const statsOf = (values: number[], digits: number): Stats => {
  const sorted = values.sort((a, b) => a - b);
  const out: Stats = {
    Avg: sorted.length === 0 ? 0 : round(sorted.reduce((s, v) => s + v, 0) / sorted.length, digits),
    Max: sorted.length === 0 ? 0 : round(sorted[sorted.length - 1]!, digits),
  };
  for (const [name, q] of PERCENTILES)
    out[name] = sorted.length === 0 ? 0 : round(quantile(sorted, q), digits);
  return out;
};

const sum = (xs: number[]): number => xs.reduce((s, v) => s + v, 0);

export const buildResult = (options: {
  workload: string;
  driver: string;
  messageSize: number;
  topics: number;
  partitions: number;
  producersPerTopic: number;
  consumersPerTopic: number;
  startMs: number;
  endMs: number;
  producers: ProducerRecorder;
  consumers: ConsumerRecorder;
}): OmbResult => {
  const { startMs, endMs, producers, consumers } = options;
  const result: Record<string, unknown> = {
    workload: options.workload,
    driver: options.driver,
    messageSize: options.messageSize,
    topics: options.topics,
    partitions: options.partitions,
    producersPerTopic: options.producersPerTopic,
    consumersPerTopic: options.consumersPerTopic,
  };
  const series = (name: string) => (result[name] ??= []) as number[];
  const windowed = (prefix: string, samples: TimedSamples, from: number, to: number, digits: number) => {
    const s = statsOf(samples.between(from, to), digits);
    for (const [k, v] of Object.entries(s)) series(`${prefix}${k}`).push(v);
  };
  let published = 0;
  let consumed = 0;
  for (let from = startMs; from < endMs; from += WINDOW_MS) {
    const to = Math.min(endMs, from + WINDOW_MS);
    const seconds = (to - from) / 1000;
    const pub = sum(producers.published.between(from, to));
    const con = sum(consumers.consumed.between(from, to));
    published += pub;
    consumed += con;
    series('publishRate').push(round(pub / seconds, 1));
    series('publishErrorRate').push(round(sum(producers.errors.between(from, to)) / seconds, 1));
    series('consumeRate').push(round(con / seconds, 1));
    series('backlog').push(published - consumed);
    windowed('publishLatency', producers.publishLatency, from, to, 3);
    windowed('publishDelayLatency', producers.publishDelay, from, to, 0);
    windowed('endToEndLatency', consumers.endToEnd, from, to, 0);
  }
  const aggregate = (prefix: string, samples: TimedSamples, digits: number) => {
    const values = samples.between(startMs, Number.POSITIVE_INFINITY);
    for (const [k, v] of Object.entries(statsOf(values, digits))) result[`aggregated${prefix}${k}`] = v;
    result[`aggregated${prefix}Quantiles`] = Object.fromEntries(
      QUANTILE_MAP.map((p) => [
        p.toFixed(2),
        values.length === 0 ? 0 : round(quantile(values, p / 100), digits),
      ]),
    );
  };
  aggregate('PublishLatency', producers.publishLatency, 3);
  aggregate('PublishDelayLatency', producers.publishDelay, 0);
  aggregate('EndToEndLatency', consumers.endToEnd, 0);
  return result as OmbResult;
};
