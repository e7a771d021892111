/**
 * Child processes of the end-to-end tests (`node --import tsx script …`): their stdout as lines, and
 * their exit. A test reads what they printed and kills them (SIGKILL or SIGTERM) by handle.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

/** `npm start` (local/start.ts) as a child process, on the global setup's emulators. */
export interface StackProcess {
  proc: Proc;
  url: string;
  dataDir: string;
  /** The environment that reaches the stack's store: for other processes of the test (CLI, runners). */
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

/**
 * Starts a stack with its own data directory, table and bucket (named `{prefix}-…`), a session
 * timeout short enough for a killed member's partitions to move within a test, heartbeats every
 * second and maintenance every second; resolves once it listens.
 */
export const launchStack = async (
  prefix: string,
  endpoints: { s3: string; dynamodb: string },
  sessionTimeoutMs: number,
): Promise<StackProcess> => {
  const dataDir = await mkdtemp(join(tmpdir(), `sluice-${prefix}-`));
  const suffix = randomUUID().slice(0, 8);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    SLUICE_TABLE_NAME: `${prefix}-${suffix}`,
    SLUICE_BUCKETS: `${prefix}-${suffix}`,
  };
  const proc = launch('local/start.ts', [], {
    ...env,
    PORT: '0',
    // The Kafka gateway's port too: a fixed 9092 would clash with another stack or a real broker.
    SLUICE_KAFKA_PORT: '0',
    SLUICE_DATA_DIR: dataDir,
    SLUICE_GROUP_SESSION_TIMEOUT_MS: String(sessionTimeoutMs),
    SLUICE_GROUP_HEARTBEAT_INTERVAL_MS: '1000',
    SLUICE_MAINTENANCE_INTERVAL_MS: '1000',
  });
  const listening = () => proc.lines.find((l) => l.includes('listening on'));
  await until('the stack', () => listening() !== undefined, 60_000);
  return {
    proc,
    url: /listening on (\S+)/.exec(listening()!)![1]!,
    dataDir,
    env,
    stop: async () => {
      proc.child.kill('SIGTERM');
      await proc.exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
};
