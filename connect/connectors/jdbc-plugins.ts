/**
 * The JDBC-style source and sink definitions (Confluent's JDBC connector settings), for PostgreSQL.
 * The implementations load on first use, so the REST function does not carry the Postgres driver.
 */
import { addError, listOf, oneOf, positiveInt } from '../config-def.js';
import type { ConfigKey } from '../config-def.js';
import type { SinkPlugin, SourcePlugin } from '../plugin.js';

const key = (
  k: Omit<ConfigKey, 'group' | 'importance'> & { importance?: ConfigKey['importance'] },
  group: string,
): ConfigKey => ({
  importance: 'HIGH',
  group,
  ...k,
});

const POSTGRES_URL = /^(jdbc:)?postgres(ql)?:\/\//;

const connectionKeys: ConfigKey[] = [
  key(
    {
      name: 'connection.url',
      type: 'STRING',
      documentation: 'postgresql://host:port/database (a jdbc: prefix is accepted).',
      validate: (v) => (POSTGRES_URL.test(v) ? undefined : 'only postgresql:// URLs are supported'),
    },
    'Database',
  ),
  key({ name: 'connection.user', type: 'STRING', default: '', documentation: 'Database user.' }, 'Database'),
  key(
    { name: 'connection.password', type: 'PASSWORD', default: '', documentation: 'Database password.' },
    'Database',
  ),
];

export const SOURCE_MODES = ['incrementing', 'timestamp', 'timestamp+incrementing'] as const;

export const JDBC_SOURCE: SourcePlugin = {
  class: 'io.sluice.connect.jdbc.JdbcSourceConnector',
  aliases: ['JdbcSourceConnector', 'JdbcSource'],
  type: 'source',
  version: '0.1.0',
  configKeys: [
    ...connectionKeys,
    key({ name: 'table.whitelist', type: 'LIST', documentation: 'Tables to copy.' }, 'Database'),
    key(
      {
        name: 'mode',
        type: 'STRING',
        documentation: 'How new rows are found.',
        validate: oneOf(SOURCE_MODES),
        recommended: SOURCE_MODES,
      },
      'Mode',
    ),
    key(
      {
        name: 'incrementing.column.name',
        type: 'STRING',
        default: '',
        documentation: 'Strictly increasing column.',
      },
      'Mode',
    ),
    key(
      {
        name: 'timestamp.column.name',
        type: 'STRING',
        default: '',
        documentation: 'Last-modified timestamp column.',
      },
      'Mode',
    ),
    key(
      { name: 'topic.prefix', type: 'STRING', documentation: 'Topic of a table = prefix + table name.' },
      'Connector',
    ),
    key(
      {
        name: 'batch.max.rows',
        type: 'INT',
        default: '500',
        documentation: 'Rows per poll.',
        validate: positiveInt,
      },
      'Connector',
    ),
  ],
  crossValidate: (config, infos) => {
    const mode = config['mode'] ?? '';
    if (mode.includes('incrementing') && !config['incrementing.column.name'])
      addError(infos, 'incrementing.column.name', `Mode ${mode} needs incrementing.column.name`);
    if (mode.includes('timestamp') && !config['timestamp.column.name'])
      addError(infos, 'timestamp.column.name', `Mode ${mode} needs timestamp.column.name`);
  },
  outputTopics: (config) =>
    listOf(config['table.whitelist'] ?? '').map((t) => `${config['topic.prefix'] ?? ''}${t}`),
  // Tables are dealt round-robin: each task owns whole tables (one source partition each).
  taskConfigs: (config, maxTasks) => {
    const tables = listOf(config['table.whitelist'] ?? '');
    const count = Math.max(1, Math.min(maxTasks, tables.length));
    return Array.from({ length: count }, (_, t) => ({
      ...config,
      tables: tables.filter((_, i) => i % count === t).join(','),
    }));
  },
  createTask: async (config, context) =>
    (await import('./jdbc-source.js')).createJdbcSourceTask(config, context),
};

export const JDBC_SINK: SinkPlugin = {
  class: 'io.sluice.connect.jdbc.JdbcSinkConnector',
  aliases: ['JdbcSinkConnector', 'JdbcSink'],
  type: 'sink',
  version: '0.1.0',
  configKeys: [
    ...connectionKeys,
    key(
      {
        name: 'insert.mode',
        type: 'STRING',
        default: 'insert',
        documentation: 'insert or upsert.',
        validate: oneOf(['insert', 'upsert']),
      },
      'Writes',
    ),
    key(
      {
        name: 'pk.mode',
        type: 'STRING',
        default: 'none',
        documentation: 'Where the primary key comes from.',
        validate: oneOf(['none', 'record_key', 'record_value']),
      },
      'Writes',
    ),
    key({ name: 'pk.fields', type: 'LIST', default: '', documentation: 'Primary key column(s).' }, 'Writes'),
    key(
      { name: 'delete.enabled', type: 'BOOLEAN', default: 'false', documentation: 'Tombstones delete rows.' },
      'Writes',
    ),
    key(
      { name: 'table.name.format', type: 'STRING', default: '${topic}', documentation: 'Table of a topic.' },
      'Writes',
    ),
  ],
  crossValidate: (config, infos) => {
    const pkMode = config['pk.mode'] ?? 'none';
    if (config['delete.enabled'] === 'true' && pkMode !== 'record_key')
      addError(infos, 'delete.enabled', 'Deletes are only supported for pk.mode record_key');
    if (config['insert.mode'] === 'upsert' && pkMode === 'none')
      addError(infos, 'pk.mode', 'Upserts need a primary key (pk.mode record_key or record_value)');
    if (pkMode === 'record_value' && listOf(config['pk.fields'] ?? '').length === 0)
      addError(infos, 'pk.fields', 'pk.mode record_value needs pk.fields');
  },
  taskConfigs: (config, maxTasks) => Array.from({ length: maxTasks }, () => ({ ...config })),
  createTask: async (config, context) => (await import('./jdbc-sink.js')).createJdbcSinkTask(config, context),
};
