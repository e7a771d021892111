import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

export interface MaintenanceScheduleProps {
  /** The maintenance function (flush, compact, retain, garbage-collect, expire group members). */
  readonly handler: lambda.IFunction;
  /**
   * How often maintenance runs.
   * @default Duration.minutes(1)
   */
  readonly interval?: Duration;
  /** Where a run that failed goes (its event), e.g. the dead-letter queue the alarms watch. @default none */
  readonly onFailure?: lambda.IDestination;
}

/**
 * An EventBridge rule that invokes the maintenance function on a fixed rate.
 *
 * A missed or failed run is not retried: the next tick does the same work with fresher state, and a
 * retry arriving late would only overlap it. Runs may still overlap when one takes longer than the
 * interval; maintenance steps are conditional writes and idempotent, so that costs work, not
 * correctness.
 */
export class MaintenanceSchedule extends Construct {
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: MaintenanceScheduleProps) {
    super(scope, id);
    const interval = props.interval ?? Duration.minutes(1);
    this.rule = new events.Rule(this, 'Rule', {
      description: 'Runs Sluice maintenance',
      schedule: events.Schedule.rate(interval),
    });
    this.rule.addTarget(
      new targets.LambdaFunction(props.handler, {
        retryAttempts: 0,
        maxEventAge: Duration.seconds(Math.max(60, interval.toSeconds())),
      }),
    );
    props.handler.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.seconds(Math.max(60, interval.toSeconds())),
      ...(props.onFailure ? { onFailure: props.onFailure } : {}),
    });
  }
}
