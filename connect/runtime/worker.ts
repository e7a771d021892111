/**
 * The connector runtime's one entry: a tick runs every task of every started connector once, for a
 * bounded time, each under its lease (scheduled in Lambda, on a timer in the local stack). A task
 * that another invocation holds is skipped; a FAILED task waits for a REST restart, as in Connect.
 */
import type { Clock } from '../../lib/ports/clock.js';
import { ConditionFailedError, TransactionCanceledError } from '../../lib/ports/metadata-store.js';
import type { SluiceClient } from '../../sdk/index.js';
import { SluiceError as ClientError } from '../../sdk/index.js';
import { taskConfigsOf } from '../herder.js';
import { findPlugin } from '../plugins.js';
import type { ConnectStateStore, ConnectorRecord } from '../state-store.js';
import { runSinkTask } from './sink-runner.js';
import { runSourceTask } from './source-runner.js';

export interface WorkerOptions {
  state: ConnectStateStore;
  client: SluiceClient;
  clock: Clock;
  /** Shown as the tasks' worker_id. */
  workerId: string;
  /** How long one task runs per tick (default 20 s; below the Lambda timeout). */
  budgetMs?: number;
  /**
   * Lease length (default 15 s). A running task renews it every third of that, so a crashed
   * invocation's tasks are picked up by the next one within one lease, whatever the budget.
   */
  leaseMs?: number;
  log?: (entry: Record<string, unknown>) => void;
  /** Source poll wait / sink long-poll, for tests. */
  pollIntervalMs?: number;
}

export interface TickOptions {
  /** Which started connectors run from the start (default: all). */
  select?: (record: ConnectorRecord) => Promise<boolean>;
  /** Connectors `select` left out, checked every `intervalMs` while others run. */
  watch?: { intervalMs: number; due: (record: ConnectorRecord) => Promise<boolean> };
  /** Sink tasks return once no record arrived for this long (see SinkRunOptions.idleExitMs). */
  sinkIdleMs?: number;
}

export type TaskOutcome =
  | { connector: string; task: number; outcome: 'ran'; records: number }
  | {
      connector: string;
      task: number;
      outcome: 'busy' | 'failed' | 'fenced' | 'skipped';
      records?: number;
      error?: string;
    };

/** A write refused because the lease or the group membership moved on: stop quietly. */
export const isFenced = (error: unknown): boolean =>
  error instanceof ConditionFailedError ||
  (error instanceof TransactionCanceledError && error.conditionFailed) ||
  (error instanceof ClientError &&
    ['STALE_MEMBER_EPOCH', 'FENCED_MEMBER_EPOCH', 'UNKNOWN_MEMBER_ID', 'UNRELEASED_INSTANCE_ID'].includes(
      error.code,
    ));

/** Connect's status trace: the error and its causes, without anything from below the adapters. */
const traceOf = (error: unknown): string => {
  const parts: string[] = [];
  for (
    let e: unknown = error;
    e !== undefined && parts.length < 5;
    e = e instanceof Error ? e.cause : undefined
  ) {
    parts.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  }
  return parts.join('\nCaused by: ').slice(0, 4_000);
};

export class ConnectWorker {
  private readonly budgetMs: number;
  private readonly leaseMs: number;
  private readonly log: (entry: Record<string, unknown>) => void;

  constructor(private readonly options: WorkerOptions) {
    this.budgetMs = options.budgetMs ?? 20_000;
    this.leaseMs = options.leaseMs ?? 15_000;
    this.log = options.log ?? (() => {});
  }

