/**
 * The shared quota rate under concurrency, several instances and clock skew (test/support/quota-sim.ts):
 * a client offering ten times its quota is held within 10 % of it over a simulated minute, whether it
 * honours the throttle time or retries at once, and every throttled answer says how long to wait. A
 * planted per-instance bucket (each instance counting in a store of its own) must be caught.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { runQuotaSim } from '../support/quota-sim.js';

const held = (ratio: number) => Math.abs(ratio - 1) <= 0.1;

describe('client quota rate, simulated', () => {
  it.each([
    { seed: 11, instances: 1 },
    { seed: 12, instances: 3 },
    { seed: 13, instances: 4, skewMs: 150 },
    { seed: 14, instances: 3, compliant: false },
    { seed: 15, instances: 3, concurrency: 32 },
  ])(
    'seed $seed, $instances instances: holds the noisy client within 10 percent of its quota',
    async (options) => {
      const result = await runQuotaSim({ ...options, durationMs: 30_000 });
      expect(result.requests).toBeGreaterThan(200);
      expect(result.refused).toBeGreaterThan(0);
      expect(held(result.ratio)).toBe(true);
      // Every throttled answer carries the wait.
      expect(result.throttledWithDelay).toBe(result.throttledAnswers);
    },
  );

  it('catches a planted per-instance bucket (each instance counts in its own store)', async () => {
    const result = await runQuotaSim({
      seed: 21,
      instances: 3,
      durationMs: 30_000,
      rateStoreFor: () => new MemoryMetadataStore(),
    });
    expect(held(result.ratio)).toBe(false);
    expect(result.ratio).toBeGreaterThan(2.5);
  });
});
