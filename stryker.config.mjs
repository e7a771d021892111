// Mutation testing of the core: `npm run mutate` (not part of `npm test`; minutes to hours).
// Target one file while iterating: `npm run mutate -- --mutate lib/core/log/retention.ts`.
// The whole core in chunks that accumulate across runs: `npm run mutate:core` (test/mutation/).
import process from 'node:process';
import { chunks } from './test/mutation/chunks.mjs';

const chunk = process.env['SLUICE_MUTATE_CHUNK'];
const files = chunk === undefined ? undefined : chunks[chunk];
if (chunk !== undefined && files === undefined) {
  throw new Error(`SLUICE_MUTATE_CHUNK=${chunk}: not one of ${Object.keys(chunks).join(', ')}`);
}
// Unit-only runs and unit + sim runs see different tests, so each keeps its own incremental file.
const projects = process.env['SLUICE_MUTATE_PROJECTS'] === 'unit' ? '-unit' : '';
const name = `${chunk ?? 'all'}${projects}`;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  // `related: false`: Vitest's related-files filter walks the module graph on every mutant run, though
  // the per-test coverage already names the test files to run; in the initial run it would also leave
  // out tests that reach the mutated files only through a dynamic import.
  vitest: { configFile: 'vitest.stryker.config.ts', related: false },
  // The Vitest runner always measures coverage per test, so each mutant runs only the tests that reach it.
  coverageAnalysis: 'perTest',
  mutate: files ?? ['lib/core/**/*.ts', 'protocol/**/*.ts', '!**/*.d.ts'],
  // No TypeScript checker: on this 2-core machine it made a run of partitioner.ts 9x slower (4.5 min
  // against 30 s) for the few type-invalid mutants it drops; those run as tests like any other mutant.
  // The machine is shared: two workers at most.
  concurrency: 2,
  // A static mutant (a module-level constant) needs a fresh module graph and the whole suite, ~40 s
  // each here; they are reported as ignored rather than run.
  ignoreStatic: true,
  // A rerun tests only mutants whose code or covering tests changed since the last run.
  incremental: true,
  incrementalFile: `reports/stryker-incremental-${name}.json`,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}/index.html` },
  jsonReporter: { fileName: `reports/mutation/${name}/mutation.json` },
  tempDirName: `reports/.stryker-tmp-${name}`,
  cleanTempDir: 'always',
  // Added to each mutant's expected test time: an infinite loop is cut off in seconds, not minutes.
  timeoutMS: 5_000,
  thresholds: { high: 90, low: 80, break: null },
};
