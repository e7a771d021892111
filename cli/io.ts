/**
 * What the command line touches outside itself, injectable so tests run `run(argv, io)` in-process:
 * the output streams, stdin, the environment, fetch, the clock and the interrupt signal.
 */
import type { FetchLike } from '../sdk/transport.js';

/** Standard input: lines or bytes, and a terminal's raw mode when it is one (`sluice top` reads keys). */
export type TerminalInput = AsyncIterable<string | Uint8Array> & {
  setRawMode?: (on: boolean) => unknown;
  isRaw?: boolean;
};

export interface Output {
  /** May return a promise when the stream is full; long outputs await it. */
  write(text: string): void | Promise<void>;
  /** A terminal: progress lines rewrite themselves in place. */
  isTTY?: boolean;
  /** A terminal's size now, for screens drawn in place (`sluice top`). */
  size?(): { columns: number; rows: number } | undefined;
}

export interface Io {
  stdout: Output;
  stderr: Output;
  /** Chunks of standard input; absent means empty. */
  stdin?: TerminalInput;
  /** Standard input is a terminal: someone types the records. */
  stdinIsTTY?: boolean;
  env?: Record<string, string | undefined>;
  fetch?: FetchLike;
  /** Aborted on SIGINT: long-running commands stop cleanly (commit, leave the group) and exit 0. */
  signal?: AbortSignal;
  now?: () => number;
  /** Backoff between retries of a request. */
  sleep?: (ms: number) => Promise<void>;
}

/** Waits `ms`, or less when `signal` aborts first; never rejects. */
export const delay = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/** Lines of a text stream, without their `\n` or `\r\n`; a last line without a newline counts too. */
export async function* readLines(input: AsyncIterable<string | Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of input) {
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      yield stripCarriageReturn(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
    }
  }
  pending += decoder.decode();
  if (pending.length > 0) yield stripCarriageReturn(pending);
}

const stripCarriageReturn = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);
