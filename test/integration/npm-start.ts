/**
 * `npm start` (local/start.ts) as a child process against the global setup's emulators, for tests
 * that kill what it runs: its own data directory, table and bucket, a free port, and the pid of the
 * Connect invocation it is running (`$SLUICE_DATA_DIR/connect-worker.pid`).
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';

export interface NpmStart {
  url: string;
  dataDir: string;
  /** The pid of the Connect invocation running now. */
  connectWorkerPid(): Promise<number>;
  /** What it printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts it with `env` on top of the emulator endpoints; resolves once /v1/health answers. */
export const startNpmStart = async (env: Record<string, string>): Promise<NpmStart> => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-npm-start-'));
  const port = await freePort();
  const suffix = Date.now().toString(36);
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      SLUICE_DATA_DIR: dataDir,
      AWS_ENDPOINT_URL_S3: inject('s3Endpoint'),
      AWS_ENDPOINT_URL_DYNAMODB: inject('dynamodbEndpoint'),
      SLUICE_TABLE_NAME: `npm-${suffix}`,
      SLUICE_BUCKETS: `npm-${suffix}`,
      SLUICE_MAINTENANCE_INTERVAL_MS: '0',
      SLUICE_KAFKA_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 90_000;
  while (
    !(await fetch(`${url}/v1/health`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm start did not come up (exit ${child.exitCode}):\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    dataDir,
    connectWorkerPid: async () => Number(await readFile(join(dataDir, 'connect-worker.pid'), 'utf8')),
    output: () => output,
    stop,
  };
};
