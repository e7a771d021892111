/** `sluice connect …` against the local stack over real HTTP, in-process through `run(argv, io)`. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_API_ERROR, EXIT_OK, EXIT_USAGE, run } from '../../cli/main.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stack.stop();
});

const sluice = async (argv: string[]) => {
  const output = { stdout: '', stderr: '' };
  const code = await run(argv, {
    stdout: { write: (text) => void (output.stdout += text) },
    stderr: { write: (text) => void (output.stderr += text) },
    env: { SLUICE_URL: t.url },
  });
  return { code, ...output };
};

const sink = [
  '--config',
  'connector.class=S3SinkConnector',
  '--config',
  'topics=orders',
  '--config',
  's3.bucket.name=archive',
  '--config',
  'flush.size=100',
];

describe('sluice connect', () => {
  it('creates, lists, shows status, pauses, resumes, stops, resets offsets, restarts and deletes', async () => {
    expect(await sluice(['connect', 'create', 'archive', ...sink])).toMatchObject({
      code: EXIT_OK,
      stdout: 'Connector archive (sink) saved.\n',
    });
    const again = await sluice(['connect', 'create', 'archive', ...sink]);
    expect(again.code).toBe(EXIT_API_ERROR);
    expect(again.stderr).toContain('error: ALREADY_EXISTS (HTTP 409): Connector archive already exists');
    const listed = await sluice(['connect', 'list']);
    expect(
      listed.stdout
        .split('\n')
        .slice(0, 2)
        .map((l) => l.split(/\s+/).filter(Boolean)),
    ).toEqual([
      ['CONNECTOR', 'TYPE', 'STATE', 'TASKS'],
      ['archive', 'sink', 'RUNNING', '0:UNASSIGNED'],
    ]);
    expect((await sluice(['connect', 'pause', 'archive'])).stdout).toBe('Connector archive paused.\n');
    expect((await sluice(['connect', 'status', 'archive'])).stdout).toMatch(/State: +PAUSED/);
    expect((await sluice(['connect', 'resume', 'archive'])).code).toBe(EXIT_OK);
    expect((await sluice(['connect', 'offsets', 'archive', '--reset'])).stderr).toContain('STOPPED state');
    expect((await sluice(['connect', 'stop', 'archive'])).code).toBe(EXIT_OK);
    expect((await sluice(['connect', 'offsets', 'archive', '--reset'])).stdout).toBe(
      'Offsets of archive reset.\n',
    );
    const restarted = await sluice(['connect', 'restart', 'archive', '--include-tasks', '--json']);
    expect(JSON.parse(restarted.stdout)).toMatchObject({
      name: 'archive',
      connector: { state: 'RESTARTING' },
    });
    expect((await sluice(['connect', 'delete', 'archive'])).stdout).toBe('Deleted connector archive.\n');
    expect((await sluice(['connect', 'status', 'archive'])).code).toBe(EXIT_API_ERROR);
    expect((await sluice(['connect', 'create', 'x'])).code).toBe(EXIT_USAGE);
  });
});
