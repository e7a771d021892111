/**
 * How the core reports what it does: log lines with the Kafka resource they concern, and metrics from
 * the registry (lib/telemetry/registry.ts). The Lambda adapter (functions/telemetry.ts) writes them
 * with Powertools for AWS Lambda (structured JSON logs, CloudWatch EMF metrics); the local stack
 * prints them readably and keeps the EMF for reading back; tests record them. The core never learns
 * which: it knows no Powertools, no Lambda and no CloudWatch.
 */
import type { DimensionsOf, MetricName } from '../telemetry/registry.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The Kafka resource a request or a step works on (every later line of it carries them). */
export interface ResourceKeys {
  /** Kafka's API name of the request (Produce, Fetch, ConsumerGroupHeartbeat …). */
  API?: string;
  topic?: string;
  partition?: number;
  group?: string;
  connector?: string;
  transactionalId?: string;
}

export interface Telemetry {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
  /** One value of a registry metric, with the values of exactly one of its dimension sets. */
  metric<N extends MetricName>(name: N, value: number, dimensions: DimensionsOf<N>): void;
  /** Names the resource of the current request, for its later log lines. */
  annotate(keys: ResourceKeys): void;
}

/** Reports nothing (the default of every component that takes a Telemetry). */
export const noTelemetry: Telemetry = {
  log: () => {},
  metric: () => {},
  annotate: () => {},
};
