/**
 * Streams instances killed with SIGKILL through the local stack: `local/start.ts` in its own process,
 * three `sluice streams run` processes of one application (test/integration/streams-kill/app.ts: a
 * count per key), inputs produced with the SDK while they run, and the busiest instance killed with
 * SIGKILL once a part of the outputs is out. Then the outputs and the state (read back through the
 * interactive-query route) are checked against the inputs:
 * - at_least_once: nothing lost — every key's outputs cover 1..N and its stored count is at least N;
 * - exactly_once_v2: each key's outputs are exactly 1..N in order (0 duplicates, 0 losses) and its
 *   stored count is exactly N.
 * `STREAMS_KILL_RECORDS` sets the size (npm run test:streams-kill runs a larger one).
 */
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { GroupDescription } from '../../lib/wire/types.js';
import { SluiceClient } from '../../sdk/client.js';
import type { StackProcess } from '../support/processes.js';
import { launch, launchStack, until } from '../support/processes.js';

const RECORDS = Number(process.env['STREAMS_KILL_RECORDS'] ?? 1_500);
const KEYS = 40;
const PARTITIONS = 4;
const INSTANCES = 3;
const SESSION_TIMEOUT_MS = Number(process.env['STREAMS_KILL_SESSION_TIMEOUT_MS'] ?? 6_000);

let stack: StackProcess;
let url: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  stack = await launchStack(
    'sk',
    { s3: inject('s3Endpoint'), dynamodb: inject('dynamodbEndpoint') },
    SESSION_TIMEOUT_MS,
  );
  ({ url, env } = stack);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

const text = (b: Uint8Array | null): string => Buffer.from(b ?? new Uint8Array()).toString('utf8');

/** Every output record, per key in offset order (a key's counts live on one partition). */
const outputsByKey = async (client: SluiceClient, topic: string): Promise<Map<string, number[]>> => {
  const byKey = new Map<string, number[]>();
  const consumer = client.consumer();
  for (let partition = 0; partition < PARTITIONS; partition++) {
    let offset = 0;
    for (;;) {
      const batch = await consumer.fetch(topic, partition, offset);
      for (const r of batch.records) {
        const key = text(r.key);
        byKey.set(key, [...(byKey.get(key) ?? []), Number(text(r.value))]);
      }
      if (batch.nextOffset >= batch.highWatermark) break;
      offset = batch.nextOffset;
    }
  }
  return byKey;
};

