/**
 * The Connect pipeline end to end through `npm start` (local/start.ts as its own process, against the
 * global setup's emulators) and a real PostgreSQL: table → JDBC source → topic → S3 sink (s3rver)
 * and JDBC sink (upserts), with a poison row that the Postgres sink refuses (a CHECK constraint) and
 * dead-letters. npm start runs the connector tasks in invocation processes of the connect-worker
 * function; the test kills the running one with SIGKILL four times mid-stream, at seeded moments,
 * each time after a new invocation has taken every task over. Afterwards the topic, the S3 objects
 * and the sink table must equal the golden exactly: no gap, no duplicate, the poison only in the DLQ
 * with Connect's error headers.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { ensureBucket } from '../../lib/adapters/aws/schema.js';
import { SluiceClient } from '../../sdk/index.js';
import type { TestPostgres } from '../support/postgres.js';
import { startPostgres } from '../support/postgres.js';
import type { Reply } from './stack.js';
import { call } from './stack.js';
import type { NpmStart } from './npm-start.js';
import { isAlive, startNpmStart } from './npm-start.js';

const ROWS = 240;
const POISON_ID = 77;
const FLUSH = 10;
const PARTITIONS = 3;
/** Short leases, so the invocation after a killed one takes its tasks over within seconds. */
const LEASE_MS = 4_000;

let npm: NpmStart;
let url: string;
let db: TestPostgres;
let sql: pg.Client;
let client: SluiceClient;
const suffix = Date.now().toString(36);
const bucket = `archive-${suffix}`;
const api = (method: string, path: string, body?: unknown): Promise<Reply> => call(url, method, path, body);

/** `npm start` with Connect invocations every 300 ms, 30 s budgets and 4 s leases. */
const startNpm = async (): Promise<void> => {
  npm = await startNpmStart({
    SLUICE_CONNECT_INTERVAL_MS: '300',
    SLUICE_CONNECT_BUDGET_MS: '30000',
    SLUICE_CONNECT_LEASE_MS: String(LEASE_MS),
  });
  url = npm.url;
};

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

const CONNECTORS = ['pg-source', 's3-archive', 'pg-copy'];

/** The worker of each connector's task 0 once all three are RUNNING under one invocation. */
const holder = async (): Promise<string | undefined> => {
  const workers = await Promise.all(
    CONNECTORS.map(async (name) => {
      const task = (await api('GET', `/v1/connect/connectors/${name}/status`)).json.tasks[0];
      return task?.state === 'RUNNING' ? (task.worker_id as string) : undefined;
    }),
  );
  return workers.every((w) => w === workers[0]) ? workers[0] : undefined;
};

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
  [, db] = await Promise.all([startNpm(), startPostgres()]);
  client = new SluiceClient({ url });
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
    api('POST', '/v1/connect/connectors', { name, config: { ...common, ...config } });
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
  await npm?.stop();
  await db?.stop();
});

describe('Postgres → source → topic → S3 sink and Postgres sink, killed with SIGKILL', () => {
  it('ends with the golden topic, objects and table, and the poison in the DLQ', async () => {
    const insert = async (from: number, to: number) => {
      const values: string[] = [];
      for (let id = from; id <= to; id++)
        values.push(`('customer-${id}', ${id === POISON_ID ? -1 : id * 10})`);
      await sql.query(`INSERT INTO orders (customer, amount) VALUES ${values.join(', ')}`);
    };
    // Rows arrive while invocations run and die: four are killed mid-task, each 1-3 s (seeded) after
    // it has taken all three tasks over from the one killed before it.
    await insert(1, 80);
    const killed: string[] = [];
    for (let round = 0; round < 4; round++) {
      let worker: string | undefined;
      const deadline = Date.now() + 60_000;
      while ((worker = await holder()) === undefined || killed.includes(worker)) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 200));
      }
      await new Promise((r) => setTimeout(r, 1_000 + Math.floor(random() * 2_000)));
      const pid = await npm.connectWorkerPid();
      process.kill(pid, 'SIGKILL');
      while (isAlive(pid)) await new Promise((r) => setTimeout(r, 50));
      killed.push(worker);
      await insert(81 + round * 40, 120 + round * 40);
    }
    expect(new Set(killed).size).toBe(4);
    // npm start keeps invoking; wait until everything is drained.
    const drained = async (): Promise<boolean> => {
      const offsets = await api('GET', '/v1/connect/connectors/pg-source/offsets');
      const source = offsets.json.offsets[0]?.offset?.incrementing;
      const copy = await sql.query('SELECT count(*)::int AS n FROM "pg-orders"');
      const dlq = (await client.admin().fetchTopicOffsets('dlq-orders'))[0]!.high;
      return source === ROWS && copy.rows[0].n === ROWS - 1 && dlq >= 1;
    };
    const deadline = Date.now() + 120_000;
    while (!(await drained())) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 500));
    }
    // The sinks commit every 5 s; the S3 sink at object boundaries only. Wait for both to be done.
    const highs = await client.admin().fetchTopicOffsets('pg-orders');
    const committed = async (name: string) =>
      (await api('GET', `/v1/connect/connectors/${name}/offsets`)).json.offsets
        .map((o: { partition: { kafka_partition: number }; offset: { kafka_offset: number } }) => [
          o.partition.kafka_partition,
          o.offset.kafka_offset,
        ])
        .sort();
    const expected = (flush: number) =>
      JSON.stringify(highs.map((h) => [h.partition, Math.floor(h.high / flush) * flush]).sort());
    while (
      JSON.stringify(await committed('s3-archive')) !== expected(FLUSH) ||
      JSON.stringify(await committed('pg-copy')) !== expected(1)
    ) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 500));
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
    for (const name of CONNECTORS) {
      const status = await api('GET', `/v1/connect/connectors/${name}/status`);
      expect(status.json.tasks.map((t: { state: string }) => t.state)).toEqual(['RUNNING']);
    }
    const sinkOffsets = await api('GET', '/v1/connect/connectors/pg-copy/offsets');
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
