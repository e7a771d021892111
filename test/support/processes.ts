/**
 * Child processes of the end-to-end tests (`node --import tsx script …`): their stdout as lines, and
 * their exit. A test reads what they printed and kills them (SIGKILL or SIGTERM) by handle.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';

export const REPO_ROOT = new URL('../..', import.meta.url).pathname;

export interface Proc {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  /** The first chunks of stderr, for a failure's message. */
  stderr: string[];
  exited: Promise<number | null>;
}

export const launch = (script: string, args: string[], env: NodeJS.ProcessEnv = process.env): Proc => {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: REPO_ROOT, env });
  const lines: string[] = [];
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop()!;
    lines.push(...parts);
  });
  const stderr: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => stderr.length < 50 && stderr.push(chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      // An unterminated last line is a write cut short by SIGKILL: not evidence of anything.
      if (code !== 0 && code !== null) console.error(`${script} exited ${code}: ${stderr.join('')}`);
      resolve(code);
    }),
  );
  return { child, lines, stderr, exited };
};

export const until = async (what: string, condition: () => boolean | Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
