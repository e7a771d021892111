/** Paced fetching's estimate and rule (sdk/fetch-pacing.ts), which the consumer and the cost model share. */
import { describe, expect, it } from 'vitest';
import { ArrivalRate, DEFAULT_PACED_FETCH_MS, PACED_EMPTY_CHANCE, paces } from '../../../sdk/fetch-pacing.js';

describe('paces', () => {
  it('paces where a fetch one interval later is empty at most 5 % of the time (rate × interval ≥ ln 20)', () => {
    expect(PACED_EMPTY_CHANCE).toBe(0.05);
    const edge = Math.log(20); // 2.9957…
    expect(paces(edge * 1.001, 1_000)).toBe(true);
    expect(paces(edge * 0.999, 1_000)).toBe(false);
    expect(paces(edge * 2.001, 500)).toBe(true);
    expect(paces(edge * 1.999, 500)).toBe(false);
  });

  it('never paces with pacing off, no rate, or a rate that is not a number', () => {
    expect(paces(1e9, 0)).toBe(false);
    expect(paces(0, DEFAULT_PACED_FETCH_MS)).toBe(false);
    expect(paces(Number.NaN, DEFAULT_PACED_FETCH_MS)).toBe(false);
    expect(paces(Number.POSITIVE_INFINITY, DEFAULT_PACED_FETCH_MS)).toBe(false);
  });
});

describe('ArrivalRate', () => {
  it('is batches over seconds between caught-up fetches, the recent windows weighing more', () => {
    const rate = new ArrivalRate();
    rate.observe(0, 0, true);
    expect(rate.perSecond).toBe(0);
    rate.observe(1_000, 4, true);
    expect(rate.perSecond).toBe(4);
    // Second window: 0 batches in 1 s; the first keeps 0.8 of its weight: (3.2 + 0) / (0.8 + 1).
    rate.observe(2_000, 0, true);
    expect(rate.perSecond).toBeCloseTo(3.2 / 1.8, 12);
    // Third: 10 batches in 0.5 s: (2.56 + 10) / (1.44 + 0.5).
    rate.observe(2_500, 10, true);
    expect(rate.perSecond).toBeCloseTo(12.56 / 1.94, 12);
  });

  it('does not count a backlog: a window counts only between two fetches that both reached the end', () => {
    const rate = new ArrivalRate();
    rate.observe(0, 500, false);
    rate.observe(10, 500, false);
    // Caught up now, but the window since the last fetch did not start at the end: nothing counts.
    rate.observe(20, 300, true);
    expect(rate.perSecond).toBe(0);
    rate.observe(1_020, 2, true);
    expect(rate.perSecond).toBe(2);
    // A fetch that stopped short breaks the chain: the next window does not count.
    rate.observe(1_030, 50, false);
    rate.observe(1_040, 50, true);
    expect(rate.perSecond).toBe(2);
  });

  it('forgets everything on reset, and ignores a window that does not move forward in time', () => {
    const rate = new ArrivalRate();
    rate.observe(0, 0, true);
    rate.observe(1_000, 5, true);
    rate.observe(1_000, 5, true);
    expect(rate.perSecond).toBe(5);
    rate.reset();
    expect(rate.perSecond).toBe(0);
    rate.observe(2_000, 9, true);
    expect(rate.perSecond).toBe(0);
  });
});
