/**
 * `npm run bench:bundle`: what each function's bundle is made of. Each function is bundled exactly as
 * the CDK app bundles it (infra/bundling.ts) with esbuild's metafile, and the bundle's size is printed
 * with its largest contributors, grouped by npm package (a package's files together) or, for Sluice's
 * own code, by directory.
 *
 * Flags: --function <job> (default: every function), --top 10. The last stdout line is one JSON object.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, buildFunction } from '../infra/bundling.js';
import { flags, numberFlag } from './flags.js';

const JOBS = [
  'admin',
  'produce',
  'fetch',
  'groups',
  'connect',
  'connect-worker',
  'maintenance',
  'wait',
  'wait-notifier',
] as const;

/** A bundle input's group: its npm package, or the first two directories of Sluice's own files. */
export const contributorOf = (input: string): string => {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  if (pkg) return pkg[1]!;
  const parts = input.split('/');
  return parts.length > 2 ? `${parts.slice(0, 2).join('/')}/` : input;
};

export interface BundleAnalysis {
  job: string;
  bytes: number;
  contributors: { name: string; bytes: number }[];
}

/** Bundles one function as the CDK app does and sums its output bytes by contributor. */
export const analyzeBundle = async (job: string, outDir: string): Promise<BundleAnalysis> => {
  const metafile = await buildFunction(join(REPO_ROOT, 'functions', `${job}.ts`), join(outDir, job));
  const output = Object.entries(metafile.outputs).find(([file]) => file.endsWith('index.mjs'));
  if (!output) throw new Error(`esbuild wrote no index.mjs for ${job}`);
  const sums = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output[1].inputs)) {
    const name = contributorOf(input);
    sums.set(name, (sums.get(name) ?? 0) + bytesInOutput);
  }
  return {
    job,
    bytes: output[1].bytes,
    contributors: [...sums].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes),
  };
};

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

const main = async () => {
  const f = flags();
  const top = numberFlag(f, 'top', 10);
  const only = f.get('function');
  const jobs = only ? [only] : [...JOBS];
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bundle-'));
  try {
    const results: BundleAnalysis[] = [];
    for (const job of jobs) {
      const r = await analyzeBundle(job, dir);
      results.push(r);
      console.log(`${job}: ${kib(r.bytes)}`);
      for (const c of r.contributors.slice(0, top)) console.log(`  ${kib(c.bytes).padStart(10)}  ${c.name}`);
    }
    console.log(
      JSON.stringify({
        bench: 'bundle',
        functions: results.map((r) => ({
          job: r.job,
          bytes: r.bytes,
          top: r.contributors.slice(0, top),
        })),
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

if (process.argv[1]?.endsWith('bundle.ts')) await main();
