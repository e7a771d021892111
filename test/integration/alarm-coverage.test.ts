/**
 * Every alarm of the synthesized stack that watches a Sluice metric watches one that the functions
 * actually emit, with the same dimension names: the alarms come from the CloudFormation template, the
 * emitted metrics from the EMF documents of a run of the real handlers on the local stack (produce,
 * fetch, a group's commit, a maintenance run, a Connect runtime tick), read back over HTTP. A renamed
 * metric, a dropped dimension or an emitter that stopped emitting leaves an alarm that can never fire,
 * and fails here.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sluiceApp } from '../infra/app.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

interface MetricRef {
  Namespace?: string;
  MetricName?: string;
  Dimensions?: { Name: string }[];
}
interface AlarmProps extends MetricRef {
  Metrics?: { MetricStat?: { Metric: MetricRef } }[];
}

/** `name [dim, dim]` with the dimension names sorted, as alarms and EMF documents both give them. */
const signature = (name: string, dimensions: readonly string[]): string =>
  `${name} [${[...dimensions].sort().join(', ')}]`;

/** What the alarms watch in the Sluice namespace. */
const watched = (): Map<string, string[]> => {
  const template = Template.fromStack(sluiceApp({ context: { 'sluice:lagAlarms': 'billing=100' } }).stack);
  const alarms = template.findResources('AWS::CloudWatch::Alarm') as Record<
    string,
    { Properties: AlarmProps }
  >;
  const out = new Map<string, string[]>();
  for (const [id, { Properties: alarm }] of Object.entries(alarms)) {
    const refs = [
      alarm,
      ...(alarm.Metrics ?? []).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : [])),
    ];
    for (const ref of refs) {
      if (ref.Namespace !== 'Sluice' || !ref.MetricName) continue;
      const key = signature(
        ref.MetricName,
        (ref.Dimensions ?? []).map((d) => d.Name),
      );
      out.set(key, [...(out.get(key) ?? []), id]);
    }
  }
  return out;
};

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stack.stop();
});

it('every alarm on a Sluice metric watches a metric and dimension set that a run of the functions emits', async () => {
  const alarms = watched();
  // The stack has alarms on Sluice metrics at all (partitions, lag, produce p99, connectors).
  expect(alarms.size).toBeGreaterThanOrEqual(6);

  expect((await t.call('POST', '/v1/topics', { name: 'orders', partitions: 2 })).status).toBe(201);
  const produced = await t.call('POST', '/v1/topics/orders/records', {
    records: [
      { key: 'a', value: 'one' },
      { key: 'b', value: 'two' },
    ],
  });
  expect(produced.status).toBe(200);
  expect((await t.call('GET', '/v1/topics/orders/partitions/0/records?offset=0')).status).toBe(200);
  const commit = await t.call('POST', '/v1/groups/billing/offsets', {
    offsets: [{ topic: 'orders', partition: 0, offset: 0 }],
  });
  expect(commit.status).toBe(200);
  await t.stack.runMaintenance();
  // One invocation of the Connect runtime, in this process (its telemetry goes to the same sink).
  const { handler: connectWorker } = await import('../../functions/connect-worker.js');
  await connectWorker();

  const r = await t.call('GET', '/_local/metrics');
  expect(r.status).toBe(200);
  type Doc = { _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[] } };
  const emitted = new Set<string>();
  for (const { document } of r.json.documents as { document: Doc }[]) {
    for (const directive of document._aws.CloudWatchMetrics)
      for (const dimensions of directive.Dimensions)
        for (const metric of directive.Metrics) emitted.add(signature(metric.Name, dimensions));
  }
  const unemitted = [...alarms]
    .filter(([key]) => !emitted.has(key))
    .map(([key, ids]) => `${key} (${ids.join(', ')})`);
  expect(unemitted).toEqual([]);
});
