/**
 * CPU time of this process and of the emulators it started (its descendants), from /proc on Linux;
 * empty elsewhere. On a machine where every hop is CPU (loopback, emulators in memory), CPU per
 * request rather than latency decides throughput, so the benchmarks report it beside their rates.
 */
import { readFileSync, readdirSync } from 'node:fs';

export type CpuSeconds = Map<string, number>;

const TICKS_PER_SECOND = 100;

const readStat = (pid: string): { ppid: number; cpu: number } | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
};

const labelOf = (pid: number): string => {
  if (pid === process.pid) return 'bench process (client + gateway + handlers)';
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return 'other';
  }
  if (cmd.includes('s3rver')) return 's3rver';
  if (cmd.includes('DynamoDBLocal')) return 'DynamoDB Local';
  return 'other';
};

/** CPU seconds so far per labelled process (this one and its descendants). */
export const cpuSeconds = (): CpuSeconds => {
  const out: CpuSeconds = new Map();
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  const stats = new Map<number, { ppid: number; cpu: number }>();
  for (const d of entries) {
    const s = readStat(d);
    if (s) stats.set(Number(d), s);
  }
  const children = new Map<number, number[]>();
  for (const [pid, s] of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  const walk = (pid: number): void => {
    const s = stats.get(pid);
    if (!s) return;
    const label = labelOf(pid);
    out.set(label, (out.get(label) ?? 0) + s.cpu);
    for (const child of children.get(pid) ?? []) walk(child);
  };
  walk(process.pid);
  return out;
};

/** CPU milliseconds per unit of work between two readings, per process, and in total. */
export const cpuMsPer = (before: CpuSeconds, after: CpuSeconds, units: number): Record<string, number> => {
  const out: Record<string, number> = {};
  let total = 0;
  for (const [label, seconds] of after) {
    if (label === 'other') continue;
    const ms = ((seconds - (before.get(label) ?? 0)) * 1000) / Math.max(1, units);
    out[label] = Math.round(ms * 10) / 10;
    total += ms;
  }
  if (after.size > 0) out['total'] = Math.round(total * 10) / 10;
  return out;
};
