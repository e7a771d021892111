/**
 * `sluice top`: rates from two samples (records/s from log end offsets, bytes/s from stored bytes,
 * consume rates from committed offsets), lag, ISR state as Kafka's broker metrics count it, the
 * rendered screen, and the command against the real routes in-process: --once, snapshots in a pipe,
 * in place on a terminal until q, filters, and bad options.
 */
import { describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_USAGE, run } from '../../../cli/main.js';
import { SCREEN, frame } from '../../../cli/commands/top.js';
import { computeView, isrState, perSecond } from '../../../cli/top/rates.js';
import { fitScreen, formatBytes, renderTop } from '../../../cli/top/render.js';
import type { PartitionSample, Sample } from '../../../cli/top/sample.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

const part = (partition: number, over: Partial<PartitionSample> = {}): PartitionSample => ({
  partition,
  leader: 's0',
  replicas: ['s0', 's1', 's2'],
  isr: ['s0', 's1', 's2'],
  osr: [],
  logEndOffset: 0,
  highWatermark: 0,
  logStartOffset: 0,
  sizeBytes: 0,
  ...over,
});

const sample = (at: number, over: Partial<Sample> = {}): Sample => ({
  at,
  time: 1_700_000_000_000,
  topics: [],
  groups: [],
  ...over,
});

describe('rates and ISR state', () => {
  it('counts a partition offline, under min ISR, under-replicated or in sync', () => {
    expect(isrState({ leader: 's0', replicas: ['s0', 's1', 's2'], isr: [] }, 2)).toBe('offline');
    expect(isrState({ leader: 's2', replicas: ['s0', 's1', 's2'], isr: ['s0', 's1'] }, 2)).toBe('offline');
    expect(isrState({ leader: 's0', replicas: ['s0', 's1', 's2'], isr: ['s0'] }, 2)).toBe('under-min-isr');
    expect(isrState({ leader: 's0', replicas: ['s0', 's1', 's2'], isr: ['s0', 's1'] }, 2)).toBe(
      'under-replicated',
    );
    expect(isrState({ leader: 's0', replicas: ['s0', 's1', 's2'], isr: ['s0', 's1', 's2'] }, 2)).toBe(
      'in-sync',
    );
    // min.insync.replicas above the replication factor cannot be met by any ISR: counted by the replicas.
    expect(isrState({ leader: 's0', replicas: ['s0'], isr: ['s0'] }, 2)).toBe('in-sync');
  });

  it('is growth per second, null without an earlier sample, and never negative', () => {
    expect(perSecond(100, 400, 2)).toBe(150);
    expect(perSecond(undefined, 400, 2)).toBeNull();
    expect(perSecond(100, 400, null)).toBeNull();
    expect(perSecond(500, 400, 2)).toBe(0);
  });

  it('computes produce rates per partition and topic, consume rates and lag per group', () => {
    const before = sample(10_000, {
      topics: [
        {
          name: 'orders',
          minInsyncReplicas: 2,
          partitions: [
            part(0, { logEndOffset: 100, highWatermark: 100, sizeBytes: 10_000 }),
            part(1, {
              logEndOffset: 50,
              highWatermark: 50,
              sizeBytes: 5_000,
              isr: ['s0', 's1'],
              osr: ['s2'],
            }),
          ],
        },
      ],
      groups: [
        {
          groupId: 'billing',
          state: 'STABLE',
          members: 2,
          offsets: [
            { topic: 'orders', partition: 0, committedOffset: 90, highWatermark: 100, lag: 10 },
            { topic: 'orders', partition: 1, committedOffset: 50, highWatermark: 50, lag: 0 },
          ],
        },
      ],
    });
    const after = sample(14_000, {
      topics: [
        {
          name: 'orders',
          minInsyncReplicas: 2,
          partitions: [
            part(0, { logEndOffset: 500, highWatermark: 500, sizeBytes: 50_000 }),
            // Retention shrank it: no negative rate.
            part(1, {
              logEndOffset: 90,
              highWatermark: 90,
              logStartOffset: 40,
              sizeBytes: 4_000,
              isr: ['s0'],
              osr: ['s1', 's2'],
            }),
          ],
        },
      ],
      groups: [
        {
          groupId: 'billing',
          state: 'STABLE',
          members: 2,
          offsets: [
            { topic: 'orders', partition: 0, committedOffset: 290, highWatermark: 500, lag: 210 },
            { topic: 'orders', partition: 1, committedOffset: 90, highWatermark: 90, lag: 0 },
          ],
        },
      ],
    });
    const first = computeView(undefined, before);
    expect(first.intervalSeconds).toBeNull();
    expect(first.topics[0]).toMatchObject({
      recordsInPerSec: null,
      bytesInPerSec: null,
      underReplicated: 1,
      underMinIsr: 0,
    });
    expect(first.groups[0]).toMatchObject({
      lag: 10,
      maxLag: 10,
      recordsOutPerSec: null,
      bytesOutPerSec: null,
    });

    const view = computeView(before, after);
    expect(view.intervalSeconds).toBe(4);
    expect(view.partitions.map((p) => [p.partition, p.state, p.recordsInPerSec, p.bytesInPerSec])).toEqual([
      [0, 'in-sync', 100, 10_000],
      [1, 'under-min-isr', 10, 0],
    ]);
    expect(view.topics).toEqual([
      {
        name: 'orders',
        partitions: 2,
        recordsInPerSec: 110,
        bytesInPerSec: 10_000,
        sizeBytes: 54_000,
        underReplicated: 1,
        underMinIsr: 1,
        offline: 0,
      },
    ]);
    const [g] = view.groups;
    expect(g!.partitions.map((p) => p.recordsOutPerSec)).toEqual([50, 10]);
    expect(g).toMatchObject({ lag: 210, maxLag: 210, recordsOutPerSec: 60 });
    // Bytes out: 50 offsets/s × 100 bytes per offset on partition 0, 10/s × 4000/50 bytes on partition 1.
    expect(g!.bytesOutPerSec).toBe(50 * 100 + 10 * 80);
  });

  it('measures no consume rate for a partition first committed in the interval', () => {
    const group = (offsets: Sample['groups'][number]['offsets']) => ({
      groupId: 'g',
      state: 'STABLE' as const,
      members: 1,
      offsets,
    });
    const view = computeView(
      sample(0, { groups: [group([])] }),
      sample(1000, {
        groups: [group([{ topic: 't', partition: 0, committedOffset: 5000, highWatermark: 5000, lag: 0 }])],
      }),
    );
    expect(view.groups[0]!.recordsOutPerSec).toBe(0);
  });
});

