/**
 * Lambda entry point: one invocation of the Connect runtime. Two triggers invoke it:
 * - the EventBridge schedule: every source task runs, and the sink tasks whose topics have unread
 *   records; idle sinks are watched while the sources run and started if their topics advance;
 * - the metadata table's DynamoDB Stream, filtered to partition state items (ConnectRuntime): the
 *   sink tasks that consume a topic whose partitions advanced run, until they have caught up.
 * Tasks run under their leases for at most SLUICE_CONNECT_BUDGET_MS, talking to Sluice through the SDK
 * over the router in this process (no network hop, no signed call back into the API): this function's
 * composition root is the whole of Sluice (functions/app.ts), since connectors produce, fetch and commit.
 */
import { randomUUID } from 'node:crypto';
import { ConnectStateStore } from '../connect/state-store.js';
import { inProcessFetch } from './in-process-fetch.js';
import type { StreamRecordLike } from '../connect/worker/wakeup.js';
import {
  DEFAULT_SINK_IDLE_MS,
  scheduledTick,
  topicIdsOfStreamRecords,
  triggeredTick,
} from '../connect/worker/wakeup.js';
import type { TaskOutcome, TickOptions } from '../connect/worker/worker.js';
import { ConnectWorker } from '../connect/worker/worker.js';
import { ENV } from '../lib/config/environment.js';
import { systemClock } from '../lib/ports/clock.js';
import type { Sluice } from './app.js';
import { createSluice } from './app.js';
import { SluiceClient } from '../sdk/index.js';
import { Herder } from '../connect/herder.js';
import { reportConnectors } from '../connect/worker/metrics.js';
import type { Telemetry } from '../lib/ports/telemetry.js';
import { coordinatorGroupAdmin } from './connect-group-admin.js';
import { depsFromEnv, instrumented, telemetryFromEnv } from './environment.js';

const DEFAULT_BUDGET_MS = 45_000;
const DEFAULT_LEASE_MS = 15_000;
/** How often a scheduled invocation checks idle sinks while its sources run. */
const WATCH_MS = 1_000;

const positive = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
};

export interface ConnectRuntime {
  worker: ConnectWorker;
  client: SluiceClient;
  topicNamesOf: (ids: ReadonlySet<string>) => Promise<Set<string>>;
  sinkIdleMs: number;
  herder: Herder;
  state: ConnectStateStore;
}

/** A worker over a Sluice of its own; the id names the container in task statuses. */
export const connectRuntimeOf = (sluice: Sluice, telemetry: Telemetry): ConnectRuntime => {
  const state = new ConnectStateStore(sluice.store);
  // A task runs for a bounded budget in an invocation billed while it runs: its consumers long-poll.
  const client = new SluiceClient({
    url: 'http://sluice.internal',
    fetch: inProcessFetch(sluice.router()),
    waitUrl: false,
  });
  const worker = new ConnectWorker({
    state,
    client,
    clock: systemClock,
    workerId: `lambda-${randomUUID().slice(0, 8)}`,
    budgetMs: positive(ENV.connectBudgetMs, DEFAULT_BUDGET_MS),
    leaseMs: positive(ENV.connectLeaseMs, DEFAULT_LEASE_MS),
    log: ({ level, msg, ...entry }) =>
      telemetry.log(level === 'error' ? 'error' : 'info', typeof msg === 'string' ? msg : 'connector', entry),
  });
  return {
    worker,
    client,
    topicNamesOf: async (ids) =>
      new Set((await sluice.catalog.list()).filter((t) => ids.has(t.topicId)).map((t) => t.name)),
    sinkIdleMs: positive(ENV.connectSinkIdleMs, DEFAULT_SINK_IDLE_MS),
    herder: new Herder(state, coordinatorGroupAdmin(sluice.groups)),
    state,
  };
};

let runtime: ConnectRuntime | undefined;

/** The records of a DynamoDB Streams event (the trigger), or undefined for the schedule. */
const streamRecordsOf = (event: unknown): StreamRecordLike[] | undefined => {
  const records = (event as { Records?: unknown } | null | undefined)?.Records;
  return Array.isArray(records) &&
    records.every((r) => (r as { eventSource?: unknown })?.eventSource === 'aws:dynamodb')
    ? (records as StreamRecordLike[])
    : undefined;
};

export const handler = async (event?: unknown): Promise<TaskOutcome[]> =>
  instrumented({ function: 'connect-worker' }, () => tick(event));

const tick = async (event?: unknown): Promise<TaskOutcome[]> => {
  runtime ??= connectRuntimeOf(createSluice(depsFromEnv()), telemetryFromEnv());
  const { worker, client, sinkIdleMs } = runtime;
  const records = streamRecordsOf(event);
  let options: TickOptions;
  if (records) {
    const topics = await runtime.topicNamesOf(topicIdsOfStreamRecords(records));
    if (topics.size === 0) return [];
    options = triggeredTick(client, topics, { sinkIdleMs });
  } else {
    options = scheduledTick(client, { watchMs: WATCH_MS, sinkIdleMs });
  }
  const outcomes = await worker.tick(options);
  const telemetry = telemetryFromEnv();
  const statuses = await Promise.all((await runtime.state.list()).map((c) => runtime!.herder.status(c.name)));
  reportConnectors(statuses, outcomes, telemetry);
  telemetry.log('info', 'connect tick', { trigger: records ? 'stream' : 'schedule', connect: outcomes });
  return outcomes;
};
