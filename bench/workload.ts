/**
 * A benchmark workload in the OpenMessaging Benchmark's terms (its workloads/*.yaml fields), plus the
 * client batching knobs a Sluice producer needs. `testDurationMinutes` is honoured unless the command
 * line gives `--duration` in seconds.
 */
import { readFile } from 'node:fs/promises';

export interface Workload {
  name: string;
  topics: number;
  partitionsPerTopic: number;
  /** Sluice: replica stores per partition (default 1); the target needs that many stores. */
  replicationFactor?: number;
  /** Bytes per message. */
  messageSize: number;
  subscriptionsPerTopic: number;
  consumerPerSubscription: number;
  producersPerTopic: number;
  /** Messages per second over all producers; 0 = as fast as the producers' in-flight limit allows. */
  producerRate: number;
  testDurationMinutes: number;
  /** Sluice producer: largest request (bytes of records), like Kafka's batch.size (default 1 MiB). */
  batchBytes?: number;
  /** Sluice producer: longest a message waits for its batch to fill, like linger.ms (default 5). */
  lingerMs?: number;
  /**
   * Sluice producer: requests in flight per partition, like max.in.flight.requests.per.connection
   * (default 1, as the earlier runs were measured; Kafka's default is 5).
   */
  maxInFlightRequests?: number;
  /** Sluice consumer: long-poll wait (default 1000). */
  maxWaitMs?: number;
}

const REQUIRED = [
  'topics',
  'partitionsPerTopic',
  'messageSize',
  'subscriptionsPerTopic',
  'consumerPerSubscription',
  'producersPerTopic',
  'producerRate',
  'testDurationMinutes',
] as const;

export const readWorkload = async (path: string): Promise<Workload> => {
  const raw = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  for (const field of REQUIRED) {
    if (typeof raw[field] !== 'number' || !Number.isFinite(raw[field]) || (raw[field] as number) < 0) {
      throw new Error(`${path}: ${field} must be a non-negative number`);
    }
  }
  if (typeof raw['name'] !== 'string') throw new Error(`${path}: name must be a string`);
  return raw as unknown as Workload;
};

export const withDefaults = (w: Workload): Required<Workload> => ({
  replicationFactor: 1,
  batchBytes: 1024 * 1024,
  lingerMs: 5,
  maxInFlightRequests: 1,
  maxWaitMs: 1_000,
  ...w,
});
