/**
 * A bounded run of a Streams application: the Lambda driver of the one KafkaStreams runtime (the
 * local runner, streams/runtime/main.ts, is the other: it runs until SIGTERM). A run starts the app,
 * takes the high watermark of every source partition as it is now, and closes the app (which commits
 * every task and leaves the group) once each of those offsets is processed: by one of this run's
 * tasks, or committed by whichever instance owns the partition. Then it looks once more; what arrived
 * meanwhile is processed too while time allows. A run that cannot reach the watermarks it started
 * with before its deadline still closes cleanly, then fails with a retriable error, so the trigger
 * invokes again: a wake-up is never lost, whatever the concurrency.
 */
import { SluiceError } from '../../protocol/errors.js';

export interface SourcePartitionOffset {
  topic: string;
  partition: number;
  offset: number;
}

/** What a bounded run needs of KafkaStreams (tests hand it fakes). */
export interface BoundedApp {
  readonly state: string;
  start(): Promise<void>;
  close(): Promise<void>;
  positions(): SourcePartitionOffset[];
  processed(): Record<string, number>;
}

export interface BoundedRunDeps {
  app: BoundedApp;
  /** Every source partition's high watermark now (called after start, so internal topics exist). */
  highWatermarks(): Promise<SourcePartitionOffset[]>;
  /** The committed position of a source partition, whoever owns it (undefined: nothing committed). */
  committed(topic: string, partition: number): Promise<number | undefined>;
  /** Ms left before the run must start closing. */
  remainingMs(): number;
  /** How often progress is checked, ms (default 50). */
  pollMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export interface BoundedRunReport {
  /** Looks at the high watermarks that found something to do (the first always counts). */
  rounds: number;
  /** Whether the run stopped with everything it saw processed (false: time ran out in a later round). */
  caughtUp: boolean;
  processed: Record<string, number>;
}

const keyOf = (t: { topic: string; partition: number }): string => `${t.topic}\u0000${t.partition}`;

export const runBounded = async (deps: BoundedRunDeps): Promise<BoundedRunReport> => {
  const { app } = deps;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const pollMs = deps.pollMs ?? 50;
  let missed: SourcePartitionOffset[] = [];
  let rounds = 0;
  let caughtUp = false;
  await app.start();
  try {
    /** Targets not yet processed by this run's tasks nor committed by their owner. */
    const unmet = async (targets: SourcePartitionOffset[]): Promise<SourcePartitionOffset[]> => {
      const mine = new Map(app.positions().map((p) => [keyOf(p), p.offset]));
      const left: SourcePartitionOffset[] = [];
      for (const t of targets) {
        const position = mine.get(keyOf(t)) ?? (await deps.committed(t.topic, t.partition)) ?? 0;
        if (position < t.offset) left.push(t);
      }
      return left;
    };
    let targets = await unmet(await deps.highWatermarks());
    // The first round holds what woke the run: not reaching it fails the run (after a clean close).
    for (let hard = true; ; hard = false) {
      if (targets.length === 0) {
        caughtUp = true;
        break;
      }
      rounds += 1;
      while (targets.length > 0 && app.state === 'RUNNING' && deps.remainingMs() > 0) {
        await sleep(pollMs);
        targets = await unmet(targets);
      }
      if (targets.length > 0) {
        if (hard) missed = targets;
        break;
      }
      targets = await unmet(await deps.highWatermarks());
    }
  } finally {
    await app.close();
  }
  if (missed.length > 0)
    throw new SluiceError(
      'REQUEST_TIMED_OUT',
      `the run ended before processing ${missed.map((t) => `${t.topic}-${t.partition} to ${t.offset}`).join(', ')}; the trigger retries`,
      { retriable: true },
    );
  return { rounds, caughtUp, processed: app.processed() };
};
