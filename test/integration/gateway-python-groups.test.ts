/**
 * Python group consumers through `npm start`'s gateway: kafka-python and confluent-kafka (librdkafka,
 * classic protocol) members share a group's partitions, one leaves, the other takes every partition
 * and resumes from the committed offsets (nothing re-read, nothing skipped); the offsets they committed
 * are the ones `GET /v1/groups/{group}/offsets` shows. confluent's AdminClient creates, describes and
 * deletes a topic.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NpmStart } from './npm-start.js';
import { startNpmStart } from './npm-start.js';

const run = promisify(execFile);
let sluice: NpmStart;
let bootstrap: string;

beforeAll(async () => {
  sluice = await startNpmStart({ SLUICE_STORE_COUNT: '1', SLUICE_GROUP_SESSION_TIMEOUT_MS: '10000' });
  const stack = JSON.parse(await readFile(join(sluice.dataDir, 'stack.json'), 'utf8')) as {
    kafka: { bootstrap: string };
  };
  bootstrap = stack.kafka.bootstrap;
}, 120_000);
afterAll(async () => {
  await sluice?.stop();
});

interface Outcome {
  shared: Record<string, number[]>;
  first: Record<string, [number, number, string][]>;
  after: [number, number, string][];
  alone: number[];
  committed: Record<string, number>;
  admin: { described_partitions: number; deleted: boolean } | null;
}

const values = (records: [number, number, string][]) => records.map((r) => r[2]).sort();
const batch = (n: number) =>
  [0, 1, 2, 3].flatMap((p) => [0, 1, 2, 3, 4].map((i) => `b${n}-p${p}-${i}`)).sort();

describe.each(['kafka-python', 'confluent-kafka'])('%s group consumers', (library) => {
  it('share the partitions, hand them over when one leaves, resume from committed offsets; HTTP agrees', async () => {
    const topic = `py-${library}`;
    const group = `py-${library}-group`;
    const created = await fetch(`${sluice.url}/v1/topics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: topic, partitions: 4 }),
    });
    expect(created.status).toBe(201);
    const { stdout } = await run(
      '/usr/bin/python3',
      ['test/integration/kafka-clients/python_groups.py', library, bootstrap, topic, group],
      { timeout: 200_000 },
    );
    const out = JSON.parse(stdout) as Outcome;
    // Both members held partitions at once, never the same one.
    expect(out.shared['member-1']!.length).toBeGreaterThan(0);
    expect(out.shared['member-2']!.length).toBeGreaterThan(0);
    expect([...out.shared['member-1']!, ...out.shared['member-2']!].sort()).toEqual([0, 1, 2, 3]);
    // The first batch exactly once between them; after the leave, exactly the second batch.
    expect(values([...out.first['member-1']!, ...out.first['member-2']!])).toEqual(batch(1));
    expect(out.alone).toEqual([0, 1, 2, 3]);
    expect(values(out.after)).toEqual(batch(2));
    expect(out.committed).toEqual({ '0': 10, '1': 10, '2': 10, '3': 10 });
    const http = (await (await fetch(`${sluice.url}/v1/groups/${group}/offsets`)).json()) as {
      offsets: { topic: string; partition: number; offset: number }[];
    };
    expect(
      http.offsets
        .filter((o) => o.topic === topic)
        .map((o) => [o.partition, o.offset])
        .sort(),
    ).toEqual([
      [0, 10],
      [1, 10],
      [2, 10],
      [3, 10],
    ]);
    if (library === 'confluent-kafka') expect(out.admin).toEqual({ described_partitions: 3, deleted: true });
  }, 240_000);
});
