/**
 * `npm run bench:cold-start`: what a Lambda cold start costs each function. Each function is bundled
 * exactly as the CDK app bundles it (infra/bundling.ts: esbuild, ESM, minified, node22, the pinned SDK
 * inside); then, in a fresh Node process per function, against the local emulators: the time to import
 * the bundle (Lambda's init phase) and to serve a first request (the first invoke: SDK clients,
 * credentials, first connections). Repeated `--runs` times (default 5); the median is reported.
 *
 * With `--before <git ref>` (e.g. `e5e9779`, the last build before precompiled validators and the
 * SDK schema plugin) the functions of that commit are bundled too, as they were bundled then (that
 * commit's own infra/bundling.ts when it has one), and their cold starts measured in the same run,
 * interleaved run by run with this tree's, so the two columns share the machine's load. Each line
 * gives the bundle's size beside its cold start; `npm run bench:bundle` says what a bundle holds.
 *
 * Flags: --runs 5, --before <ref>, --json (only the final JSON line). The last stdout line is one JSON
 * object.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';
import { REPO_ROOT, REQUIRE_BANNER, buildFunction } from '../infra/bundling.js';
import { LOCAL_CREDENTIALS } from '../lib/adapters/aws/clients.js';
import { encodeRecordBatch } from '../protocol/record-batch/encode.js';
import { SluiceClient } from '../sdk/client.js';
import { startLocalStack } from '../local/stack.js';
import { flags, numberFlag } from './flags.js';
import { round, summarize } from './stats.js';

const JOBS = ['admin', 'produce', 'fetch', 'groups', 'connect', 'maintenance'] as const;
type Job = (typeof JOBS)[number];

/** The CDK app's bundling (infra/bundling.ts) of one function of this tree. */
export const bundleFunction = async (job: string, outDir: string): Promise<string> => {
  await buildFunction(join(REPO_ROOT, 'functions', `${job}.ts`), join(outDir, job));
  return join(outDir, job, 'index.mjs');
};

/**
 * One function of an earlier commit, bundled with that commit's esbuild options
 * (infra/bundling.ts's functionBuildOptions, which the CDK app used then), or, before that module
 * existed (before the per-function composition roots), with the options the CDK app passed then.
 */
const bundleFunctionAt = async (tree: string, job: Job, outDir: string): Promise<string> => {
  const outfile = join(outDir, `${job}-before`, 'index.mjs');
  const entry = join(tree, 'functions', `${job}.ts`);
  const bundling = join(tree, 'infra', 'bundling.ts');
  if (existsSync(bundling)) {
    const then = (await import(pathToFileURL(bundling).href)) as {
      functionBuildOptions?: (entry: string, outfile: string) => Parameters<typeof build>[0];
    };
    if (then.functionBuildOptions) {
      await build(then.functionBuildOptions(entry, outfile));
      return outfile;
    }
  }
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    mainFields: ['module', 'main'],
    banner: { js: REQUIRE_BANNER },
    external: ['pg-native'],
    logLevel: 'error',
  });
  return outfile;
};

