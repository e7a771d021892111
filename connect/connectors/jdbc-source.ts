/**
 * The JDBC-style source task for PostgreSQL, after Confluent's JDBC source modes:
 * - `incrementing`: rows whose `incrementing.column.name` is above the offset, in that order;
 * - `timestamp`: rows whose `timestamp.column.name` is after the offset (new and updated rows);
 *   a poll never ends inside a run of equal timestamps, so none is skipped at a boundary;
 * - `timestamp+incrementing`: (timestamp, id) after the offset, the mode that is exact for updates.
 * One source partition per table (`{"table": name}`); offsets are `{"incrementing": id}`,
 * `{"timestamp_us": t}` or both. Timestamps are compared in microseconds (Postgres' precision), so an
 * offset never rounds a row away. Records go to `topic.prefix + table`, key null, the row as a JSON
 * map as value. `replay` reads a range again by the same predicate with an upper bound.
 */
import type pg from 'pg';
import { listOf } from '../config-def.js';
import type { SourceMap, SourcePoll, SourceRecord, SourceTask, TaskContext } from '../plugin.js';
import { sourcePartitionKey } from '../plugin.js';
import { connect, ident, retriable, rowToJson, tableIdent } from './postgres.js';

type Mode = 'incrementing' | 'timestamp' | 'timestamp+incrementing';

const TS_US = '__sluice_ts_us';

interface Bound {
  ts?: string;
  inc?: string;
}

export class JdbcSourceTask implements SourceTask {
  private readonly mode: Mode;
  private readonly inc: string;
  private readonly ts: string;
  private readonly prefix: string;
  private readonly tables: string[];
  private next = 0;

  constructor(
    private readonly client: pg.Client,
    config: Record<string, string>,
  ) {
    this.mode = config['mode'] as Mode;
    this.inc = config['incrementing.column.name'] ?? '';
    this.ts = config['timestamp.column.name'] ?? '';
    this.prefix = config['topic.prefix'] ?? '';
    this.tables = listOf(config['tables'] ?? config['table.whitelist'] ?? '');
  }

  sourcePartitions(): SourceMap[] {
    return this.tables.map((table) => ({ table }));
  }

  /** Tables take turns, so a busy table does not starve the others. */
  async poll(offsets: ReadonlyMap<string, SourceMap | null>, maxRecords: number): Promise<SourcePoll> {
    for (let i = 0; i < this.tables.length; i++) {
      const table = this.tables[(this.next + i) % this.tables.length]!;
      const from = offsets.get(sourcePartitionKey({ table })) ?? null;
      const records = await this.read(table, from, undefined, maxRecords);
      if (records.length > 0) {
        this.next = (this.next + i + 1) % this.tables.length;
        return { records };
      }
    }
    return { records: [] };
  }

  async replay(partition: SourceMap, from: SourceMap | null, through: SourceMap): Promise<SourceRecord[]> {
    return this.read(String(partition['table']), from, through, undefined);
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }

  private async read(
    table: string,
    from: SourceMap | null,
    through: SourceMap | undefined,
    limit: number | undefined,
  ): Promise<SourceRecord[]> {
    const params: unknown[] = [];
    const param = (v: unknown): string => {
      params.push(v);
      return `$${params.length}`;
    };
    const tsExpr = `(EXTRACT(EPOCH FROM ${ident(this.ts)}) * 1000000)::bigint`;
    const key = this.keyColumns(tsExpr);
    const after = from ? this.boundOf(from) : undefined;
    const upTo = through ? this.boundOf(through) : undefined;
    const where: string[] = [];
    if (after) where.push(`(${key.sql}) > (${key.values(after).map(param).join(', ')})`);
    if (upTo) where.push(`(${key.sql}) <= (${key.values(upTo).map(param).join(', ')})`);
    // Timestamp mode reads one row past the limit to see whether the last timestamp run is complete.
    const fetchLimit = limit === undefined ? undefined : this.mode === 'timestamp' ? limit + 1 : limit;
    const sql =
      `SELECT *${this.ts ? `, ${tsExpr} AS ${TS_US}` : ''} FROM ${tableIdent(table)}` +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY ${key.order}` +
      (fetchLimit !== undefined ? ` LIMIT ${param(fetchLimit)}` : '');
    let result: pg.QueryResult<Record<string, unknown>>;
    try {
      result = await this.client.query<Record<string, unknown>>(sql, params);
    } catch (error) {
      throw retriable(error);
    }
    let rows = result.rows;
    if (this.mode === 'timestamp' && limit !== undefined && rows.length > limit) {
      const lastTs = String(rows[limit - 1]![TS_US]);
      const cut =
        String(rows[limit]![TS_US]) === lastTs ? rows.findIndex((r) => String(r[TS_US]) === lastTs) : limit;
      if (cut > 0) rows = rows.slice(0, cut);
      else {
        // One timestamp run is longer than the limit: read the whole run rather than split it.
        return this.read(table, from, { timestamp_us: Number(lastTs) }, undefined);
      }
    }
    const topic = `${this.prefix}${table}`;
    return rows.map((row) => ({
      topic,
      timestamp: this.ts ? Math.floor(Number(row[TS_US]) / 1000) : Date.now(),
      key: null,
      value: rowToJson(row, result.fields),
      headers: [],
      sourcePartition: { table },
      sourceOffset: this.offsetOf(row),
    }));
  }

  private keyColumns(tsExpr: string): { sql: string; order: string; values: (b: Bound) => string[] } {
    switch (this.mode) {
      case 'incrementing':
        return { sql: ident(this.inc), order: `${ident(this.inc)} ASC`, values: (b) => [b.inc ?? '-1'] };
      case 'timestamp':
        return { sql: tsExpr, order: `${tsExpr} ASC`, values: (b) => [b.ts ?? '0'] };
      case 'timestamp+incrementing':
        return {
          sql: `${tsExpr}, ${ident(this.inc)}`,
          order: `${tsExpr} ASC, ${ident(this.inc)} ASC`,
          values: (b) => [b.ts ?? '0', b.inc ?? '-1'],
        };
    }
  }

  private boundOf(offset: SourceMap): Bound {
    return {
      ...(offset['timestamp_us'] !== undefined ? { ts: String(offset['timestamp_us']) } : {}),
      ...(offset['incrementing'] !== undefined ? { inc: String(offset['incrementing']) } : {}),
    };
  }

  private offsetOf(row: Record<string, unknown>): SourceMap {
    const offset: SourceMap = {};
    if (this.mode !== 'incrementing') offset['timestamp_us'] = Number(row[TS_US]);
    if (this.mode !== 'timestamp') {
      const v = row[this.inc];
      offset['incrementing'] = typeof v === 'number' ? v : Number(v);
    }
    return offset;
  }
}

export const createJdbcSourceTask = async (
  config: Record<string, string>,
  _context: TaskContext,
): Promise<SourceTask> => new JdbcSourceTask(await connect(config), config);
