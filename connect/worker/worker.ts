/**
 * The connector runtime's one entry: a tick runs every task of every started connector once, for a
 * bounded time, each under its lease (scheduled in Lambda, on a timer in the local stack). A task
 * that another invocation holds is skipped; a FAILED task waits for a REST restart, as in Connect.
 */
import type { Clock } from '../../lib/ports/clock.js';
import { ConditionFailedError, TransactionCanceledError } from '../../lib/ports/metadata-store.js';
import type { SluiceClient } from '../../sdk/index.js';
import { SluiceError as ClientError } from '../../sdk/index.js';
import { taskConfigsOf } from '../tasks.js';
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
   * `select`, only the connectors it takes run at first. With `watch`, the sinks not running — left
   * out, or returned early (idle) — are checked every `watch.intervalMs` while anything still runs,
   * and started again, for what is left of the budget, as soon as `watch.due` says their input grew.
   */
  async tick(options: TickOptions = {}): Promise<TaskOutcome[]> {
    const { clock } = this.options;
    const { watch } = options;
    const deadline = clock.now() + this.budgetMs;
    const connectors = (await this.options.state.list()).filter((c) => c.targetState === 'STARTED');
    const waiting = new Set<ConnectorRecord>();
    const runs: Promise<TaskOutcome[]>[] = [];
    let running = 0;
    const start = (record: ConnectorRecord): void => {
      let configs: Record<string, string>[];
      try {
        configs = taskConfigsOf(record);
      } catch (error) {
        this.log({ level: 'error', connector: record.name, error: traceOf(error) });
        return;
      }
      const idleExitMs = record.type === 'sink' ? options.sinkIdleMs : undefined;
      running += 1;
      const tasks = configs.map((config, task) =>
        this.runTask(record, task, config, { deadline, ...(idleExitMs ? { idleExitMs } : {}) }),
      );
      runs.push(
        Promise.all(tasks).then((outcomes) => {
          running -= 1;
          if (watch && record.type === 'sink') waiting.add(record);
          return outcomes;
        }),
      );
    };
    for (const record of connectors) {
      if (!options.select || (await options.select(record))) start(record);
      else if (watch) waiting.add(record);
    }
    // Watch only while something runs: the invocation is paid for then anyway.
    while (watch && running > 0 && deadline - clock.now() > watch.intervalMs * 2) {
      await clock.sleep(watch.intervalMs);
      for (const record of [...waiting])
        if (await watch.due(record).catch(() => false)) {
          waiting.delete(record);
          start(record);
        }
    }
    return (await Promise.all(runs)).flat();
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
