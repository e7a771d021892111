/**
 * Issue 10's fuzz suite, bounded for `npm test`: structure-aware mutations of RecordBatches and of every
 * route's JSON body (test/fuzz/). A longer run: `npm run fuzz -- --seconds 300`. Replay: FUZZ_SEED=n.
 */
import { expect, it } from 'vitest';
import { fuzz } from '../fuzz/run.js';

// A fixed seed keeps `npm test` deterministic; `npm run fuzz` draws a new one each run.
const seed = Number(process.env['FUZZ_SEED'] ?? 20_261_201);
// Mutation runs (vitest.stryker.config.ts) ask for fewer: the fuzz test covers most of the core.
const RUNS = Number(process.env['SLUICE_FUZZ_RUNS'] ?? 1000);

it(`holds the oracle for 6 × ${RUNS} mutated requests (seed ${seed})`, async () => {
  console.log(`fuzz seed ${seed} (replay: FUZZ_SEED=${seed} npx vitest run test/unit/fuzz.test.ts)`);
  const stats = await fuzz(seed, RUNS);
  console.log(
    `fuzz: ${stats.cases} cases, ${stats.accepted} accepted, refused ${JSON.stringify(stats.refused)}`,
  );
  expect(stats.cases).toBe(6 * RUNS);
  // The mutations must reach both sides of the oracle, or the run proves little.
  expect(stats.accepted).toBeGreaterThan(RUNS / 10);
  expect(Object.keys(stats.refused).length).toBeGreaterThan(4);
}, 120_000);
