/**
 * Matching the listed equivalent mutants (equivalents/*.json) with the mutants of a Stryker report.
 *
 * An entry names its mutant by file, the source text Stryker replaced (`original`) and the
 * `replacement`, not by position: a rename elsewhere in the file, a moved function or a reformat moves
 * the mutant but leaves that pair alone, so the entry still matches. `line` and `column` are a hint:
 * when the same text is mutated the same way at several places of a file, each entry takes the
 * nearest one. They also keep the lists readable; `summary.ts --remap` rewrites them to where the
 * entries matched.
 */

export interface Equivalent {
  file: string;
  line: number;
  column: number;
  /** The source text the mutant replaces, whitespace runs collapsed to one space (see `sourceText`). */
  original: string;
  replacement: string;
  reason: string;
}

/** A mutant of a report, with the text it replaces already cut out of the report's source. */
export interface MutantText {
  file: string;
  line: number;
  column: number;
  original: string;
  replacement: string;
}

interface Position {
  line: number;
  column: number;
}

/**
 * The text between two 1-based positions of `source` (Stryker's report locations: the end is
 * exclusive), with whitespace runs collapsed to one space: a reformat that breaks an expression over
 * lines differently does not change what a mutant replaces.
 */
export function sourceText(source: string, location: { start: Position; end: Position }): string {
  const lines = source.split('\n');
  const offsetOf = ({ line, column }: Position): number => {
    let offset = 0;
    for (let i = 0; i < line - 1; i++) offset += (lines[i]?.length ?? 0) + 1;
    return offset + column - 1;
  };
  return normalize(source.slice(offsetOf(location.start), offsetOf(location.end)));
}

export const normalize = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** A text for one line of a listing: whitespace collapsed, long ones cut in the middle. */
export const brief = (text: string, max = 100): string => {
  const flat = normalize(text);
  return flat.length <= max ? flat : `${flat.slice(0, max / 2 - 1)} … ${flat.slice(-(max / 2 - 2))}`;
};

const keyOf = (m: { file: string; original: string; replacement: string }): string =>
  JSON.stringify([m.file, normalize(m.original), normalize(m.replacement)]);

/**
 * Pairs entries with mutants one to one: an entry can only match a mutant of its file with the same
 * original text and replacement; among several, the pairs closest in line (then column) are taken
 * first, so two entries for two occurrences of the same text each keep their own. Returns, for each
 * entry index that matched, the index of its mutant. Mutants of every status take part: an entry
 * whose mutant is now killed matches it (and is reported as such) rather than a nearby surviving
 * occurrence of the same text that no one judged.
 */
export function matchEquivalents(
  entries: readonly Equivalent[],
  mutants: readonly MutantText[],
): Map<number, number> {
  const mutantsByKey = new Map<string, number[]>();
  mutants.forEach((m, i) => {
    const key = keyOf(m);
    mutantsByKey.set(key, [...(mutantsByKey.get(key) ?? []), i]);
  });
  const pairs: { entry: number; mutant: number; lines: number; columns: number }[] = [];
  entries.forEach((e, entry) => {
    for (const mutant of mutantsByKey.get(keyOf(e)) ?? []) {
      const m = mutants[mutant]!;
      pairs.push({
        entry,
        mutant,
        lines: Math.abs(m.line - e.line),
        columns: Math.abs(m.column - e.column),
      });
    }
  });
  pairs.sort(
    (a, b) => a.lines - b.lines || a.columns - b.columns || a.entry - b.entry || a.mutant - b.mutant,
  );
  const matched = new Map<number, number>();
  const taken = new Set<number>();
  for (const { entry, mutant } of pairs) {
    if (matched.has(entry) || taken.has(mutant)) continue;
    matched.set(entry, mutant);
    taken.add(mutant);
  }
  return matched;
}
