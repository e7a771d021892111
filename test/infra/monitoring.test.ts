/** The dashboard, alarms, alarm topic, dead-letter queue and tracing of infra/monitoring.ts. */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { sluiceMetric } from '../../infra/monitoring.js';
import { sluiceApp } from './app.js';
import { props, resourcesOfType } from './template.js';

type Alarm = {
  AlarmDescription: string;
  MetricName?: string;
  Namespace?: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Statistic?: string;
  ExtendedStatistic?: string;
  Threshold: number;
  Metrics?: {
    Id: string;
    Expression?: string;
    MetricStat?: {
      Metric: { MetricName: string; Namespace: string; Dimensions?: { Name: string; Value: unknown }[] };
    };
  }[];
  AlarmActions: unknown[];
  OKActions: unknown[];
  EvaluationPeriods: number;
};

const JOBS = [
  'Admin',
  'Produce',
  'Fetch',
  'Groups',
  'Connect',
  'ConnectWorker',
  'Maintenance',
  'Wait',
  'WaitNotifier',
];

describe('monitoring', () => {
  let template: Template;
  let alarms: Record<string, Alarm>;

  beforeAll(() => {
    const { stack } = sluiceApp({
      context: {
        'sluice:alarmEmail': 'ops@example.com',
        'sluice:lagAlarms': 'billing=10000,audit.v2=500',
        'sluice:produceP99Ms': '250',
      },
    });
    template = Template.fromStack(stack);
    alarms = Object.fromEntries(
      resourcesOfType(template, 'AWS::CloudWatch::Alarm').map(([id, r]) => [id, props(r) as Alarm]),
    );
  });

  const alarmNamed = (prefix: string): Alarm => {
    const found = Object.entries(alarms).filter(([id]) =>
      new RegExp(`^Monitoring${prefix}[0-9A-F]{8}$`).test(id),
    );
    expect(found.map(([id]) => id)).toHaveLength(1);
    return found[0]![1];
  };

  it('alarms on the partition gauges, cluster-wide, from the Sluice namespace', () => {
    for (const [id, metric] of [
      ['UnderReplicatedPartitions', 'UnderReplicatedPartitions'],
      ['UnderMinIsrPartitions', 'UnderMinIsrPartitionCount'],
      ['OfflinePartitions', 'OfflinePartitionsCount'],
    ] as const) {
      const alarm = alarmNamed(id);
      expect(alarm).toMatchObject({
        MetricName: metric,
        Namespace: 'Sluice',
        Statistic: 'Maximum',
        Threshold: 0,
      });
      expect(alarm.Dimensions).toEqual([{ Name: 'service', Value: 'sluice' }]);
    }
  });

  it('alarms on each configured group lag above its threshold, and produce p99', () => {
    const billing = alarmNamed('ConsumerLagbilling');
    expect(billing).toMatchObject({ MetricName: 'records-lag-max', Threshold: 10000, Statistic: 'Maximum' });
    expect(billing.Dimensions).toEqual([
      { Name: 'group', Value: 'billing' },
      { Name: 'service', Value: 'sluice' },
    ]);
    const audit = alarmNamed('ConsumerLagauditv2[0-9a-z]+');
    expect(audit.Threshold).toBe(500);
    expect(audit.Dimensions).toContainEqual({ Name: 'group', Value: 'audit.v2' });
    const p99 = alarmNamed('ProduceP99');
    expect(p99).toMatchObject({ MetricName: 'RequestLatencyMs', ExtendedStatistic: 'p99', Threshold: 250 });
    expect(p99.Dimensions).toContainEqual({ Name: 'API', Value: 'Produce' });
  });

  it('alarms on every function error rate and throttles, failed connectors and dead letters', () => {
    for (const job of JOBS) {
      const rate = alarmNamed(`ErrorRate${job}`);
      expect(rate.Threshold).toBe(5);
      expect(rate.Metrics!.find((m) => m.Expression)!.Expression).toBe(
        'IF(invocations > 0, 100 * errors / invocations, 0)',
      );
      expect(
        rate
          .Metrics!.map((m) => m.MetricStat?.Metric.MetricName)
          .filter(Boolean)
          .sort(),
      ).toEqual(['Errors', 'Invocations']);
      expect(alarmNamed(`Throttles${job}`)).toMatchObject({
        MetricName: 'Throttles',
        Namespace: 'AWS/Lambda',
      });
    }
    const failed = alarmNamed('FailedConnectors');
    const stats = failed.Metrics!.filter((m) => m.MetricStat).map((m) => m.MetricStat!.Metric);
    expect(stats.map((m) => m.MetricName).sort()).toEqual(['connector-count', 'connector-failed-task-count']);
    expect(stats.find((m) => m.MetricName === 'connector-count')!.Dimensions).toContainEqual({
      Name: 'state',
      Value: 'FAILED',
    });
    expect(alarmNamed('DeadLetters')).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 0,
    });
  });

  it('sends every alarm and its recovery to the SNS topic, which the configured email subscribes to', () => {
    const topics = resourcesOfType(template, 'AWS::SNS::Topic').map(([id]) => id);
    expect(topics).toHaveLength(1);
    for (const alarm of Object.values(alarms)) {
      expect(alarm.AlarmActions).toEqual([{ Ref: topics[0] }]);
      expect(alarm.OKActions).toEqual([{ Ref: topics[0] }]);
    }
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: topics[0] },
    });
    template.hasOutput('AlarmTopic', { Value: { Ref: topics[0] } });
    // 3 partition alarms, 2 lag alarms, produce p99, failed connectors, dead letters, 2 per function.
    expect(Object.keys(alarms)).toHaveLength(3 + 2 + 1 + 1 + 1 + 2 * JOBS.length);
  });

  it('sends failed maintenance and Connect runs to the dead-letter queue', () => {
    const queues = resourcesOfType(template, 'AWS::SQS::Queue').map(([id]) => id);
    expect(queues).toHaveLength(1);
    const onFailure = {
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queues[0], 'Arn'] } } },
    };
    const configs = resourcesOfType(template, 'AWS::Lambda::EventInvokeConfig').map(([, r]) => props(r));
    expect(configs).toHaveLength(2);
    for (const config of configs) expect(config).toMatchObject(onFailure);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queues[0], 'Arn'] } } },
    });
  });

  it('traces every function actively, with the rights to send segments', () => {
    const functions = resourcesOfType(template, 'AWS::Lambda::Function').map(([, r]) => props(r));
    const sluice = functions.filter((f) => (f['Handler'] as string | undefined) === 'index.handler');
    expect(sluice.length).toBeGreaterThanOrEqual(JOBS.length);
    for (const fn of sluice) expect(fn['TracingConfig']).toEqual({ Mode: 'Active' });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], Resource: '*' }),
        ]),
      },
    });
  });

  it('draws a dashboard of the Kafka metrics', () => {
    const dashboards = resourcesOfType(template, 'AWS::CloudWatch::Dashboard').map(([, r]) => props(r));
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]!['DashboardBody']);
    for (const name of [
      'MessagesInPerSec',
      'BytesOutPerSec',
      'RequestLatencyMs',
      'records-lag-max',
      'IsrShrinksPerSec',
      'process-rate',
      'connector-count',
    ])
      expect(body).toContain(name);
  });

  it('refuses a metric with dimensions the registry does not define', () => {
    expect(() => sluiceMetric('MessagesInPerSec', { group: 'x' })).toThrow(/no dimension set \[group\]/);
    expect(() => sluiceMetric('records-lag-max', { group: 'x', topic: 't' })).toThrow(/no dimension set/);
    expect(sluiceMetric('records-lag-max', { group: 'x', topic: 't', partition: '0' }).metricName).toBe(
      'records-lag-max',
    );
  });

  it('refuses malformed alarm context', () => {
    expect(() => sluiceApp({ context: { 'sluice:lagAlarms': 'billing' } })).toThrow(/group=records pairs/);
    expect(() => sluiceApp({ context: { 'sluice:lagAlarms': 'billing=-1' } })).toThrow(/group=records pairs/);
    expect(() => sluiceApp({ context: { 'sluice:alarmEmail': 'not-an-address' } })).toThrow(/email address/);
    const untraced = Template.fromStack(sluiceApp({ context: { 'sluice:tracing': 'false' } }).stack);
    for (const fn of resourcesOfType(untraced, 'AWS::Lambda::Function').map(([, r]) => props(r)))
      expect(fn['TracingConfig']).toBeUndefined();
  });
});
