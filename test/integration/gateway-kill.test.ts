/**
 * The gateway crash test: a kafkajs consumer group of 3 member processes and 2 idempotent producer
 * processes, all through `npm start`'s Kafka gateway; once a third of the records are processed one
 * member is killed with SIGKILL. Every acknowledged record must be processed, and no partition's
 * offsets skipped. `npm run test:gateway-kill` runs it with 20,000 records.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Proc } from '../support/processes.js';
import { launch, until } from '../support/processes.js';
import type { NpmStart } from './npm-start.js';
import { startNpmStart } from './npm-start.js';

const RECORDS = Number(process.env['GATEWAY_KILL_RECORDS'] ?? 2_000);
const PARTITIONS = 6;

let sluice: NpmStart;
let bootstrap: string;
const procs: Proc[] = [];

beforeAll(async () => {
  sluice = await startNpmStart({
    SLUICE_STORE_COUNT: '1',
    SLUICE_GROUP_SESSION_TIMEOUT_MS: '6000',
    SLUICE_GROUP_HEARTBEAT_INTERVAL_MS: '1000',
  });
  bootstrap = (
    JSON.parse(await readFile(join(sluice.dataDir, 'stack.json'), 'utf8')) as { kafka: { bootstrap: string } }
  ).kafka.bootstrap;
}, 120_000);

afterAll(async () => {
  for (const p of procs)
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await sluice?.stop();
});

describe('a kafkajs group through the gateway, one member SIGKILLed mid-stream', () => {
  it('processes every acknowledged record and skips no offset', async () => {
    const topic = 'gw-kill';
    const created = await fetch(`${sluice.url}/v1/topics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: topic, partitions: PARTITIONS }),
    });
    expect(created.status).toBe(201);
    const members = [1, 2, 3].map((n) =>
      launch('test/integration/gateway-kill/member.ts', [bootstrap, topic, 'gw-kill-group', `member-${n}`]),
    );
    procs.push(...members);
    await until(
      'every member to join',
      () => members.every((m) => m.lines.some((l) => l.startsWith('joined'))),
      60_000,
    );
    const producers = ['a', 'b'].map((id) =>
      launch('test/integration/gateway-kill/producer.ts', [bootstrap, topic, id, String(RECORDS / 2)]),
    );
    procs.push(...producers);

    const processed = () => members.flatMap((m) => m.lines.filter((l) => l.startsWith('processed ')));
    await until('a third of the records processed', () => processed().length >= RECORDS / 3, 120_000);
    // The victim is a member that is processing (on a loaded machine one member can still be waiting
    // for its first assignment when a third of the records are done).
    const processedBy = (m: (typeof members)[number]) =>
      m.lines.filter((l) => l.startsWith('processed ')).length;
    const victim = members.reduce((best, m) => (processedBy(m) > processedBy(best) ? m : best));
    victim.child.kill('SIGKILL');
    await victim.exited;
    const processedByVictim = victim.lines.filter((l) => l.startsWith('processed ')).length;

    expect(await Promise.all(producers.map((p) => p.exited))).toEqual([0, 0]);
    const acked = new Set(
      producers.flatMap((p) =>
        p.lines.filter((l) => l.startsWith('acked ')).flatMap((l) => l.split(' ').slice(1)),
      ),
    );
    expect(acked.size).toBe(RECORDS);
    const values = () => new Set(processed().map((l) => l.split(' ')[3]!));
    await until(
      'every acknowledged record processed',
      () => [...acked].every((v) => values().has(v)),
      180_000,
    );

    // No offset skipped: each partition's processed offsets are 0..max without a gap.
    const byPartition = new Map<number, Set<number>>();
    for (const line of processed()) {
      const [, partition, offset] = line.split(' ');
      const set = byPartition.get(Number(partition)) ?? new Set<number>();
      set.add(Number(offset));
      byPartition.set(Number(partition), set);
    }
    let total = 0;
    for (const offsets of byPartition.values()) {
      expect(Math.max(...offsets) + 1).toBe(offsets.size);
      total += offsets.size;
    }
    expect(total).toBe(RECORDS);
    // The victim did process records before it died, and the survivors took its partitions.
    expect(processedByVictim).toBeGreaterThan(0);
    for (const m of members.filter((m) => m !== victim)) m.child.kill('SIGTERM');
  }, 420_000);
});
