/**
 * Import cycles over the source folders (type-only imports count: a cycle of types is still two
 * modules that cannot be read apart). The Streams DSL's KStream/KTable/KGroupedStream trio calls
 * itself by design, as Kafka Streams' does. Any other cycle fails this test.
 *
 * And the boundaries the lint rules (eslint.config.js) hold for each file's own imports, held for
 * everything a folder reaches through others too: a lint rule sees one file, this sees the graph.
 * The TypeScript compiler's parser reads the imports (madge is not installed, and a walk over
 * ts.createSourceFile is a few lines with no new dependency).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const FOLDERS = [
  'lib',
  'sdk',
  'cli',
  'connect',
  'streams',
  'protocol',
  'functions',
  'gateway',
  'infra',
  'local',
];

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

/** The modules a file imports (with `dynamic`, also those it loads with `import()` when it runs). */
const importsOf = (file: string, dynamic = false): string[] => {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const add = (specifier: ts.Node | undefined) => {
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return;
    const target = resolve(dirname(file), specifier.text.replace(/\.js$/, '.ts'));
    if (existsSync(target)) found.push(target);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node.arguments[0]);
    ts.forEachChild(node, visit);
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))
      add(statement.moduleSpecifier);
    else if (dynamic) visit(statement);
  }
  return found;
};

/** Every module reachable from `from`, with the chain that first reached it (`a → b → c`). */
const reachable = (graph: Map<string, string[]>, from: readonly string[]): Map<string, string> => {
  const chains = new Map<string, string>(from.map((f) => [f, relative(ROOT, f)]));
  const queue = [...from];
  for (let next = queue.shift(); next !== undefined; next = queue.shift())
    for (const target of graph.get(next) ?? [])
      if (!chains.has(target)) {
        chains.set(target, `${chains.get(next)} → ${relative(ROOT, target)}`);
        queue.push(target);
      }
  return chains;
};

/** The chains from the modules under `from` to any module under one of `forbidden` (folders or files). */
const reaching = (graph: Map<string, string[]>, from: string, forbidden: readonly string[]): string[] => {
  const under = (file: string, path: string) =>
    relative(ROOT, file) === path || relative(ROOT, file).startsWith(`${path}/`);
  const starts = [...graph.keys()].filter((f) => under(f, from));
  expect(starts.length).toBeGreaterThan(0);
  return [...reachable(graph, starts)]
    .filter(([file]) => forbidden.some((path) => under(file, path)))
    .map(([, chain]) => chain);
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

describe('what each folder reaches, through any chain of imports', () => {
  const files = sources();
  const graph = new Map(files.map((f) => [f, importsOf(f, true)]));

  it('finds a planted chain', () => {
    const planted = new Map([
      [join(ROOT, 'sdk/a.ts'), [join(ROOT, 'lib/http/b.ts')]],
      [join(ROOT, 'lib/http/b.ts'), [join(ROOT, 'lib/core/c.ts')]],
      [join(ROOT, 'lib/core/c.ts'), []],
    ]);
    expect(reaching(planted, 'sdk', ['lib/core'])).toEqual(['sdk/a.ts → lib/http/b.ts → lib/core/c.ts']);
    expect(reaching(planted, 'sdk', ['connect'])).toEqual([]);
  });

  it('sdk/ reaches nothing of lib/core', () => {
    expect(reaching(graph, 'sdk', ['lib/core'])).toEqual([]);
  });

  it('the Connect worker reaches neither lib/core, the composition roots nor the herder and its REST API', () => {
    expect(
      reaching(graph, 'connect/worker', [
        'lib/core',
        'lib/services.ts',
        'functions',
        'connect/herder.ts',
        'connect/rest.ts',
        'connect/access.ts',
      ]),
    ).toEqual([]);
  });

  it('lib/ reaches neither connect/, streams/ nor a composition root', () => {
    expect(reaching(graph, 'lib', ['connect', 'streams', 'functions', 'local', 'infra'])).toEqual([]);
  });

  it('no runtime folder reaches infra/', () => {
    for (const folder of [
      'lib',
      'sdk',
      'cli',
      'connect',
      'streams',
      'functions',
      'gateway',
      'protocol',
      'local',
    ])
      expect(reaching(graph, folder, ['infra'])).toEqual([]);
  });

  it('a Streams app function’s handler reaches no AWS adapter: its composition root hands it the clients', () => {
    // (streams/runtime/main.ts, `npm run streams`, is a process entry of its own and builds its store.)
    expect(reaching(graph, 'streams/lambda', ['lib/adapters', 'functions', 'infra'])).toEqual([]);
  });
});
