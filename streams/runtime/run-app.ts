/**
 * Runs a Streams application module until it is told to stop: the one runner behind
 * `npm run streams -- app.ts` and `sluice streams run app.ts`. The module exports `topology()`;
 * the application id defaults to the file's name. State goes to Sluice's metadata table.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SluiceError } from '../../protocol/errors.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import type { SluiceClient } from '../../sdk/index.js';
import type { Topology } from '../topology.js';
import { MetadataStateBackend } from '../state/metadata-backend.js';
import type { StreamsConfig } from './config.js';
import { parseStreamsConfig } from './config.js';
import { KafkaStreams } from './kafka-streams.js';

/** Imports the application module and builds its topology. */
export const loadTopology = async (app: string): Promise<Topology> => {
  let module: { topology?: () => Topology };
  try {
    module = (await import(pathToFileURL(resolve(app)).href)) as { topology?: () => Topology };
  } catch (cause) {
    throw new SluiceError(
      'INVALID_CONFIG',
      `cannot load ${app}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
  if (typeof module.topology !== 'function')
    throw new SluiceError('INVALID_CONFIG', `${app} must export topology(): Topology`);
  return module.topology();
};

/** The config of `app` with its defaults: application.id from the file name, bootstrap.servers `url`. */
export const appConfig = (app: string, configs: Record<string, string>, url?: string): StreamsConfig =>
  parseStreamsConfig({
    'application.id': app.replace(/^.*\//, '').replace(/\.[jt]s$/, ''),
    ...(url === undefined ? {} : { 'bootstrap.servers': url }),
    ...configs,
  });

export interface RunAppOptions {
  topology: Topology;
  config: StreamsConfig;
  client: SluiceClient;
  store: MetadataStore;
  /** Settles with the reason to stop (a signal's name). */
  stop: Promise<string>;
  /** Status lines (stdout) and the runtime's own log (stderr). */
  print: (line: string) => void;
  log: (line: string) => void;
}

/** Starts the application, waits for `stop` or a failure, then commits, leaves the group and stops. */
export const runStreamsApp = async (o: RunAppOptions): Promise<Record<string, number>> => {
  const { config } = o;
  const streams = new KafkaStreams({
    topology: o.topology,
    config,
    client: o.client,
    state: new MetadataStateBackend(o.store, config.applicationId),
    log: o.log,
  });
  await streams.start();
  o.print(
    `streams: ${config.applicationId} running against ${config.bootstrapServers} (${config.processingGuarantee}, commit every ${config.commitIntervalMs} ms)`,
  );
  const why = await Promise.race([o.stop, streams.stopped().then(() => 'failure')]);
  o.print(`streams: ${why}, committing and leaving the group…`);
  await streams.close();
  const processed = streams.processed();
  o.print(`streams: stopped (${JSON.stringify(processed)} records processed per task)`);
  return processed;
};
