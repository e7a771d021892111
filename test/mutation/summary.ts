/**
 * The whole-core mutation score from the chunks' reports (reports/mutation/<chunk>[-unit]/mutation.json):
 * per chunk killed, timed out, survived, no coverage; the equivalents listed in equivalents/*.json
 * (matched by file, replaced text and replacement, the nearest line first: equivalents.ts); and the
 * score = (killed + timeout) ÷ (valid − equivalent). Prints a Markdown table, the survivors that are
 * not listed, and the listed equivalents that match no survivor.
 *
 * --remap rewrites each matched entry's line and column to where it matched (the files stay readable
 * after code moves); --equivalents prints the lists as Markdown; --files gives one row per file.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { chunks } from './chunks.mjs';
import {
  type Equivalent,
  type MutantText,
  brief,
  matchEquivalents,
  normalize,
  sourceText,
} from './equivalents.js';

interface Mutant {
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}
interface Report {
  files: Record<string, { source: string; mutants: Mutant[] }>;
}

// One file per area (equivalents/*.json), so tests for different parts of the core can list their
// equivalents without editing the same file.
const equivalentsDir = new URL('./equivalents/', import.meta.url);
const lists = readdirSync(equivalentsDir)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .map((name) => ({
    name,
    entries: JSON.parse(readFileSync(new URL(name, equivalentsDir), 'utf8')) as Equivalent[],
  }));
const equivalents = lists.flatMap((list) => list.entries);

// --equivalents: print the listed equivalents as Markdown, by file (for equivalent-mutants.md), and stop.
if (process.argv.includes('--equivalents')) {
  const byPath = new Map<string, Equivalent[]>();
  for (const e of equivalents) byPath.set(e.file, [...(byPath.get(e.file) ?? []), e]);
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const code = (text: string) => `\`${cell(text.length > 60 ? `${text.slice(0, 57)}…` : text)}\``;
  for (const [file, list] of [...byPath].sort(([a], [b]) => (a < b ? -1 : 1))) {
    console.log(
      `\n### ${file}\n\n| line:column | original | replacement | why it cannot change behaviour |\n| --- | --- | --- | --- |`,
    );
    for (const e of list.sort((a, b) => a.line - b.line || a.column - b.column)) {
      console.log(
        `| ${e.line}:${e.column} | ${code(e.original)} | ${code(e.replacement)} | ${cell(e.reason)} |`,
      );
    }
  }
  process.exit(0);
}

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

// Every valid mutant of every report, with the chunk it belongs to and the text it replaces.
interface Measured extends MutantText {
  chunk: string;
  tests: string;
  mutatorName: string;
  status: string;
}
const measured: Measured[] = [];
const ignored = new Map<string, number>(); // per chunk, or per file with --files
const byFile = process.argv.includes('--files');
const groups: [string, string][] = []; // row name, tests
const missing: string[] = [];
const reported = new Set<string>();
for (const chunk of Object.keys(chunks)) {
  const found = reportOf(chunk);
  if (found === undefined) {
    missing.push(chunk);
    continue;
  }
  const report = JSON.parse(readFileSync(found.path, 'utf8')) as Report;
  if (!byFile) groups.push([chunk, found.tests]);
  for (const [file, { source, mutants }] of Object.entries(report.files).sort(([a], [b]) =>
    a < b ? -1 : 1,
  )) {
    reported.add(file);
    if (byFile) groups.push([file, found.tests]);
    const row = byFile ? file : chunk;
    for (const m of mutants) {
      // Ignored (static), CompileError, RuntimeError: not valid mutants.
      if (!['Killed', 'Timeout', 'Survived', 'NoCoverage'].includes(m.status)) {
        if (m.status === 'Ignored') ignored.set(row, (ignored.get(row) ?? 0) + 1);
        continue;
      }
      measured.push({
        chunk: row,
        tests: found.tests,
        file,
        line: m.location.start.line,
        column: m.location.start.column,
        original: sourceText(source, m.location),
        replacement: m.replacement ?? m.mutatorName,
        mutatorName: m.mutatorName,
        status: m.status,
      });
    }
  }
}

const matches = matchEquivalents(equivalents, measured);
const listedMutants = new Set(matches.values());
const survived = (m: Measured) => m.status === 'Survived' || m.status === 'NoCoverage';

// --remap: each matched entry takes its mutant's line and column, and the lists are written back.
if (process.argv.includes('--remap')) {
  let index = 0;
  let moved = 0;
  for (const { name, entries } of lists) {
    const rewritten = entries.map((e) => {
      const m = matches.get(index++);
      if (m === undefined) return e;
      const { line, column } = measured[m]!;
      if (line !== e.line || column !== e.column) moved++;
      return {
        file: e.file,
        line,
        column,
        original: normalize(e.original),
        replacement: e.replacement,
        reason: e.reason,
      };
    });
    writeFileSync(new URL(name, equivalentsDir), `${JSON.stringify(rewritten, null, 2)}\n`);
  }
  console.log(
    `${moved} of ${matches.size} matched entries moved; ${equivalents.length - matches.size} did not match (see below)`,
  );
}

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
const rows = new Map(groups.map(([name]) => [name, { ...zero(), ignored: ignored.get(name) ?? 0 }]));
const unlisted: string[] = [];
measured.forEach((m, i) => {
  const row = rows.get(m.chunk)!;
  row.valid++;
  if (m.status === 'Killed') row.killed++;
  else if (m.status === 'Timeout') row.timeout++;
  else {
    if (m.status === 'Survived') row.survived++;
    else row.noCoverage++;
    if (listedMutants.has(i)) row.equivalent++;
    else
      unlisted.push(
        `${m.file}:${m.line}:${m.column} ${m.mutatorName} \`${brief(m.original)}\` → \`${brief(m.replacement)}\` (${m.status})`,
      );
  }
});

const score = (r: Row) =>
  r.valid - r.equivalent === 0 ? 100 : (100 * (r.killed + r.timeout)) / (r.valid - r.equivalent);
const total = [...rows.values()].reduce((acc, r) => {
  for (const k of Object.keys(acc) as (keyof Row)[]) acc[k] += r[k];
  return acc;
}, zero());
console.log(
  `| ${byFile ? 'file' : 'chunk'} | tests | mutants | killed | timeout | survived | no coverage | equivalent | score | static (ignored) |`,
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
const all = [...new Set(groups.map(([, tests]) => tests))].join(', ');
for (const [name, r, tests] of [
  ...groups.map(([name, tests]) => [name, rows.get(name)!, tests] as const),
  ['**lib/core**', total, all] as const,
]) {
  console.log(
    `| ${name} | ${tests} | ${r.valid} | ${r.killed} | ${r.timeout} | ${r.survived} | ${r.noCoverage} | ${r.equivalent} | ${score(r).toFixed(1)}% | ${r.ignored} |`,
  );
}
if (missing.length > 0) console.log(`\nNot run yet: ${missing.join(', ')}`);
console.log(`\nSurvivors not listed as equivalent (${unlisted.length}):`);
for (const u of unlisted) console.log(`  ${u}`);

// Entries that count for nothing: their mutant is now killed (drop the entry), or no mutant of a
// reported file has their text and replacement (the code changed: judge the new mutant again). An
// entry of a file no report holds waits for its chunk.
const where = (e: Equivalent) =>
  `${e.file}:${e.line}:${e.column} \`${brief(e.original)}\` → \`${brief(e.replacement)}\``;
const killed = equivalents.flatMap((e, i) => {
  const m = matches.get(i);
  return m !== undefined && !survived(measured[m]!)
    ? [`${where(e)} (${measured[m]!.status} at ${measured[m]!.line}:${measured[m]!.column})`]
    : [];
});
const stale = equivalents.filter((e, i) => !matches.has(i) && reported.has(e.file)).map(where);
const waiting = equivalents.filter((e, i) => !matches.has(i) && !reported.has(e.file)).length;
if (killed.length > 0) {
  console.log(`\nListed equivalents whose mutant is now detected (drop them from equivalents/*.json):`);
  for (const k of killed) console.log(`  ${k}`);
}
if (stale.length > 0) {
  console.log(`\nListed equivalents that match no mutant (the code changed; update equivalents/*.json):`);
  for (const s of stale) console.log(`  ${s}`);
}
if (waiting > 0) console.log(`\n${waiting} listed equivalents are in files no report holds yet.`);
