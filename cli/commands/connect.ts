/**
 * `connect list | create | status | pause | resume | stop | restart | delete | offsets`: Kafka
 * Connect's REST API from the command line, through the SDK (sdk/connect.ts).
 */
import { readFile } from 'node:fs/promises';
import type { CommandSpec, Context } from '../command.js';
import { Options, UsageError } from '../command.js';
import { renderFields, renderTable } from '../table.js';
import type { ConnectAdmin, ConnectorOffset, ConnectorStatus } from '../../sdk/index.js';
import { configMapOf, connectorOffsetsOf } from '../json-input.js';

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const NAME = { name: 'connector', required: true, description: 'connector name' } as const;

/** Runs with the SDK's Connect client over the CLI's transport (signed when the CLI signs); SDK errors print like every other API error. */
const withConnect = <T>(ctx: Context, work: (connect: ConnectAdmin) => Promise<T>): Promise<T> =>
  work(ctx.api.connect());

export const renderStatus = (status: ConnectorStatus): string => {
  const header = renderFields([
    ['Connector', status.name],
    ['Type', status.type],
    ['State', status.connector.state],
    ['Worker', status.connector.worker_id],
  ]);
  const tasks =
    status.tasks.length === 0
      ? 'No tasks.'
      : renderTable(
          [
            { header: 'TASK', value: (t) => t.id },
            { header: 'STATE', value: (t) => t.state },
            { header: 'WORKER', value: (t) => t.worker_id },
            { header: 'TRACE', value: (t) => t.trace?.split('\n')[0] },
          ],
          status.tasks,
        );
  return `${header}\n\n${tasks}`;
};

const list: CommandSpec = {
  words: ['connect', 'list'],
  summary: 'List the connectors with their type and state.',
  args: [],
  options: {},
  async run(ctx) {
    const expanded = await withConnect(ctx, (c) => c.listExpanded());
    const rows = Object.values(expanded).map((e) => e.status);
    if (ctx.json) return void (await ctx.print(JSON.stringify({ connectors: expanded })));
    if (rows.length === 0) return void ctx.note('No connectors.');
    await ctx.print(
      renderTable(
        [
          { header: 'CONNECTOR', value: (s) => s.name },
          { header: 'TYPE', value: (s) => s.type },
          { header: 'STATE', value: (s) => s.connector.state },
          { header: 'TASKS', value: (s) => s.tasks.map((t) => `${t.id}:${t.state}`).join(' ') },
        ],
        rows,
      ),
    );
  },
};

const create: CommandSpec = {
  words: ['connect', 'create'],
  summary: 'Create a connector (or replace its config with --replace) from --config k=v and/or --file.',
  args: [NAME],
  options: {
    config: { type: 'string', multiple: true, valueName: 'K=V', description: 'a connector setting' },
    file: { type: 'string', valueName: 'F', description: 'a JSON object of settings (Connect config)' },
    replace: { type: 'boolean', description: 'PUT the config: create or replace it' },
    'initial-state': { type: 'string', valueName: 'S', description: 'RUNNING | PAUSED | STOPPED (KIP-980)' },
  },
  examples: [
    'sluice connect create archive --config connector.class=S3SinkConnector --config topics=orders \\\n' +
      '    --config s3.bucket.name=archive --config flush.size=1000',
  ],
  async run(ctx, { args: [name], values }) {
    const options = new Options(values, create);
    const file = options.string('file');
    let fromFile: Record<string, string> = {};
    if (file !== undefined) {
      try {
        fromFile = configMapOf(JSON.parse(await readFile(file, 'utf8')));
      } catch (error) {
        throw new UsageError(`--file ${file}: ${messageOf(error)}`, create);
      }
    }
    const config = { ...fromFile, ...(options.keyValues('config') ?? {}) };
    if (Object.keys(config).length === 0)
      throw new UsageError('give the settings with --config and/or --file', create);
    const initial = options.choice('initial-state', ['RUNNING', 'PAUSED', 'STOPPED'] as const);
    const info = await withConnect(ctx, (c) =>
      options.flag('replace') ? c.putConfig(name!, config) : c.createConnector(name!, config, initial),
    );
    await ctx.print(ctx.json ? JSON.stringify(info) : `Connector ${info.name} (${info.type}) saved.`);
  },
};

