/**
 * The DynamoDB Streams source through `npm start`, its task's invocation process killed with SIGKILL
 * three times while a seeded workload keeps inserting, updating and deleting items on DynamoDB
 * Local: every time a new invocation takes the task over (after the dead one's lease expires) it
 * resumes from the committed sequence numbers, replaying a half-written poll if there is one. The
 * topic must end equal to the golden: every change once, per key in order, nothing else.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SluiceClient } from '../../sdk/index.js';
import {
  ChangeWorkload,
  createStreamTable,
  dynamodb,
  expectGolden,
  readTopic,
  seeded,
} from './dynamodb-source-support.js';
import type { NpmStart } from './npm-start.js';
import { isAlive, startNpmStart } from './npm-start.js';
import type { Reply } from './stack.js';
import { call } from './stack.js';

const PARTITIONS = 3;
const LEASE_MS = 3_000;
const KILLS = 3;
const NAME = 'ddb-killed';

let npm: NpmStart;
let ddb: DynamoDBClient;
let client: SluiceClient;
const table = `killed-${Date.now().toString(36)}`;
const topic = `dynamodb-${table}`;
const api = (method: string, path: string, body?: unknown): Promise<Reply> =>
  call(npm.url, method, path, body);

/** Seeded, so the kill moments replay. */
const random = seeded(29);

beforeAll(async () => {
  npm = await startNpmStart({
    SLUICE_CONNECT_INTERVAL_MS: '300',
    SLUICE_CONNECT_BUDGET_MS: '30000',
    SLUICE_CONNECT_LEASE_MS: String(LEASE_MS),
  });
  client = new SluiceClient({ url: npm.url });
  ddb = dynamodb();
  await createStreamTable(ddb, table);
  await client.admin().createTopic({ name: topic, partitions: PARTITIONS });
  const created = await api('POST', '/v1/connect/connectors', {
    name: NAME,
    config: {
      'connector.class': 'DynamoDbSourceConnector',
      'dynamodb.table.includelist': table,
      'dynamodb.service.endpoint': inject('dynamodbEndpoint'),
      'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
      // Small polls: many intents and commits for a kill to land between.
      'dynamodb.cdc.max.poll.records': '7',
    },
  });
  expect(created.status).toBe(201);
}, 120_000);

afterAll(async () => {
  ddb?.destroy();
  await npm?.stop();
});

const runningWorker = async (): Promise<string | undefined> => {
  const task = (await api('GET', `/v1/connect/connectors/${NAME}/status`)).json.tasks[0];
  return task?.state === 'RUNNING' ? (task.worker_id as string) : undefined;
};

describe('DynamoDB Streams source killed with SIGKILL mid-stream', () => {
  it('resumes every time with no gap and no duplicate', async () => {
    const workload = new ChangeWorkload(ddb, table, 20, 5);
    await workload.run(30);
    let writing = true;
    const writer = (async () => {
      while (writing) {
        await workload.step();
        await new Promise((r) => setTimeout(r, 15));
      }
    })();
    const killed: string[] = [];
    const deliveredAtKill: number[] = [];
    for (let round = 0; round < KILLS; round++) {
      const deadline = Date.now() + 60_000;
      let worker: string | undefined;
      while ((worker = await runningWorker()) === undefined || killed.includes(worker)) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 100));
      }
      // Kill mid-stream: only once this worker has delivered something since the last kill (on a
      // loaded machine a fixed pause can end before its first poll), then at a seeded moment.
      const before = deliveredAtKill.at(-1) ?? 0;
      while ((await readTopic(client, topic, PARTITIONS)).length <= before) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, Math.floor(random() * 1_200)));
      const pid = await npm.connectWorkerPid();
      process.kill(pid, 'SIGKILL');
      while (isAlive(pid)) await new Promise((r) => setTimeout(r, 20));
      killed.push(worker);
      deliveredAtKill.push((await readTopic(client, topic, PARTITIONS)).length);
    }
    writing = false;
    await writer;
    expect(new Set(killed).size).toBe(KILLS);
    // Each kill landed mid-stream: changes were still being made and delivered.
    expect(
      deliveredAtKill.every(
        (n, i) => n > 0 && n < workload.changes && (i === 0 || n >= deliveredAtKill[i - 1]!),
      ),
    ).toBe(true);

    const deadline = Date.now() + 90_000;
    while ((await readTopic(client, topic, PARTITIONS)).length < workload.changes) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 300));
    }
    // A moment more: a duplicate written late would show up now.
    await new Promise((r) => setTimeout(r, 1_000));
    expectGolden(await readTopic(client, topic, PARTITIONS), workload, PARTITIONS);
    const status = await api('GET', `/v1/connect/connectors/${NAME}/status`);
    expect(status.json.tasks.map((t: { state: string }) => t.state)).toEqual(['RUNNING']);
  }, 240_000);
});
