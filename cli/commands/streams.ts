/**
 * `streams run | query`: run a Streams application (the runner of `npm run streams`), and read its
 * state stores through the interactive-query routes (Kafka Streams' ReadOnlyKeyValueStore.get/range
 * and ReadOnlyWindowStore.fetch).
 */
import type { CommandSpec } from '../command.js';
import { Options, UsageError, parseTimestamp } from '../command.js';
import { formatTimestamp } from '../format.js';
import { renderTable } from '../table.js';
import type { StoreKeyValue, StoreWindows } from '../../lib/wire/types.js';

/** Text and numbers as they are (numbers right-aligned), other JSON values as JSON. */
const cell = (value: unknown): string | number =>
  typeof value === 'string' || typeof value === 'number' ? value : JSON.stringify(value);

/** Where the application keeps its state: SLUICE_TABLE_NAME, else the local stack's table. */
export const streamsRun: CommandSpec = {
  words: ['streams', 'run'],
  summary:
    'Run a Streams application (a module exporting topology()) until Ctrl-C or SIGTERM, or --until-caught-up.',
  args: [{ name: 'app', required: true, description: 'the application module, e.g. examples/word-count.ts' }],
  options: {
    config: {
      type: 'string',
      multiple: true,
      valueName: 'KEY=VALUE',
      description:
        "Kafka Streams' configs: application.id (default: the file name), processing.guarantee, commit.interval.ms",
    },
    'until-caught-up': {
      type: 'boolean',
      description:
        "process what the source topics hold now, commit, leave the group and exit (a Lambda invocation's bounded run)",
    },
  },
  examples: [
    'sluice streams run examples/word-count.ts',
    'sluice streams run examples/word-count.ts --until-caught-up',
    'sluice streams run app.ts --config application.id=orders --config processing.guarantee=exactly_once_v2',
  ],
  async run(ctx, { args: [app], values }) {
    const configs = new Options(values, streamsRun).keyValues('config') ?? {};
    // Loaded on demand: only this command reaches DynamoDB itself (state stores), the rest speak HTTP.
    const { appConfig, loadTopology, runStreamsApp } = await import('../../streams/runtime/run-app.js');
    const { createAwsClients } = await import('../../lib/adapters/aws/clients.js');
    const { DynamoMetadataStore } = await import('../../lib/adapters/aws/dynamodb-metadata-store.js');
    const { nodeHttpFetch } = await import('../../sdk/node-http.js');
    const { resolveRunTarget } = await import('../../streams/runtime/target.js');
    // The same resolution as `npm run streams`; the CLI's URL (--url, SLUICE_URL, stack.json) stands
    // where a flag would, and bootstrap.servers, when given, wins.
    const { url, table } = await resolveRunTarget({ configs, env: ctx.env, flagUrl: ctx.api.url });
    let config;
    try {
      config = appConfig(app!, configs, url);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error), streamsRun);
    }
    const topology = await loadTopology(app!);
    ctx.note(`streams: state in table ${table.name}${table.endpoint ? ` at ${table.endpoint}` : ''}`);
    const clients = createAwsClients({
      env: ctx.env,
      ...(table.endpoint ? { endpoints: { dynamodb: table.endpoint } } : {}),
    });
    const stop = new Promise<string>((done) => {
      if (ctx.signal.aborted) return done('interrupted');
      ctx.signal.addEventListener('abort', () => done('interrupted'), { once: true });
    });
    await runStreamsApp({
      topology,
      config,
      client: ctx.api.client(() => nodeHttpFetch(), url),
      store: new DynamoMetadataStore({ client: clients.dynamodb, tableName: table.name }),
      stop,
      untilCaughtUp: new Options(values, streamsRun).flag('until-caught-up'),
      print: (line) => void ctx.print(line),
      log: (line) => void ctx.stderr.write(`streams: ${line}\n`),
    });
  },
};

