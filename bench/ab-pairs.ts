/**
 * A ratio of two throughputs measured under noise (a shared machine, other engineers' tests): one
 * A/B pair is not an upper bound (a single pair of `limitRatioFair` came out at 1.054). Measure it as
 * interleaved pairs, A then B and B then A in turn so a drift in the machine's load cancels, and
 * report the median ratio with its spread.
 */

export const MIN_PAIRS = 5;

/** Which side runs first in pair `i`: A then B, then B then A, and so on. */
export const pairOrder = (i: number): readonly ['A', 'B'] | readonly ['B', 'A'] =>
  i % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const);

export interface RatioSummary {
  /** The median of the pairs' ratios A/B. */
  median: number;
  min: number;
  max: number;
  /** max − min, and the interquartile range (Tukey's hinges are overkill at five; linear quantiles). */
  spread: number;
  iqr: number;
  pairs: number[];
}

const quantile = (sorted: readonly number[], q: number): number => {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
};

/** The median of at least MIN_PAIRS ratios, with their range and interquartile range. */
export const summarizeRatios = (ratios: readonly number[]): RatioSummary => {
  if (ratios.length < MIN_PAIRS)
    throw new Error(`need at least ${MIN_PAIRS} A/B pairs, got ${ratios.length}`);
  if (ratios.some((r) => !Number.isFinite(r) || r < 0))
    throw new Error(`ratios must be finite and ≥ 0: ${ratios.join(', ')}`);
  const sorted = [...ratios].sort((a, b) => a - b);
  return {
    median: quantile(sorted, 0.5),
    min: sorted[0]!,
    max: sorted.at(-1)!,
    spread: sorted.at(-1)! - sorted[0]!,
    iqr: quantile(sorted, 0.75) - quantile(sorted, 0.25),
    pairs: [...ratios],
  };
};
