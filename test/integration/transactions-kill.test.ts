/**
 * Exactly once through the local stack with SIGKILL: `local/start.ts` (npm start's code path) in its
 * own process, and the SDK's consume-transform-produce loop (test/integration/txn-loop/app.ts:
 * read_committed input, transactional output, input positions sent with the transaction) run as a
 * child process, killed with SIGKILL at random points three times and restarted each time. Inputs are
 * produced meanwhile in transactions of their own, some aborted (their records must never be
 * transformed). At the end every committed input's output is in the output topic exactly once for
 * read_committed readers, and nothing of an aborted input is.
 * `TXN_KILL_RECORDS` sets the size (npm run test:transactions-kill runs a larger one).
 */
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { SluiceClient } from '../../sdk/client.js';
import type { Proc, StackProcess } from '../support/processes.js';
import { launch, launchStack, until } from '../support/processes.js';

const RECORDS = Number(process.env['TXN_KILL_RECORDS'] ?? 300);
const PER_TRANSACTION = 10;
const PARTITIONS = 2;
const KILLS = 3;
const SESSION_TIMEOUT_MS = 3_000;
/** DynamoDB Local takes some 100 ms per transaction on a loaded machine: the waits grow with the run. */
const CATCH_UP_MS = 60_000 + RECORDS * 150;

let stack: StackProcess;
let url: string;
let loop: Proc | undefined;

beforeAll(async () => {
  stack = await launchStack(
    'txk',
    { s3: inject('s3Endpoint'), dynamodb: inject('dynamodbEndpoint') },
    SESSION_TIMEOUT_MS,
  );
  ({ url } = stack);
}, 90_000);

afterAll(async () => {
  if (loop && loop.child.exitCode === null) {
    loop.child.kill('SIGKILL');
    await loop.exited;
  }
  await stack?.stop();
});

const text = (b: Uint8Array | null): string => Buffer.from(b ?? new Uint8Array()).toString('utf8');

/** Every value of a topic in a read at this isolation level, partition by partition. */
const readTopic = async (
  client: SluiceClient,
  topic: string,
  isolationLevel: 'read_committed' | 'read_uncommitted',
): Promise<string[]> => {
  const consumer = client.consumer({ isolationLevel });
  const values: string[] = [];
  for (let partition = 0; partition < PARTITIONS; partition++) {
    let offset = 0;
    for (;;) {
      const batch = await consumer.fetch(topic, partition, offset);
      values.push(...batch.records.map((r) => text(r.value)));
      if (batch.nextOffset >= (batch.lastStableOffset ?? batch.highWatermark)) break;
      offset = batch.nextOffset;
    }
  }
  return values;
};

describe('a consume-transform-produce loop of the SDK, killed with SIGKILL three times', () => {
  it(
    'writes every committed input exactly once for read_committed readers',
    async () => {
      const client = new SluiceClient({ url });
      const admin = client.admin();
      const input = 'txk-input';
      const output = 'txk-output';
      await admin.createTopic({ name: input, partitions: PARTITIONS });
      await admin.createTopic({ name: output, partitions: PARTITIONS });

      // Inputs in transactions of 10 (keys spread them over both partitions); every fourth aborted.
      const expected: string[] = [];
      const inputs = client.producer({ transactionalId: 'txk-input-writer' });
      await inputs.initTransactions();
      let produced = 0;
      let t = 0;
      /** Inputs in transactions (every fourth aborted) until `upTo` committed ones exist. */
      const produceUpTo = async (upTo: number) => {
        for (; produced < upTo; t++) {
          const abort = t % 4 === 3;
          inputs.beginTransaction();
          const messages = Array.from({ length: PER_TRANSACTION }, (_, i) => {
            const value = abort ? `poison-${t}-${i}` : `in-${produced + i}`;
            return { key: `k${i}`, value };
          });
          await inputs.send({ topic: input, messages });
          if (abort) await inputs.abortTransaction();
          else {
            await inputs.commitTransaction();
            expected.push(...messages.map((m) => m.value.toUpperCase()));
            produced += PER_TRANSACTION;
          }
          await new Promise((r) => setTimeout(r, 30));
        }
      };
      // Each run gets its own share of the inputs while it runs, so every run has work to commit
      // before it is killed, however fast the earlier runs were (on a loaded machine the last runs
      // found nothing left and never committed).
      const share = (run: number) =>
        Math.ceil((RECORDS * (run + 1)) / (KILLS + 1) / PER_TRANSACTION) * PER_TRANSACTION;

      const loopEnv = {
        ...stack.env,
        TXN_URL: url,
        TXN_INPUT: input,
        TXN_OUTPUT: output,
        TXN_GROUP: 'txk-loop',
        TXN_ID: 'txk-loop',
      };
      const start = () => launch('test/integration/txn-loop/app.ts', [], loopEnv);
      const commits = (p: Proc) => p.lines.filter((l) => l.startsWith('committed ')).length;
      loop = start();
      for (let kill = 0; kill < KILLS; kill++) {
        const current = loop;
        await produceUpTo(Math.min(RECORDS, share(kill)));
        // A random point after the loop has committed at least one transaction of this run.
        await until('a commit of this run', () => commits(current) >= 1, 60_000);
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 600)));
        current.child.kill('SIGKILL');
        expect(await current.exited).toBe(null);
        loop = start();
      }
      await produceUpTo(RECORDS);

      // The last run catches up: every committed input's output is readable under read_committed.
      await until(
        'every output',
        async () => {
          if (loop!.child.exitCode !== null)
            throw new Error(`the loop exited ${loop!.child.exitCode}: ${loop!.stderr.join('')}`);
          return (await readTopic(client, output, 'read_committed')).length >= expected.length;
        },
        CATCH_UP_MS,
      );
      // A moment more for a duplicate to show if the loop were to process something again.
      await new Promise((r) => setTimeout(r, 1_500));
      const outputs = await readTopic(client, output, 'read_committed');
      const counts = new Map<string, number>();
      for (const v of outputs) counts.set(v, (counts.get(v) ?? 0) + 1);
      const duplicates = [...counts].filter(([, n]) => n > 1).map(([v]) => v);
      const missing = expected.filter((v) => !counts.has(v));
      const unexpected = outputs.filter((v) => !v.startsWith('IN-'));
      expect({ duplicates, missing, unexpected }).toEqual({ duplicates: [], missing: [], unexpected: [] });
      expect(outputs.length).toBe(expected.length);
      // The inputs' aborted transactions were in the log: read_uncommitted shows their records.
      const raw = await readTopic(client, input, 'read_uncommitted');
      expect(raw.filter((v) => v.startsWith('poison-')).length).toBeGreaterThan(0);
      const uncommittedOutputs = (await readTopic(client, output, 'read_uncommitted')).length;
      console.log(
        `transactions-kill: ${expected.length} inputs, ${KILLS} SIGKILLs, ${outputs.length} outputs read_committed, ` +
          `${uncommittedOutputs} read_uncommitted (aborted by the successors), commits per run ` +
          `${loop.lines.filter((l) => l.startsWith('committed ')).length} in the last`,
      );
    },
    120_000 + 2 * CATCH_UP_MS,
  );
});
