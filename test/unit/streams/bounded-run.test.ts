import { describe, expect, it } from 'vitest';
import type { BoundedApp, SourcePartitionOffset } from '../../../streams/lambda/bounded-run.js';
import { runBounded } from '../../../streams/lambda/bounded-run.js';

/**
 * A fake app over a fake clock: each poll (sleep) advances time and lets `step` move the app's task
 * positions, the owners' commits and the sources' watermarks.
 */
const world = (options: {
  watermarks: SourcePartitionOffset[][];
  positions?: SourcePartitionOffset[];
  committed?: Record<string, number>;
  budgetMs?: number;
  step?: (w: World) => void;
  failOnClose?: Error;
}) => {
  const w: World = {
    now: 0,
    polls: 0,
    calls: [],
    positions: options.positions ?? [],
    committed: options.committed ?? {},
    watermarkReads: 0,
    state: 'CREATED',
  };
  const app: BoundedApp = {
    get state() {
      return w.state;
    },
    start: async () => {
      w.calls.push('start');
      w.state = 'RUNNING';
    },
    close: async () => {
      w.calls.push('close');
      w.state = 'NOT_RUNNING';
      if (options.failOnClose) throw options.failOnClose;
    },
    positions: () => w.positions,
    processed: () => ({ '0_0': w.polls }),
  };
  const run = () =>
    runBounded({
      app,
      highWatermarks: async () => {
        const i = Math.min(w.watermarkReads++, options.watermarks.length - 1);
        return options.watermarks[i] ?? [];
      },
      committed: async (topic, partition) => {
        w.calls.push(`committed ${topic}-${partition}`);
        return w.committed[`${topic}-${partition}`];
      },
      remainingMs: () => (options.budgetMs ?? 1_000) - w.now,
      pollMs: 50,
      sleep: async (ms) => {
        w.now += ms;
        w.polls += 1;
        options.step?.(w);
      },
    });
  return { w, run };
};

interface World {
  now: number;
  polls: number;
  calls: string[];
  positions: SourcePartitionOffset[];
  committed: Record<string, number>;
  watermarkReads: number;
  state: string;
}

const at = (topic: string, partition: number, offset: number) => ({ topic, partition, offset });

describe('runBounded', () => {
  it('closes once its own tasks reach the watermarks and a second look finds nothing new', async () => {
    const { w, run } = world({
      watermarks: [[at('in', 0, 10), at('in', 1, 4)]],
      positions: [at('in', 0, 0), at('in', 1, 0)],
      step: (x) => {
        x.positions = x.positions.map((p) => ({
          ...p,
          offset: Math.min(p.offset + 3, p.partition ? 4 : 10),
        }));
      },
    });
    const report = await run();
    // 10 records at 3 per poll: 4 polls; partition 1 (4 records) is done after 2.
    expect(w.polls).toBe(4);
    expect(report).toEqual({ rounds: 1, caughtUp: true, processed: { '0_0': 4 } });
    expect(w.calls).toEqual(['start', 'close']);
    expect(w.watermarkReads).toBe(2);
  });

  it('with nothing new it starts, looks once and closes without a round', async () => {
    const { w, run } = world({
      watermarks: [[at('in', 0, 5)]],
      positions: [at('in', 0, 5)],
    });
    expect(await run()).toEqual({ rounds: 0, caughtUp: true, processed: { '0_0': 0 } });
    expect(w.calls).toEqual(['start', 'close']);
    expect(w.watermarkReads).toBe(1);
  });

  it('counts a partition another instance owns as done once its owner committed past the watermark', async () => {
    const { w, run } = world({
      watermarks: [[at('in', 0, 3), at('in', 1, 7)]],
      positions: [at('in', 0, 3)],
      committed: { 'in-1': 2 },
      step: (x) => {
        if (x.polls === 3) x.committed['in-1'] = 7;
      },
    });
    expect(await run()).toMatchObject({ rounds: 1, caughtUp: true });
    expect(w.polls).toBe(3);
    // Owned partitions are never read from the committed offsets; the other one once per look.
    expect(w.calls.filter((c) => c === 'committed in-0')).toEqual([]);
    expect(w.calls.filter((c) => c === 'committed in-1').length).toBe(5);
  });

  it('a partition with nothing committed anywhere counts from offset 0', async () => {
    const { run } = world({ watermarks: [[at('in', 0, 0)]] });
    expect(await run()).toMatchObject({ rounds: 0, caughtUp: true });
  });

  it('runs later rounds for what arrived meanwhile, and ends them quietly when time runs out', async () => {
    const { w, run } = world({
      watermarks: [[at('in', 0, 2)], [at('in', 0, 4)], [at('in', 0, 1_000_000)]],
      positions: [at('in', 0, 0)],
      budgetMs: 500,
      step: (x) => {
        x.positions = [at('in', 0, (x.positions[0]?.offset ?? 0) + 1)];
      },
    });
    // Rounds: to 2, to 4, then an unreachable target: the deadline ends the third round, no error.
    expect(await run()).toEqual({ rounds: 3, caughtUp: false, processed: { '0_0': 10 } });
    expect(w.now).toBe(500);
    expect(w.calls).toEqual(['start', 'close']);
  });

  it('closes cleanly, then fails retriably, when the first round cannot finish in time', async () => {
    const { w, run } = world({
      watermarks: [[at('in', 0, 100), at('in', 1, 1)]],
      positions: [at('in', 0, 0), at('in', 1, 1)],
      budgetMs: 200,
      step: (x) => {
        x.positions = [at('in', 0, (x.positions[0]?.offset ?? 0) + 10), at('in', 1, 1)];
      },
    });
    const error = (await run().catch((e: unknown) => e)) as {
      code: string;
      retriable: boolean;
      message: string;
    };
    expect(error.code).toBe('REQUEST_TIMED_OUT');
    expect(error.retriable).toBe(true);
    // Only the partition it did not reach is named, with the offset it had to reach.
    expect(error.message).toBe('the run ended before processing in-0 to 100; the trigger retries');
    expect(w.polls).toBe(4);
    expect(w.calls).toEqual(['start', 'close']);
  });

  it('stops waiting when the app fails and reports the failure close() rejects with', async () => {
    const failure = new Error('task 0_0 failed');
    const { w, run } = world({
      watermarks: [[at('in', 0, 100)]],
      positions: [at('in', 0, 0)],
      failOnClose: failure,
      step: (x) => {
        if (x.polls === 2) x.state = 'ERROR';
      },
    });
    await expect(run()).rejects.toBe(failure);
    expect(w.polls).toBe(2);
    expect(w.calls).toEqual(['start', 'close']);
  });
});
