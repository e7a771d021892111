/**
 * The Connect pipeline end to end on the local stack and a real PostgreSQL: table → JDBC source →
 * topic → S3 sink (s3rver) and JDBC sink (upserts), with a poison row that the Postgres sink refuses
 * (a CHECK constraint) and dead-letters. Every connector task runs in worker processes — the very
 * handler of the connect-worker function — that are killed with SIGKILL mid-stream, at seeded
 * moments. Afterwards the topic, the S3 objects and the sink table must equal the golden exactly:
 * no gap, no duplicate, the poison only in the DLQ with Connect's error headers.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { ensureBucket } from '../../lib/adapters/aws/schema.js';
import { SluiceClient } from '../../sdk/index.js';
import { ConnectStateStore } from '../../connect/state-store.js';
import { sluiceFromEnv } from '../../functions/runtime.js';
import type { TestPostgres } from '../support/postgres.js';
import { startPostgres } from '../support/postgres.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

const ROWS = 240;
const POISON_ID = 77;
const FLUSH = 10;
const PARTITIONS = 3;
/** Short leases, so the invocation after a killed one takes its tasks over within seconds. */
const LEASE_MS = 4_000;

let stack: TestStack;
let db: TestPostgres;
let sql: pg.Client;
let client: SluiceClient;
const bucket = `archive-${Date.now().toString(36)}`;

