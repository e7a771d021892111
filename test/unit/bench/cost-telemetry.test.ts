/** bench/cost-telemetry.ts: the metric count follows the shape's groups and partitions, and the dollars follow the prices. */
import { describe, expect, it } from 'vitest';
import { SHAPES } from '../../../bench/cost-model.js';
import { observabilityMonthly, observedWorkload } from '../../../bench/cost-telemetry.js';

describe('observability cost', () => {
  it('counts the metrics a steady month keeps: topics, APIs, gauges, lag per group and partition, Connect', () => {
    const shape = { ...SHAPES[0]!, partitions: 10, consumerGroups: 3 };
    const c = observabilityMonthly(shape, observedWorkload(shape, 500));
    expect(c.metrics).toEqual({ topics: 3, requests: 6, partitions: 3, lag: 3 * 11, connect: 6, total: 51 });
    expect(c.usd.metrics).toBeCloseTo(51 * 0.3, 10);
    const replicated = observabilityMonthly(shape, observedWorkload(shape, 500, 3));
    expect(replicated.metrics.partitions).toBe(6);
  });

  it('prices the EMF bytes as log ingestion and the alarms per metric they read', () => {
    const shape = SHAPES[0]!;
    const w = observedWorkload(shape, 1000);
    const c = observabilityMonthly(shape, w);
    expect(c.usd.logs).toBeCloseTo(((c.requestsPerMonth * 1000) / 2 ** 30) * 0.5, 6);
    // 3 partition alarms, p99, failed connectors (2), dead letters, 2 lag alarms, 7 functions × 3.
    expect(c.alarmMetrics).toBe(3 + 1 + 2 + 1 + 2 + 21);
    expect(c.usd.total).toBeCloseTo(c.usd.metrics + c.usd.logs + c.usd.alarms + 3 + c.usd.xray, 6);
    const doubled = observabilityMonthly(shape, observedWorkload(shape, 2000));
    expect(doubled.usd.logs).toBeCloseTo(2 * c.usd.logs, 6);
  });
});
