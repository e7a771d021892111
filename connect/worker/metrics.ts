/**
 * Kafka Connect's worker metrics for one invocation of the Connect runtime: connectors per state
 * (connector-count), each connector's running, paused and failed tasks, and the records its tasks
 * moved in this invocation (sink-record-read-total, source-record-write-total).
 */
import type { Telemetry } from '../../lib/ports/telemetry.js';
import type { ConnectorType } from '../plugin.js';
import type { TaskOutcome } from './worker.js';

/** What the report reads of each connector (the Herder's status, Connect's REST shape). */
export interface ConnectorStatusLike {
  name: string;
  type: ConnectorType;
  connector: { state: string };
  tasks: readonly { state: string }[];
}

const CONNECTOR_STATES = ['RUNNING', 'PAUSED', 'STOPPED', 'FAILED', 'UNASSIGNED'] as const;

export const reportConnectors = (
  statuses: readonly ConnectorStatusLike[],
  outcomes: readonly TaskOutcome[],
  telemetry: Telemetry,
): void => {
  // Every state is reported, zero included, so an alarm on FAILED reads 0 rather than no data.
  for (const state of CONNECTOR_STATES) {
    const count = statuses.filter((s) => s.connector.state === state).length;
    telemetry.metric('connector-count', count, { state });
  }
  let failedTasks = 0;
  for (const status of statuses) {
    const tasksIn = (state: string) => status.tasks.filter((t) => t.state === state).length;
    const connector = status.name;
    telemetry.metric('connector-running-task-count', tasksIn('RUNNING'), { connector });
    telemetry.metric('connector-paused-task-count', tasksIn('PAUSED'), { connector });
    telemetry.metric('connector-failed-task-count', tasksIn('FAILED'), { connector });
    failedTasks += tasksIn('FAILED');
    const records = outcomes
      .filter((o) => o.connector === connector)
      .reduce((n, o) => n + (o.records ?? 0), 0);
    if (status.type === 'sink') telemetry.metric('sink-record-read-total', records, { connector });
    else telemetry.metric('source-record-write-total', records, { connector });
  }
  telemetry.metric('connector-failed-task-count', failedTasks, {});
};
