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
import { runBounded } from '../lambda/bounded-run.js';
import { committedPosition, sourceHighWatermarks } from '../lambda/positions.js';

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
  /**
   * Stop on its own once caught up: process what the source topics hold when it starts (their high
   * watermarks then), commit, leave the group and return, as each Lambda invocation does
   * (streams/lambda/bounded-run.ts). `stop` still ends it early.
   */
  untilCaughtUp?: boolean;
}

/** Starts the application, waits for `stop` or a failure, then commits, leaves the group and stops. */
export const runStreamsApp = async (o: RunAppOptions): Promise<Record<string, number>> => {
  const { config } = o;
  const running = `streams: ${config.applicationId} running against ${config.bootstrapServers} (${config.processingGuarantee}, commit every ${config.commitIntervalMs} ms)`;
  if (o.untilCaughtUp) return runUntilCaughtUp(o, running);
  const streams = newStreams(o);
  await streams.start();
  o.print(running);
  const why = await Promise.race([o.stop, streams.stopped().then(() => 'failure')]);
  o.print(`streams: ${why}, committing and leaving the group…`);
  await streams.close();
  const processed = streams.processed();
  o.print(`streams: stopped (${JSON.stringify(processed)} records processed per task)`);
  return processed;
};

const newStreams = (o: RunAppOptions): KafkaStreams =>
  new KafkaStreams({
    topology: o.topology,
    config: o.config,
    client: o.client,
    state: new MetadataStateBackend(o.store, o.config.applicationId),
    log: o.log,
  });

/**
 * Bounded runs (streams/lambda/bounded-run.ts) one after another until one finds nothing to do: a
 * run's outputs to a repartition topic are produced by its last commit, so the sub-topology that
 * reads them gets its turn in the next run, as the next Lambda invocation would.
 */
const runUntilCaughtUp = async (o: RunAppOptions, running: string): Promise<Record<string, number>> => {
  let stopped: string | undefined;
  void o.stop.then((why) => (stopped = why));
  const totals: Record<string, number> = {};
  for (let round = 0; stopped === undefined; round++) {
    const streams = newStreams(o);
    const state = new MetadataStateBackend(o.store, o.config.applicationId);
    const app = {
      get state() {
        return streams.state;
      },
      start: async () => {
        await streams.start();
        if (round === 0) o.print(`${running}, until caught up`);
      },
      close: () => streams.close(),
      positions: () => streams.positions(),
      processed: () => streams.processed(),
    };
    try {
      await runBounded({
        app,
        highWatermarks: () => sourceHighWatermarks(o.topology, o.config, o.client),
        committed: (topic, partition) =>
          committedPosition(o.topology, { config: o.config, client: o.client, state }, topic, partition),
        remainingMs: () => (stopped === undefined ? Number.POSITIVE_INFINITY : 0),
      });
    } catch (error) {
      // Stopped before catching up: closed cleanly all the same (committed, left the group).
      if (stopped === undefined) throw error;
    }
    const processed = Object.entries(streams.processed());
    for (const [task, n] of processed) totals[task] = (totals[task] ?? 0) + n;
    if (processed.every(([, n]) => n === 0)) break;
  }
  o.print(
    `streams: ${stopped ?? 'caught up'}; committed and left the group (${JSON.stringify(totals)} records processed per task)`,
  );
  return totals;
};
