/**
 * Issue 24: `limitRatioFair` is the median of at least five interleaved A/B pairs with its spread, so
 * one noisy pair (a ratio of 1.054 in one run) cannot make the "limit" exceed its bound.
 */
import { describe, expect, it } from 'vitest';
import { MIN_PAIRS, pairOrder, summarizeRatios } from '../../../bench/ab-pairs.js';

describe('A/B pairs', () => {
  it('alternates which side runs first', () => {
    expect([0, 1, 2, 3, 4].map((i) => pairOrder(i).join(''))).toEqual(['AB', 'BA', 'AB', 'BA', 'AB']);
  });

  it('takes the median, not the pooled or a single ratio, and reports range and IQR', () => {
    const s = summarizeRatios([0.91, 1.054, 0.88, 0.9, 0.93]);
    expect(s.median).toBe(0.91);
    expect([s.min, s.max]).toEqual([0.88, 1.054]);
    expect(s.spread).toBeCloseTo(0.174, 10);
    expect(s.iqr).toBeCloseTo(0.93 - 0.9, 10);
    expect(s.pairs).toEqual([0.91, 1.054, 0.88, 0.9, 0.93]);
    expect(summarizeRatios([1, 2, 3, 4, 5, 6]).median).toBe(3.5);
  });

  it('refuses fewer than five pairs and ratios that are not numbers', () => {
    expect(MIN_PAIRS).toBe(5);
    expect(() => summarizeRatios([0.9, 0.9, 0.9, 0.9])).toThrow(/at least 5 A\/B pairs, got 4/);
    expect(() => summarizeRatios([0.9, 0.9, 0.9, 0.9, Number.NaN])).toThrow(/finite/);
  });
});
