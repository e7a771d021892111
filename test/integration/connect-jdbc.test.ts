/**
 * The JDBC-style source against a real PostgreSQL: its three modes, exact replays, and the recovery of
 * a poll that a crash left half-written (one partition holds it, two do not), through the runtime on
 * the local stack.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JdbcSourceTask } from '../../connect/connectors/jdbc-source.js';
import type { SourceMap } from '../../connect/plugin.js';
import { ConnectWorker } from '../../connect/worker/worker.js';
import { POLL_HEADER } from '../../connect/worker/source-runner.js';
import { ConnectStateStore } from '../../connect/state-store.js';
import { sluiceFromEnv } from '../../local/runtime.js';
import { partitionForKey } from '../../protocol/partitioner.js';
import { systemClock } from '../../lib/ports/clock.js';
import { SluiceClient } from '../../sdk/index.js';
import type { TestPostgres } from '../support/postgres.js';
import { startPostgres } from '../support/postgres.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let db: TestPostgres;
let sql: pg.Client;
let stack: TestStack;

beforeAll(async () => {
  [db, stack] = await Promise.all([startPostgres(), startTestStack()]);
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
}, 120_000);

afterAll(async () => {
  await sql?.end().catch(() => undefined);
  await Promise.all([db?.stop(), stack?.stack.stop()]);
});

const task = async (table: string, config: Record<string, string>) => {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  return new JdbcSourceTask(client, { tables: table, 'topic.prefix': 'db-', ...config });
};

const offsets = (table: string, offset: SourceMap | null) => new Map([[JSON.stringify({ table }), offset]]);
const ids = (records: { value: unknown }[]) => records.map((r) => (r.value as { id: number }).id);

describe('JDBC source modes', () => {
  it('incrementing: rows above the offset in id order, limited, and replayed exactly', async () => {
    await sql.query('CREATE TABLE inc (id integer PRIMARY KEY, name text)');
    await sql.query(`INSERT INTO inc VALUES (3,'c'),(1,'a'),(2,'b'),(5,'e'),(4,'d')`);
    const source = await task('inc', { mode: 'incrementing', 'incrementing.column.name': 'id' });
    const first = await source.poll(offsets('inc', null), 3);
    expect(ids(first.records)).toEqual([1, 2, 3]);
    expect(first.records[2]).toMatchObject({
      topic: 'db-inc',
      key: null,
      value: { id: 3, name: 'c' },
      sourcePartition: { table: 'inc' },
      sourceOffset: { incrementing: 3 },
    });
    expect(ids((await source.poll(offsets('inc', { incrementing: 3 }), 3)).records)).toEqual([4, 5]);
    expect((await source.poll(offsets('inc', { incrementing: 5 }), 3)).records).toEqual([]);
    const replay = await source.replay({ table: 'inc' }, { incrementing: 1 }, { incrementing: 4 });
    expect(ids(replay)).toEqual([2, 3, 4]);
    await source.close();
  });

  it('timestamp: never ends a poll inside a run of equal timestamps; updated rows come again', async () => {
    await sql.query('CREATE TABLE ts (id integer PRIMARY KEY, at timestamptz NOT NULL)');
    await sql.query(`INSERT INTO ts VALUES
      (1, '2024-01-01 00:00:00.000001+00'), (2, '2024-01-01 00:00:00.000002+00'),
      (3, '2024-01-01 00:00:00.000002+00'), (4, '2024-01-01 00:00:00.000002+00'),
      (5, '2024-01-01 00:00:00.000003+00')`);
    const source = await task('ts', { mode: 'timestamp', 'timestamp.column.name': 'at' });
    const first = await source.poll(offsets('ts', null), 2);
    // Rows 2-4 share a microsecond: the limit of 2 would split them, so the poll stops before them.
    expect(ids(first.records)).toEqual([1]);
    const base = Date.UTC(2024, 0, 1) * 1000;
    expect(first.records[0]!.sourceOffset).toEqual({ timestamp_us: base + 1 });
    // A run longer than the limit is read whole.
    const second = await source.poll(offsets('ts', { timestamp_us: base + 1 }), 2);
    expect(ids(second.records).sort()).toEqual([2, 3, 4]);
    expect(ids((await source.poll(offsets('ts', { timestamp_us: base + 2 }), 2)).records)).toEqual([5]);
    await sql.query(`UPDATE ts SET at = '2024-01-01 00:00:01+00' WHERE id = 2`);
    const updated = await source.poll(offsets('ts', { timestamp_us: base + 3 }), 2);
    expect(ids(updated.records)).toEqual([2]);
    expect(updated.records[0]!.timestamp).toBe(Date.UTC(2024, 0, 1, 0, 0, 1));
    await source.close();
  });

  it('timestamp+incrementing: (timestamp, id) order, so equal timestamps split safely', async () => {
    await sql.query('CREATE TABLE tsi (id integer PRIMARY KEY, at timestamptz NOT NULL)');
    await sql.query(
      `INSERT INTO tsi VALUES (1, '2024-01-01+00'), (2, '2024-01-01+00'), (3, '2024-01-01+00'), (4, '2024-01-02+00')`,
    );
    const source = await task('tsi', {
      mode: 'timestamp+incrementing',
      'timestamp.column.name': 'at',
      'incrementing.column.name': 'id',
    });
    const first = await source.poll(offsets('tsi', null), 2);
    expect(ids(first.records)).toEqual([1, 2]);
    const at = Date.UTC(2024, 0, 1) * 1000;
    expect(first.records[1]!.sourceOffset).toEqual({ timestamp_us: at, incrementing: 2 });
    expect(ids((await source.poll(offsets('tsi', first.records[1]!.sourceOffset), 2)).records)).toEqual([
      3, 4,
    ]);
    await source.close();
  });
});

describe('source recovery after a crash mid-poll', () => {
  it('writes only the partitions that lack the poll, then commits its offsets', async () => {
    const client = new SluiceClient({ url: stack.url });
    await sql.query('CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL)');
    await client.admin().createTopic({ name: 'pg-items', partitions: 3 });
    const created = await stack.call('POST', '/v1/connect/connectors', {
      name: 'items-src',
      config: {
        'connector.class': 'JdbcSourceConnector',
        'connection.url': db.url,
        'table.whitelist': 'items',
        mode: 'incrementing',
        'incrementing.column.name': 'id',
        'topic.prefix': 'pg-',
        'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
        transforms: 'key',
        'transforms.key.type': 'org.apache.kafka.connect.transforms.ValueToKey',
        'transforms.key.fields': 'id',
      },
    });
    expect(created.status).toBe(201);
    const state = new ConnectStateStore(sluiceFromEnv().store);
    const worker = new ConnectWorker({
      state,
      client,
      clock: systemClock,
      workerId: 'test',
      budgetMs: 1_500,
      pollIntervalMs: 100,
    });
    const values = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => `(${from + i}, 'item-${from + i}')`);
    await sql.query(`INSERT INTO items VALUES ${values(1, 10).join(', ')}`);
    expect((await worker.tick()).map((o) => [o.outcome, o.records])).toEqual([['ran', 10]]);

    // The crash: poll 2 (rows 11-20) has its intent written and only partition 0's records produced.
    await sql.query(`INSERT INTO items VALUES ${values(11, 20).join(', ')}`);
    const lease = (await state.acquire('items-src', 0, 'crashed', Date.now(), 1))!;
    const marks = (await client.admin().fetchTopicOffsets('pg-items')).map((p) => ({
      topic: 'pg-items',
      partition: p.partition,
      offset: p.high,
    }));
    await state.beginPoll(lease, {
      poll: 2,
      ranges: [{ partition: { table: 'items' }, from: { incrementing: 10 }, through: { incrementing: 20 } }],
      marks,
      partitionCounts: { 'pg-items': 3 },
    });
    const keyOf = (id: number) => new TextEncoder().encode(JSON.stringify({ id }));
    const onZero = Array.from({ length: 10 }, (_, i) => 11 + i).filter(
      (id) => partitionForKey(keyOf(id), 3) === 0,
    );
    expect(onZero.length).toBeGreaterThan(0);
    await client.producer().send({
      topic: 'pg-items',
      messages: onZero.map((id) => ({
        key: keyOf(id),
        value: JSON.stringify({ id, name: `item-${id}` }),
        partition: 0,
        headers: [{ key: POLL_HEADER, value: 'items-src/0/2' }],
      })),
    });
    await new Promise((r) => setTimeout(r, 20)); // the crashed lease (1 ms) has expired

    // Recovery, then a new row, then nothing more.
    await sql.query(`INSERT INTO items VALUES (21, 'item-21')`);
    const [outcome] = await worker.tick();
    expect(outcome).toMatchObject({ outcome: 'ran', records: 10 - onZero.length + 1 });
    const all: number[] = [];
    for (let p = 0; p < 3; p++) {
      const batch = await client.consumer().fetch('pg-items', p, 0);
      for (const r of batch.records) {
        const id = (JSON.parse(Buffer.from(r.value!).toString('utf8')) as { id: number }).id;
        expect(partitionForKey(keyOf(id), 3)).toBe(p);
        all.push(id);
      }
    }
    expect(all.sort((a, b) => a - b)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    const after = (await state.task('items-src', 0))!;
    expect(after.pendingPoll).toBeUndefined();
    expect(after.lastPoll).toBe(3);
    expect((await stack.call('GET', '/v1/connect/connectors/items-src/offsets')).json).toEqual({
      offsets: [{ partition: { table: 'items' }, offset: { incrementing: 21 } }],
    });
  });
});
