import { defineConfig } from 'vitest/config';

// Projects by speed and by what they need: unit and simulation tests run in memory; contract and
// integration tests get DynamoDB Local and the S3 emulator from the global setup, which starts them on
// free ports and stops them afterwards.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { test: { name: 'sim', include: ['test/sim/**/*.test.ts'], testTimeout: 120_000 } },
      { test: { name: 'infra', include: ['test/infra/**/*.test.ts'], testTimeout: 120_000 } },
      {
        test: {
          name: 'contract',
          include: ['test/contract/**/*.test.ts'],
          globalSetup: ['test/support/emulators.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/emulators.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
