/**
 * The fuzz run: seeded fast-check properties over batch and JSON cases against one in-memory Sluice,
 * checked by oracle.ts. Replay a failure with the seed (and path) it prints.
 */
import fc from 'fast-check';
import { memorySluice } from '../support/log-support.js';
import { batchCase } from './batch-cases.js';
import { jsonCase } from './json-cases.js';
import { pathCase } from './path-cases.js';
import { connectCase, streamsQueryCase, variantCase } from './surface-cases.js';
import type { Http, Outcome } from './oracle.js';
import { Finding, checkBatchCase, checkJsonCase } from './oracle.js';

export interface FuzzStats {
  seed: number;
  cases: number;
  accepted: number;
  refused: Record<string, number>;
}

const TOPICS = ['d', 'c', 'la'];

const world = async () => {
  const s = memorySluice({ tailFlushEntries: 4 });
  const http = s.http as Http;
  const created = await Promise.all([
    http('POST', '/v1/topics', { name: 'd', partitions: 2 }),
    http('POST', '/v1/topics', { name: 'c', partitions: 2, configs: { 'cleanup.policy': 'compact' } }),
    http('POST', '/v1/topics', {
      name: 'la',
      partitions: 2,
      configs: { 'message.timestamp.type': 'LogAppendTime' },
    }),
  ]);
  if (created.some((r) => r.status !== 201)) throw new Error('fuzz world: topics not created');
  const producers: number[] = [];
  for (let i = 0; i < 3; i++) producers.push((await http('POST', '/v1/producers')).body.producerId as number);
  return { ...s, http, producers };
};

const tally = (stats: FuzzStats, outcome: Outcome) => {
  stats.cases++;
  if (outcome.kind === 'accepted') stats.accepted++;
  else stats.refused[outcome.code] = (stats.refused[outcome.code] ?? 0) + 1;
};

/** Runs `runs` batch, JSON-body, path, connector-config, Streams-query and path-variant cases from `seed`; throws fast-check's report on a finding. */
export const fuzz = async (
  seed: number,
  runs: number,
  stats: FuzzStats = { seed, cases: 0, accepted: 0, refused: {} },
  /** Runs of each issue-23 property (connector configs, Streams queries, path variants). */
  surfaceRuns = runs,
): Promise<FuzzStats> => {
  const w = await world();
  await fc.assert(
    fc.asyncProperty(batchCase(TOPICS, w.producers), async (c) => {
      tally(stats, await checkBatchCase(w.http, w.store, c, c.topic === 'la'));
    }),
    { seed, numRuns: runs, endOnFailure: true },
  );
  await fc.assert(
    fc.asyncProperty(jsonCase, async (c) => {
      tally(stats, await checkJsonCase(w.http, w.store, c));
    }),
    { seed: seed + 1, numRuns: runs, endOnFailure: true },
  );
  await fc.assert(
    fc.asyncProperty(pathCase, async (c) => {
      tally(stats, await checkJsonCase(w.http, w.store, c));
    }),
    { seed: seed + 2, numRuns: runs, endOnFailure: true },
  );
  // Issue 23: connector configs answer within a bound (no regex or allocation can stall the stack).
  await fc.assert(
    fc.asyncProperty(connectCase, async (c) => {
      const started = Date.now();
      tally(stats, await checkJsonCase(w.http, w.store, c));
      const ms = Date.now() - started;
      if (ms > CONNECT_CASE_MS)
        throw new Finding(`${c.method} ${c.path} ${c.mutation}: took ${ms} ms`, c.mutation);
    }),
    { seed: seed + 3, numRuns: surfaceRuns, endOnFailure: true },
  );
  await fc.assert(
    fc.asyncProperty(streamsQueryCase, async (c) => {
      tally(stats, await checkJsonCase(w.http, w.store, c));
    }),
    { seed: seed + 4, numRuns: surfaceRuns, endOnFailure: true },
  );
  await fc.assert(
    fc.asyncProperty(variantCase, async (c) => {
      const outcome = await checkJsonCase(w.http, w.store, c);
      if (outcome.kind !== 'refused' || outcome.code !== 'NOT_FOUND')
        throw new Finding(`${c.method} ${c.path} (${c.mutation}) was not refused as NOT_FOUND`, outcome);
      tally(stats, outcome);
    }),
    { seed: seed + 5, numRuns: surfaceRuns, endOnFailure: true },
  );
  return stats;
};

/** The longest a connector config case may take (a catastrophic regex took over 20 s). */
const CONNECT_CASE_MS = 2_000;
