/**
 * What a command is (its words, arguments, options and run function), what it runs with (the Context),
 * and the checks that turn option strings into values or a UsageError (exit code 2).
 */
import type { SluiceApi } from './api.js';
import type { Output, TerminalInput } from './io.js';

/** A mistake in the command line itself: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose usage to show; undefined for the top level. */
    readonly command?: CommandSpec,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Placeholder in the help, e.g. `N` in `--partitions N`. */
  valueName?: string;
  description: string;
}

export interface ArgumentSpec {
  name: string;
  required: boolean;
  description: string;
}

export type OptionValue = string | boolean | (string | boolean)[] | undefined;
export type Values = Record<string, OptionValue>;

export interface Input {
  /** The arguments after the command words, in order. */
  args: string[];
  values: Values;
}

export interface Context {
  api: SluiceApi;
  /** `--json`: machine output on stdout, one JSON value per line. */
  json: boolean;
  /** `--quiet`: no progress or status lines on stderr. */
  quiet: boolean;
  stdout: Output;
  stderr: Output;
  stdin?: TerminalInput;
  stdinIsTTY: boolean;
  /** Aborted on SIGINT or SIGTERM. */
  signal: AbortSignal;
  /** The environment (SLUICE_* and AWS_* settings of commands that reach storage themselves). */
  env: Record<string, string | undefined>;
  now: () => number;
  /** A line of output on stdout. */
  print(text: string): void | Promise<void>;
  /** A status line on stderr, unless --quiet. */
  note(text: string): void;
}

export interface CommandSpec {
  /** The command words, e.g. `['topics', 'create']`. */
  words: readonly string[];
  summary: string;
  args: readonly ArgumentSpec[];
  options: Readonly<Record<string, OptionSpec>>;
  examples?: readonly string[];
  /** Resolves to the exit code; undefined means 0. */
  run(ctx: Context, input: Input): Promise<number | void>;
}

export const commandName = (spec: CommandSpec): string => spec.words.join(' ');

/** Reads option values with the spec's names; every check throws a UsageError naming the option. */
export class Options {
  constructor(
    private readonly values: Values,
    private readonly command?: CommandSpec,
  ) {}

  string(name: string): string | undefined {
    const value = this.values[name];
    if (Array.isArray(value)) return value.length > 0 ? String(value[value.length - 1]) : undefined;
    return typeof value === 'string' ? value : undefined;
  }

  list(name: string): string[] {
    const value = this.values[name];
    if (value === undefined || typeof value === 'boolean') return [];
    return (Array.isArray(value) ? value : [value]).map(String);
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  int(name: string, limits: { min?: number; max?: number } = {}): number | undefined {
    const text = this.string(name);
    return text === undefined ? undefined : parseInteger(text, `--${name}`, limits, this.command);
  }

  choice<T extends string>(name: string, choices: readonly T[]): T | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    const chosen = choices.find((choice) => choice === text);
    if (chosen === undefined) {
      throw new UsageError(
        `--${name} must be one of ${choices.join(', ')}, got ${JSON.stringify(text)}`,
        this.command,
      );
    }
    return chosen;
  }

  /** Repeated `--name key=value` options as an object (a later key wins). */
  keyValues(name: string): Record<string, string> | undefined {
    const list = this.list(name);
    if (list.length === 0) return undefined;
    const out: Record<string, string> = {};
    for (const pair of list) {
      const eq = pair.indexOf('=');
      if (eq <= 0)
        throw new UsageError(`--${name} takes key=value, got ${JSON.stringify(pair)}`, this.command);
      out[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    return out;
  }
}

export const parseInteger = (
  text: string,
  what: string,
  { min = 0, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
  command?: CommandSpec,
): number => {
  const n = /^-?\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${min}` : `an integer from ${min} to ${max}`;
    throw new UsageError(`${what} must be ${range}, got ${JSON.stringify(text)}`, command);
  }
  return n;
};

/** A point in time: milliseconds since the epoch, or an ISO 8601 date such as 2024-05-01T12:00:00Z. */
export const parseTimestamp = (text: string, what: string, command?: CommandSpec): number => {
  if (/^\d+$/.test(text)) return parseInteger(text, what, {}, command);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms) || ms < 0) {
    throw new UsageError(
      `${what} must be a timestamp in ms or an ISO 8601 date (2024-05-01T12:00:00Z), got ${JSON.stringify(text)}`,
      command,
    );
  }
  return ms;
};

/**
 * Repeated `--property k=v` options (Kafka's tools) as a map, refusing names this command does not
 * know with the nearest known one.
 */
export const propertyMap = (
  value: OptionValue,
  flag: string,
  known: readonly string[],
  command?: CommandSpec,
): Map<string, string> => {
  const out = new Map<string, string>();
  const list =
    value === undefined || typeof value === 'boolean' ? [] : Array.isArray(value) ? value : [value];
  for (const item of list.map(String)) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`${flag} takes key=value, got ${JSON.stringify(item)}`, command);
    const name = item.slice(0, eq);
    if (!known.includes(name)) {
      const near = didYouMean(name, known);
      throw new UsageError(
        `${flag} ${name} is not supported here${near ? ` (did you mean ${near}?)` : ''}; known: ${known.join(', ')}`,
        command,
      );
    }
    out.set(name, item.slice(eq + 1));
  }
  return out;
};

/**
 * Edit distance with adjacent transpositions (optimal string alignment), for "did you mean": `vaule`
 * is one slip from `value`, not two (a dozen lines; not worth a dependency in the CLI).
 */
export const editDistance = (a: string, b: string): number => {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
};

/** The known word nearest to `word`, when it is near enough to be a typo (or `word` is its prefix). */
export const didYouMean = (word: string, known: Iterable<string>): string | undefined => {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = candidate.startsWith(word) && word.length >= 3 ? 1 : editDistance(word, candidate);
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  const limit = Math.max(1, Math.floor(word.length / 3));
  return best && best.distance <= limit && best.candidate !== word ? best.candidate : undefined;
};
