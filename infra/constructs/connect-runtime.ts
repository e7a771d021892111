import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { partitionStateTrigger } from './partition-state-trigger.js';

export interface ConnectRuntimeProps {
  /** The connect-worker function (functions/connect-worker.ts). */
  readonly handler: lambda.IFunction;
  /**
   * How often an invocation starts. Each runs every source task for its budget
   * (SLUICE_CONNECT_BUDGET_MS), and the sink tasks whose topics have unread records.
   * @default Duration.minutes(1)
   */
  readonly interval?: Duration;
  /**
   * The metadata table, with a stream (any view type: only the keys are read). When given, changes to
   * its partition state items invoke the function, which runs the sinks that consume those topics:
   * sinks are triggered by new data, and the schedule is only their safety net.
   * @default no data trigger: sinks run on the schedule alone
   */
  readonly metadataTable?: dynamodb.ITable;
  /**
   * How long the trigger gathers partition changes before it invokes (MaximumBatchingWindowInSeconds):
   * the delay a sink may add to new data, against one invocation per window per stream shard while
   * partitions are written.
   * @default Duration.seconds(1)
   */
  readonly triggerBatchingWindow?: Duration;
  /** Where failed invocations go: scheduled ones (their event) and trigger batches given up on. @default none */
  readonly deadLetters?: {
    readonly onFailure: lambda.IDestination;
    readonly streamFailure: lambda.IEventSourceDlq;
  };
}

/**
 * Deploys a connector runtime: an EventBridge rule that invokes the connect-worker function on a
 * fixed rate, without retries (the next invocation resumes every task from its committed offsets;
 * a late retry would only contend for the leases), and, with the metadata table, a DynamoDB Streams
 * event source filtered to partition state items (`pk` beginning `P#`, `sk` = `STATE`), so a sink runs
 * when its topics advance and an idle sink is not invoked. Overlapping invocations are safe: each task
 * runs under a lease, so a second invocation skips or waits for tasks the first still holds.
 */
export class ConnectRuntime extends Construct {
  readonly rule: events.Rule;
  /** The data trigger, when the metadata table was given. */
  readonly trigger?: lambda.EventSourceMapping;
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
    props.handler.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge,
      ...(props.deadLetters ? { onFailure: props.deadLetters.onFailure } : {}),
    });
    if (props.metadataTable?.tableStreamArn)
      // A failed batch is tried twice more, then dropped: the schedule's lag check catches up.
      this.trigger = partitionStateTrigger(this, {
        table: props.metadataTable,
        target: props.handler,
        maxBatchingWindow: props.triggerBatchingWindow ?? Duration.seconds(1),
        ...(props.deadLetters ? { onFailure: props.deadLetters.streamFailure } : {}),
      });
  }

  /** Lets the runtime's S3 sinks write objects into `bucket` (under `prefix`, default everything). */
  grantSinkBucket(bucket: s3.IBucket, prefix = '*'): iam.Grant {
    return bucket.grantPut(this.handler, prefix);
  }

  /** Lets the runtime's Lambda sinks invoke `fn` (AwsLambdaSinkConnector's aws.lambda.function.name). */
  grantSinkFunction(fn: lambda.IFunction): iam.Grant {
    return fn.grantInvoke(this.handler);
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
