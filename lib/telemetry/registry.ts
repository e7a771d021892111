/**
 * Every metric Sluice emits, in one table: its name (Kafka's, where Kafka has one), unit, dimension
 * sets and what it means. The functions emit only names from here (the Telemetry port is typed by
 * it), and the CDK app builds its dashboard and alarms from the same entries, so an alarm cannot name
 * a metric or a dimension nobody emits. Pure data: imported by lib/core, functions/ and infra/.
 *
 * Cardinality (each distinct set of dimension values is one CloudWatch custom metric, billed per
 * month): the per-topic metrics grow with topics, not partitions; the only per-partition metric is
 * records-lag-max's (group, topic, partition) set, emitted by maintenance once per run for the
 * partitions a group has committed offsets on. Request metrics have one value per Kafka API (and per
 * error code for ErrorsPerSec); replication metrics are cluster-wide, or per store (a handful).
 * bench/cost-model.ts counts them for a workload (docs/cost.md).
 */

/** The CloudWatch namespace of every Sluice metric. */
export const METRICS_NAMESPACE = 'Sluice';
/**
 * Powertools adds a `service` dimension to every metric; it is this one constant, so it adds no
 * cardinality (the function that emitted a point is in the log line, not in the metric's identity).
 */
export const METRICS_SERVICE = 'sluice';

/** CloudWatch's units, as EMF spells them. */
export type MetricUnit = 'Count' | 'Bytes' | 'Milliseconds' | 'Count/Second';

/** Dimension names, Kafka's tag names where Kafka has them. */
export type DimensionName =
  'topic' | 'partition' | 'group' | 'store' | 'API' | 'error' | 'connector' | 'state';

/** Which functions emit a metric (the alarm-coverage test runs them and checks). */
export type Emitter = 'http' | 'maintenance' | 'connect-worker' | 'streams';

export interface MetricDefinition {
  readonly name: string;
  readonly unit: MetricUnit;
  /** Each set is one CloudWatch metric per distinct combination of values; [] is cluster-wide. */
  readonly dimensionSets: readonly (readonly DimensionName[])[];
  /** The statistic a dashboard or alarm reads it with. */
  readonly statistic: 'Sum' | 'Maximum' | 'Average' | 'p99';
  readonly emittedBy: Emitter;
  /** What it counts, in Kafka's words. */
  readonly description: string;
}

const define = <const T extends Record<string, Omit<MetricDefinition, 'name'>>>(
  table: T,
): { readonly [K in keyof T]: T[K] & { readonly name: K } } =>
  Object.fromEntries(Object.entries(table).map(([name, def]) => [name, { ...def, name }])) as {
    readonly [K in keyof T]: T[K] & { readonly name: K };
  };

