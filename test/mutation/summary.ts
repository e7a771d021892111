/**
 * The whole-core mutation score from the chunks' reports (reports/mutation/<chunk>[-unit]/mutation.json):
 * per chunk killed, timed out, survived, no coverage; the equivalents listed in equivalents/*.json
 * (matched by file, line, column and replacement, so a moved or changed mutant no longer matches and
 * counts against the score); and the score = (killed + timeout) ÷ (valid − equivalent). Prints a
 * Markdown table, the survivors that are not listed, and the listed equivalents that match nothing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chunks } from './chunks.mjs';

interface Mutant {
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number } };
}
interface Report {
  files: Record<string, { mutants: Mutant[] }>;
}
export interface Equivalent {
  file: string;
  line: number;
  column: number;
  replacement: string;
  reason: string;
}

// One file per area (equivalents/*.json), so tests for different parts of the core can list their
// equivalents without editing the same file.
const equivalentsDir = new URL('./equivalents/', import.meta.url);
const equivalents = readdirSync(equivalentsDir)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .flatMap((name) => JSON.parse(readFileSync(new URL(name, equivalentsDir), 'utf8')) as Equivalent[]);
const keyOf = (file: string, line: number, column: number, replacement: string) =>
  `${file}:${line}:${column}:${replacement}`;
const listed = new Map(equivalents.map((e) => [keyOf(e.file, e.line, e.column, e.replacement), e]));
const matched = new Set<string>();

// Each chunk has a unit-only report (`mutate:core`) and may have a unit + sim one (`mutate:core --sim`);
// the newer of the two is used, and the "tests" column says which. --unit or --sim forces one.
const only = process.argv.includes('--unit') ? 'unit' : process.argv.includes('--sim') ? 'sim' : undefined;
const reportOf = (name: string): { path: string; tests: string } | undefined => {
  const found = [
    { path: `reports/mutation/${name}-unit/mutation.json`, tests: 'unit' },
    { path: `reports/mutation/${name}/mutation.json`, tests: 'unit+sim' },
  ].filter((r) => existsSync(r.path) && (only === undefined || r.tests.endsWith(only)));
  return found.sort((a, b) => statSync(b.path).mtimeMs - statSync(a.path).mtimeMs)[0];
};
// --equivalents: print the listed equivalents as Markdown, by file (for equivalent-mutants.md), and stop.
if (process.argv.includes('--equivalents')) {
  const byPath = new Map<string, Equivalent[]>();
  for (const e of equivalents) byPath.set(e.file, [...(byPath.get(e.file) ?? []), e]);
  for (const [file, list] of [...byPath].sort(([a], [b]) => (a < b ? -1 : 1))) {
    console.log(
      `\n### ${file}\n\n| line:column | replacement | why it cannot change behaviour |\n| --- | --- | --- |`,
    );
    for (const e of list.sort((a, b) => a.line - b.line || a.column - b.column)) {
      const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
      console.log(`| ${e.line}:${e.column} | \`${cell(e.replacement)}\` | ${cell(e.reason)} |`);
    }
  }
  process.exit(0);
}
// --files: one row per file instead of per chunk.
const byFile = process.argv.includes('--files');
type Row = Record<
  'killed' | 'timeout' | 'survived' | 'noCoverage' | 'equivalent' | 'valid' | 'ignored',
  number
>;
const zero = (): Row => ({
  killed: 0,
  timeout: 0,
  survived: 0,
  noCoverage: 0,
  equivalent: 0,
  valid: 0,
  ignored: 0,
});
const rows: [string, Row, string][] = [];
const unlisted: string[] = [];
const missing: string[] = [];

for (const name of Object.keys(chunks)) {
  const found = reportOf(name);
  if (found === undefined) {
    missing.push(name);
    continue;
  }
  const report = JSON.parse(readFileSync(found.path, 'utf8')) as Report;
  let row = zero();
  for (const [file, { mutants }] of Object.entries(report.files).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (byFile) rows.push([file, (row = zero()), found.tests]);
    for (const m of mutants) {
      const { line, column } = m.location.start;
      const key = keyOf(file, line, column, m.replacement ?? m.mutatorName);
      if (m.status === 'Killed') row.killed++;
      else if (m.status === 'Timeout') row.timeout++;
      else if (m.status === 'Survived' || m.status === 'NoCoverage') {
        if (listed.has(key)) {
          matched.add(key);
          row.equivalent++;
        } else {
          unlisted.push(`${file}:${line}:${column} ${m.mutatorName} → ${m.replacement ?? ''} (${m.status})`);
        }
        if (m.status === 'Survived') row.survived++;
        else row.noCoverage++;
      } else {
        // Ignored (static), CompileError, RuntimeError: not valid mutants.
        if (m.status === 'Ignored') row.ignored++;
        continue;
      }
      row.valid++;
    }
  }
  if (!byFile) rows.push([name, row, found.tests]);
}

const score = (r: Row) =>
  r.valid - r.equivalent === 0 ? 100 : (100 * (r.killed + r.timeout)) / (r.valid - r.equivalent);
const total = rows.reduce((acc, [, r]) => {
  for (const k of Object.keys(acc) as (keyof Row)[]) acc[k] += r[k];
  return acc;
}, zero());
console.log(
  `| ${byFile ? 'file' : 'chunk'} | tests | mutants | killed | timeout | survived | no coverage | equivalent | score | static (ignored) |`,
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
const all = [...new Set(rows.map(([, , tests]) => tests))].join(', ');
for (const [name, r, tests] of [...rows, ['**lib/core**', total, all] as [string, Row, string]]) {
  console.log(
    `| ${name} | ${tests} | ${r.valid} | ${r.killed} | ${r.timeout} | ${r.survived} | ${r.noCoverage} | ${r.equivalent} | ${score(r).toFixed(1)}% | ${r.ignored} |`,
  );
}
if (missing.length > 0) console.log(`\nNot run yet: ${missing.join(', ')}`);
console.log(`\nSurvivors not listed as equivalent (${unlisted.length}):`);
for (const u of unlisted) console.log(`  ${u}`);
const stale = equivalents.filter((e) => !matched.has(keyOf(e.file, e.line, e.column, e.replacement)));
if (stale.length > 0) {
  console.log(`\nListed equivalents that match no survivor (moved or killed; update equivalents/*.json):`);
  for (const e of stale) console.log(`  ${e.file}:${e.line}:${e.column} → ${e.replacement}`);
}
