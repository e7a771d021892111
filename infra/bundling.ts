/**
 * How a function's bundle is built, as esbuild options: the CDK app (infra/constructs/sluice-functions.ts)
 * passes them to NodejsFunction, and the cold-start bench and the bundle test
 * (test/unit/function-bundles.test.ts) build with the same. Imports nothing of aws-cdk-lib.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** CommonJS dependencies call require(); ESM output has none unless the banner makes one. */
export const REQUIRE_BANNER =
  "import { createRequire as __sluiceCreateRequire } from 'node:module'; const require = __sluiceCreateRequire(import.meta.url);";

/**
 * Modules replaced in every deployed bundle: the SDK's default credential chain by the environment
 * provider, which is all Lambda needs (functions/lambda-credentials.ts).
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': path.join(REPO_ROOT, 'functions', 'lambda-credentials.ts'),
};

/** pg's optional native binding (pg-native) is never installed; pg falls back to pure JS. */
export const BUNDLE_EXTERNALS: readonly string[] = ['pg-native'];

/** esbuild's options for a function bundle (ESM, node22, minified, the pinned SDK inside). */
export const functionBuildOptions = (entry: string, outfile: string) => ({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node' as const,
  format: 'esm' as const,
  target: 'node22',
  minify: true,
  mainFields: ['module', 'main'],
  banner: { js: REQUIRE_BANNER },
  alias: { ...BUNDLE_ALIASES },
  external: [...BUNDLE_EXTERNALS],
  logLevel: 'error' as const,
});
