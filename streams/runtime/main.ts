/**
 * `npm run streams -- <app.ts> [--config key=value …] [--until-caught-up]`: runs a Streams application
 * against Sluice until SIGTERM or SIGINT (or, with --until-caught-up, until it has processed what its
 * source topics held at start), then commits and leaves the group (streams/runtime/run-app.ts; `sluice
 * streams run` is the same runner). The URL and the state table resolve as for `sluice streams run`
 * (streams/runtime/target.ts): bootstrap.servers, SLUICE_URL, the running `npm start`'s stack.json.
 */
import { pathToFileURL } from 'node:url';
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../../lib/adapters/aws/dynamodb-metadata-store.js';
import { SluiceClient, nodeHttpFetch } from '../../sdk/index.js';
import { appConfig, loadTopology, runStreamsApp } from './run-app.js';
import { resolveRunTarget } from './target.js';

export const parseArgs = (
  argv: string[],
): { app: string; configs: Record<string, string>; untilCaughtUp: boolean } => {
  const configs: Record<string, string> = {};
  let app: string | undefined;
  let untilCaughtUp = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--until-caught-up') untilCaughtUp = true;
    else if (arg === '--config') {
      const pair = argv[++i] ?? '';
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new Error(`--config needs key=value, not ${JSON.stringify(pair)}`);
      configs[pair.slice(0, eq)] = pair.slice(eq + 1);
    } else if (app === undefined && !arg.startsWith('--')) app = arg;
    else throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
  }
  if (app === undefined)
    throw new Error('usage: npm run streams -- <app.ts> [--config key=value …] [--until-caught-up]');
  return { app, configs, untilCaughtUp };
};

/** Resolves with the signal's name on the first SIGTERM or SIGINT. */
export const stopSignal = (): Promise<string> =>
  new Promise<string>((done) => {
    process.once('SIGTERM', () => done('SIGTERM'));
    process.once('SIGINT', () => done('SIGINT'));
  });

const main = async (): Promise<void> => {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { app, configs, untilCaughtUp } = parseArgs(process.argv.slice(2));
  const topology = await loadTopology(app);
  const { url, urlFrom, table } = await resolveRunTarget({ configs, env: process.env });
  const config = appConfig(app, configs, url);
  console.error(
    `streams: ${url} (from ${urlFrom}); state in table ${table.name}${table.endpoint ? ` at ${table.endpoint}` : ''}`,
  );
  const clients = createAwsClients(table.endpoint ? { endpoints: { dynamodb: table.endpoint } } : {});
  await runStreamsApp({
    topology,
    config,
    client: new SluiceClient({ url: config.bootstrapServers, fetch: nodeHttpFetch() }),
    store: new DynamoMetadataStore({ client: clients.dynamodb, tableName: table.name }),
    stop: stopSignal(),
    untilCaughtUp,
    print: (line) => console.log(line),
    log: (line) => console.error(`streams: ${line}`),
  });
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(`streams: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
