/**
 * The listed equivalent mutants (test/mutation/equivalents/*.json) are matched with a report's mutants
 * by file, replaced text and replacement, the nearest line first (test/mutation/equivalents.ts), so a
 * rename or a move elsewhere in a file leaves them matching; and each entry's text is still in its
 * file, or the code it judged is gone and the entry with it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type Equivalent,
  type MutantText,
  brief,
  matchEquivalents,
  normalize,
  sourceText,
} from '../../mutation/equivalents.js';

const entry = (over: Partial<Equivalent>): Equivalent => ({
  file: 'lib/core/a.ts',
  line: 10,
  column: 5,
  original: 'x < y',
  replacement: 'x <= y',
  reason: 'r',
  ...over,
});
const mutant = (over: Partial<MutantText>): MutantText => ({
  file: 'lib/core/a.ts',
  line: 10,
  column: 5,
  original: 'x < y',
  replacement: 'x <= y',
  ...over,
});

describe('sourceText', () => {
  const source = 'const a = 1;\nif (x < y &&\n    z) {\n  return;\n}\n';

  it('cuts the text between 1-based positions, the end exclusive', () => {
    expect(sourceText(source, { start: { line: 2, column: 5 }, end: { line: 2, column: 10 } })).toBe('x < y');
    expect(sourceText(source, { start: { line: 1, column: 1 }, end: { line: 1, column: 6 } })).toBe('const');
  });

  it('collapses the whitespace of a text over several lines', () => {
    expect(sourceText(source, { start: { line: 2, column: 5 }, end: { line: 3, column: 6 } })).toBe(
      'x < y && z',
    );
    expect(sourceText(source, { start: { line: 3, column: 8 }, end: { line: 5, column: 2 } })).toBe(
      '{ return; }',
    );
  });

  it('normalize trims and collapses every run of whitespace', () => {
    expect(normalize('  a\n\t  &&   b \n')).toBe('a && b');
  });

  it('brief keeps a short text whole and cuts a long one in the middle', () => {
    expect(brief('{\n  return a;\n}')).toBe('{ return a; }');
    const long = `{ ${'x'.repeat(200)} }`;
    expect(brief(long, 20)).toBe(`{ ${'x'.repeat(7)} … ${'x'.repeat(6)} }`);
    expect(brief(long, 20)).toHaveLength(20);
  });
});

describe('matchEquivalents', () => {
  it('matches a mutant that moved to another line and column', () => {
    expect(matchEquivalents([entry({})], [mutant({ line: 250, column: 17 })])).toEqual(new Map([[0, 0]]));
  });

  it('needs the same file, text and replacement', () => {
    const mutants = [
      mutant({ file: 'lib/core/b.ts' }),
      mutant({ original: 'x < z' }),
      mutant({ replacement: 'x >= y' }),
    ];
    expect(matchEquivalents([entry({})], mutants)).toEqual(new Map());
  });

  it('compares texts with their whitespace collapsed', () => {
    const matched = matchEquivalents(
      [entry({ original: 'a &&\n    b', replacement: 'false' })],
      [mutant({ original: 'a && b', replacement: 'false' })],
    );
    expect(matched).toEqual(new Map([[0, 0]]));
  });

  it('takes the nearest of several occurrences of the same text', () => {
    const mutants = [mutant({ line: 3 }), mutant({ line: 40 }), mutant({ line: 90 })];
    expect(matchEquivalents([entry({ line: 45 })], mutants)).toEqual(new Map([[0, 1]]));
    expect(matchEquivalents([entry({ line: 80 })], mutants)).toEqual(new Map([[0, 2]]));
    // Same line: the nearest column.
    const onOneLine = [mutant({ column: 5 }), mutant({ column: 30 })];
    expect(matchEquivalents([entry({ column: 28 })], onOneLine)).toEqual(new Map([[0, 1]]));
  });

  it('pairs entries and mutants one to one, closest pairs first', () => {
    // Both occurrences moved down by 20 lines: each entry keeps its own, though entry 1 (line 30)
    // is nearer to the mutant of entry 0 (line 30) than to its own (line 50).
    const entries = [entry({ line: 10 }), entry({ line: 30, reason: 'second' })];
    const mutants = [mutant({ line: 50 }), mutant({ line: 30 })];
    expect(matchEquivalents(entries, mutants)).toEqual(
      new Map([
        [1, 1],
        [0, 0],
      ]),
    );
    // Two entries, one mutant: the nearer entry has it, the other matches nothing.
    expect(matchEquivalents(entries, [mutant({ line: 12 })])).toEqual(new Map([[0, 0]]));
    // Two entries for the same mutant (a duplicate in the lists) cannot both count.
    expect(matchEquivalents([entry({}), entry({})], [mutant({})]).size).toBe(1);
  });

  it('separates mutants of the same text by replacement', () => {
    const entries = [entry({ replacement: 'true' }), entry({ replacement: 'false' })];
    const mutants = [mutant({ replacement: 'false', line: 11 }), mutant({ replacement: 'true', line: 11 })];
    expect(matchEquivalents(entries, mutants)).toEqual(
      new Map([
        [0, 1],
        [1, 0],
      ]),
    );
  });
});

describe('the listed equivalents', () => {
  const dir = new URL('../../mutation/equivalents/', import.meta.url);
  const lists = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => ({
      name,
      entries: JSON.parse(readFileSync(new URL(name, dir), 'utf8')) as Equivalent[],
    }));

  it('each give file, line, column, original text, replacement and reason', () => {
    const bad = lists.flatMap(({ name, entries }) =>
      entries
        .filter(
          (e) =>
            Object.keys(e).join() !== 'file,line,column,original,replacement,reason' ||
            !Number.isInteger(e.line) ||
            !Number.isInteger(e.column) ||
            e.original === '' ||
            e.original !== normalize(e.original) ||
            e.reason.trim() === '',
        )
        .map((e) => `${name}: ${JSON.stringify(e)}`),
    );
    expect(bad).toEqual([]);
  });

  it('each name a text that is still in its file, and no mutant twice', () => {
    const sources = new Map<string, string>();
    const gone = lists.flatMap(({ name, entries }) =>
      entries.flatMap((e) => {
        if (!sources.has(e.file)) {
          let source = '';
          try {
            source = normalize(readFileSync(e.file, 'utf8'));
          } catch {
            // A file that no longer exists holds no text: the entry is reported below.
          }
          sources.set(e.file, source);
        }
        return sources.get(e.file)!.includes(e.original) ? [] : [`${name}: ${e.file} ${e.original}`];
      }),
    );
    expect(gone).toEqual([]);
    const keys = lists.flatMap(({ entries }) =>
      entries.map((e) => `${e.file}:${e.line}:${e.column}:${e.original}:${e.replacement}`),
    );
    expect(keys.length - new Set(keys).size).toBe(0);
  });
});
