/**
 * ConnectRuntime's grants for connectors, on a small stack of their own: a DynamoDB Streams source's
 * table grant gives the connect-worker function exactly the four Streams reads, on that table's
 * stream, and refuses a table without a stream at synth time.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { ConnectRuntime } from '../../infra/constructs/connect-runtime.js';

const runtimeStack = () => {
  const stack = new Stack(new App(), 'ConnectGrants');
  const handler = new lambda.Function(stack, 'Worker', {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('export const handler = async () => {};'),
  });
  return { stack, runtime: new ConnectRuntime(stack, 'Connect', { handler }) };
};

describe('ConnectRuntime.grantSourceTable', () => {
  it('grants the DynamoDB Streams reads on the table’s stream, and ListStreams', () => {
    const { stack, runtime } = runtimeStack();
    const table = new dynamodb.Table(stack, 'Orders', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    });
    runtime.grantSourceTable(table);
    const tableId = stack.getLogicalId(table.node.defaultChild as dynamodb.CfnTable);
    const policies = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'));
    expect(policies).toHaveLength(1);
    const statements = (policies[0] as { Properties: { PolicyDocument: { Statement: unknown[] } } })
      .Properties.PolicyDocument.Statement;
    expect(statements).toEqual([
      { Action: 'dynamodb:ListStreams', Effect: 'Allow', Resource: '*' },
      {
        Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [tableId, 'StreamArn'] },
      },
    ]);
  });

  it('refuses a table without a stream', () => {
    const { stack, runtime } = runtimeStack();
    const table = new dynamodb.Table(stack, 'NoStream', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    });
    expect(() => runtime.grantSourceTable(table)).toThrow(/stream/i);
  });
});
