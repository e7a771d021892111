/**
 * How a function's bundle is built: esbuild's options and one build function that the CDK app
 * (infra/constructs/sluice-functions.ts, through infra/build-function.ts), the cold-start bench and
 * `npm run bench:bundle` all use, so what is measured is what is deployed. Imports nothing of
 * aws-cdk-lib.
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { BuildOptions, Metafile, Plugin } from 'esbuild';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** CommonJS dependencies call require(); ESM output has none unless the banner makes one. */
export const REQUIRE_BANNER =
  "import { createRequire as __sluiceCreateRequire } from 'node:module'; const require = __sluiceCreateRequire(import.meta.url);";

/**
 * Modules replaced in every deployed bundle: the SDK's default credential chain by the environment
 * provider, which is all Lambda needs (functions/lambda-credentials.ts), and the SDK's event-stream
 * codec, which only operations Sluice never calls use (functions/event-streams-absent.ts).
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': path.join(REPO_ROOT, 'functions', 'lambda-credentials.ts'),
  '@smithy/core/event-streams': path.join(REPO_ROOT, 'functions', 'event-streams-absent.ts'),
};

/** pg's optional native binding (pg-native) is never installed; pg falls back to pure JS. */
export const BUNDLE_EXTERNALS: readonly string[] = ['pg-native'];

/**
 * Lets esbuild drop the schemas of the SDK operations a function never calls. Each AWS SDK client
 * declares every operation's schema in one module (dist-es/schemas/schemas_0.js) as plain arrays, but
 * their trait objects use computed keys naming module constants (`{ [_hE]: 404 }`), and esbuild must
 * assume a computed key that is not a literal may run code, so it keeps every schema: 69 KiB of S3's
 * (all its ~100 operations) for the five that Sluice calls. Writing each such constant's string in
 * place of its name makes the keys literals; nothing else changes (the values are the same strings).
 */
export const sdkSchemaLiterals: Plugin = {
  name: 'sdk-schema-literals',
  setup(b) {
    b.onLoad(
      { filter: /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]dist-es[\\/]schemas[\\/]schemas_\d+\.js$/ },
      async (args) => ({ contents: inlineSchemaKeys(await readFile(args.path, 'utf8')), loader: 'js' }),
    );
  },
};

/** `{ [_hE]: 404 }` → `{ ["httpError"]: 404 }` for every `const _hE = "httpError";` of the module. */
export const inlineSchemaKeys = (source: string): string => {
  const constants = new Map<string, string>();
  for (const m of source.matchAll(/^const (_\w+) = ("(?:[^"\\\n]|\\.)*");$/gm)) constants.set(m[1]!, m[2]!);
  return source.replace(/\[(_\w+)\]:/g, (whole, name: string) => {
    const value = constants.get(name);
    return value === undefined ? whole : `[${value}]:`;
  });
};

/**
 * esbuild's options for a function bundle: ESM for Node 22 (the nodejs22.x runtime; nothing in it
 * needs more than Node 20), minified, the pinned SDK inside with its ES module builds (`module` before
 * `main`, so unused exports are dropped), no legal comments, a source map without the sources.
 */
export const functionBuildOptions = (entry: string, outfile: string) =>
  ({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    treeShaking: true,
    legalComments: 'none',
    sourcemap: true,
    sourcesContent: false,
    mainFields: ['module', 'main'],
    banner: { js: REQUIRE_BANNER },
    alias: { ...BUNDLE_ALIASES },
    external: [...BUNDLE_EXTERNALS],
    plugins: [sdkSchemaLiterals],
    logLevel: 'error',
  }) satisfies BuildOptions;

/** Bundles one function's entry into `outDir`/index.mjs (and its map); esbuild's metafile back. */
export const buildFunction = async (entry: string, outDir: string): Promise<Metafile> => {
  const result = await build({
    ...functionBuildOptions(entry, path.join(outDir, 'index.mjs')),
    metafile: true,
  });
  return result.metafile;
};
