/**
 * A Lambda trigger on the metadata table's stream that sees only partition state items (pk `P#…`,
 * sk `STATE`) as they are written: what wakes Connect sinks and Streams apps (connect-runtime.ts) and
 * waiting consumers (wait-socket.ts). With it, the least the mapping's poller needs, scoped to this
 * table's streams (CDK's grantStreamRead would add dynamodb:ListStreams on "*"), and the cdk-nag
 * acknowledgement of the one wildcard that scoping leaves.
 */
import { CfnElement, Stack, Validations } from 'aws-cdk-lib';
import type { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

export interface PartitionStateTriggerProps {
  table: dynamodb.ITable;
  target: lambda.IFunction;
  /** How long the poller gathers records before invoking (none: at once). */
  maxBatchingWindow?: Duration;
  /** Records older than this are dropped rather than delivered late. */
  maxRecordAge?: Duration;
  /** Where a batch that failed its retries is recorded. */
  onFailure?: lambda.IEventSourceDlq;
}

/** The event source mapping, its grants and the nag acknowledgement, on `scope` as `Trigger`. */
export const partitionStateTrigger = (
  scope: Construct,
  { table, target, maxBatchingWindow, maxRecordAge, onFailure }: PartitionStateTriggerProps,
): lambda.EventSourceMapping => {
  if (!table.tableStreamArn)
    throw new Error('a partition state trigger needs the metadata table to have a stream');
  const trigger = new lambda.EventSourceMapping(scope, 'Trigger', {
    target,
    eventSourceArn: table.tableStreamArn,
    startingPosition: lambda.StartingPosition.LATEST,
    batchSize: 1_000,
    ...(maxBatchingWindow ? { maxBatchingWindow } : {}),
    // A failed batch is tried twice more, then dropped (or sent to `onFailure`).
    retryAttempts: 2,
    ...(maxRecordAge ? { maxRecordAge } : {}),
    ...(onFailure ? { onFailure } : {}),
    bisectBatchOnError: false,
    parallelizationFactor: 1,
    filters: [
      lambda.FilterCriteria.filter({
        eventName: lambda.FilterRule.or('INSERT', 'MODIFY'),
        dynamodb: {
          Keys: {
            pk: { S: lambda.FilterRule.beginsWith('P#') },
            sk: { S: lambda.FilterRule.isEqual('STATE') },
          },
        },
      }),
    ],
  });
  iam.Grant.addToPrincipal({
    grantee: target,
    actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
    resourceArns: [table.tableStreamArn],
  });
  iam.Grant.addToPrincipal({
    grantee: target,
    actions: ['dynamodb:ListStreams'],
    resourceArns: [`${table.tableArn}/stream/*`],
  });
  const cfnTable = table.node.defaultChild;
  const principal: unknown = target.role;
  if (cfnTable instanceof CfnElement && Construct.isConstruct(principal)) {
    const logicalId = String(Stack.of(scope).resolve(cfnTable.logicalId));
    Validations.of(principal).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/stream/*]`,
      reason:
        "The mapping's poller lists the metadata table's streams (a stream's label is chosen by DynamoDB when it is enabled); the wildcard covers only this table's streams, with ListStreams only.",
    });
  }
  return trigger;
};