describe('the screen', () => {
  const view = computeView(
    sample(0, {
      topics: [
        {
          name: 'orders',
          minInsyncReplicas: 1,
          partitions: [part(0, { logEndOffset: 10, sizeBytes: 2048 })],
        },
      ],
    }),
    sample(2000, {
      topics: [
        {
          name: 'orders',
          minInsyncReplicas: 1,
          partitions: [
            part(0, {
              logEndOffset: 30,
              highWatermark: 30,
              sizeBytes: 3_148_800,
              isr: ['s0', 's1'],
              osr: ['s2'],
            }),
          ],
        },
      ],
      groups: [
        {
          groupId: 'billing',
          state: 'STABLE',
          members: 1,
          offsets: [{ topic: 'orders', partition: 0, committedOffset: 23, highWatermark: 30, lag: 7 }],
        },
      ],
    }),
  );

  it('shows topics with rates and ISR counts, groups with lag, and the partitions out of sync', () => {
    const lines = renderTop(view, { url: 'http://sluice.test', intervalSeconds: 2, partitions: false });
    expect(lines[0]).toBe(
      'sluice top  http://sluice.test  2023-11-14T22:13:20.000Z  every 2 s, rates over 2.0 s',
    );
    expect(lines.slice(1)).toEqual([
      '',
      'TOPIC   PARTITIONS  IN RECORDS/S  IN BYTES/S     SIZE  UNDER-REPLICATED  UNDER-MIN-ISR  OFFLINE',
      'orders           1            10   1.5 MiB/s  3.0 MiB                 1              0        0',
      '',
      'GROUP    STATE   MEMBERS  LAG  MAX LAG  OUT RECORDS/S  OUT BYTES/S (EST.)',
      'billing  STABLE        1    7        7              -                   -',
      '',
      'Partitions not in sync:',
      'TOPIC   PARTITION  STATE             LEADER  REPLICAS  ISR    OSR  LOG START  HW  LEO  IN RECORDS/S',
      'orders          0  under-replicated  s0      s0,s1,s2  s0,s1  s2           0  30   30            10',
    ]);
    const all = renderTop(view, {
      url: 'u',
      intervalSeconds: 2,
      partitions: true,
      error: 'timed out',
      keysHint: true,
    });
    expect(all[0]).toMatch(/\(q to quit\)$/);
    expect(all[1]).toBe('error: timed out');
    expect(all.slice(-3)).toEqual([
      'Lag per partition:',
      'GROUP    TOPIC   PARTITION  COMMITTED  HW  LAG  OUT RECORDS/S',
      'billing  orders          0         23  30    7              -',
    ]);
  });

  it('says when every partition is in sync', () => {
    const synced = computeView(
      undefined,
      sample(0, { topics: [{ name: 't', minInsyncReplicas: 1, partitions: [part(0), part(1)] }] }),
    );
    expect(renderTop(synced, { url: 'u', intervalSeconds: 1, partitions: false }).at(-1)).toBe(
      'ISR: all 2 partitions in sync (--partitions lists them).',
    );
    expect(renderTop(synced, { url: 'u', intervalSeconds: 1, partitions: false })[0]).toContain(
      'rates from the next refresh',
    );
  });

  it('formats bytes, fits the terminal, and draws each frame over the last', () => {
    expect([0, 1023, 1024, 1536, 10 * 1024 ** 3].map(formatBytes)).toEqual([
      '0 B',
      '1023 B',
      '1.0 KiB',
      '1.5 KiB',
      '10.0 GiB',
    ]);
    expect(fitScreen(['abcdef', 'ab', 'x', 'y', 'z'], 4, 3)).toEqual(['abc…', 'ab', '… 3…']);
    expect(fitScreen(['abc'], undefined, undefined)).toEqual(['abc']);
    expect(frame(['a', 'b'])).toBe('\u001b[Ha\u001b[K\nb\u001b[K\n\u001b[J');
  });
});