  /**
   * Runs every task of every started connector once, concurrently; resolves when all are done. With
   * `select`, only the connectors it takes run at first; the others are `watch`ed while those run and
   * started (for what is left of the budget) as soon as `watch.due` says their input advanced.
   */
  async tick(options: TickOptions = {}): Promise<TaskOutcome[]> {
    const deadline = this.options.clock.now() + this.budgetMs;
    const connectors = (await this.options.state.list()).filter((c) => c.targetState === 'STARTED');
    const run = (record: ConnectorRecord): Promise<TaskOutcome>[] => {
      let configs: Record<string, string>[];
      try {
        configs = taskConfigsOf(record);
      } catch (error) {
        this.log({ level: 'error', connector: record.name, error: traceOf(error) });
        return [];
      }
      const idleExitMs = record.type === 'sink' ? options.sinkIdleMs : undefined;
      return configs.map((config, task) =>
        this.runTask(record, task, config, { deadline, ...(idleExitMs ? { idleExitMs } : {}) }),
      );
    };
    const waiting: ConnectorRecord[] = [];
    const jobs: Promise<TaskOutcome>[] = [];
    for (const record of connectors) {
      if (!options.select || (await options.select(record))) jobs.push(...run(record));
      else waiting.push(record);
    }
    const { watch } = options;
    if (!watch || waiting.length === 0 || jobs.length === 0) return Promise.all(jobs);
    let running = jobs.length;
    const done = () => void (running -= 1);
    for (const job of jobs) job.then(done, done);
    // Watch only while something else runs: the invocation is paid for then anyway.
    while (running > 0 && waiting.length > 0 && deadline - this.options.clock.now() > watch.intervalMs * 2) {
      await this.options.clock.sleep(watch.intervalMs);
      for (const record of [...waiting])
        if (await watch.due(record).catch(() => false)) {
          waiting.splice(waiting.indexOf(record), 1);
          jobs.push(...run(record));
        }
    }
    return Promise.all(jobs);
  }

  async runTask(
    record: ConnectorRecord,
    task: number,
    config: Record<string, string>,
    run: { deadline?: number; idleExitMs?: number } = {},
  ): Promise<TaskOutcome> {
    const { state, clock } = this.options;
    const id = { connector: record.name, task };
    const before = await state.task(record.name, task);
    if (before?.state === 'FAILED')
      return { ...id, outcome: 'failed', ...(before.trace ? { error: before.trace } : {}) };
    // A task another invocation holds (one still running, or one that died and whose lease has not
    // expired yet) is tried again every third of a lease while at least that much budget is left.
    const deadline = run.deadline ?? clock.now() + this.budgetMs;
    let lease = await state.acquire(record.name, task, this.options.workerId, clock.now(), this.leaseMs);
    while (!lease && deadline - clock.now() > this.leaseMs / 3) {
      await clock.sleep(this.leaseMs / 3);
      lease = await state.acquire(record.name, task, this.options.workerId, clock.now(), this.leaseMs);
    }
    if (!lease) return { ...id, outcome: 'busy' };
    const plugin = findPlugin(record.config['connector.class'] ?? '');
    try {
      if (!plugin) throw new Error(`no installed plugin for ${record.config['connector.class']}`);
      await state.setTaskState(lease, 'RUNNING');
      const common = {
        client: this.options.client,
        state,
        clock,
        lease,
        deadline,
        leaseTtlMs: this.leaseMs,
        log: this.log,
      };
      const poll = this.options.pollIntervalMs;
      const result =
        plugin.type === 'sink'
          ? await runSinkTask(plugin, config, {
              ...common,
              ...(poll !== undefined ? { maxWaitMs: poll } : {}),
              ...(run.idleExitMs !== undefined ? { idleExitMs: run.idleExitMs } : {}),
            })
          : await runSourceTask(plugin, config, {
              ...common,
              ...(poll !== undefined ? { pollIntervalMs: poll } : {}),
            });
      return { ...id, outcome: 'ran', records: result.records };
    } catch (error) {
      if (isFenced(error)) {
        this.log({ level: 'info', msg: 'task fenced', ...id });
        return { ...id, outcome: 'fenced' };
      }
      const trace = traceOf(error);
      this.log({ level: 'error', msg: 'task failed', ...id, error: trace });
      await state.setTaskState(lease, 'FAILED', trace).catch(() => undefined);
      return { ...id, outcome: 'failed', error: trace };
    } finally {
      await state.release(lease);
    }
  }
}
