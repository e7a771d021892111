/** What the JDBC-style connectors share: a PostgreSQL connection from Connect's settings, identifiers, errors. */
import pg from 'pg';
import { RetriableConnectError } from '../plugin.js';

export const connect = async (config: Record<string, string>): Promise<pg.Client> => {
  const url = (config['connection.url'] ?? '').replace(/^jdbc:/, '').replace(/^postgres:/, 'postgresql:');
  const client = new pg.Client({
    connectionString: url,
    ...(config['connection.user'] ? { user: config['connection.user'] } : {}),
    ...(config['connection.password'] ? { password: config['connection.password'] } : {}),
    connectionTimeoutMillis: 5_000,
  });
  // A dropped connection surfaces on the next query; without a listener it would crash the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw retriable(error);
  }
  return client;
};

export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A table name as `schema.table` or `table`, each part quoted. */
export const tableIdent = (name: string): string => name.split('.').map(ident).join('.');

/**
 * SQLSTATE classes that are about the data, not the database: a record that fails with one of these
 * is an errant record (tolerance, DLQ); everything else (connection, resources) is retried.
 */
const DATA_CLASSES = ['22', '23', '42'];

export const isDataError = (error: unknown): boolean => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && DATA_CLASSES.includes(code.slice(0, 2));
};

export const retriable = (error: unknown): Error =>
  isDataError(error)
    ? (error as Error)
    : new RetriableConnectError(`PostgreSQL: ${(error as Error).message}`, error);

const INT8 = 20;

/** A row as a JSON map: int8 as numbers when exact, timestamps as epoch ms, bytea as base64. */
export const rowToJson = (
  row: Record<string, unknown>,
  fields: readonly pg.FieldDef[],
): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = row[f.name];
    if (f.name.startsWith('__sluice_')) continue;
    if (v instanceof Date) out[f.name] = v.getTime();
    else if (Buffer.isBuffer(v)) out[f.name] = v.toString('base64');
    else if (f.dataTypeID === INT8 && typeof v === 'string' && Number.isSafeInteger(Number(v)))
      out[f.name] = Number(v);
    else out[f.name] = v;
  }
  return out;
};
