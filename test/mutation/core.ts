/**
 * `npm run mutate:core [-- <chunk> …] [--sim] [--retest-timeouts]`: Stryker over lib/core chunk by chunk (chunks.mjs), each
 * with its own incremental file, so a rerun or a later session tests only mutants whose code or
 * covering tests changed, and a chunk that did not finish keeps the others' results. Unit tests only
 * unless --sim (much slower; its score can only be higher). Logs go to reports/logs/<chunk>.log; the
 * summary (summary.ts) prints the per-chunk table and the whole-core score at the end.
 *
 * Each chunk's finished run is also kept, gzipped, in test/mutation/state/<chunk>[-unit].json.gz, which
 * is committed: reports/ is not, and a from-scratch run of the whole core takes hours (the `six` chunk
 * alone, 990 mutants, took 61 min on a loaded 2-core machine), so a fresh checkout restores the last
 * committed results and a run tests only the mutants whose code or covering tests changed since.
 *
 * --retest-timeouts drops the timed-out mutants from each chunk's incremental file first, so they are
 * run again: a mutant that timed out on a loaded machine counts as detected, and rerunning it on a
 * quiet one tells a real endless loop from a slow run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { chunks } from './chunks.mjs';

const args = process.argv.slice(2);
const sim = args.includes('--sim');
const retestTimeouts = args.includes('--retest-timeouts');
const asked = args.filter((a) => a !== '--sim' && a !== '--retest-timeouts');
const unknown = asked.filter((a) => !(a in chunks));
if (unknown.length > 0) {
  console.error(`unknown chunk(s) ${unknown.join(', ')}; chunks: ${Object.keys(chunks).join(', ')}`);
  process.exit(2);
}
function dropTimeouts(incrementalFile: string): void {
  if (!existsSync(incrementalFile)) return;
  const report = JSON.parse(readFileSync(incrementalFile, 'utf8')) as {
    files: Record<string, { mutants: { status: string }[] }>;
  };
  let dropped = 0;
  for (const file of Object.values(report.files)) {
    const kept = file.mutants.filter((m) => m.status !== 'Timeout');
    dropped += file.mutants.length - kept.length;
    file.mutants = kept;
  }
  writeFileSync(incrementalFile, JSON.stringify(report));
  console.log(`${incrementalFile}: ${dropped} timed-out mutants to retest`);
}

const stateFile = (name: string) => `test/mutation/state/${name}.json.gz`;
const incrementalFileOf = (name: string) => `reports/stryker-incremental-${name}.json`;
const reportFileOf = (name: string) => `reports/mutation/${name}/mutation.json`;

/** A fresh checkout has no reports/: the committed state becomes the incremental file and the report. */
function restore(name: string): void {
  if (existsSync(incrementalFileOf(name)) || !existsSync(stateFile(name))) return;
  const json = gunzipSync(readFileSync(stateFile(name)));
  for (const file of [incrementalFileOf(name), reportFileOf(name)]) {
    mkdirSync(dirname(file), { recursive: true });
    if (!existsSync(file)) writeFileSync(file, json);
  }
  console.log(`${name}: restored the results of ${stateFile(name)}`);
}

/** After a finished run: the incremental file (the same document as the JSON report) is kept. */
function save(name: string): void {
  if (!existsSync(incrementalFileOf(name))) return;
  mkdirSync(dirname(stateFile(name)), { recursive: true });
  writeFileSync(stateFile(name), gzipSync(readFileSync(incrementalFileOf(name)), { level: 9 }));
}

mkdirSync('reports/logs', { recursive: true });
const failed: string[] = [];
// Every chunk's committed results first, so the summary covers chunks this run does not reach.
for (const chunk of Object.keys(chunks)) restore(`${chunk}${sim ? '' : '-unit'}`);
for (const chunk of asked.length > 0 ? asked : Object.keys(chunks)) {
  const name = `${chunk}${sim ? '' : '-unit'}`;
  const log = `reports/logs/${name}.log`;
  if (retestTimeouts) dropTimeouts(incrementalFileOf(name));
  const started = Date.now();
  console.log(`${new Date().toISOString()} ${chunk}: stryker run (log ${log})`);
  const fd = openSync(log, 'w');
  const run = spawnSync('npx', ['stryker', 'run'], {
    stdio: ['ignore', fd, fd],
    env: { ...process.env, SLUICE_MUTATE_CHUNK: chunk, SLUICE_MUTATE_PROJECTS: sim ? 'unit,sim' : 'unit' },
  });
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  console.log(`${chunk}: exit ${run.status ?? run.signal} after ${minutes} min`);
  // One failed chunk (say, an initial test run that timed out) leaves the others worth running.
  if (run.status !== 0) failed.push(chunk);
  else save(name);
}
spawnSync('npx', ['tsx', 'test/mutation/summary.ts', ...(sim ? ['--sim'] : [])], { stdio: 'inherit' });
if (failed.length > 0) {
  console.error(`failed chunks (see their logs): ${failed.join(', ')}`);
  process.exit(1);
}