/** Seeded (mulberry32), so the kill schedule replays. */
const random = (() => {
  let a = 16;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();

const invocation = (budgetMs: number): ChildProcess =>
  spawn(process.execPath, ['--import', 'tsx', 'local/connect-invocation.ts'], {
    env: {
      ...process.env,
      SLUICE_CONNECT_BUDGET_MS: String(budgetMs),
      SLUICE_CONNECT_LEASE_MS: String(LEASE_MS),
    },
    stdio: 'ignore',
  });

const exited = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

const readTopic = async (topic: string, partition: number) => {
  const consumer = client.consumer();
  const out = [];
  for (let offset = 0; ;) {
    const batch = await consumer.fetch(topic, partition, offset, { maxWaitMs: 0 });
    out.push(...batch.records);
    if (batch.nextOffset >= batch.highWatermark) return out;
    offset = batch.nextOffset;
  }
};

const text = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString('utf8'));

beforeAll(async () => {
  [stack, db] = await Promise.all([startTestStack(), startPostgres()]);
  client = new SluiceClient({ url: stack.url });
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  await sql.query(
    `CREATE TABLE orders (id serial PRIMARY KEY, customer text NOT NULL, amount integer NOT NULL)`,
  );
  await sql.query(
    `CREATE TABLE "pg-orders" (id integer PRIMARY KEY, customer text, amount integer CHECK (amount >= 0))`,
  );
  const { s3 } = createAwsClients({ endpoints: { s3: inject('s3Endpoint') } });
  await ensureBucket(s3, bucket);
  await client.admin().createTopic({ name: 'pg-orders', partitions: PARTITIONS });
  await client.admin().createTopic({ name: 'dlq-orders', partitions: 1 });
  const common = { 'key.converter': 'org.apache.kafka.connect.json.JsonConverter', 'tasks.max': '1' };
  const create = (name: string, config: Record<string, string>) =>
    stack.call('POST', '/v1/connect/connectors', { name, config: { ...common, ...config } });
  const created = await Promise.all([
    create('pg-source', {
      'connector.class': 'JdbcSourceConnector',
      'connection.url': db.url,
      'table.whitelist': 'orders',
      mode: 'incrementing',
      'incrementing.column.name': 'id',
      'topic.prefix': 'pg-',
      'batch.max.rows': '25',
      transforms: 'key',
      'transforms.key.type': 'org.apache.kafka.connect.transforms.ValueToKey',
      'transforms.key.fields': 'id',
    }),
    create('s3-archive', {
      'connector.class': 'S3SinkConnector',
      topics: 'pg-orders',
      's3.bucket.name': bucket,
      'store.url': inject('s3Endpoint'),
      'flush.size': String(FLUSH),
    }),
    create('pg-copy', {
      'connector.class': 'JdbcSinkConnector',
      topics: 'pg-orders',
      'connection.url': db.url,
      'insert.mode': 'upsert',
      'pk.mode': 'record_key',
      'pk.fields': 'id',
      'delete.enabled': 'true',
      'errors.tolerance': 'all',
      'errors.log.enable': 'true',
      'errors.deadletterqueue.topic.name': 'dlq-orders',
      'errors.deadletterqueue.context.headers.enable': 'true',
    }),
  ]);
  expect(created.map((r) => r.status)).toEqual([201, 201, 201]);
}, 120_000);

afterAll(async () => {
  await sql?.end().catch(() => undefined);
  await Promise.all([stack?.stack.stop(), db?.stop()]);
});

describe('Postgres → source → topic → S3 sink and Postgres sink, killed with SIGKILL', () => {
  it('ends with the golden topic, objects and table, and the poison in the DLQ', async () => {
    const insert = async (from: number, to: number) => {
      const values: string[] = [];
      for (let id = from; id <= to; id++)
        values.push(`('customer-${id}', ${id === POISON_ID ? -1 : id * 10})`);
      await sql.query(`INSERT INTO orders (customer, amount) VALUES ${values.join(', ')}`);
    };
    // Rows arrive while invocations run and die: four killed mid-task (budget 30 s, killed after
    // 3-6 s), at seeded moments. Each must have held every task's lease when it died.
    await insert(1, 80);
    const state = new ConnectStateStore(sluiceFromEnv().store);
    const epochs: number[][] = [];
    for (let round = 0; round < 4; round++) {
      const child = invocation(30_000);
      await new Promise((r) => setTimeout(r, 3_000 + Math.floor(random() * 3_000)));
      const killedAt = Date.now();
      child.kill('SIGKILL');
      await exited(child);
      const held = await Promise.all(
        ['pg-source', 's3-archive', 'pg-copy'].map(async (name) => (await state.tasks(name))[0]!),
      );
      for (const task of held) expect(task.leaseUntil).toBeGreaterThan(killedAt);
      epochs.push(held.map((t) => t.leaseEpoch));
      await insert(81 + round * 40, 120 + round * 40);
      await new Promise((r) => setTimeout(r, LEASE_MS));
    }
    // Every round's invocation took every lease over from the one killed before it.
    for (let round = 1; round < 4; round++) {
      for (let c = 0; c < 3; c++) expect(epochs[round]![c]!).toBeGreaterThan(epochs[round - 1]![c]!);
    }
    // Then invocations that finish, until everything is drained (the leases of the killed ones expire
    // first, within LEASE_MS).
    const drained = async (): Promise<boolean> => {
      const offsets = await stack.call('GET', '/v1/connect/connectors/pg-source/offsets');
      const source = offsets.json.offsets[0]?.offset?.incrementing;
      const copy = await sql.query('SELECT count(*)::int AS n FROM "pg-orders"');
      const dlq = (await client.admin().fetchTopicOffsets('dlq-orders'))[0]!.high;
      return source === ROWS && copy.rows[0].n === ROWS - 1 && dlq === 1;
    };
    const deadline = Date.now() + 150_000;
    while (!(await drained())) {
      expect(Date.now()).toBeLessThan(deadline);
      await exited(invocation(5_000));
    }

    // The topic holds every row exactly once (the source neither skipped nor duplicated).
    const topicIds: number[] = [];
    const byPartition: Awaited<ReturnType<typeof readTopic>>[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const records = await readTopic('pg-orders', p);
      byPartition.push(records);
      for (const r of records) topicIds.push(JSON.parse(text(r.value)!).id);
      // Keys are {"id": n} and land where Kafka's partitioner puts them.
      for (const r of records)
        expect(JSON.parse(text(r.key)!)).toEqual({ id: JSON.parse(text(r.value)!).id });
    }
    expect(topicIds.length).toBe(ROWS);
    expect([...topicIds].sort((a, b) => a - b)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1));

    // S3: per partition, objects named by start offset, each FLUSH records, contiguous from 0, whose
    // lines are the partition's records in offset order; only the last partial object is unwritten.
    const { s3 } = createAwsClients({ endpoints: { s3: inject('s3Endpoint') } });
    const objects = new S3ObjectStore({ client: s3, bucket, id: 'check' });
    for (let p = 0; p < PARTITIONS; p++) {
      const listed = (await objects.list(`topics/pg-orders/partition=${p}/`)).objects
        .map((o) => o.key)
        .sort();
      const complete = Math.floor(byPartition[p]!.length / FLUSH);
      expect(listed).toEqual(
        Array.from(
          { length: complete },
          (_, i) =>
            `topics/pg-orders/partition=${p}/pg-orders+${p}+${String(i * FLUSH).padStart(10, '0')}.json`,
        ),
      );
      const lines: string[] = [];
      for (const key of listed) {
        const body = text(await objects.get(key))!;
        expect(body.endsWith('\n')).toBe(true);
        lines.push(...body.slice(0, -1).split('\n'));
      }
      expect(lines).toEqual(byPartition[p]!.slice(0, complete * FLUSH).map((r) => text(r.value)));
    }

    // The sink table: every row but the poison, with its values.
    const copied = await sql.query('SELECT id, customer, amount FROM "pg-orders" ORDER BY id');
    expect(copied.rows).toEqual(
      Array.from({ length: ROWS }, (_, i) => i + 1)
        .filter((id) => id !== POISON_ID)
        .map((id) => ({ id, customer: `customer-${id}`, amount: id * 10 })),
    );

    // The poison: once in the DLQ, its original bytes and Connect's error headers.
    const [dead] = await readTopic('dlq-orders', 0);
    expect(JSON.parse(text(dead!.value)!)).toEqual({
      id: POISON_ID,
      customer: `customer-${POISON_ID}`,
      amount: -1,
    });
    const headers = Object.fromEntries(dead!.headers.map((h) => [h.key, text(h.value)]));
    const poisonAt = byPartition
      .flatMap((records) => records)
      .find((r) => JSON.parse(text(r.value)!).id === POISON_ID)!;
    expect(headers).toMatchObject({
      '__connect.errors.topic': 'pg-orders',
      '__connect.errors.partition': String(poisonAt.partition),
      '__connect.errors.offset': String(poisonAt.offset),
      '__connect.errors.connector.name': 'pg-copy',
      '__connect.errors.task.id': '0',
      '__connect.errors.stage': 'TASK_PUT',
      '__connect.errors.class.name': 'io.sluice.connect.jdbc.JdbcSinkConnector',
    });
    expect(headers['__connect.errors.exception.message']).toContain('check constraint');

    // Status after all that: every task RUNNING (none FAILED), sink offsets in Connect's shape.
    for (const name of ['pg-source', 's3-archive', 'pg-copy']) {
      const status = await stack.call('GET', `/v1/connect/connectors/${name}/status`);
      expect(status.json.tasks.map((t: { state: string }) => t.state)).toEqual(['RUNNING']);
    }
    const sinkOffsets = await stack.call('GET', '/v1/connect/connectors/pg-copy/offsets');
    expect(
      sinkOffsets.json.offsets
        .map((o: { partition: { kafka_partition: number }; offset: { kafka_offset: number } }) => [
          o.partition.kafka_partition,
          o.offset.kafka_offset,
        ])
        .sort(),
    ).toEqual(byPartition.map((records, p) => [p, records.length]));
  }, 300_000);
});
