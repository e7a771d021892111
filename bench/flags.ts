import type { LatencyModelName } from '../lib/adapters/latency/index.js';
import { parseLatencyModel } from '../lib/adapters/latency/index.js';

/** The benchmarks' command-line flags: `--name value` or `--name=value`. */
export const flags = (argv: readonly string[] = process.argv.slice(2)): Map<string, string> => {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    if (eq > 0) out.set(arg.slice(2, eq), arg.slice(eq + 1));
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) out.set(arg.slice(2), argv[++i]!);
    else out.set(arg.slice(2), 'true');
  }
  return out;
};

export const numberFlag = (f: Map<string, string>, name: string, fallback: number): number => {
  const raw = f.get(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`--${name} must be a positive number, got ${raw}`);
  return value;
};

/** `--model none|standard|express`: the AWS latency model the in-process stack waits by. */
export const modelFlag = (f: Map<string, string>, fallback: LatencyModelName = 'none'): LatencyModelName =>
  f.has('model') ? parseLatencyModel(f.get('model')) : fallback;
