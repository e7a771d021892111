/**
 * The history a workload records for the checker (test/support/checker.ts), in the spirit of Jepsen:
 * every operation has an invoke and a complete time and an outcome —
 * - `ok`: it happened, with the result recorded;
 * - `fail`: a definite failure (a 4xx Kafka error: nothing was written);
 * - `info`: ambiguous (a 5xx, a timeout, a dropped connection): it may or may not have happened.
 * Times are logical (one counter for invokes and completes, so real-time order is exact); `wall` is the
 * clock's milliseconds, used only for session timeouts.
 */
import { SluiceError } from '../../protocol/errors.js';
import { STATUS_BY_CODE } from '../../lib/http/status.js';
import { SluiceError as ClientError } from '../../sdk/errors.js';

export type Outcome = 'ok' | 'fail' | 'info';

export interface OpBase {
  id: number;
  /** The client that issued it (a producer, a consumer, a group member); its ops are sequential. */
  process: string;
  invoke: number;
  complete: number;
  invokeWall: number;
  completeWall: number;
  outcome: Outcome;
  /** Error code (or message) when not ok. */
  error?: string;
}

export interface ReadRecord {
  offset: number;
  /** The record rendered as one string (key, value, headers), so equality is byte-identity. */
  value: string;
}

/** One attempt to append records to one partition. */
export interface SendOp extends OpBase {
  f: 'send';
  /** The logical write; its retries share the id (and the values). */
  write: string;
  /** True when retries are deduplicated by the server (producer id and sequence, or Idempotency-Key). */
  idempotent: boolean;
  partition: number;
  values: string[];
  /** The offset of each value, when ok. */
  offsets?: number[];
}

/** One fetch of one partition by a consumer. */
export interface PollOp extends OpBase {
  f: 'poll';
  partition: number;
  /** The offset asked for. */
  offset: number;
  records: ReadRecord[];
  nextOffset?: number;
  highWatermark?: number;
  logStartOffset?: number;
}

export type TopicPartitionId = string;

/** A consumer-group heartbeat. `owned` is what the member declared it holds when it sent it. */
export interface HeartbeatOp extends OpBase {
  f: 'heartbeat';
  group: string;
  member: string;
  memberEpochSent: number;
  owned: TopicPartitionId[];
  /** When ok: the epoch returned and the assignment (null = unchanged). */
  memberEpoch?: number;
  assignment?: TopicPartitionId[] | null;
}

export interface CommitOp extends OpBase {
  f: 'commit';
  group: string;
  member: string | null;
  memberEpoch: number | null;
  offsets: { tp: TopicPartitionId; offset: number }[];
}

export interface OffsetFetchOp extends OpBase {
  f: 'offsetFetch';
  group: string;
  offsets: { tp: TopicPartitionId; offset: number }[];
}

/** A client stops for good (a killed consumer): whatever it owned is no longer processed. */
export interface CrashOp extends OpBase {
  f: 'crash';
}

export type Op = SendOp | PollOp | HeartbeatOp | CommitOp | OffsetFetchOp | CrashOp;

/** A full read of one partition at the end, with faults off: every offset from logStart to the high watermark. */
export interface FinalRead {
  partition: number;
  highWatermark: number;
  logStartOffset: number;
  records: ReadRecord[];
  /** Set when the read could not finish (then offsets past the last record are unreadable). */
  error?: string;
}

export interface History {
  ops: Op[];
  finals: FinalRead[];
}

type Fields<T extends Op> = Omit<T, keyof OpBase | 'f'>;
type Invoked<T extends Op> = Omit<T, 'complete' | 'completeWall' | 'outcome'>;

/** Records operations as they happen. */
export class HistoryRecorder {
  readonly ops: Op[] = [];
  readonly finals: FinalRead[] = [];
  private time = 0;
  private nextId = 0;

  constructor(private readonly wall: () => number = () => Date.now()) {}

  /** Starts an operation; finish it with the returned function exactly once. */
  invoke<T extends Op>(
    f: T['f'],
    process: string,
    fields: Partial<Fields<T>>,
  ): (outcome: Outcome, result?: Partial<Fields<T>>, error?: string) => T {
    const started = {
      id: this.nextId++,
      f,
      process,
      invoke: ++this.time,
      invokeWall: this.wall(),
      ...fields,
    } as unknown as Invoked<T>;
    let done = false;
    return (outcome, result = {}, error) => {
      if (done) throw new Error(`operation ${started.id} completed twice`);
      done = true;
      const op = {
        ...started,
        ...result,
        complete: ++this.time,
        completeWall: this.wall(),
        outcome,
        ...(error !== undefined ? { error } : {}),
      } as unknown as T;
      this.ops.push(op);
      return op;
    };
  }

  /** Runs `fn` as one operation: ok with its result, or fail/info by classifying what it threw. */
  async run<T extends Op, R>(
    f: T['f'],
    process: string,
    fields: Partial<Fields<T>>,
    fn: () => Promise<R>,
    toResult: (r: R) => Partial<Fields<T>>,
  ): Promise<{ op: T; value?: R; error?: unknown }> {
    const complete = this.invoke<T>(f, process, fields);
    try {
      const value = await fn();
      return { op: complete('ok', toResult(value)), value };
    } catch (error) {
      return { op: complete(outcomeOfError(error), {}, errorName(error)), error };
    }
  }

  crash(process: string): void {
    this.invoke<CrashOp>('crash', process, {})('ok');
  }

  final(read: FinalRead): void {
    this.finals.push(read);
  }

  history(): History {
    return { ops: [...this.ops].sort((a, b) => a.invoke - b.invoke), finals: [...this.finals] };
  }
}

/** 4xx Kafka errors are definite (nothing was written); 5xx, timeouts and anything unknown are ambiguous. */
export const outcomeOfError = (error: unknown): Outcome => {
  if (error instanceof SluiceError) return outcomeOfCode(error.code);
  // The SDK's error: a 4xx is definite; a 5xx or no answer at all (status 0) may have taken effect.
  if (error instanceof ClientError) return error.ambiguous ? 'info' : 'fail';
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number') return outcomeOfStatus(status);
  return 'info';
};

export const outcomeOfCode = (code: string): Outcome => {
  const status = (STATUS_BY_CODE as Record<string, number | undefined>)[code];
  return status !== undefined && status < 500 ? 'fail' : 'info';
};

/** Outcome of an HTTP answer: 2xx ok, 4xx fail, anything else info. */
export const outcomeOfStatus = (status: number): Outcome =>
  status < 300 ? 'ok' : status < 500 ? 'fail' : 'info';

export const errorName = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
};
