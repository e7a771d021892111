/**
 * The JDBC-style sink task for PostgreSQL, after Confluent's JDBC sink: each put is one transaction;
 * `insert.mode=upsert` writes `INSERT … ON CONFLICT (pk) DO UPDATE`, and with `delete.enabled` a
 * tombstone deletes the row of its key. Upserts and deletes by key make a replay after a crash write
 * the same table. A record the database refuses for its data (SQLSTATE classes 22, 23, 42) is
 * reported as errant (errors.tolerance, DLQ); the put is then redone with a savepoint per record, so
 * the rest of the batch still lands in the same transaction.
 */
import type pg from 'pg';
import { listOf } from '../config-def.js';
import type { SinkRecord, SinkTask, TaskContext, TopicPartitionOffset } from '../plugin.js';
import { connect, ident, isDataError, retriable, tableIdent } from './postgres.js';

type Row = Record<string, unknown>;

interface Statement {
  record: SinkRecord;
  sql: string;
  params: unknown[];
}

const isMap = (v: unknown): v is Row => v !== null && typeof v === 'object' && !Array.isArray(v);

const sqlValue = (v: unknown): unknown => (isMap(v) || Array.isArray(v) ? JSON.stringify(v) : v);

export class JdbcSinkTask implements SinkTask {
  private readonly upsert: boolean;
  private readonly pkMode: string;
  private readonly pkFields: string[];
  private readonly deletes: boolean;
  private readonly tableFormat: string;

  constructor(
    private readonly client: pg.Client,
    config: Record<string, string>,
    private readonly context: TaskContext,
  ) {
    this.upsert = config['insert.mode'] === 'upsert';
    this.pkMode = config['pk.mode'] ?? 'none';
    this.pkFields = listOf(config['pk.fields'] ?? '');
    this.deletes = config['delete.enabled'] === 'true';
    this.tableFormat = config['table.name.format'] ?? '${topic}';
  }

  async put(records: readonly SinkRecord[]): Promise<void> {
    const statements: Statement[] = [];
    for (const record of records) {
      try {
        const statement = this.statementOf(record);
        if (statement) statements.push(statement);
      } catch (error) {
        await this.context.reportErrant(record, error);
      }
    }
    if (statements.length === 0) return;
    try {
      await this.transaction(async () => {
        for (const s of statements) await this.client.query(s.sql, s.params);
      });
    } catch (error) {
      if (!isDataError(error)) throw retriable(error);
      await this.putOneByOne(statements);
    }
  }

  async flush(): Promise<TopicPartitionOffset[]> {
    return []; // every put committed its transaction before returning
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }

  private async putOneByOne(statements: readonly Statement[]): Promise<void> {
    const errant: { record: SinkRecord; error: unknown }[] = [];
    await this.transaction(async () => {
      for (const s of statements) {
        await this.client.query('SAVEPOINT record');
        try {
          await this.client.query(s.sql, s.params);
          await this.client.query('RELEASE SAVEPOINT record');
        } catch (error) {
          if (!isDataError(error)) throw error;
          await this.client.query('ROLLBACK TO SAVEPOINT record');
          errant.push({ record: s.record, error });
        }
      }
    });
    // Reported after the commit: a DLQ write must not run inside (or outlive) a rolled-back transaction.
    for (const e of errant) await this.context.reportErrant(e.record, e.error);
  }

  private async transaction(work: () => Promise<void>): Promise<void> {
    try {
      await this.client.query('BEGIN');
      await work();
      await this.client.query('COMMIT');
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  private statementOf(record: SinkRecord): Statement | undefined {
    const table = tableIdent(this.tableFormat.replaceAll('${topic}', record.topic));
    const key = this.keyColumns(record);
    if (record.value === null || record.value === undefined) {
      if (!this.deletes) return undefined; // Confluent's sink ignores tombstones unless deletes are on
      const where = Object.keys(key).map((c, i) => `${ident(c)} = $${i + 1}`);
      return {
        record,
        sql: `DELETE FROM ${table} WHERE ${where.join(' AND ')}`,
        params: Object.values(key).map(sqlValue),
      };
    }
    if (!isMap(record.value))
      throw new Error(`the JDBC sink needs a map value (schemaless JSON object), got ${typeof record.value}`);
    const row: Row = { ...record.value, ...key };
    const columns = Object.keys(row);
    if (columns.length === 0) throw new Error('the record has no fields to write');
    const placeholders = columns.map((_, i) => `$${i + 1}`);
    let sql = `INSERT INTO ${table} (${columns.map(ident).join(', ')}) VALUES (${placeholders.join(', ')})`;
    if (this.upsert) {
      const pk = Object.keys(key);
      const rest = columns.filter((c) => !pk.includes(c));
      sql +=
        ` ON CONFLICT (${pk.map(ident).join(', ')}) DO ` +
        (rest.length === 0
          ? 'NOTHING'
          : `UPDATE SET ${rest.map((c) => `${ident(c)} = EXCLUDED.${ident(c)}`).join(', ')}`);
    }
    return { record, sql, params: columns.map((c) => sqlValue(row[c])) };
  }

  /** The primary key columns and values of a record under pk.mode. */
  private keyColumns(record: SinkRecord): Row {
    if (this.pkMode === 'none') return {};
    if (this.pkMode === 'record_value') {
      if (!isMap(record.value)) throw new Error('pk.mode record_value needs a map value');
      const value = record.value;
      return Object.fromEntries(this.pkFields.map((f) => [f, value[f]]));
    }
    const k = record.key;
    if (k === null || k === undefined) throw new Error('pk.mode record_key needs a record key');
    if (isMap(k)) {
      const fields = this.pkFields.length > 0 ? this.pkFields : Object.keys(k);
      return Object.fromEntries(fields.map((f) => [f, k[f]]));
    }
    if (this.pkFields.length !== 1)
      throw new Error('a primitive record key needs exactly one pk.fields name');
    return { [this.pkFields[0]!]: k };
  }
}

export const createJdbcSinkTask = async (
  config: Record<string, string>,
  context: TaskContext,
): Promise<SinkTask> => new JdbcSinkTask(await connect(config), config, context);
