/**
 * The fuzz run: seeded fast-check properties over batch and JSON cases against one in-memory Sluice,
 * checked by oracle.ts. Replay a failure with the seed (and path) it prints.
 */
import fc from 'fast-check';
import { memorySluice } from '../unit/log-support.js';
import { batchCase } from './batch-cases.js';
import { jsonCase } from './json-cases.js';
import { pathCase } from './path-cases.js';
import type { Http, Outcome } from './oracle.js';
import { checkBatchCase, checkJsonCase } from './oracle.js';

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

/** Runs `runs` batch, JSON-body and path cases from `seed`; throws fast-check's report on a finding. */
export const fuzz = async (
  seed: number,
  runs: number,
  stats: FuzzStats = { seed, cases: 0, accepted: 0, refused: {} },
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
  return stats;
};
