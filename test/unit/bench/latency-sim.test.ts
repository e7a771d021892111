import { describe, expect, it } from 'vitest';
import { simulateProduceLatency } from '../../../bench/latency-sim.js';

describe('produce latency in simulated time under the express model (RF=3, acks=all, 1 MiB/s)', () => {
  it('acknowledges every message, and 5 requests in flight keep the p99 within 60 ms and below 1 in flight', async () => {
    const one = await simulateProduceLatency({ seconds: 2, maxInFlight: 1 });
    const five = await simulateProduceLatency({ seconds: 2, maxInFlight: 5 });
    for (const run of [one, five]) expect([run.messages, run.errors]).toEqual([2048, 0]);
    // One in flight: each lingered batch waits for the request before it, so batches are fewer and larger.
    expect(five.batches).toBeGreaterThan(one.batches);
    expect(five.publishMs.p50).toBeLessThan(one.publishMs.p50);
    expect(five.publishMs.p99).toBeLessThan(one.publishMs.p99);
    expect(five.publishMs.p99).toBeLessThanOrEqual(60);
    // Never below the linger and the fastest modelled PUT + commit.
    expect(five.publishMs.p50).toBeGreaterThan(5);
  }, 60_000);
});
