/**
 * End to end through the local stack (`local/start.ts` in its own process, on the emulators of the
 * global setup): 2 producer processes write RECORDS records while 3 consumer processes of one group read
 * them; halfway, one consumer is killed with SIGKILL. Every record must be processed at least once, no
 * offset skipped, and every duplicate must come from the killed member's uncommitted range: processed
 * by it at or after its last commit of that partition, and once more by the partition's next owner.
 * `npm run test:e2e` runs the full size (100,000 records).
 */
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { SluiceClient } from '../../sdk/client.js';
import type { Proc, StackProcess } from '../support/processes.js';
import { launch, launchStack, until } from '../support/processes.js';

const RECORDS = Number(process.env['E2E_RECORDS'] ?? 40_000);
const PARTITIONS = 6;
const SESSION_TIMEOUT_MS = 6_000;

let stack: StackProcess;
let url: string;
let dataDir: string;

beforeAll(async () => {
  stack = await launchStack(
    'e2e',
    { s3: inject('s3Endpoint'), dynamodb: inject('dynamodbEndpoint') },
    SESSION_TIMEOUT_MS,
  );
  ({ url, dataDir } = stack);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe('a second stack on the data directory in use', () => {
  it('refuses to start, naming the running stack, and leaves the running one serving', async () => {
    const second = launch('local/start.ts', [], {
      ...process.env,
      PORT: '0',
      SLUICE_KAFKA_PORT: '0',
      SLUICE_DATA_DIR: dataDir,
    });
    const stderr: string[] = [];
    second.child.stderr.on('data', (chunk: string) => stderr.push(chunk));
    expect(await second.exited).toBe(1);
    expect(stderr.join('')).toContain(`(pid ${stack.proc.child.pid})`);
    expect(second.lines.some((l) => l.includes('listening on'))).toBe(false);
    expect((await new SluiceClient({ url }).admin().cluster()).clusterId).toEqual(expect.any(String));
  }, 60_000);
});

describe('a group of consumer processes, one killed with SIGKILL halfway', () => {
  it('processes every record at least once, skips none, and repeats only the killed member’s uncommitted range', async () => {
    const topic = 'e2e-orders';
    const group = 'e2e-billing';
    await new SluiceClient({ url }).admin().createTopic({ name: topic, partitions: PARTITIONS });

    const consumers = [0, 1, 2].map(() => launch('test/integration/e2e/consumer.ts', [url, topic, group]));
    const producers = ['a', 'b'].map((id) =>
      launch('test/integration/e2e/producer.ts', [url, topic, id, String(RECORDS / 2)]),
    );
    const processed = (): number =>
      consumers.reduce((n, c) => n + c.lines.filter((l) => l[0] === 'R').length, 0);

    // Halfway: kill the member that has processed the most, while it owns partitions.
    await until('half the records', () => processed() >= RECORDS / 2, 120_000);
    const victimIndex = consumers.map((c, i) => ({ i, n: c.lines.length })).sort((a, b) => b.n - a.n)[0]!.i;
    const victim = consumers[victimIndex]!;
    victim.child.kill('SIGKILL');
    expect(await victim.exited).toBe(null);
    const survivors = consumers.filter((c) => c !== victim);

    for (const p of producers) expect(await p.exited).toBe(0);
    const values = (c: Proc) => c.lines.filter((l) => l[0] === 'R').map((l) => l.split(' ')[3]!);
    await until(
      'every record',
      () => new Set(consumers.flatMap(values)).size >= RECORDS,
      60_000 + SESSION_TIMEOUT_MS,
    );
    for (const c of survivors) c.child.kill('SIGTERM');
    for (const c of survivors) expect(await c.exited).toBe(0);

    // Every record produced was processed: RECORDS distinct values, both producers' sequences whole.
    const seen = new Set(consumers.flatMap(values));
    expect(seen.size).toBe(RECORDS);
    for (const id of ['a', 'b'])
      for (let n = 0; n < RECORDS / 2; n++)
        if (!seen.has(`${id}-${n}`)) expect.fail(`${id}-${n} never processed`);

    // No offset skipped: per partition, the offsets processed are exactly 0 .. high watermark - 1.
    const described = await new SluiceClient({ url }).admin().describeTopic(topic);
    const byOffset = new Map<string, number[]>(); // "p o" → consumer indexes that processed it
    consumers.forEach((c, i) => {
      for (const l of c.lines.filter((line) => line[0] === 'R')) {
        const [, p, o] = l.split(' ');
        const k = `${p} ${o}`;
        byOffset.set(k, [...(byOffset.get(k) ?? []), i]);
      }
    });
    expect(described.partitions.reduce((n, p) => n + p.highWatermark, 0)).toBe(RECORDS);
    for (const p of described.partitions)
      for (let o = 0; o < p.highWatermark; o++)
        if (!byOffset.has(`${p.partition} ${o}`)) expect.fail(`partition ${p.partition} offset ${o} skipped`);

    // Duplicates: only offsets the victim processed past its last commit, read again by one survivor.
    const lastCommit = new Map<string, number>();
    for (const l of victim.lines.filter((line) => line[0] === 'C')) {
      const [, p, o] = l.split(' ');
      lastCommit.set(p!, Number(o));
    }
    const duplicates = [...byOffset].filter(([, who]) => who.length > 1);
    for (const [k, who] of duplicates) {
      const [p, o] = k.split(' ');
      expect(who.length, `${k} processed ${who.length} times`).toBe(2);
      expect(
        who.filter((i) => i === victimIndex),
        `${k} by ${who.join(',')}`,
      ).toHaveLength(1);
      expect(Number(o), `${k} was committed by the victim`).toBeGreaterThanOrEqual(lastCommit.get(p!) ?? 0);
    }
    const victimUncommitted = victim.lines
      .filter((l) => l[0] === 'R')
      .filter((l) => {
        const [, p, o] = l.split(' ');
        return Number(o) >= (lastCommit.get(p!) ?? 0);
      }).length;
    expect(duplicates.length).toBeLessThanOrEqual(victimUncommitted);
    console.log(
      `group-kill: ${RECORDS} records, ${processed()} processed, ${duplicates.length} duplicates ` +
        `(victim's uncommitted range: ${victimUncommitted})`,
    );
  }, 300_000);
});
