/**
 * The chunks of `npm run mutate:core` (test/mutation/chunks.mjs) must cover every mutable file of
 * lib/core and of protocol/ (but the Kafka gateway's message codecs, protocol/kafka/, which the
 * gateway suites test through real clients) exactly once, or the whole-core score they add up to leaves a folder out
 * (transactions/ and quotas/ were missing until this test).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunks } from '../../mutation/chunks.mjs';

/** Stryker's pattern forms used in chunks.mjs: `**` any folders, `*` within a name, `!` excludes. */
const toRegExp = (glob: string): RegExp =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*\*\//g, '@@')
      .replace(/\*/g, '[^/]*')
      .replace(/@@/g, '(?:.*/)?')}$`,
  );

const matches = (patterns: string[], file: string): boolean => {
  let hit = false;
  for (const pattern of patterns) {
    if (pattern.startsWith('!')) {
      if (toRegExp(pattern.slice(1)).test(file)) hit = false;
    } else if (toRegExp(pattern).test(file)) hit = true;
  }
  return hit;
};

const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });

describe('mutation chunks', () => {
  it('cover lib/core and protocol/ (not protocol/kafka/) exactly once', () => {
    const files = [...tsFiles('lib/core'), ...tsFiles('protocol')].filter(
      (f) => !f.startsWith('protocol/kafka/'),
    );
    expect(files.length).toBeGreaterThan(50);
    const owners = files.map((file) => ({
      file,
      chunks: Object.entries(chunks)
        .filter(([, patterns]) => matches(patterns, file))
        .map(([name]) => name),
    }));
    expect(owners.filter((o) => o.chunks.length !== 1)).toEqual([]);
  });

  it('the matcher reads the pattern forms chunks.mjs uses', () => {
    expect(matches(['lib/core/*.ts'], 'lib/core/keys.ts')).toBe(true);
    expect(matches(['lib/core/*.ts'], 'lib/core/log/fetch.ts')).toBe(false);
    expect(matches(['lib/core/**/*.ts'], 'lib/core/log/fetch.ts')).toBe(true);
    expect(matches(['lib/core/**/*.ts', '!lib/core/log/fetch.ts'], 'lib/core/log/fetch.ts')).toBe(false);
  });
});
