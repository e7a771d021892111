/**
 * Issue 10's fuzz suite, bounded for `npm test`: structure-aware mutations of RecordBatches and of every
 * route's JSON body (test/fuzz/). A longer run: `npm run fuzz -- --seconds 300`. Replay: FUZZ_SEED=n.
 */
import { expect, it } from 'vitest';
import { fuzz } from '../../fuzz/run.js';

// A fixed seed keeps `npm test` deterministic; `npm run fuzz` draws a new one each run.
const seed = Number(process.env['FUZZ_SEED'] ?? 20_261_201);
// Mutation runs (vitest.stryker.config.ts) ask for fewer: the fuzz test covers most of the core.
const RUNS = Number(process.env['SLUICE_FUZZ_RUNS'] ?? 1000);
// Issue 23's connector configs, Streams queries and path variants: fewer here, all of them in `npm run fuzz`.
const SURFACE_RUNS = Math.max(20, Math.round(RUNS / 10));

it(`holds the oracle for 3 × ${RUNS} + 3 × ${SURFACE_RUNS} mutated requests (seed ${seed})`, async () => {
  console.log(`fuzz seed ${seed} (replay: FUZZ_SEED=${seed} npx vitest run test/unit/app/fuzz.test.ts)`);
  const stats = await fuzz(seed, RUNS, undefined, SURFACE_RUNS);
  console.log(
    `fuzz: ${stats.cases} cases, ${stats.accepted} accepted, refused ${JSON.stringify(stats.refused)}`,
  );
  expect(stats.cases).toBe(3 * RUNS + 3 * SURFACE_RUNS);
  // The mutations must reach both sides of the oracle, or the run proves little.
  expect(stats.accepted).toBeGreaterThan(RUNS / 10);
  expect(Object.keys(stats.refused).length).toBeGreaterThan(4);
}, 120_000);
