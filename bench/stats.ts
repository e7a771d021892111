/**
 * Latency samples and rates for the benchmarks. Samples are kept whole (a run of minutes at a few
 * thousand requests per second fits easily), so percentiles are exact rather than bucketed.
 */

/** The value at quantile q (0..1) of ascending-sorted samples, by nearest rank; NaN when empty. */
export const quantile = (sorted: readonly number[], q: number): number => {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
};

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p75: number;
  p95: number;
  p99: number;
  p999: number;
  p9999: number;
  max: number;
}

export const summarize = (samples: readonly number[]): LatencySummary => {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.length === 0 ? Number.NaN : sorted.reduce((s, v) => s + v, 0) / sorted.length;
  return {
    count: sorted.length,
    mean,
    p50: quantile(sorted, 0.5),
    p75: quantile(sorted, 0.75),
    p95: quantile(sorted, 0.95),
    p99: quantile(sorted, 0.99),
    p999: quantile(sorted, 0.999),
    p9999: quantile(sorted, 0.9999),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
  };
};

/** Samples tagged with the time they were taken, for per-window reports. */
export class TimedSamples {
  readonly times: number[] = [];
  readonly values: number[] = [];

  add(at: number, value: number): void {
    this.times.push(at);
    this.values.push(value);
  }

  /** Values taken in [from, to). */
  between(from: number, to: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.times.length; i++)
      if (this.times[i]! >= from && this.times[i]! < to) out.push(this.values[i]!);
    return out;
  }
}

/** Rounds for reports: 3 significant decimals at most. */
export const round = (value: number, digits = 3): number =>
  Number.isFinite(value) ? Math.round(value * 10 ** digits) / 10 ** digits : value;
