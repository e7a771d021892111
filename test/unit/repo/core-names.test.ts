/**
 * Facts about lib/core a reader can check, kept true by a test: fields carry Kafka's names in memory,
 * and the partition item's short stored attribute names appear only in its codec
 * (lib/core/log/partition-codec.ts), the one module that maps between them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { producerAttr, stateAttr } from '../../../lib/core/log/partition-codec.js';

const CODEC = 'lib/core/log/partition-codec.ts';
/** Short names that are words, or the table's key attributes: not encodings. */
const WORDS = new Set(['id', 'at', 'to', 'pk', 'sk']);

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );

const parse = (file: string, text = readFileSync(file, 'utf8')) =>
  ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);

const walk = (node: ts.Node, visit: (n: ts.Node) => void): void => {
  visit(node);
  ts.forEachChild(node, (child) => walk(child, visit));
};

/** Properties of 1–2 letters declared by an interface or type literal (`file:line name`). */
const shortProperties = (file: string, text?: string): string[] => {
  const source = parse(file, text);
  const found: string[] = [];
  walk(source, (n) => {
    if (!ts.isPropertySignature(n) || !ts.isIdentifier(n.name)) return;
    const name = n.name.text;
    if (name.length > 2 || WORDS.has(name)) return;
    found.push(`${file}:${source.getLineAndCharacterOfPosition(n.getStart()).line + 1} ${name}`);
  });
  return found;
};

/** String literals that are a stored attribute name of the partition item (`file:line 'name'`). */
const storedNames = (file: string, text?: string): string[] => {
  const names = new Set<string>(Object.values(stateAttr));
  const source = parse(file, text);
  const found: string[] = [];
  walk(source, (n) => {
    if (!ts.isStringLiteral(n) || !names.has(n.text)) return;
    found.push(`${file}:${source.getLineAndCharacterOfPosition(n.getStart()).line + 1} '${n.text}'`);
  });
  return found;
};

describe('names in lib/core', () => {
  // Parsing every file of lib/ takes a few seconds on a loaded machine.
  it('declares no field of one or two letters outside the partition codec', { timeout: 60_000 }, () => {
    const found = sources('lib/core')
      .filter((f) => f !== CODEC)
      .flatMap((f) => shortProperties(f));
    expect(found).toEqual([]);
  });

  it('names the partition item’s stored attributes only in its codec', { timeout: 60_000 }, () => {
    const found = sources('lib')
      .filter((f) => f !== CODEC)
      .flatMap((f) => storedNames(f));
    expect(found).toEqual([]);
  });

  it('would catch a planted short field or stored name', () => {
    const planted =
      "interface Entry { o: string; id: string; offset: number }\nconst p = ['pr', '7', 'e'];\n";
    expect(shortProperties('lib/core/planted.ts', planted)).toEqual(['lib/core/planted.ts:1 o']);
    expect(storedNames('lib/core/planted.ts', planted)).toEqual(["lib/core/planted.ts:2 'pr'"]);
  });

  it('maps every renamed field to a distinct stored name', () => {
    const stored = Object.values(stateAttr);
    expect(new Set(stored).size).toBe(stored.length);
    expect(new Set(Object.values(producerAttr)).size).toBe(Object.keys(producerAttr).length);
  });
});
