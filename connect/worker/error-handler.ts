/**
 * Kafka Connect's error handling for one task (KIP-298): retries of retriable failures with capped
 * exponential backoff for `errors.retry.timeout`, then `errors.tolerance` decides — `none` fails the
 * task, `all` skips the record, logging it (`errors.log.enable`) and, for sinks, writing the original
 * bytes to `errors.deadletterqueue.topic.name` with Connect's `__connect.errors.*` headers.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../lib/ports/clock.js';
import type { Message } from '../../sdk/index.js';
import { isRetriable } from '../../sdk/index.js';
import { RetriableConnectError } from '../plugin.js';

export type Stage =
  'KEY_CONVERTER' | 'VALUE_CONVERTER' | 'HEADER_CONVERTER' | 'TRANSFORMATION' | 'TASK_PUT' | 'TASK_POLL';

export interface ErrorPolicy {
  tolerance: 'none' | 'all';
  retryTimeoutMs: number;
  retryMaxDelayMs: number;
  logEnable: boolean;
  logIncludeMessages: boolean;
  dlqTopic: string;
  dlqContextHeaders: boolean;
}

export const errorPolicyOf = (config: Record<string, string>): ErrorPolicy => ({
  tolerance: config['errors.tolerance'] === 'all' ? 'all' : 'none',
  retryTimeoutMs: Number(config['errors.retry.timeout'] ?? '0'),
  retryMaxDelayMs: Number(config['errors.retry.delay.max.ms'] ?? '60000'),
  logEnable: config['errors.log.enable'] === 'true',
  logIncludeMessages: config['errors.log.include.messages'] === 'true',
  dlqTopic: config['errors.deadletterqueue.topic.name'] ?? '',
  dlqContextHeaders: config['errors.deadletterqueue.context.headers.enable'] === 'true',
});

/** The original record of a failure, as it was in Kafka (sinks) or as the source produced it. */
export interface OriginalRecord {
  topic: string;
  partition?: number;
  offset?: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: { key: string; value: Uint8Array | null }[];
}

/** Connect's ConnectException("Tolerance exceeded in error handler"): the task fails. */
export class ToleranceExceeded extends Error {
  constructor(stage: Stage, cause: unknown) {
    super(`Tolerance exceeded in error handler (stage ${stage}): ${messageOf(cause)}`, { cause });
    this.name = 'ToleranceExceeded';
  }
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const UTF8 = new TextEncoder();

export interface ErrorHandlerDeps {
  connector: string;
  task: number;
  clock: Clock;
  log: (entry: Record<string, unknown>) => void;
  /**
   * Writes DLQ records durably (awaited before offsets are committed) under the given
   * Idempotency-Key, so the same failure reported again after a crash is written once.
   */
  produce: (topic: string, messages: Message[], idempotencyKey: string) => Promise<void>;
}

export class ErrorHandler {
  /** Records skipped under errors.tolerance=all, for status and tests. */
  skipped = 0;

  constructor(
    private readonly policy: ErrorPolicy,
    private readonly deps: ErrorHandlerDeps,
  ) {}

  /** Runs op, retrying retriable failures until errors.retry.timeout has passed (-1: forever). */
  async retry<T>(op: () => Promise<T>): Promise<T> {
    const started = this.deps.clock.now();
    let delay = 300;
    for (;;) {
      try {
        return await op();
      } catch (error) {
        const { retryTimeoutMs } = this.policy;
        const elapsed = this.deps.clock.now() - started;
        if (
          !(isRetriable(error) || error instanceof RetriableConnectError) ||
          (retryTimeoutMs !== -1 && elapsed + delay > retryTimeoutMs)
        )
          throw error;
        await this.deps.clock.sleep(delay);
        delay = Math.min(delay * 2, this.policy.retryMaxDelayMs);
      }
    }
  }

  /** A record failed at `stage`: throws under tolerance none, else logs and dead-letters it. */
  async report(stage: Stage, className: string, original: OriginalRecord, error: unknown): Promise<void> {
    if (this.policy.tolerance === 'none') throw new ToleranceExceeded(stage, error);
    this.skipped += 1;
    if (this.policy.logEnable) {
      this.deps.log({
        level: 'error',
        msg: 'Error encountered in task',
        connector: this.deps.connector,
        task: this.deps.task,
        stage,
        className,
        topic: original.topic,
        partition: original.partition,
        offset: original.offset,
        error: messageOf(error),
        ...(this.policy.logIncludeMessages ? { key: text(original.key), value: text(original.value) } : {}),
      });
    }
    if (!this.policy.dlqTopic) return;
    const headers = [...original.headers];
    if (this.policy.dlqContextHeaders) {
      const add = (key: string, value: string | number | undefined) => {
        if (value !== undefined)
          headers.push({ key: `__connect.errors.${key}`, value: UTF8.encode(String(value)) });
      };
      add('topic', original.topic);
      add('partition', original.partition);
      add('offset', original.offset);
      add('connector.name', this.deps.connector);
      add('task.id', this.deps.task);
      add('stage', stage);
      add('class.name', className);
      add('exception.class.name', error instanceof Error ? error.name : typeof error);
      add('exception.message', messageOf(error));
      add('exception.stacktrace', error instanceof Error ? (error.stack ?? error.message) : String(error));
    }
    const idempotencyKey = `connect-dlq:${createHash('sha256')
      .update(
        `${this.deps.connector}\u0000${original.topic}\u0000${original.partition}\u0000${original.offset}`,
      )
      .digest('base64url')}`;
    await this.retry(() =>
      this.deps.produce(
        this.policy.dlqTopic,
        [{ key: original.key, value: original.value, headers }],
        idempotencyKey,
      ),
    );
  }
}

const text = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString('utf8'));