export const METRICS = define({
  MessagesInPerSec: {
    unit: 'Count',
    dimensionSets: [['topic']],
    statistic: 'Sum',
    emittedBy: 'http',
    description: 'Records appended (kafka.server:type=BrokerTopicMetrics); Sum per period / period = rate',
  },
  BytesInPerSec: {
    unit: 'Bytes',
    dimensionSets: [['topic']],
    statistic: 'Sum',
    emittedBy: 'http',
    description: 'Record batch bytes appended',
  },
  BytesOutPerSec: {
    unit: 'Bytes',
    dimensionSets: [['topic']],
    statistic: 'Sum',
    emittedBy: 'http',
    description: 'Record bytes returned by fetches',
  },
  RequestLatencyMs: {
    unit: 'Milliseconds',
    dimensionSets: [['API']],
    statistic: 'p99',
    emittedBy: 'http',
    description:
      "Time in the function per request, per Kafka API (Kafka's RequestMetrics TotalTimeMs); p50/p99 are CloudWatch percentiles over the EMF values",
  },
  ErrorsPerSec: {
    unit: 'Count',
    dimensionSets: [['API', 'error']],
    statistic: 'Sum',
    emittedBy: 'http',
    description:
      'Requests answered with an error, per API and Kafka error code (RequestMetrics ErrorsPerSec)',
  },
  UnderReplicatedPartitions: {
    unit: 'Count',
    dimensionSets: [[]],
    statistic: 'Maximum',
    emittedBy: 'maintenance',
    description: 'Partitions whose ISR is smaller than their replica set, at the last maintenance run',
  },
  UnderMinIsrPartitionCount: {
    unit: 'Count',
    dimensionSets: [[]],
    statistic: 'Maximum',
    emittedBy: 'maintenance',
    description: 'Partitions whose ISR is smaller than min.insync.replicas (acks=all writes are refused)',
  },
  OfflinePartitionsCount: {
    unit: 'Count',
    dimensionSets: [[]],
    statistic: 'Maximum',
    emittedBy: 'maintenance',
    description: 'Partitions whose leader store does not answer and no in-sync store can take over',
  },
  IsrShrinksPerSec: {
    unit: 'Count',
    dimensionSets: [[]],
    statistic: 'Sum',
    emittedBy: 'maintenance',
    description: 'Stores removed from an ISR (failed or lagging past replica.lag.time.max.ms)',
  },
  IsrExpandsPerSec: {
    unit: 'Count',
    dimensionSets: [[]],
    statistic: 'Sum',
    emittedBy: 'maintenance',
    description: 'Stores that caught up and rejoined an ISR',
  },
  LeaderElectionRateAndTimeMs: {
    unit: 'Milliseconds',
    dimensionSets: [[]],
    statistic: 'Maximum',
    emittedBy: 'maintenance',
    description: 'Leader elections and how long each took (SampleCount = elections)',
  },
  MaxLag: {
    unit: 'Count',
    dimensionSets: [['store']],
    statistic: 'Maximum',
    emittedBy: 'maintenance',
    description:
      "Largest number of records a follower store is behind its partition's leader (ReplicaFetcherManager MaxLag), per store",
  },
  'records-lag-max': {
    unit: 'Count',
    dimensionSets: [['group'], ['group', 'topic', 'partition']],
    statistic: 'Maximum',
    emittedBy: 'maintenance',
    description:
      "A group's committed offset behind the high watermark: the largest over its partitions, and per partition",
  },
  RebalanceRateAndTimeMs: {
    unit: 'Milliseconds',
    dimensionSets: [['group']],
    statistic: 'Maximum',
    emittedBy: 'http',
    description:
      "Rebalances (a heartbeat that computed a new target assignment: SampleCount = rebalances) and the coordinator's time for that step (read, assign, conditional write, retries)",
  },
  'connector-count': {
    unit: 'Count',
    dimensionSets: [['state']],
    statistic: 'Maximum',
    emittedBy: 'connect-worker',
    description: 'Connectors per state (RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED)',
  },
  'connector-running-task-count': {
    unit: 'Count',
    dimensionSets: [['connector']],
    statistic: 'Maximum',
    emittedBy: 'connect-worker',
    description: "A connector's tasks in RUNNING",
  },
  'connector-failed-task-count': {
    unit: 'Count',
    dimensionSets: [['connector'], []],
    statistic: 'Maximum',
    emittedBy: 'connect-worker',
    description: "A connector's tasks in FAILED, and all connectors' together",
  },
  'connector-paused-task-count': {
    unit: 'Count',
    dimensionSets: [['connector']],
    statistic: 'Maximum',
    emittedBy: 'connect-worker',
    description: "A connector's tasks in PAUSED",
  },
  'sink-record-read-total': {
    unit: 'Count',
    dimensionSets: [['connector']],
    statistic: 'Sum',
    emittedBy: 'connect-worker',
    description: 'Records a sink connector read (Connect sink-task-metrics)',
  },
  'source-record-write-total': {
    unit: 'Count',
    dimensionSets: [['connector']],
    statistic: 'Sum',
    emittedBy: 'connect-worker',
    description: 'Records a source connector wrote (Connect source-task-metrics)',
  },
  'process-rate': {
    unit: 'Count',
    dimensionSets: [['group']],
    statistic: 'Sum',
    emittedBy: 'streams',
    description:
      "Records a Streams application's function processed, per application id (its group) and run (Kafka Streams' process-total; Sum / period = process-rate)",
  },
});

export type MetricName = keyof typeof METRICS;

type DimensionsOfSet<S> = S extends readonly (infer D extends DimensionName)[]
  ? { readonly [K in D]: string | number }
  : never;

/** The dimensions of one point: the values of exactly one of the metric's dimension sets. */
export type DimensionsOf<N extends MetricName> = DimensionsOfSet<
  (typeof METRICS)[N]['dimensionSets'][number]
>;

export const METRIC_NAMES = Object.keys(METRICS) as MetricName[];

/** The definition of a metric name, or undefined for a name that is not in the registry. */
export const metricDefinition = (name: string): MetricDefinition | undefined =>
  Object.hasOwn(METRICS, name) ? (METRICS as Record<string, MetricDefinition>)[name] : undefined;

/** Whether `keys` (dimension names of a point) is exactly one of the metric's dimension sets. */
export const isDimensionSetOf = (definition: MetricDefinition, keys: readonly string[]): boolean =>
  definition.dimensionSets.some((set) => set.length === keys.length && set.every((d) => keys.includes(d)));
