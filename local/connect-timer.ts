/**
 * The local stand-in for the connect-worker function's schedule and data trigger: one invocation at a
 * time, each a child process running functions/connect-worker.ts once (local/connect-invocation.ts),
 * started when `due` says there is work (a started source, or a sink whose topics advanced past its
 * committed offsets), checked `intervalMs` after the last one ended — also when it was killed, as a
 * new Lambda invocation would follow a crashed one. The running child's pid is kept in `connect-worker.pid`.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMF_LINE_PREFIX } from './telemetry-sink.js';

export interface ConnectTimer {
  /** The pid of the invocation running now, if any. */
  pid(): number | undefined;
  stop(): Promise<void>;
}

const ENTRY = fileURLToPath(new URL('./connect-invocation.ts', import.meta.url));

export const startConnectTimer = (options: {
  intervalMs: number;
  env: Record<string, string | undefined>;
  dataDir?: string;
  log: (line: string) => void;
  /** Where the invocation's EMF documents go (lines it marks with EMF_LINE_PREFIX). */
  emf?: (line: string) => void;
  /** Whether an invocation has work; no process is spawned while it has none. */
  due: () => Promise<boolean>;
}): ConnectTimer => {
  let child: ChildProcess | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const pidFile = options.dataDir ? join(options.dataDir, 'connect-worker.pid') : undefined;

  const invoke = async (): Promise<void> => {
    timer = undefined;
    if (stopped) return;
    const due = await options.due().catch(() => false);
    if (!due || stopped) {
      if (!stopped) timer = setTimeout(() => void invoke(), options.intervalMs);
      return;
    }
    const started = spawn(process.execPath, ['--import', 'tsx', ENTRY], {
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    if (pidFile && started.pid !== undefined)
      void writeFile(pidFile, `${started.pid}\n`).catch(() => undefined);
    // Whole lines only: an EMF document split across two chunks must not reach the sink in halves.
    const lines = () => {
      let rest = '';
      return (chunk: Buffer) => {
        const parts = (rest + chunk.toString('utf8')).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) {
          if (line.startsWith(EMF_LINE_PREFIX)) options.emf?.(line.slice(EMF_LINE_PREFIX.length));
          else if (line.trim()) options.log(`connect: ${line}`);
        }
      };
    };
    started.stdout?.on('data', lines());
    started.stderr?.on('data', lines());
    started.once('exit', (code, signal) => {
      child = undefined;
      if (code !== 0) options.log(`connect: invocation ended with ${signal ?? `exit code ${code}`}`);
      if (!stopped) timer = setTimeout(() => void invoke(), options.intervalMs);
    });
  };
  timer = setTimeout(() => void invoke(), 0);

  return {
    pid: () => child?.pid,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      const running = child;
      if (running && running.exitCode === null) {
        const exited = new Promise((resolve) => running.once('exit', resolve));
        running.kill('SIGTERM');
        await exited;
      }
      if (pidFile) await rm(pidFile, { force: true });
    },
  };
};
