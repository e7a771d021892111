import type { TestProjectInlineConfiguration } from 'vitest/config';
import { defineConfig } from 'vitest/config';
import { MutationSequencer } from './test/mutation/sequencer.js';

// The projects a mutation run uses: the in-memory unit and simulation tests. Contract and integration
// tests need emulators and seconds per test, which a run of thousands of mutants cannot afford; for the
// same reason each seeded simulation runs its first 4 seeds, not its 30 to 150.
// SLUICE_MUTATE_PROJECTS=unit (`npm run mutate:unit`) leaves the sims out: several times faster, and a
// lower bound on the full run's score, since a mutant the unit tests kill stays killed with more tests.
const projects = (process.env['SLUICE_MUTATE_PROJECTS'] ?? 'unit,sim').split(',');

export default defineConfig({
  test: {
    // One module graph per worker across test files: Stryker switches mutants at run time, so no test
    // file needs a fresh import of the core for each mutant.
    isolate: false,
    sequence: { sequencer: MutationSequencer },
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      SLUICE_SIM_SEEDS: '4',
      SLUICE_FUZZ_RUNS: '200',
    },
    projects: (
      [
        // Vitest's 5 s default fails the slowest unit tests in the initial run on a loaded machine; a
        // mutant's own time limit is Stryker's (timeoutMS), so a longer test timeout loosens nothing.
        // Left out: two suites of the deployed functions' wiring that need a process of their own (they
        // stub the environment a handler reads at import, and X-Ray's SDK, once loaded, instruments
        // every client made after it); with one module graph across files they fail the initial run.
        {
          extends: true,
          test: {
            name: 'unit',
            include: ['test/unit/**/*.test.ts'],
            exclude: [
              'test/unit/functions/telemetry-tracing.test.ts',
              'test/unit/functions/function-authorizers.test.ts',
              // Compares the committed validators with ones generated from the schemas at test time;
              // in Stryker's sandbox the core the schemas import is instrumented, so they differ.
              'test/unit/functions/request-validators.test.ts',
              // Facts about the source tree (file sizes, names, imports, lint rules), not behaviour: in
              // the sandbox the core is instrumented, so its files are longer and its text different.
              'test/unit/repo/**',
            ],
            testTimeout: 60_000,
          },
        },
        { extends: true, test: { name: 'sim', include: ['test/sim/**/*.test.ts'], testTimeout: 120_000 } },
      ] satisfies TestProjectInlineConfiguration[]
    ).filter((project) => projects.includes(project.test.name)),
  },
});
