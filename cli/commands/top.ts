/**
 * `sluice top`: live produce and consume rates, lag per group and the ISR state of partitions,
 * refreshed in place on a terminal (its alternate screen, as top(1) does; q or Ctrl-C quits and the
 * last screen stays printed). Elsewhere (a pipe, a file) it prints one snapshot per interval, and
 * `--once` prints a single one, measured over one interval. Everything is read through the SDK.
 */
import { nodeHttpFetch } from '../../sdk/node-http.js';
import type { CommandSpec, Context } from '../command.js';
import { Options, UsageError } from '../command.js';
import { delay } from '../io.js';
import type { TerminalInput } from '../io.js';
import type { TopView } from '../top/rates.js';
import { computeView } from '../top/rates.js';
import { fitScreen, renderTop } from '../top/render.js';
import type { Sample, SampleFilter } from '../top/sample.js';
import { takeSample } from '../top/sample.js';

const DEFAULT_INTERVAL_SECONDS = 2;
const INTERVAL = /^(\d{1,5})(\.\d{1,3})?$/;

const ESC = '\u001b[';
export const SCREEN = {
  enter: `${ESC}?1049h${ESC}?25l`,
  leave: `${ESC}?25h${ESC}?1049l`,
  home: `${ESC}H`,
  clearLine: `${ESC}K`,
  clearBelow: `${ESC}J`,
} as const;

/** A frame drawn over the previous one: each line clears what the last frame left to its right. */
export const frame = (lines: readonly string[]): string =>
  `${SCREEN.home}${lines.map((l) => `${l}${SCREEN.clearLine}`).join('\n')}\n${SCREEN.clearBelow}`;

/** Keys that quit: q, Q, and Ctrl-C (a raw-mode terminal sends it as a byte instead of a signal). */
const QUIT_KEYS = ['q', 'Q', '\u0003'];

/** Reads keys from a terminal's stdin until one quits; the caller's process ends the stream. */
const watchKeys = (stdin: TerminalInput, quit: () => void): (() => void) => {
  const raw = stdin;
  const wasRaw = raw.isRaw === true;
  if (typeof raw.setRawMode === 'function') raw.setRawMode(true);
  void (async () => {
    const decoder = new TextDecoder();
    // Read by hand, not with for-await: leaving that loop would destroy stdin before raw mode is
    // restored; the command line closes stdin itself when it exits.
    const keys = stdin[Symbol.asyncIterator]();
    for (;;) {
      const { value, done } = await keys.next();
      if (done) return;
      const text = typeof value === 'string' ? value : decoder.decode(value);
      if (QUIT_KEYS.some((k) => text.includes(k))) return quit();
    }
  })().catch(() => {});
  return () => {
    try {
      if (typeof raw.setRawMode === 'function') raw.setRawMode(wasRaw);
    } catch {
      // stdin already closed: the terminal's mode went with it.
    }
  };
};

const parseInterval = (text: string | undefined): number => {
  if (text === undefined) return DEFAULT_INTERVAL_SECONDS;
  const seconds = INTERVAL.test(text) ? Number(text) : NaN;
  if (!(seconds >= 0.2 && seconds <= 86_400))
    throw new UsageError(
      `--interval must be seconds from 0.2 to 86400 (e.g. 2 or 0.5), got ${JSON.stringify(text)}`,
      top,
    );
  return seconds;
};

