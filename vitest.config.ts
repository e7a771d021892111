import { defineConfig } from 'vitest/config';

// Projects by speed and by what they need: unit and simulation tests run in memory; contract and
// integration tests get DynamoDB Local and the S3 emulator from the global setup, which starts them on
// free ports and stops them afterwards.
export default defineConfig({
  test: {
    // Versions are pinned (package-lock.json); the SDK's Node 22 notice is for later releases.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'sim', include: ['test/sim/**/*.test.ts'], testTimeout: 120_000 } },
      { extends: true, test: { name: 'infra', include: ['test/infra/**/*.test.ts'], testTimeout: 120_000 } },
      {
        extends: true,
        test: {
          name: 'contract',
          include: ['test/contract/**/*.test.ts'],
          globalSetup: ['test/support/emulators.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
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
