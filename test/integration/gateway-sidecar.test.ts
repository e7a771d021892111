/**
 * `sluice gateway` (the sidecar) as its own process in front of the local stack: kcat lists, produces
 * and consumes through it, and what it wrote is what the HTTP API reads. With --require-sasl, a client
 * that does not authenticate gets nothing.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { LocalStack } from '../../local/stack.js';
import { startLocalStack } from '../../local/stack.js';
import type { Proc } from '../support/processes.js';
import { launch, until } from '../support/processes.js';
import { call } from './stack.js';

let stack: LocalStack;
const sidecars: Proc[] = [];

beforeAll(async () => {
  const suffix = randomUUID().slice(0, 8);
  stack = await startLocalStack({
    port: 0,
    maintenanceIntervalMs: 0,
    env: {
      ...process.env,
      AWS_ENDPOINT_URL_S3: inject('s3Endpoint'),
      AWS_ENDPOINT_URL_DYNAMODB: inject('dynamodbEndpoint'),
      SLUICE_TABLE_NAME: `gws-${suffix}`,
      SLUICE_BUCKETS: `gws-${suffix}`,
    },
  });
  expect((await call(stack.url, 'POST', '/v1/topics', { name: 'side', partitions: 2 })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  for (const s of sidecars) {
    s.child.kill('SIGTERM');
    await s.exited;
  }
  await stack?.stop();
});

/** Starts `sluice gateway` on a free port; resolves with the bootstrap it prints. */
const sidecar = async (...extra: string[]): Promise<string> => {
  const proc = launch('bin/sluice.js', ['gateway', '--listen', '127.0.0.1:0', '--url', stack.url, ...extra]);
  sidecars.push(proc);
  await until(
    'the sidecar to print its bootstrap',
    () => proc.lines.some((l) => l.startsWith('bootstrap.servers=')),
    30_000,
  );
  return proc.lines.find((l) => l.startsWith('bootstrap.servers='))!.slice('bootstrap.servers='.length);
};

const kcat = (bootstrap: string, args: string[], input?: string) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = execFile('kcat', ['-b', bootstrap, ...args], { timeout: 30_000 }, () => undefined);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    child.stderr!.on('data', (d: Buffer) => (err += d));
    child.stdin!.end(input ?? '');
    child.on('exit', (code) => resolve({ code, out, err }));
  });

describe('sluice gateway (sidecar process)', () => {
  it('serves kcat: metadata, produce and consume, as the HTTP API sees them', async () => {
    const bootstrap = await sidecar();
    expect(bootstrap).toMatch(/^127\.0\.0\.1:\d+$/);
    const listed = await kcat(bootstrap, ['-L', '-J']);
    expect(listed.code).toBe(0);
    const metadata = JSON.parse(listed.out) as { topics: { topic: string; partitions: unknown[] }[] };
    expect(metadata.topics.find((t) => t.topic === 'side')?.partitions).toHaveLength(2);

    const produced = await kcat(
      bootstrap,
      ['-P', '-t', 'side', '-p', '1', '-K:', '-z', 'lz4'],
      'a:one\nb:two\nc:three\n',
    );
    expect(produced.code, produced.err).toBe(0);
    const consumed = await kcat(bootstrap, [
      '-C',
      '-t',
      'side',
      '-p',
      '1',
      '-o',
      'beginning',
      '-e',
      '-f',
      '%o %k %s\n',
    ]);
    expect(consumed.code, consumed.err).toBe(0);
    expect(consumed.out.trim().split('\n')).toEqual(['0 a one', '1 b two', '2 c three']);

    const http = await call(stack.url, 'GET', '/v1/topics/side/partitions/1/records?offset=0');
    expect(
      (http.json as { records: { key: string; value: string }[] }).records.map((r) => [r.key, r.value]),
    ).toEqual([
      ['a', 'one'],
      ['b', 'two'],
      ['c', 'three'],
    ]);
  }, 90_000);

  it('with --require-sasl serves nothing to a client that does not authenticate', async () => {
    const bootstrap = await sidecar('--require-sasl');
    const listed = await kcat(bootstrap, ['-L', '-J', '-m', '5']);
    expect(listed.code).not.toBe(0);
    expect(listed.out).not.toContain('"side"');
  }, 60_000);
});
