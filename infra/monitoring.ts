/**
 * What an operator of Sluice watches: a CloudWatch dashboard and alarms over the metrics the
 * functions emit as EMF (lib/telemetry/registry.ts, Kafka's names) and Lambda's own, wired to an SNS
 * topic one can subscribe to, and the dead-letter queue failed scheduled runs and trigger batches go to.
 *
 * Every Sluice metric here is built by `sluiceMetric`, which takes a name and dimensions from the
 * registry and refuses a dimension set the registry does not define, so an alarm cannot watch a
 * metric nobody emits (test/integration/alarm-coverage.test.ts checks the synthesized alarms against
 * what a run of the functions emits).
 */
import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { DimensionName, MetricName } from '../lib/telemetry/registry.js';
import { METRICS, METRICS_NAMESPACE, METRICS_SERVICE, isDimensionSetOf } from '../lib/telemetry/registry.js';

/** The CloudWatch statistic of a registry statistic name. */
const STATISTIC: Record<string, string> = { Sum: 'Sum', Maximum: 'Maximum', Average: 'Average', p99: 'p99' };

/** A registry metric with these dimension values (exactly one of its dimension sets). */
export const sluiceMetric = (
  name: MetricName,
  dimensions: Partial<Record<DimensionName, string>> = {},
  options: { statistic?: string; period?: Duration; label?: string } = {},
): cloudwatch.Metric => {
  const definition = METRICS[name];
  if (!isDimensionSetOf(definition, Object.keys(dimensions)))
    throw new Error(`${name} has no dimension set [${Object.keys(dimensions).join(', ')}] in the registry`);
  return new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { service: METRICS_SERVICE, ...dimensions },
    statistic: options.statistic ?? STATISTIC[definition.statistic]!,
    period: options.period ?? Duration.minutes(1),
    unit: cloudwatch.Unit[unitKey(definition.unit)],
    ...(options.label ? { label: options.label } : {}),
  });
};

const unitKey = (unit: string): keyof typeof cloudwatch.Unit =>
  ({ Count: 'COUNT', Bytes: 'BYTES', Milliseconds: 'MILLISECONDS', 'Count/Second': 'COUNT_PER_SECOND' })[
    unit
  ] as keyof typeof cloudwatch.Unit;

/** A dashboard line per value of a dimension (per topic, per group …), found by CloudWatch's SEARCH. */
const searchOf = (name: MetricName, dimensions: readonly DimensionName[], statistic: string, label: string) =>
  new cloudwatch.MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},service,${dimensions.join(',')}} MetricName="${name}"', '${statistic}', 60)`,
    label,
    period: Duration.minutes(1),
  });

/** The dead-letter queue failed scheduled runs (maintenance, Connect) and Connect's trigger batches go to. */
export class DeadLetters extends Construct {
  readonly queue: sqs.Queue;
  /** For MaintenanceSchedule and ConnectRuntime's onFailure. */
  readonly onFailure: lambda.IDestination;
  readonly streamFailure: lambda.IEventSourceDlq;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.queue = new sqs.Queue(this, 'Queue', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is the dead-letter queue (of Lambda destinations and an event source mapping); it needs none of its own.',
    });
    this.onFailure = new destinations.SqsDestination(this.queue);
    this.streamFailure = new sources.SqsDlq(this.queue);
  }
}

export interface MonitoringProps {
  /** The functions by job, for their error rate and throttles (Lambda's own metrics). */
  readonly functions: Readonly<Record<string, lambda.Function>>;
  readonly deadLetters: DeadLetters;
  /** Subscribed to the alarm topic (it must confirm the subscription). @default none */
  readonly alarmEmail?: string;
  /** records-lag-max thresholds by group id: an alarm per group. @default none */
  readonly lagAlarms?: Readonly<Record<string, number>>;
  /** Produce p99 (RequestLatencyMs, API=Produce) above this many ms alarms. @default 1000 */
  readonly produceP99Ms?: number;
  /** A function whose errors are above this percentage of its invocations alarms. @default 5 */
  readonly errorRatePercent?: number;
  /**
   * X-Ray active tracing on the functions: functions/xray.ts then records each invocation with its
   * S3 and DynamoDB calls as subsegments (X-Ray's default sampling: one request a second and 5% more).
   * @default true
   */
  readonly tracing?: boolean;
}

