/**
 * The command line against the local stack over real HTTP, in-process through `run(argv, io)`:
 * create a topic, produce from stdin, consume from earliest, consume as a group member (join, commit,
 * leave), and describe the group's lag.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_API_ERROR, EXIT_OK, run } from '../../cli/main.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stack.stop();
});

/** Runs the CLI in-process; `output` shows what it has printed so far while it runs. */
const start = (argv: string[], { stdin, signal }: { stdin?: string; signal?: AbortSignal } = {}) => {
  const output = { stdout: '', stderr: '' };
  async function* input() {
    if (stdin !== undefined) yield stdin;
  }
  const done = run(argv, {
    stdout: { write: (text) => void (output.stdout += text) },
    stderr: { write: (text) => void (output.stderr += text) },
    env: { SLUICE_URL: t.url },
    stdin: input(),
    ...(signal ? { signal } : {}),
  }).then((code) => ({ code, ...output }));
  return { output, done };
};

const sluice = (argv: string[], stdin?: string) => start(argv, stdin === undefined ? {} : { stdin }).done;

const until = async (condition: () => boolean, timeoutMs = 20_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('sluice command line', () => {
  const topic = 'cli-orders';
  const lines = Array.from({ length: 30 }, (_, i) => `user-${i % 5}:event-${i}`);

  it('creates a topic and describes its partitions', async () => {
    const created = await sluice([
      'topics',
      'create',
      topic,
      '--partitions',
      '3',
      '--config',
      'retention.ms=3600000',
    ]);
    expect(created).toMatchObject({ code: EXIT_OK, stderr: '' });
    expect(created.stdout).toBe(`Created topic ${topic} with 3 partitions, replication factor 1.\n`);

    const described = await sluice(['topics', 'describe', topic]);
    expect(described.code).toBe(EXIT_OK);
    expect(described.stdout).toContain('PARTITION  LEADER  EPOCH  REPLICAS  ISR  LOG START  HIGH WATERMARK');
    expect(described.stdout).toMatch(/retention\.ms\s+3600000/);
  });

  it('produces stdin lines as keyed records in batches', async () => {
    const produced = await sluice(
      ['produce', topic, '--separator', ':', '--batch-records', '8', '--json'],
      `${lines.join('\n')}\n`,
    );
    expect(produced.code).toBe(EXIT_OK);
    const summary = JSON.parse(produced.stdout);
    expect(summary).toMatchObject({ topic, records: 30, failed: 0 });
    const perPartition = summary.partitions as {
      partition: number;
      records: number;
      firstOffset: number;
      lastOffset: number;
    }[];
    expect(perPartition.reduce((sum, p) => sum + p.records, 0)).toBe(30);
    for (const p of perPartition) expect([p.firstOffset, p.lastOffset]).toEqual([0, p.records - 1]);
    // One RecordBatch request per partition per 8 records.
    expect(summary.requests).toBe(perPartition.reduce((n, p) => n + Math.ceil(p.records / 8), 0));

    // The server's view agrees: high watermarks add up to what was produced.
    const { json } = await t.call('GET', `/v1/topics/${topic}`);
    expect(
      json.partitions.reduce((sum: number, p: { highWatermark: number }) => sum + p.highWatermark, 0),
    ).toBe(30);
  });

  it('consumes everything from earliest, each key on one partition in produce order', async () => {
    const consumed = await sluice(['consume', topic, '--from', 'earliest', '--json']);
    expect(consumed.code).toBe(EXIT_OK);
    const records = consumed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { partition: number; offset: number; key: string; value: string });
    expect(records).toHaveLength(30);
    expect(records.map((r) => `${r.key}:${r.value}`).sort()).toEqual([...lines].sort());
    for (let k = 0; k < 5; k++) {
      const ofKey = records.filter((r) => r.key === `user-${k}`);
      expect(new Set(ofKey.map((r) => r.partition)).size).toBe(1);
      expect(ofKey.map((r) => r.value)).toEqual(
        lines.filter((l) => l.startsWith(`user-${k}:`)).map((l) => l.slice(7)),
      );
    }
    expect(consumed.stderr).toMatch(/^Consumed 30 records in .+\.\n$/);
  });

  it('consumes as a group member, commits, leaves, and the group shows no lag', async () => {
    const group = 'cli-billing';
    // A new group starts at auto.offset.reset (Kafka's default latest); this one asks for earliest.
    const fresh = await sluice(['consume', topic, '--group', 'cli-latest', '--value-only']);
    expect(fresh).toMatchObject({ code: EXIT_OK, stdout: '' });
    const first = await sluice([
      'consume',
      topic,
      '--group',
      group,
      '--value-only',
      '--consumer-property',
      'auto.offset.reset=earliest',
    ]);
    expect(first.code).toBe(EXIT_OK);
    expect(first.stdout.trim().split('\n').sort()).toEqual(lines.map((l) => l.split(':')[1]).sort());
    expect(first.stderr).toContain(`owns partitions 0-2 of ${topic}`);
    expect(first.stderr).toContain(`left group ${group}.`);

    // From the committed offsets, a second run finds nothing new.
    const second = await sluice(['consume', topic, '--group', group]);
    expect(second.code).toBe(EXIT_OK);
    expect(second.stdout).toBe('');

    const described = await sluice(['groups', 'describe', group]);
    expect(described.code).toBe(EXIT_OK);
    const { json: topicNow } = await t.call('GET', `/v1/topics/${topic}`);
    const rows = topicNow.partitions.map(
      (p: { partition: number; highWatermark: number }) =>
        `${topic}  ${String(p.partition).padStart(9)}  ${String(p.highWatermark).padStart(9)}  ` +
        `${String(p.highWatermark).padStart(14)}  ${'0'.padStart(3)}  -`,
    );
    const [header, ...rest] = described.stdout.split('\n');
    expect(header).toMatch(
      new RegExp(`^Group: ${group}  State: EMPTY  GroupEpoch: \\d+  Assignor: uniform$`),
    );
    expect(rest).toEqual([
      '',
      'No active members.',
      '',
      'TOPIC       PARTITION  COMMITTED  HIGH WATERMARK  LAG  MEMBER',
      ...rows,
      'Total lag: 0',
      '',
    ]);

    const listed = await sluice(['groups', 'list', '--json']);
    expect(JSON.parse(listed.stdout).groups).toContainEqual({ groupId: group, state: 'EMPTY', members: 0 });
  });

  it('follows as a group member until interrupted, then commits and leaves', async () => {
    const group = 'cli-follow';
    const interrupt = new AbortController();
    const follower = start(
      ['consume', topic, '--group', group, '--from', 'latest', '--follow', '--details'],
      {
        signal: interrupt.signal,
      },
    );
    await until(() => follower.output.stderr.includes('owns partitions 0-2'));

    const active = JSON.parse((await sluice(['groups', 'describe', group, '--json'])).stdout);
    expect(active.state).toBe('STABLE');
    expect(active.members).toHaveLength(1);
    expect(active.members[0].assignment.topicPartitions).toEqual([{ topic, partitions: [0, 1, 2] }]);

    const produced = await sluice(['produce', topic, '--key', 'user-1', '--value', 'late', '--json']);
    const [{ partition, lastOffset }] = JSON.parse(produced.stdout).partitions;
    await until(() => follower.output.stdout.includes('late'));
    expect(follower.output.stdout).toBe(`Partition:${partition}\tOffset:${lastOffset}\tuser-1\tlate\n`);

    interrupt.abort();
    const { code, stderr } = await follower.done;
    expect(code).toBe(EXIT_OK);
    expect(stderr).toContain(`left group ${group}.`);
    const after = JSON.parse((await sluice(['groups', 'describe', group, '--json'])).stdout);
    expect(after.state).toBe('EMPTY');
    expect(after.offsets).toContainEqual(
      expect.objectContaining({ topic, partition, committedOffset: lastOffset + 1, lag: 0 }),
    );
  });

  it('answers an unknown topic with exit 1, the Kafka code and a hint', async () => {
    const result = await sluice(['consume', 'cli-missing']);
    expect(result.code).toBe(EXIT_API_ERROR);
    expect(result.stderr).toMatch(
      /^error: UNKNOWN_TOPIC_OR_PARTITION \(HTTP 404\): .+\nhint: list the topics/,
    );
  });
});