export const top: CommandSpec = {
  words: ['top'],
  summary: 'Live produce and consume rates, lag per group and ISR state, refreshed in place.',
  args: [],
  options: {
    interval: {
      type: 'string',
      valueName: 'SECONDS',
      description: `seconds between refreshes; rates are measured over it (default ${DEFAULT_INTERVAL_SECONDS})`,
    },
    topic: {
      type: 'string',
      multiple: true,
      valueName: 'TOPIC',
      description: 'only this topic (repeatable)',
    },
    group: {
      type: 'string',
      multiple: true,
      valueName: 'GROUP',
      description: 'only this group (repeatable)',
    },
    partitions: {
      type: 'boolean',
      description: 'list every partition and the lag of every group partition, not only the out-of-sync ones',
    },
    once: { type: 'boolean', description: 'print one snapshot, rates measured over one interval, and exit' },
    iterations: {
      type: 'string',
      valueName: 'N',
      description: 'exit after N refreshes (top -n)',
    },
  },
  examples: [
    'sluice top',
    'sluice top --topic orders --group billing --interval 5',
    'sluice top --once --partitions',
    'sluice top --json --iterations 10 > top.jsonl',
  ],
  async run(ctx, { values }) {
    const options = new Options(values, top);
    const intervalSeconds = parseInterval(options.string('interval'));
    const iterations = options.flag('once') ? 1 : options.int('iterations', { min: 1 });
    const filter: SampleFilter = { topics: options.list('topic'), groups: options.list('group') };
    await runTop(ctx, { intervalSeconds, iterations, filter, partitions: options.flag('partitions') });
  },
};

interface TopOptions {
  intervalSeconds: number;
  /** Refreshes to show before exiting; undefined: until q, Ctrl-C or SIGTERM. */
  iterations: number | undefined;
  filter: SampleFilter;
  partitions: boolean;
}

const runTop = async (ctx: Context, { intervalSeconds, iterations, filter, partitions }: TopOptions) => {
  const admin = ctx.api.client(() => nodeHttpFetch()).admin();
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const sample = () => takeSample(admin, filter, { now: ctx.now, wallClock: Date.now });
  const intervalMs = intervalSeconds * 1000;
  const live = ctx.stdout.isTTY === true && !ctx.json && iterations !== 1;
  const keys = live && ctx.stdinIsTTY && ctx.stdin ? watchKeys(ctx.stdin, onAbort) : undefined;
  const show = (view: TopView, error?: string, onScreen = true) =>
    renderTop(view, {
      url: ctx.api.url,
      intervalSeconds,
      partitions,
      keysHint: onScreen && keys !== undefined,
      ...(error ? { error } : {}),
    });
  const output = async (view: TopView, error?: string): Promise<void> => {
    if (ctx.json) await ctx.print(JSON.stringify(view));
    else if (live) await ctx.stdout.write(frame(fitScreen(show(view, error), ...terminalSize(ctx))));
    else await ctx.print(`${show(view).join('\n')}\n`);
  };
  let previous: Sample = await sample();
  if (iterations === 1) {
    // --once: rates need a second look, one interval later; Ctrl-C meanwhile prints nothing.
    await delay(intervalMs, stop.signal);
    if (!stop.signal.aborted) await output(computeView(previous, await sample()));
    ctx.signal.removeEventListener('abort', onAbort);
    return;
  }
  let view = computeView(undefined, previous);
  let shown = 0;
  if (live) await ctx.stdout.write(SCREEN.enter);
  try {
    await output(view);
    shown++;
    let next = ctx.now();
    while (!stop.signal.aborted && (iterations === undefined || shown < iterations)) {
      next += intervalMs;
      await delay(Math.max(0, next - ctx.now()), stop.signal);
      if (stop.signal.aborted) break;
      let error: string | undefined;
      try {
        const current = await sample();
        view = computeView(previous, current);
        previous = current;
      } catch (e) {
        // On a terminal the failure is shown on the screen and the next refresh may succeed; a
        // counted run fails; an endless one in a pipe says so on stderr and goes on.
        if (!live && iterations !== undefined) throw e;
        error = e instanceof Error ? e.message : String(e);
        if (!live) {
          ctx.note(`error: ${error}`);
          continue;
        }
      }
      await output(view, error);
      shown++;
    }
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    keys?.();
    if (live) {
      await ctx.stdout.write(SCREEN.leave);
      // The last screen stays in the terminal's scrollback, as a snapshot.
      await ctx.print(show(view, undefined, false).join('\n'));
    }
  }
};

const terminalSize = (ctx: Context): [number | undefined, number | undefined] => {
  const size = ctx.stdout.size?.();
  // A terminal that reports no size (0 × 0, as some pseudo-terminals do) is not fitted at all.
  const known = (n: number | undefined) => (n !== undefined && n > 0 ? n : undefined);
  return [known(size?.columns), known(size?.rows)];
};
