/**
 * No file of lib/core is over 500 lines (STYLE.md: files of a few hundred lines, one responsibility
 * each): one that grows past it is split by concept, not trimmed. `find lib/core -name '*.ts' | xargs
 * wc -l | sort -n | tail` shows the largest.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const MAX_LINES = 500;

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );

/** Lines as wc -l counts them: newline characters. */
const lineCount = (text: string): number => text.split('\n').length - 1;

describe('lib/core', () => {
  it(`has no file over ${MAX_LINES} lines`, () => {
    const files = sources('lib/core');
    expect(files.length).toBeGreaterThan(50);
    const over = files
      .map((f) => ({ file: f, lines: lineCount(readFileSync(f, 'utf8')) }))
      .filter((f) => f.lines > MAX_LINES);
    expect(over).toEqual([]);
  });

  it('counts lines as wc -l does', () => {
    expect([lineCount(''), lineCount('a\n'), lineCount('a\nb\n'), lineCount(`${'x\n'.repeat(501)}`)]).toEqual(
      [0, 1, 2, 501],
    );
  });
});