export const streamsQuery: CommandSpec = {
  words: ['streams', 'query'],
  summary:
    "Read a Streams application's state store: a key, a key's windows, or a range of keys (interactive queries).",
  args: [
    { name: 'app', required: true, description: 'application.id' },
    { name: 'store', required: true, description: 'state store name (Materialized.as)' },
    { name: 'key', required: false, description: 'the key (omit for a range of a key-value store)' },
  ],
  options: {
    from: { type: 'string', valueName: 'KEY', description: 'range: first key, inclusive' },
    to: { type: 'string', valueName: 'KEY', description: 'range: last key, inclusive' },
    limit: { type: 'string', valueName: 'N', description: 'range: at most N entries (default 1000)' },
    all: { type: 'boolean', description: 'range: follow every page to the end' },
    'window-start': {
      type: 'string',
      valueName: 'TIME',
      description: 'window stores: windows starting at or after TIME (ms or ISO 8601)',
    },
    'window-end': {
      type: 'string',
      valueName: 'TIME',
      description: 'window stores: windows starting at or before TIME (ms or ISO 8601)',
    },
  },
  examples: [
    'sluice streams query word-count counts-store hello',
    'sluice streams query word-count counts-store --from a --to m',
    'sluice streams query page-views views-per-minute alice --window-start 2024-05-01T10:00:00Z',
  ],
  async run(ctx, { args: [app, store, key], values }) {
    const o = new Options(values, streamsQuery);
    const queries = ctx.api.streams(app!);
    const time = (name: string) => {
      const text = o.string(name);
      return text === undefined ? undefined : parseTimestamp(text, `--${name}`, streamsQuery);
    };
    if (key === undefined) {
      if (o.string('window-start') !== undefined || o.string('window-end') !== undefined)
        throw new UsageError('--window-start and --window-end need a <key>', streamsQuery);
      const limit = o.int('limit', { min: 1, max: 10_000 });
      const entries: StoreKeyValue[] = [];
      let from = o.string('from');
      let next: string | null;
      do {
        const page = await queries.range(store!, {
          ...(from === undefined ? {} : { from }),
          ...(o.string('to') === undefined ? {} : { to: o.string('to')! }),
          ...(limit === undefined ? {} : { limit }),
        });
        entries.push(...page.entries);
        next = page.next;
        from = next ?? undefined;
      } while (o.flag('all') && next !== null);
      if (ctx.json) return void (await ctx.print(JSON.stringify({ entries, next })));
      await ctx.print(renderKeyValues(entries));
      if (next !== null) ctx.note(`more keys follow: --from ${JSON.stringify(next)} (or --all)`);
      return;
    }
    for (const name of ['from', 'to', 'limit', 'all'])
      if (values[name] !== undefined)
        throw new UsageError(`--${name} is for a range: leave out the <key>`, streamsQuery);
    const windowStart = time('window-start');
    const windowEnd = time('window-end');
    const answer: StoreKeyValue | StoreWindows | undefined =
      windowStart === undefined && windowEnd === undefined
        ? await queries.query(store!, key)
        : await queries.windows(store!, key, {
            ...(windowStart === undefined ? {} : { from: windowStart }),
            ...(windowEnd === undefined ? {} : { to: windowEnd }),
          });
    if (answer === undefined) {
      await ctx.stderr.write(`no key ${JSON.stringify(key)} in store ${store} of ${app}\n`);
      return 1;
    }
    if (ctx.json) return void (await ctx.print(JSON.stringify(answer)));
    await ctx.print('windows' in answer ? renderWindows(answer) : renderKeyValues([answer]));
  },
};

const renderKeyValues = (entries: StoreKeyValue[]): string =>
  renderTable(
    [
      { header: 'KEY', value: (e) => cell(e.key) },
      { header: 'VALUE', value: (e) => cell(e.value) },
      { header: 'TIMESTAMP', value: (e) => formatTimestamp(e.timestamp) },
    ],
    entries,
  );

const renderWindows = (answer: StoreWindows): string => {
  const sessions = answer.windows.some((w) => w.windowEnd !== undefined);
  return renderTable(
    [
      { header: 'KEY', value: () => cell(answer.key) },
      { header: 'WINDOW START', value: (w) => formatTimestamp(w.windowStart) },
      ...(sessions
        ? [
            {
              header: 'WINDOW END',
              value: (w: StoreWindows['windows'][number]) => formatTimestamp(w.windowEnd!),
            },
          ]
        : []),
      { header: 'VALUE', value: (w) => cell(w.value) },
      { header: 'TIMESTAMP', value: (w) => formatTimestamp(w.timestamp) },
    ],
    answer.windows,
  );
};

export const streamsCommands: readonly CommandSpec[] = [streamsRun, streamsQuery];
