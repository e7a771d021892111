/**
 * The bundle entry of a Streams app's function (infra/constructs/streams-app.ts): esbuild aliases
 * `sluice-streams-app` to the app's module, so one entry serves every app.
 */
// @ts-expect-error: no such package; esbuild's alias resolves it to the app's module at bundle time.
import * as app from 'sluice-streams-app';
import type { Topology } from '../streams/topology.js';
import { streamsHandler } from './streams-app.js';

/** What `npm run streams` also requires of an app module. */
interface AppModule {
  topology: () => Topology;
}

const { topology } = app as Partial<AppModule>;
if (typeof topology !== 'function') throw new Error('a Streams app module must export topology()');

export const handler = streamsHandler(topology);
