/**
 * The benchmarks' target: the local stack started in this process (so the storage meters of
 * local/runtime.ts count exactly what the handlers did), or a URL given on the command line.
 */
import { randomUUID } from 'node:crypto';
import type { LocalStack } from '../local/stack.js';
import { startLocalStack } from '../local/stack.js';
import type { MeterReading } from '../lib/ports/meter.js';
import { StorageMeter } from '../lib/ports/meter.js';
import type * as RuntimeModule from '../local/runtime.js';
import type { LatencyModelName } from '../lib/adapters/latency/index.js';

/**
 * The environment as the benchmark was started with it: a local stack writes its emulators' endpoints
 * into process.env (the handlers read them there), which must not make the next stack of the same run
 * think an emulator it stopped is still an explicit endpoint.
 */
const launchEnv = { ...process.env };

type Runtime = Pick<typeof RuntimeModule, 'meters' | 'invocations'>;

export interface BenchTarget {
  url: string;
  /** The in-process stack, when there is one (then meters are available). */
  stack: LocalStack | undefined;
  /** Storage requests since the last call (zeros against a remote URL, which we cannot see into). */
  meterDelta(): Readings;
  stop(): Promise<void>;
}

export interface Readings {
  metadata: MeterReading;
  objects: MeterReading;
  invocations: Record<string, number>;
  /** False against a remote URL. */
  metered: boolean;
}

/** Starts the local stack on fresh, uniquely named table and bucket unless `url` is given. */
export const startTarget = async (
  options: {
    url?: string;
    log?: (line: string) => void;
    /** AWS latency model for every storage call (see lib/adapters/latency); default none. */
    latencyModel?: LatencyModelName;
    /** Replica stores (buckets), default 1. */
    storeCount?: number;
  } = {},
): Promise<BenchTarget> => {
  if (options.url) {
    const zero = (): Readings => ({
      metadata: StorageMeter.zero(),
      objects: StorageMeter.zero(),
      invocations: {},
      metered: false,
    });
    return { url: options.url, stack: undefined, meterDelta: zero, stop: async () => {} };
  }
  const suffix = randomUUID().slice(0, 8);
  const buckets = Array.from({ length: options.storeCount ?? 1 }, (_, i) => `bench-${suffix}-${i}`);
  const stack = await startLocalStack({
    port: 0,
    // Maintenance runs only when a bench asks for it, so its requests are counted apart.
    maintenanceIntervalMs: 0,
    latencyModel: options.latencyModel ?? 'none',
    env: { ...launchEnv, SLUICE_TABLE_NAME: `bench-${suffix}`, SLUICE_BUCKETS: buckets.join(',') },
    ...(options.log ? { log: options.log } : {}),
  });
  const runtime = await import('../local/runtime.js');
  let last = snapshot(runtime);
  return {
    url: stack.url,
    stack,
    meterDelta: () => {
      const now = snapshot(runtime);
      const delta = {
        metadata: subtract(now.metadata, last.metadata),
        objects: subtract(now.objects, last.objects),
        invocations: Object.fromEntries(
          Object.entries(now.invocations).map(([k, v]) => [k, v - (last.invocations[k] ?? 0)]),
        ),
        metered: true,
      };
      last = now;
      return delta;
    },
    stop: () => stack.stop(),
  };
};

const snapshot = (runtime: Runtime) => ({
  metadata: runtime.meters.metadata.read(),
  objects: runtime.meters.objects.read(),
  invocations: { ...runtime.invocations } as Record<string, number>,
});

const subtract = (a: MeterReading, b: MeterReading): MeterReading =>
  Object.fromEntries(
    Object.entries(a).map(([k, v]) => [k, v - b[k as keyof MeterReading]]),
  ) as unknown as MeterReading;