/** The command line against the real routes in this process, with captured output. */
const setup = async () => {
  const s = memorySluice();
  expect((await s.http('POST', '/v1/topics', { name: 'orders', partitions: 2 })).status).toBe(201);
  expect((await s.http('POST', '/v1/topics', { name: 'other', partitions: 1 })).status).toBe(201);
  const produce = async (n: number) =>
    expect(
      (
        await s.http('POST', '/v1/topics/orders/records', {
          records: Array.from({ length: n }, (_, i) => ({
            value: `v${i}`.padEnd(100, '.'),
            partition: i % 2,
          })),
        })
      ).status,
    ).toBe(200);
  await produce(10);
  const commit = await s.http('POST', '/v1/groups/billing/offsets', {
    offsets: [{ topic: 'orders', partition: 0, offset: 2, metadata: '' }],
  });
  expect(commit.status).toBe(200);
  const top = async (
    argv: string[],
    options: { tty?: boolean; keys?: string[]; during?: () => Promise<void>; signal?: AbortSignal } = {},
  ) => {
    let stdout = '';
    let stderr = '';
    const raw: boolean[] = [];
    const stdin = Object.assign(
      (async function* () {
        await new Promise((r) => setTimeout(r, 450));
        yield* options.keys ?? [];
      })(),
      { setRawMode: (on: boolean) => raw.push(on) },
    );
    const running = run(['top', ...argv], {
      stdout: {
        write: (t) => void (stdout += t),
        isTTY: options.tty === true,
        size: () => ({ columns: 200, rows: 60 }),
      },
      stderr: { write: (t) => void (stderr += t) },
      env: { SLUICE_URL: 'http://sluice.test' },
      fetch: routerFetch(s.sluice.router()),
      ...(options.tty ? { stdin, stdinIsTTY: true } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      now: () => performance.now(),
    });
    await options.during?.();
    return { code: await running, stdout, stderr, raw };
  };
  return { ...s, produce, top };
};

describe('sluice top', () => {
  it('--once measures over one interval: records produced meanwhile show as a rate, lag and ISR shown', async () => {
    const s = await setup();
    const result = await s.top(['--once', '--interval', '0.3'], {
      during: async () => {
        await new Promise((r) => setTimeout(r, 100));
        await s.produce(30);
      },
    });
    expect(result.code).toBe(EXIT_OK);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    const orders = lines
      .find((l) => l.startsWith('orders '))!
      .trim()
      .split(/\s{2,}/);
    // 30 records over about 0.3 s: a rate of the order of 100/s, and bytes/s from the stored bytes.
    expect(Number(orders[2])).toBeGreaterThan(30);
    expect(orders[3]).toMatch(/^\d+(\.\d)? (B|KiB)\/s$/);
    expect(
      lines
        .find((l) => l.startsWith('other '))!
        .split(/\s+/)
        .slice(1, 3),
    ).toEqual(['1', '0.0']);
    expect(
      lines
        .find((l) => l.startsWith('billing '))!
        .split(/\s+/)
        .slice(0, 5),
    ).toEqual(['billing', 'EMPTY', '0', '18', '18']);
    expect(result.stdout).toContain('ISR: all 3 partitions in sync');
    expect(result.stdout).not.toContain('\u001b[');
  });

  it('prints one snapshot per refresh in a pipe, JSON with --json, filtered by --topic and --group', async () => {
    const s = await setup();
    const text = await s.top(['--iterations', '2', '--interval', '0.2', '--topic', 'other']);
    expect(text.code).toBe(EXIT_OK);
    expect(text.stdout.match(/^sluice top /gm)).toHaveLength(2);
    expect(text.stdout).not.toMatch(/^orders /m);
    // billing commits only to orders: with --topic other it has nothing to show.
    expect(text.stdout).toContain('No consumer groups.');
    const json = await s.top([
      '--json',
      '--iterations',
      '2',
      '--interval',
      '0.2',
      '--group',
      'billing',
      '--partitions',
    ]);
    const views = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(views).toHaveLength(2);
    expect(views[0].intervalSeconds).toBeNull();
    expect(views[1].intervalSeconds).toBeGreaterThan(0.15);
    expect(views[1].groups.map((g: { groupId: string; lag: number }) => [g.groupId, g.lag])).toEqual([
      ['billing', 3],
    ]);
    expect(views[1].topics.map((t: { name: string }) => t.name)).toEqual(['orders', 'other']);
  });

  it('on a terminal draws in place on the alternate screen until q, and leaves the last screen printed', async () => {
    const s = await setup();
    const result = await s.top(['--interval', '0.2'], { tty: true, keys: ['x', 'q'] });
    expect(result.code).toBe(EXIT_OK);
    expect(result.stdout.startsWith(SCREEN.enter)).toBe(true);
    const frames = result.stdout.split(SCREEN.home).length - 1;
    expect(frames).toBeGreaterThanOrEqual(2);
    const [screen, after] = result.stdout.split(SCREEN.leave);
    expect(screen).toContain(`${SCREEN.clearLine}\n`);
    expect(after).toMatch(/^sluice top .*every 0.2 s/);
    expect(screen).toContain('(q to quit)');
    expect(after).not.toContain('(q to quit)');
    expect(after).not.toContain('\u001b[');
    // Raw mode on while it ran (so q needs no Enter), restored after.
    expect(result.raw).toEqual([true, false]);
  });

  it('stops on Ctrl-C (the interrupt signal) as well', async () => {
    const s = await setup();
    const interrupt = new AbortController();
    setTimeout(() => interrupt.abort(), 500);
    const result = await s.top(['--interval', '0.2'], { signal: interrupt.signal });
    expect(result.code).toBe(EXIT_OK);
    expect(result.stdout.match(/^sluice top /gm)!.length).toBeGreaterThanOrEqual(2);
  });

  it('refuses a bad interval or iteration count', async () => {
    const s = await setup();
    for (const argv of [
      ['--interval', '0'],
      ['--interval', 'fast'],
      ['--interval', '-1'],
      ['--iterations', '0'],
    ]) {
      const result = await s.top(argv);
      expect([argv.join(' '), result.code]).toEqual([argv.join(' '), EXIT_USAGE]);
      expect(result.stderr).toMatch(/^error: --(interval|iterations) must be/);
    }
  });
});
