import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

export interface ConnectRuntimeProps {
  /** The connect-worker function (functions/connect-worker.ts). */
  readonly handler: lambda.IFunction;
  /**
   * How often an invocation starts. Each runs every task for its budget (SLUICE_CONNECT_BUDGET_MS),
   * so with the defaults tasks run about 45 s of every minute.
   * @default Duration.minutes(1)
   */
  readonly interval?: Duration;
}

/**
 * Deploys a connector runtime: an EventBridge rule that invokes the connect-worker function on a
 * fixed rate, without retries (the next invocation resumes every task from its committed offsets;
 * a late retry would only contend for the leases). Overlapping invocations are safe: each task runs
 * under a lease, so a second invocation skips tasks the first still holds.
 */
export class ConnectRuntime extends Construct {
  readonly rule: events.Rule;
  private readonly handler: lambda.IFunction;

  constructor(scope: Construct, id: string, props: ConnectRuntimeProps) {
    super(scope, id);
    this.handler = props.handler;
    const interval = props.interval ?? Duration.minutes(1);
    const maxEventAge = Duration.seconds(Math.max(60, interval.toSeconds()));
    this.rule = new events.Rule(this, 'Rule', {
      description: 'Runs Sluice Connect tasks',
      schedule: events.Schedule.rate(interval),
    });
    this.rule.addTarget(new targets.LambdaFunction(props.handler, { retryAttempts: 0, maxEventAge }));
    props.handler.configureAsyncInvoke({ retryAttempts: 0, maxEventAge });
  }

  /** Lets the runtime's S3 sinks write objects into `bucket` (under `prefix`, default everything). */
  grantSinkBucket(bucket: s3.IBucket, prefix = '*'): iam.Grant {
    return bucket.grantPut(this.handler, prefix);
  }

  /**
   * Lets the runtime's DynamoDB Streams sources read `table`'s stream (ListStreams, DescribeStream,
   * GetShardIterator, GetRecords). The table must have a stream (for an imported table, give
   * `tableStreamArn`).
   */
  grantSourceTable(table: dynamodb.ITable): iam.Grant {
    return table.grantStreamRead(this.handler);
  }
}