const status: CommandSpec = {
  words: ['connect', 'status'],
  summary: "Show a connector's state and its tasks' states, workers and failure traces.",
  args: [NAME],
  options: {},
  async run(ctx, { args: [name] }) {
    const s = await withConnect(ctx, (c) => c.status(name!));
    await ctx.print(ctx.json ? JSON.stringify(s) : renderStatus(s));
  },
};

const lifecycle = (word: 'pause' | 'resume' | 'stop', summary: string, done: string): CommandSpec => ({
  words: ['connect', word],
  summary,
  args: [NAME],
  options: {},
  async run(ctx, { args: [name] }) {
    await withConnect(ctx, (c) => c[word](name!));
    await ctx.print(
      ctx.json ? JSON.stringify({ connector: name, [word]: true }) : `Connector ${name} ${done}.`,
    );
  },
});

const restart: CommandSpec = {
  words: ['connect', 'restart'],
  summary: 'Restart a connector, and with --include-tasks its tasks (--only-failed: only failed ones).',
  args: [NAME],
  options: {
    'include-tasks': { type: 'boolean', description: 'restart the tasks too' },
    'only-failed': { type: 'boolean', description: 'restart only what FAILED' },
  },
  async run(ctx, { args: [name], values }) {
    const options = new Options(values, restart);
    const s = await withConnect(ctx, (c) =>
      c.restart(name!, {
        includeTasks: options.flag('include-tasks'),
        onlyFailed: options.flag('only-failed'),
      }),
    );
    if (ctx.json) return void (await ctx.print(JSON.stringify(s ?? { connector: name, restarted: true })));
    await ctx.print(s ? renderStatus(s) : `Connector ${name} restarted.`);
  },
};

const remove: CommandSpec = {
  words: ['connect', 'delete'],
  summary: 'Delete a connector (a sink also loses its consumer group connect-<name>).',
  args: [NAME],
  options: {},
  async run(ctx, { args: [name] }) {
    await withConnect(ctx, (c) => c.deleteConnector(name!));
    await ctx.print(
      ctx.json ? JSON.stringify({ deleted: true, connector: name }) : `Deleted connector ${name}.`,
    );
  },
};

const offsets: CommandSpec = {
  words: ['connect', 'offsets'],
  summary: "Show a connector's offsets; --reset or --alter FILE change them (only while STOPPED).",
  args: [NAME],
  options: {
    reset: { type: 'boolean', description: 'delete every offset (KIP-875 DELETE)' },
    alter: { type: 'string', valueName: 'F', description: 'a JSON file {"offsets": [...]} (KIP-875 PATCH)' },
  },
  async run(ctx, { args: [name], values }) {
    const options = new Options(values, offsets);
    const alter = options.string('alter');
    if (options.flag('reset') && alter !== undefined)
      throw new UsageError('--reset and --alter exclude each other', offsets);
    if (options.flag('reset')) {
      await withConnect(ctx, (c) => c.resetOffsets(name!));
      return void (await ctx.print(
        ctx.json ? JSON.stringify({ connector: name, reset: true }) : `Offsets of ${name} reset.`,
      ));
    }
    if (alter !== undefined) {
      let altered: ConnectorOffset[];
      try {
        altered = connectorOffsetsOf(JSON.parse(await readFile(alter, 'utf8')));
      } catch (error) {
        throw new UsageError(`--alter ${alter}: ${messageOf(error)}`, offsets);
      }
      await withConnect(ctx, (c) => c.alterOffsets(name!, altered));
      return void (await ctx.print(
        ctx.json ? JSON.stringify({ connector: name, altered: true }) : `Offsets of ${name} altered.`,
      ));
    }
    const list = await withConnect(ctx, (c) => c.offsets(name!));
    if (ctx.json) return void (await ctx.print(JSON.stringify({ offsets: list })));
    if (list.length === 0) return void ctx.note('No offsets.');
    await ctx.print(
      renderTable(
        [
          { header: 'PARTITION', value: (o) => JSON.stringify(o.partition) },
          { header: 'OFFSET', value: (o) => JSON.stringify(o.offset) },
        ],
        list,
      ),
    );
  },
};

export const connectCommands: readonly CommandSpec[] = [
  list,
  create,
  status,
  lifecycle('pause', 'Pause a connector (its tasks stop at their next step).', 'paused'),
  lifecycle('resume', 'Resume a paused or stopped connector.', 'resumed'),
  lifecycle('stop', 'Stop a connector: its tasks shut down; offsets can then be changed.', 'stopped'),
  restart,
  remove,
  offsets,
];
