/**
 * The Connect runtime's data trigger in the template: the metadata table's stream, one
 * event source mapping into the connect-worker function filtered to partition state items, the
 * stream read permission, the schedule kept as the sources' clock and the sinks' safety net, and the
 * grant a Lambda sink needs to invoke its function.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SluiceStack } from '../../infra/sluice-stack.js';
import { sluiceApp } from './app.js';
import { allows, props, referencedId, resources, resourcesOfType, roleStatements } from './template.js';

let stack: SluiceStack;
let template: Template;
let workerId: string;
let tableId: string;

beforeAll(() => {
  stack = sluiceApp().stack;
  stack.connect.grantSinkFunction(
    lambda.Function.fromFunctionAttributes(stack, 'OrdersFn', {
      functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:orders',
      sameEnvironment: true,
    }),
  );
  template = Template.fromStack(stack);
  workerId = stack.getLogicalId(stack.functions.functions['connect-worker'].node.defaultChild as CfnElement);
  // The table's logical id is pinned (MetadataTable), not derived from the construct path.
  [[tableId]] = resourcesOfType(template, 'AWS::DynamoDB::Table') as [[string, unknown]];
}, 120_000);

describe('Connect data trigger', () => {
  it('streams the metadata table (the trigger reads only the keys; the wait notifier needs both images)', () => {
    expect(props(resources(template)[tableId]).StreamSpecification).toEqual({
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    });
  });

  it('maps the stream into the connect-worker function, filtered to partition state items', () => {
    // The other mapping on the stream is the wait notifier's (test/infra/wait-socket.test.ts).
    const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').filter(
      ([, m]) => referencedId(props(m).FunctionName) === workerId,
    );
    expect(mappings).toHaveLength(1);
    const mapping = props(mappings[0]![1]);
    expect(referencedId(mapping.FunctionName)).toBe(workerId);
    expect(mapping.EventSourceArn).toEqual({ 'Fn::GetAtt': [tableId, 'StreamArn'] });
    expect(mapping).toMatchObject({
      StartingPosition: 'LATEST',
      BatchSize: 1000,
      MaximumBatchingWindowInSeconds: 1,
      MaximumRetryAttempts: 2,
      BisectBatchOnFunctionError: false,
      ParallelizationFactor: 1,
    });
    const filters = (mapping.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
    expect(filters.map((f) => JSON.parse(f.Pattern) as unknown)).toEqual([
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: { Keys: { pk: { S: [{ prefix: 'P#' }] }, sk: { S: ['STATE'] } } },
      },
    ]);
  });

  it('lets the worker read the stream, and keeps the one-minute schedule', () => {
    const statements = roleStatements(
      template,
      referencedId(props(resources(template)[workerId]).Role) ?? '',
    );
    for (const action of ['dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:DescribeStream'])
      expect(allows(statements, action, tableId)).toBe(true);
    const rules = resourcesOfType(template, 'AWS::Events::Rule').filter(
      ([, r]) => props(r).Description === 'Runs Sluice Connect tasks',
    );
    expect(rules.map(([, r]) => props(r).ScheduleExpression)).toEqual(['rate(1 minute)']);
  });

  it('grantSinkFunction lets the worker invoke exactly that function', () => {
    const statements = roleStatements(
      template,
      referencedId(props(resources(template)[workerId]).Role) ?? '',
    );
    const invoke = statements.filter((s) => [s.Action].flat().includes('lambda:InvokeFunction'));
    expect(invoke.map((s) => s.Resource)).toEqual([
      [
        'arn:aws:lambda:us-east-1:123456789012:function:orders',
        'arn:aws:lambda:us-east-1:123456789012:function:orders:*',
      ],
    ]);
  });
});
