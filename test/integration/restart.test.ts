/**
 * `npm start` as a user runs it: a separate process group with its own emulators and data under a
 * data directory. It must answer health within 60 s, and after kill -9 of the whole group and a
 * restart, every topic and acknowledged record is still there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { call } from './stack.js';

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const children: ChildProcess[] = [];
let dataDir = '';

const start = async (): Promise<{ child: ChildProcess; url: string; readyMs: number }> => {
  const port = await freePort();
  const started = Date.now();
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    SLUICE_KAFKA_PORT: '0',
    SLUICE_DATA_DIR: dataDir,
  };
  for (const name of [
    'AWS_ENDPOINT_URL',
    'AWS_ENDPOINT_URL_S3',
    'AWS_ENDPOINT_URL_DYNAMODB',
    'SLUICE_TABLE_NAME',
    'SLUICE_BUCKETS',
  ])
    delete env[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  while (Date.now() - started < 90_000) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${output}`);
    const ok = await fetch(`${url}/v1/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { child, url, readyMs: Date.now() - started };
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`npm start did not answer within 90 s:\n${output}`);
};

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

it(
  'keeps topics and records across kill -9 of the whole process group and a restart',
  { timeout: 240_000 },
  async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'sluice-restart-'));
    const first = await start();
    expect(first.readyMs).toBeLessThan(60_000);
    expect(
      (
        await call(first.url, 'POST', '/v1/topics', {
          name: 'durable',
          partitions: 2,
          configs: { 'retention.ms': '86400000' },
        })
      ).status,
    ).toBe(201);
    const produced = await call(first.url, 'POST', '/v1/topics/durable/records', {
      records: Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: `value-${i}` })),
    });
    expect(produced.status).toBe(200);
    const described = (await call(first.url, 'GET', '/v1/topics/durable')).json;
    const before = await Promise.all(
      [0, 1].map(
        async (p) =>
          (await call(first.url, 'GET', `/v1/topics/durable/partitions/${p}/records?offset=0`)).json,
      ),
    );

    process.kill(-first.child.pid!, 'SIGKILL');
    await exited(first.child);

    const second = await start();
    expect(second.readyMs).toBeLessThan(60_000);
    expect((await call(second.url, 'GET', '/v1/topics/durable')).json).toEqual(described);
    const after = await Promise.all(
      [0, 1].map(
        async (p) =>
          (await call(second.url, 'GET', `/v1/topics/durable/partitions/${p}/records?offset=0`)).json,
      ),
    );
    expect(after).toEqual(before);
    expect(after.reduce((n, page) => n + page.records.length, 0)).toBe(40);
    expect((await call(second.url, 'POST', '/v1/topics', { name: 'durable' })).json.error.code).toBe(
      'TOPIC_ALREADY_EXISTS',
    );

    second.child.kill('SIGTERM');
    expect(await exited(second.child)).toBe(0);
  },
);