export class Monitoring extends Construct {
  readonly topic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Alarms', { displayName: 'Sluice alarms', enforceSSL: true });
    Validations.of(this.topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'Alarm notifications carry alarm names and metric values only; CloudWatch cannot publish to a topic under the AWS managed key, and a customer managed key would cost more than the alarms.',
    });
    if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    if (props.tracing ?? true) for (const fn of Object.values(props.functions)) traceActively(fn);
    const action = new actions.SnsAction(this.topic);
    const alarm = (
      id: string,
      metric: cloudwatch.IMetric,
      threshold: number,
      description: string,
      options: { periods?: number } = {},
    ) => {
      const created = new cloudwatch.Alarm(this, id, {
        metric,
        threshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: options.periods ?? 3,
        datapointsToAlarm: options.periods ?? 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms.push(created);
      return created;
    };

    // Partitions (maintenance's gauges, once a minute): any for three minutes running.
    alarm(
      'UnderReplicatedPartitions',
      sluiceMetric('UnderReplicatedPartitions'),
      0,
      'Partitions with a store out of their ISR',
    );
    alarm(
      'UnderMinIsrPartitions',
      sluiceMetric('UnderMinIsrPartitionCount'),
      0,
      'Partitions refusing acks=all writes (ISR < min.insync.replicas)',
    );
    alarm(
      'OfflinePartitions',
      sluiceMetric('OfflinePartitionsCount'),
      0,
      'Partitions with no leader store that answers',
      { periods: 1 },
    );
    for (const [group, records] of Object.entries(props.lagAlarms ?? {})) {
      alarm(
        `ConsumerLag${alarmId(group)}`,
        sluiceMetric('records-lag-max', { group }, { period: Duration.minutes(5) }),
        records,
        `Consumer group ${group} more than ${records} records behind`,
      );
    }
    alarm(
      'ProduceP99',
      sluiceMetric('RequestLatencyMs', { API: 'Produce' }, { period: Duration.minutes(5) }),
      props.produceP99Ms ?? 1000,
      `Produce p99 above ${props.produceP99Ms ?? 1000} ms`,
    );
    alarm(
      'FailedConnectors',
      new cloudwatch.MathExpression({
        expression: 'FILL(connectors, 0) + FILL(tasks, 0)',
        usingMetrics: {
          connectors: sluiceMetric('connector-count', { state: 'FAILED' }),
          tasks: sluiceMetric('connector-failed-task-count'),
        },
        label: 'failed connectors and tasks',
        period: Duration.minutes(1),
      }),
      0,
      'A connector or a connector task in FAILED',
      { periods: 2 },
    );
    alarm(
      'DeadLetters',
      this.deadLetterMetric(props.deadLetters),
      0,
      'Failed maintenance or Connect runs in the dead-letter queue',
      { periods: 1 },
    );
    const errorRate = props.errorRatePercent ?? 5;
    for (const [job, fn] of Object.entries(props.functions)) {
      alarm(
        `ErrorRate${pascal(job)}`,
        new cloudwatch.MathExpression({
          expression: 'IF(invocations > 0, 100 * errors / invocations, 0)',
          usingMetrics: {
            errors: fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
            invocations: fn.metricInvocations({ period: Duration.minutes(5), statistic: 'Sum' }),
          },
          label: `${job} error %`,
          period: Duration.minutes(5),
        }),
        errorRate,
        `${job}: more than ${errorRate}% of invocations failed`,
        { periods: 1 },
      );
      alarm(
        `Throttles${pascal(job)}`,
        fn.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }),
        0,
        `${job}: invocations throttled (reserved or account concurrency reached)`,
        { periods: 1 },
      );
    }

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
      widgets: this.widgets(props),
    });
  }

  private deadLetterMetric(deadLetters: DeadLetters): cloudwatch.IMetric {
    return deadLetters.queue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
  }

  private widgets(props: MonitoringProps): cloudwatch.IWidget[][] {
    const graph = (title: string, left: cloudwatch.IMetric[], width = 8) =>
      new cloudwatch.GraphWidget({ title, left, width, height: 6 });
    return [
      [
        graph('Messages in per topic', [searchOf('MessagesInPerSec', ['topic'], 'Sum', 'messages')]),
        graph('Bytes in per topic', [searchOf('BytesInPerSec', ['topic'], 'Sum', 'bytes in')]),
        graph('Bytes out per topic', [searchOf('BytesOutPerSec', ['topic'], 'Sum', 'bytes out')]),
      ],
      [
        graph('Request latency p50 per API', [searchOf('RequestLatencyMs', ['API'], 'p50', 'p50')]),
        graph('Request latency p99 per API', [searchOf('RequestLatencyMs', ['API'], 'p99', 'p99')]),
        graph('Errors per API and code', [searchOf('ErrorsPerSec', ['API', 'error'], 'Sum', 'errors')]),
      ],
      [
        graph('Partitions', [
          sluiceMetric('UnderReplicatedPartitions'),
          sluiceMetric('UnderMinIsrPartitionCount'),
          sluiceMetric('OfflinePartitionsCount'),
        ]),
        graph('ISR changes and elections', [
          sluiceMetric('IsrShrinksPerSec'),
          sluiceMetric('IsrExpandsPerSec'),
          sluiceMetric('LeaderElectionRateAndTimeMs', {}, { statistic: 'SampleCount', label: 'elections' }),
        ]),
        graph('Follower lag per store (MaxLag)', [searchOf('MaxLag', ['store'], 'Maximum', 'max lag')]),
      ],
      [
        graph('Consumer lag per group (records-lag-max)', [
          searchOf('records-lag-max', ['group'], 'Maximum', 'lag'),
        ]),
        graph('Rebalances per group', [
          searchOf('RebalanceRateAndTimeMs', ['group'], 'SampleCount', 'rebalances'),
        ]),
        graph('Streams process-rate per application', [
          searchOf('process-rate', ['group'], 'Sum', 'records'),
        ]),
      ],
      [
        graph('Connectors per state', [searchOf('connector-count', ['state'], 'Maximum', 'connectors')]),
        graph('Failed tasks per connector', [
          searchOf('connector-failed-task-count', ['connector'], 'Maximum', 'failed'),
        ]),
        graph('Dead letters', [this.deadLetterMetric(props.deadLetters)]),
      ],
      [
        graph(
          'Function errors',
          Object.entries(props.functions).map(([job, fn]) =>
            fn.metricErrors({ label: job, statistic: 'Sum' }),
          ),
          12,
        ),
        graph(
          'Function throttles',
          Object.entries(props.functions).map(([job, fn]) =>
            fn.metricThrottles({ label: job, statistic: 'Sum' }),
          ),
          12,
        ),
      ],
      [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 })],
    ];
  }
}

/** Lambda's active tracing on a function built elsewhere, with the rights to send its segments. */
const traceActively = (fn: lambda.Function): void => {
  (fn.node.defaultChild as lambda.CfnFunction).tracingConfig = { mode: lambda.Tracing.ACTIVE };
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
      resources: ['*'],
    }),
  );
  Validations.of(fn.role!).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions (AWSXRayDaemonWriteAccess grants them on *).',
  });
};

const pascal = (job: string): string =>
  job.replace(/(^|-)([a-z])/g, (_, _dash: string, c: string) => c.toUpperCase());

/** A construct id from a group id or job name (letters and digits, with a hash for the rest). */
const alarmId = (name: string): string => {
  const clean = name.replace(/[^A-Za-z0-9]/g, '');
  let hash = 0;
  for (const c of name) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  return `${clean.slice(0, 40)}${clean === name ? '' : hash.toString(36)}`;
};