describe.each(['at_least_once', 'exactly_once_v2'] as const)(
  'Streams instances of one app, one killed with SIGKILL mid-stream (%s)',
  (guarantee) => {
    it('loses nothing; exactly_once_v2 also duplicates nothing, in outputs and state', async () => {
      const started = Date.now();
      const app = `sk-${guarantee.replace(/_/g, '-')}`;
      const input = `${app}-input`;
      const output = `${app}-output`;
      const client = new SluiceClient({ url });
      const admin = client.admin();
      await admin.createTopic({ name: input, partitions: PARTITIONS });
      await admin.createTopic({ name: output, partitions: PARTITIONS });
      const instanceEnv = { ...env, SK_INPUT: input, SK_OUTPUT: output };
      // Before any input: every instance has joined and owns a task, so the victim has work to lose.

      const instances = Array.from({ length: INSTANCES }, () =>
        launch(
          'cli/main.ts',
          [
            'streams',
            'run',
            'test/integration/streams-kill/app.ts',
            '--bootstrap-server',
            url,
            '--config',
            `application.id=${app}`,
            '--config',
            `processing.guarantee=${guarantee}`,
            '--config',
            'commit.interval.ms=200',
          ],
          instanceEnv,
        ),
      );
      await until(
        'every instance running',
        () => instances.every((i) => i.lines.some((l) => l.includes('running against'))),
        60_000,
      );
      await until(
        'three members, each owning a partition',
        async () => {
          const g = (await admin.describeGroup(app)) as unknown as GroupDescription;
          return (
            g.members.length === INSTANCES &&
            g.members.every((m) => m.assignment.topicPartitions.some((tp) => tp.partitions.length > 0))
          );
        },
        60_000,
      );

      // Keys k0..k39 in turn, produced in requests of 50 while the instances process them.
      const producer = client.producer();
      const expected = new Map<string, number>();
      const produceAll = (async () => {
        for (let n = 0; n < RECORDS; n += 50) {
          const messages = Array.from({ length: Math.min(50, RECORDS - n) }, (_, i) => {
            const key = `k${(n + i) % KEYS}`;
            expected.set(key, (expected.get(key) ?? 0) + 1);
            return { key, value: `v${n + i}` };
          });
          await producer.send({ topic: input, messages });
          await new Promise((r) => setTimeout(r, 20));
        }
      })();

      const outputCount = async () =>
        (await admin.describeTopic(output)).partitions.reduce((n, p) => n + p.highWatermark, 0);
      await until('a third of the outputs', async () => (await outputCount()) >= RECORDS / 3, 90_000);
      // Every instance owns tasks (3 members over 4 partitions of 2 topics): any one is a victim.
      const group = (await admin.describeGroup(app)) as unknown as GroupDescription;
      const owned = group.members.map((m) =>
        m.assignment.topicPartitions.reduce((n, tp) => n + tp.partitions.length, 0),
      );
      const victim = instances[0]!;
      victim.child.kill('SIGKILL');
      expect(await victim.exited).toBe(null);
      const killedAt = Date.now();
      // The victim's partitions move when its session expires: measure when the survivors own all.
      await until(
        'the victim’s partitions reassigned',
        async () => {
          const g = (await admin.describeGroup(app)) as unknown as GroupDescription;
          const assigned = g.members.flatMap((m) =>
            m.assignment.topicPartitions.flatMap((tp) => tp.partitions),
          );
          return g.members.length === INSTANCES - 1 && assigned.length === owned.reduce((a, b) => a + b, 0);
        },
        30_000 + SESSION_TIMEOUT_MS,
      );
      const reassignedMs = Date.now() - killedAt;
      await produceAll;

      // Done when every key's committed count has reached its input count, read through the range
      // route (at_least_once duplicates make output counts run ahead of the inputs processed).
      const caughtUp = async () => {
        const { entries } = await client.streams(app).range('counts');
        const stored = new Map(entries.map((e) => [e.key as string, e.value as number]));
        return [...expected].every(([key, n]) => (stored.get(key) ?? 0) >= n);
      };
      await until('every input counted', caughtUp, 60_000 + SESSION_TIMEOUT_MS);
      const countedMs = Date.now() - killedAt;
      // Let a last commit land, then stop the survivors cleanly (they commit and leave).
      for (const i of instances.slice(1)) i.child.kill('SIGTERM');
      for (const i of instances.slice(1)) expect(await i.exited).toBe(0);

      const outputs = await outputsByKey(client, output);
      expect([...outputs.keys()].sort()).toEqual([...expected.keys()].sort());
      let duplicates = 0;
      for (const [key, n] of expected) {
        const counts = outputs.get(key)!;
        const stored = await client.streams(app).get('counts', key);
        if (guarantee === 'exactly_once_v2') {
          expect(counts, key).toEqual(Array.from({ length: n }, (_, i) => i + 1));
          expect(stored?.value, key).toBe(n);
        } else {
          // Re-processed records count again: every count 1..N appears, the last is at least N.
          for (let c = 1; c <= n; c++)
            if (!counts.includes(c)) expect.fail(`${key}: count ${c} never written (${counts.join(',')})`);
          expect(stored?.value as number, key).toBeGreaterThanOrEqual(n);
          expect(counts.at(-1), key).toBe(stored?.value);
        }
        duplicates += counts.length - n;
      }
      if (guarantee === 'exactly_once_v2') expect(duplicates).toBe(0);
      console.log(
        `streams-kill ${guarantee}: ${RECORDS} records, ${KEYS} keys, members owned ${owned.join('/')} partitions; ` +
          `after the SIGKILL: partitions reassigned in ${reassignedMs} ms (session timeout ${SESSION_TIMEOUT_MS} ms), every input counted in ${countedMs} ms; ` +
          `${duplicates} duplicate outputs, ${Date.now() - started} ms in all`,
      );
    }, 180_000);
  },
);
