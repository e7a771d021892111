import { defineConfig } from 'vitest/config';

// The projects a mutation run uses: the in-memory unit and simulation tests. Contract and integration
// tests need emulators and seconds per test, which a run of thousands of mutants cannot afford; for the
// same reason each seeded simulation runs its first 4 seeds, not its 30 to 150.
export default defineConfig({
  test: {
    isolate: false,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', SLUICE_SIM_SEEDS: '4' },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'sim', include: ['test/sim/**/*.test.ts'], testTimeout: 120_000 } },
    ],
  },
});