/** The files of `ref` in a directory of their own, with this checkout's node_modules. */
const checkoutOf = async (ref: string, dir: string): Promise<string> => {
  const tree = join(dir, 'before-tree');
  await mkdir(tree, { recursive: true });
  const archive = execFileSync('git', ['archive', ref], { cwd: REPO_ROOT, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', tree], { input: archive });
  await symlink(join(REPO_ROOT, 'node_modules'), join(tree, 'node_modules'));
  return tree;
};

const event = (method: string, path: string, body?: Uint8Array, query = '') => ({
  version: '2.0',
  routeKey: `${method} ${path}`,
  rawPath: path,
  rawQueryString: query,
  headers: body ? { 'content-type': 'application/vnd.kafka.record-batch' } : {},
  requestContext: { http: { method, path }, requestId: 'cold-start', stage: '$default' },
  isBase64Encoded: body !== undefined,
  ...(body ? { body: Buffer.from(body).toString('base64') } : {}),
});

/** The child: import the bundle, serve one request, print the two times. */
const CHILD = `
const t0 = performance.now();
const m = await import(process.argv[2]);
const t1 = performance.now();
const ev = JSON.parse(process.argv[3]);
const r = ev === null ? await m.handler() : await m.handler(ev);
const t2 = performance.now();
const status = ev === null ? (Array.isArray(r?.errors) && r.errors.length === 0 ? 200 : 500) : r.statusCode;
console.log(JSON.stringify({ importMs: t1 - t0, firstRequestMs: t2 - t1, status }));
`;

const run = promisify(execFile);

export interface ColdStart {
  job: Job;
  bundleBytes: number;
  bundleGzipBytes: number;
  importMs: number;
  firstRequestMs: number;
  coldStartMs: number;
  processMs: number;
  statuses: number[];
  /** The same function at `--before`'s commit, measured in the same run. */
  before?: Omit<ColdStart, 'job' | 'before'>;
}

interface Sample {
  importMs: number;
  firstRequestMs: number;
  processMs: number;
  status: number;
}

const median = (xs: number[]) => summarize(xs).p50;

const figures = (bundle: { bytes: number; gzipBytes: number }, samples: Sample[]) => ({
  bundleBytes: bundle.bytes,
  bundleGzipBytes: bundle.gzipBytes,
  importMs: round(median(samples.map((s) => s.importMs)), 1),
  firstRequestMs: round(median(samples.map((s) => s.firstRequestMs)), 1),
  coldStartMs: round(median(samples.map((s) => s.importMs + s.firstRequestMs)), 1),
  processMs: round(median(samples.map((s) => s.processMs)), 1),
  statuses: [...new Set(samples.map((s) => s.status))],
});

const describe = (r: Omit<ColdStart, 'job' | 'before'>) =>
  `bundle ${(r.bundleBytes / 1024).toFixed(0)} KiB (${(r.bundleGzipBytes / 1024).toFixed(0)} KiB gzip); ` +
  `import ${r.importMs} ms + first request ${r.firstRequestMs} ms = ${r.coldStartMs} ms ` +
  `(whole process ${r.processMs} ms; status ${r.statuses.join(',')})`;

/**
 * Bundles every function and measures `runs` cold starts of each (medians); with `before`, the same
 * functions of that git ref too, interleaved with this tree's run by run.
 */
export const measureColdStarts = async (
  runs: number,
  print: (line: string) => void = () => {},
  options: { before?: string } = {},
): Promise<{
  functions: ColdStart[];
  coldStartMs: number;
  worstFunction: Job;
  produceColdStartMs: number;
  before?: string;
}> => {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-cold-'));
  const stack = await startLocalStack({ port: 0, maintenanceIntervalMs: 0, storeCount: 1 });
  try {
    const client = new SluiceClient({ url: stack.url });
    await client.admin().createTopic({ name: 'cold-start', partitions: 1 });
    const batch = encodeRecordBatch([
      { key: null, value: new TextEncoder().encode('hello'), timestamp: Date.now(), headers: [] },
    ]);
    const events: Record<Job, unknown> = {
      admin: event('GET', '/v1/cluster'),
      produce: event('POST', '/v1/topics/cold-start/partitions/0/batches', batch),
      fetch: event('GET', '/v1/topics/cold-start/partitions/0/records', undefined, 'offset=0'),
      groups: event('GET', '/v1/groups'),
      connect: event('GET', '/v1/connect/connectors'),
      maintenance: null,
    };
    const env = {
      PATH: process.env['PATH'] ?? '',
      AWS_REGION: 'us-east-1',
      // What a function's role hands it in Lambda; the emulators accept these (LOCAL_CREDENTIALS).
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_ENDPOINT_URL_S3: stack.endpoints.s3,
      AWS_ENDPOINT_URL_DYNAMODB: stack.endpoints.dynamodb,
      SLUICE_TABLE_NAME: stack.tableName,
      SLUICE_BUCKETS: stack.buckets.join(','),
      SLUICE_CLUSTER_ID: 'cold-start',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    const childFile = join(dir, 'child.mjs');
    await writeFile(childFile, CHILD);
    const beforeTree = options.before ? await checkoutOf(options.before, dir) : undefined;
    const sizeOf = async (bundle: string) => ({
      bytes: (await stat(bundle)).size,
      gzipBytes: gzipSync(readFileSync(bundle)).length,
    });
    const coldStart = async (job: Job, bundle: string): Promise<Sample> => {
      const started = performance.now();
      const { stdout, stderr } = await run(
        process.execPath,
        [childFile, bundle, JSON.stringify(events[job])],
        {
          env,
        },
      );
      const processMs = performance.now() - started;
      const line = JSON.parse(stdout.trim().split('\n').at(-1)!) as Omit<Sample, 'processMs'>;
      if (line.status >= 500)
        throw new Error(`${job} answered ${line.status} on its first request:\n${stderr}`);
      return { ...line, processMs };
    };
    const results: ColdStart[] = [];
    for (const job of JOBS) {
      const bundle = await bundleFunction(job, dir);
      const old = beforeTree ? await bundleFunctionAt(beforeTree, job, dir) : undefined;
      const samples: Sample[] = [];
      const oldSamples: Sample[] = [];
      for (let i = 0; i < runs; i++) {
        if (old) oldSamples.push(await coldStart(job, old));
        samples.push(await coldStart(job, bundle));
      }
      const r: ColdStart = {
        job,
        ...figures(await sizeOf(bundle), samples),
        ...(old ? { before: figures(await sizeOf(old), oldSamples) } : {}),
      };
      results.push(r);
      print(`${job.padEnd(11)} ${describe(r)}`);
      if (r.before) print(`${' '.repeat(11)} ${options.before}: ${describe(r.before)}`);
    }
    const worst = results.reduce((a, b) => (b.coldStartMs > a.coldStartMs ? b : a));
    return {
      functions: results,
      coldStartMs: worst.coldStartMs,
      worstFunction: worst.job,
      produceColdStartMs: results.find((r) => r.job === 'produce')!.coldStartMs,
      ...(options.before ? { before: options.before } : {}),
    };
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
};

const main = async () => {
  const f = flags();
  const runs = numberFlag(f, 'runs', 5);
  const before = f.get('before');
  const result = await measureColdStarts(
    runs,
    f.has('json') ? undefined : (line) => console.log(line),
    before ? { before } : {},
  );
  console.log(JSON.stringify({ bench: 'cold-start', runs, ...result }));
};

if (process.argv[1]?.endsWith('cold-start.ts')) await main();
