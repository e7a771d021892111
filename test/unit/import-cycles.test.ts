/**
 * Import cycles over the source folders (type-only imports count: a cycle of types is still two
 * modules that cannot be read apart). The Streams DSL's KStream/KTable/KGroupedStream trio calls
 * itself by design, as Kafka Streams' does. Any other cycle fails this test.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const FOLDERS = ['lib', 'sdk', 'cli', 'connect', 'streams', 'protocol', 'functions', 'infra', 'local'];

const sources = (): string[] => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const folder of FOLDERS) if (existsSync(join(ROOT, folder))) walk(join(ROOT, folder));
  return files;
};

const importsOf = (file: string): string[] => {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  for (const statement of source.statements) {
    const specifier =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
    const target = resolve(dirname(file), specifier.text.replace(/\.js$/, '.ts'));
    if (existsSync(target)) found.push(target);
  }
  return found;
};

/** Tarjan's strongly connected components of more than one module: each is one or more cycles. */
const cycles = (graph: Map<string, string[]>): string[][] => {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(relative(ROOT, w));
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
};

describe('import cycles', () => {
  it('finds a planted cycle', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cycles(graph).map((c) => c.map((f) => f.slice(-1)))).toEqual([['a', 'b', 'c']]);
  });

  it('are only the Streams DSL trio', () => {
    const files = sources();
    expect(files.length).toBeGreaterThan(200);
    const graph = new Map(files.map((f) => [f, importsOf(f)]));
    expect(cycles(graph)).toEqual([['streams/grouped.ts', 'streams/kstream.ts', 'streams/ktable.ts']]);
  }, 60_000);
});
