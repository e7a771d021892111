/**
 * What Sluice's observability costs a month for a customer shape of bench/cost-model.ts: the EMF
 * custom metrics the functions emit (counted from the registry, lib/telemetry/registry.ts, by the
 * dimension values the shape produces), the EMF and log bytes ingested by CloudWatch Logs, the alarms
 * and dashboard of infra/monitoring.ts, and X-Ray's sampled traces. Pure: same inputs, same dollars
 * (test/unit/bench/cost-telemetry.test.ts).
 */
import type { Shape } from './cost-model.js';
import { SECONDS_PER_MONTH } from './cost-model.js';
import { OBSERVABILITY_PRICES } from './cost-prices.js';

const GiB = 2 ** 30;

/** How the shape's clients talk to Sluice (the assumptions the figures state). */
export interface ObservedWorkload {
  topics: number;
  /** Bytes per produce request and per fetch answer (the cost model's measured 1 MiB requests). */
  requestBytes: number;
  /** The Kafka APIs the clients call in a steady month (each is one RequestLatencyMs metric). */
  apis: readonly string[];
  replicationFactor: number;
  /** Groups with a lag alarm (sluice:lagAlarms). */
  lagAlarms: number;
  /** Functions of the deployment (an error-rate and a throttle alarm each). */
  functions: number;
  heartbeatIntervalMs: number;
  autoCommitIntervalMs: number;
  maintenanceIntervalSec: number;
  /** EMF and log bytes one request writes (measured by `npm run bench:telemetry`). */
  bytesPerRequest: number;
}

export const observedWorkload = (
  shape: Shape,
  bytesPerRequest: number,
  replicationFactor = 1,
): ObservedWorkload => ({
  topics: 1,
  requestBytes: 2 ** 20,
  apis: ['Produce', 'Fetch', 'ConsumerGroupHeartbeat', 'OffsetCommit', 'OffsetFetch', 'InitProducerId'],
  replicationFactor,
  lagAlarms: shape.consumerGroups,
  functions: 7,
  heartbeatIntervalMs: 5_000,
  autoCommitIntervalMs: 5_000,
  maintenanceIntervalSec: 60,
  bytesPerRequest,
});

export interface ObservabilityCost {
  /** Distinct metrics (name × dimension values) billed all month, by what they measure. */
  metrics: {
    topics: number;
    requests: number;
    partitions: number;
    lag: number;
    connect: number;
    total: number;
  };
  requestsPerMonth: number;
  logGiB: number;
  alarmMetrics: number;
  usd: { metrics: number; logs: number; alarms: number; dashboard: number; xray: number; total: number };
}

/**
 * Metrics that exist every hour of a steady month. Event metrics (ISR shrinks and expands, elections,
 * rebalances, errors) are billed only for the hours they are emitted in, which a healthy month has few
 * of; they are not counted. Connect's worker metrics are: the Connect runtime runs every minute.
 */
export const observabilityMonthly = (shape: Shape, w: ObservedWorkload): ObservabilityCost => {
  const p = OBSERVABILITY_PRICES;
  const topics = 3 * w.topics; // MessagesInPerSec, BytesInPerSec, BytesOutPerSec
  const requests = w.apis.length; // RequestLatencyMs per API
  // The three partition gauges, and MaxLag per store once a topic is replicated.
  const partitions = 3 + (w.replicationFactor > 1 ? w.replicationFactor : 0);
  // records-lag-max per group, and per group, topic and partition.
  const lag = shape.consumerGroups * (1 + shape.partitions);
  const connect = 5 + 1; // connector-count per state, all connectors' failed tasks
  const total = topics + requests + partitions + lag + connect;

  const ingressBytes = shape.ingressMiBPerSec * 2 ** 20 * SECONDS_PER_MONTH;
  const produces = ingressBytes / w.requestBytes;
  const fetches = produces * shape.consumerGroups;
  const members = shape.consumerGroups * shape.membersPerGroup;
  const groupCalls =
    members * SECONDS_PER_MONTH * (1000 / w.heartbeatIntervalMs + 1000 / w.autoCommitIntervalMs);
  const requestsPerMonth = produces + fetches + groupCalls;
  const runs = SECONDS_PER_MONTH / w.maintenanceIntervalSec;
  const logGiB = (requestsPerMonth * w.bytesPerRequest) / GiB;

  // infra/monitoring.ts: 3 partition alarms, produce p99, failed connectors (2 metrics), dead letters,
  // a lag alarm per configured group, and error rate (2 metrics) and throttles per function.
  const alarmMetrics = 3 + 1 + 2 + 1 + w.lagAlarms + w.functions * 3;
  // X-Ray's default rule: the first request each second, then 5% (of every invocation, runs included).
  const invocationsPerSec = (requestsPerMonth + 2 * runs) / SECONDS_PER_MONTH;
  const tracedPerSec = Math.min(1, invocationsPerSec) + 0.05 * Math.max(0, invocationsPerSec - 1);
  const usd = {
    metrics: total * p.customMetricPerMonth,
    logs: logGiB * p.logsIngestPerGiB,
    alarms: alarmMetrics * p.alarmMetricPerMonth,
    dashboard: p.dashboardPerMonth,
    xray: ((tracedPerSec * SECONDS_PER_MONTH) / 1e6) * p.xrayPerMillionTraces,
    total: 0,
  };
  usd.total = usd.metrics + usd.logs + usd.alarms + usd.dashboard + usd.xray;
  return {
    metrics: { topics, requests, partitions, lag, connect, total },
    requestsPerMonth,
    logGiB,
    alarmMetrics,
    usd,
  };
};
