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
 * provider, which is all Lambda needs (functions/lambda-credentials.ts), the SDK's event-stream
 * codec, which only operations Sluice never calls use (functions/event-streams-absent.ts), and the
 * DynamoDB client's endpoint-discovery cache, which no command of the pinned SDK reads
 * (functions/endpoint-cache-absent.ts).
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': path.join(REPO_ROOT, 'functions', 'lambda-credentials.ts'),
  '@smithy/core/event-streams': path.join(REPO_ROOT, 'functions', 'event-streams-absent.ts'),
  '@aws-sdk/endpoint-cache': path.join(REPO_ROOT, 'functions', 'endpoint-cache-absent.ts'),
};

/** pg's optional native binding (pg-native) is never installed; pg falls back to pure JS. */
export const BUNDLE_EXTERNALS: readonly string[] = ['pg-native'];

/**
 * The operations Sluice sends, per SDK client whose error registrations the bundles trim (below):
 * every command a deployed bundle carries must be here (test/infra/bundle.test.ts reads each bundle's
 * inputs), so no error an operation Sluice sends can throw goes unregistered.
 */
export const SDK_OPERATIONS: Readonly<Record<string, readonly string[]>> = {
  // CreateSession: sent by the client itself for S3 Express One Zone buckets (the express stores).
  'client-s3': ['PutObject', 'GetObject', 'HeadObject', 'DeleteObjects', 'ListObjectsV2', 'CreateSession'],
  // DescribeEndpoints: the client's endpoint-discovery config names it; no command sends it
  // (functions/endpoint-cache-absent.ts).
  'client-dynamodb': [
    'GetItem',
    'PutItem',
    'UpdateItem',
    'DeleteItem',
    'Query',
    'TransactWriteItems',
    'BatchWriteItem',
    'DescribeEndpoints',
  ],
};

/**
 * Lets esbuild drop the schemas of the SDK operations a function never calls. Each AWS SDK client
 * declares every operation's schema in one module (dist-es/schemas/schemas_0.js) as plain arrays, but
 * their trait objects use computed keys naming module constants (`{ [_hE]: 404 }`), and esbuild must
 * assume a computed key that is not a literal may run code, so it keeps every schema: 69 KiB of S3's
 * (all its ~100 operations) for the five that Sluice calls. Writing each such constant's string in
 * place of its name makes the keys literals; nothing else changes (the values are the same strings).
 *
 * The same module registers every error class of the service at load (`registry.registerError(…)`),
 * which keeps each class and its schema: DynamoDB's backup, export, import, global-table and table
 * errors too, which no operation Sluice sends can throw. For the clients of SDK_OPERATIONS only the
 * errors those operations declare (the `@throws` of their commands in the SDK's own type
 * declarations) and the service's base exception stay registered. An error outside them would still
 * arrive as the base exception with the error's name, message and fields (the SDK's path for an
 * unknown error), which is what lib/adapters/aws/errors.ts reads.
 */
export const sdkSchemaLiterals: Plugin = {
  name: 'sdk-schema-literals',
  setup(b) {
    b.onLoad(
      { filter: /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]dist-es[\\/]schemas[\\/]schemas_\d+\.js$/ },
      async (args) => {
        const source = inlineSchemaKeys(await readFile(args.path, 'utf8'));
        const clientDir = path.resolve(path.dirname(args.path), '..', '..');
        const operations = SDK_OPERATIONS[path.basename(clientDir)];
        const contents = operations
          ? registerOnly(source, await declaredErrors(clientDir, operations))
          : source;
        return { contents, loader: 'js' };
      },
    );
  },
};

/** The errors these operations declare: their commands' `@throws` in the client's type declarations. */
export const declaredErrors = async (
  clientDir: string,
  operations: readonly string[],
): Promise<ReadonlySet<string>> => {
  const errors = new Set<string>();
  for (const operation of operations) {
    const declaration = await readFile(
      path.join(clientDir, 'dist-types', 'commands', `${operation}Command.d.ts`),
      'utf8',
    );
    for (const m of declaration.matchAll(/@throws \{@link (\w+)\}/g)) errors.add(m[1]!);
  }
  return errors;
};

/** Drops `registry.registerError(X$, X);` of every X but `errors` and the base `…ServiceException`. */
export const registerOnly = (source: string, errors: ReadonlySet<string>): string =>
  source.replace(/^\w+\.registerError\((\w+)\$, (\w+)\);$/gm, (line, schema: string) =>
    errors.has(schema) || schema.endsWith('ServiceException') ? line : '',
  );

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
 * Each AWS SDK client imports its whole package.json (2-3 KiB: scripts, dependencies, …) for one
 * field, the version its User-Agent names. The bundle gets a package.json of that field alone: the
 * same string, the same header.
 */
export const sdkVersionOnly: Plugin = {
  name: 'sdk-version-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]package\.json$/ }, async (args) => {
      const { version } = JSON.parse(await readFile(args.path, 'utf8')) as { version: string };
      return { contents: JSON.stringify({ version }), loader: 'json' };
    });
  },
};

/**
 * The SDK's Node hash classes (SHA-256, SHA-1, MD5) fall back to a JavaScript twin only where
 * node:crypto lacks the algorithm, which Lambda's runtime never does; their twins are replaced by
 * functions/hash-fallbacks-absent.ts, which says so if one is ever constructed. Only the Node
 * classes' own imports are redirected: anything else that asked for a JavaScript hash would get it.
 */
export const hashFallbacksAbsent: Plugin = {
  name: 'hash-fallbacks-absent',
  setup(b) {
    const standIn = path.join(REPO_ROOT, 'functions', 'hash-fallbacks-absent.ts');
    b.onResolve({ filter: /^\.\/(Sha256Js|Sha1Js|Md5Js)$/ }, (args) =>
      /[\\/](Sha256Node|Sha1Node|Md5Node)\.js$/.test(args.importer) ? { path: standIn } : undefined,
    );
  },
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
    plugins: [sdkSchemaLiterals, sdkVersionOnly, hashFallbacksAbsent],
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
