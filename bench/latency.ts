/**
 * `npm run bench:latency -- --duration S`: produce latency as it would be on AWS with S3 Express One
 * Zone stores — the modelled workload (RF=3, acks=all, 1 MiB/s) on a local stack of three stores that
 * waits by the express latency model — with every batch traced (bench/trace.ts) and the slowest 1 % of
 * messages cut into phases (bench/latency-breakdown.ts). `npm run bench` runs the same as its modelled
 * run. Figures are modelled, not AWS measurements.
 *
 * Where the model's waits go. `--stores memory` (the default): on the in-memory adapters, so the model
 * stands for S3 and DynamoDB entirely and the handlers, the gateway and the SDK are the only other
 * time. `--stores emulators`: on DynamoDB Local and s3rver, each call taking the model's time or the
 * emulator's, whichever is longer (lib/adapters/latency) — on a loaded machine the emulators' own CPU
 * queueing then shows through.
 *
 * Flags: --duration S (30), --warmup S (5), --workload FILE (the RF=3 1 MiB/s workload),
 * --stores memory|emulators, --max-in-flight N (overrides the workload's maxInFlightRequests).
 */
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type * as RuntimeModule from '../local/runtime.js';
import type { StorageLayer } from '../local/runtime.js';
import { storeId } from '../lib/config/environment.js';
import { latencyModels, withLatency } from '../lib/adapters/latency/index.js';
import { MemoryMetadataStore } from '../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import type { Breakdown } from './latency-breakdown.js';
import { breakdown } from './latency-breakdown.js';
import { flags, numberFlag } from './flags.js';
import type { WorkloadRun } from './omb-run.js';
import { runWorkload } from './omb-run.js';
import { startTarget } from './target.js';
import type { RequestTrace } from './trace.js';
import { installTracing, traced, tracedFetch } from './trace.js';
import { round } from './stats.js';
import { readWorkload } from './workload.js';

/** The modelled-latency run of issue 14: S3 Express One Zone stores, RF=3, acks=all, 1 MiB/s. */
export const MODELLED_WORKLOAD = 'bench/workloads/1-topic-1-partition-1kb-1mib-rate-rf3.json';

export type ModelledStores = 'memory' | 'emulators';

export const parseStores = (raw: string | undefined): ModelledStores => {
  if (raw === undefined || raw === 'memory' || raw === 'emulators') return raw ?? 'memory';
  throw new Error(`--stores must be memory or emulators, not ${raw}`);
};

/** The express model over in-memory stores (metered like the AWS adapters), one per replica store. */
const modelledMemory = (runtime: typeof RuntimeModule, storeCount: number): StorageLayer => {
  const storage = withLatency(latencyModels.express, {
    store: new MemoryMetadataStore(runtime.meters.metadata),
    objectStores: Array.from(
      { length: storeCount },
      (_, i) => new MemoryObjectStore(storeId(i), runtime.meters.objects),
    ),
  });
  return () => storage;
};

export const modelledRun = async (
  seconds: number,
  warmupSeconds: number,
  {
    file = MODELLED_WORKLOAD,
    stores = 'memory',
    maxInFlight,
  }: {
    file?: string;
    stores?: ModelledStores;
    /** Overrides the workload's maxInFlightRequests (1: the producer before pipelining, for an A/B). */
    maxInFlight?: number;
  } = {},
): Promise<{
  run: WorkloadRun;
  breakdown: Breakdown;
  stores: ModelledStores;
  /** How late this process's timers fired (ms): the model's waits and every callback wait that too. */
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  loadavg: number[];
}> => {
  const storeCount = 3;
  const target = await startTarget({ latencyModel: stores === 'memory' ? 'none' : 'express', storeCount });
  const runtime = await import('../local/runtime.js');
  const uninstall = installTracing(
    runtime,
    stores === 'memory' ? modelledMemory(runtime, storeCount) : undefined,
  );
  const traces: { sealedAtEpochMs: number; trace: RequestTrace }[] = [];
  const loop = monitorEventLoopDelay({ resolution: 5 });
  try {
    const workload = await readWorkload(file);
    if (maxInFlight !== undefined) workload.maxInFlightRequests = maxInFlight;
    const run = await runWorkload(target, file, workload, {
      seconds,
      warmupSeconds,
      wrapFetch: tracedFetch,
      onMeasuring: () => loop.enable(),
      wrapSend: (handedAt, send) => {
        const [trace, sent] = traced(handedAt, send);
        traces.push({ sealedAtEpochMs: Date.now(), trace });
        return sent;
      },
    });
    loop.disable();
    const eventLoopDelayMs = {
      p50: round(loop.percentile(50) / 1e6, 2),
      p99: round(loop.percentile(99) / 1e6, 2),
      max: round(loop.max / 1e6, 2),
    };
    const load = loadavg().map((l) => round(l, 2));
    const r = run.result;
    // Warm-up batches are not in the OMB figures; keep the breakdown to the same messages.
    const b = breakdown(traces.filter((t) => t.sealedAtEpochMs >= run.startMs).map((t) => t.trace));
    console.log(
      `modelled (express on ${stores} stores, RF=3, acks=all, 1 MiB/s, ${workload.maxInFlightRequests ?? 1} in flight): publish p50/p99 ${r['aggregatedPublishLatency50pct']}/${r.aggregatedPublishLatency99pct} ms, ` +
        `end-to-end p50/p99 ${r['aggregatedEndToEndLatency50pct']}/${r.aggregatedEndToEndLatency99pct} ms (modelled, not AWS measurements)`,
    );
    console.log(
      `  mean ms per phase, all ${b.messages} messages in ${b.batches} batches (${b.batchesWithCommitRetries} waited on a sequence gap, ${b.batchesWithHttpRetries} sent again): ${JSON.stringify(b.meanMs)}`,
    );
    console.log(
      `  mean ms per phase, slowest 1 % (${b.slowest.messages} messages ≥ ${b.publishP99Ms} ms in ${b.slowest.batches} batches): ${JSON.stringify(b.slowestMeanMs)}`,
    );
    console.log(`  those batches: ${JSON.stringify(b.slowest)}`);
    console.log(
      `  event-loop delay of the process running the stack and the clients, ms: ${JSON.stringify(eventLoopDelayMs)}; load average ${load.join(' ')}`,
    );
    return { run, breakdown: b, stores, eventLoopDelayMs, loadavg: load };
  } finally {
    uninstall();
    await target.stop();
  }
};

const main = async () => {
  const f = flags();
  const {
    run,
    breakdown: b,
    stores,
    eventLoopDelayMs,
    loadavg: load,
  } = await modelledRun(numberFlag(f, 'duration', 30), numberFlag(f, 'warmup', 5), {
    file: f.get('workload') ?? MODELLED_WORKLOAD,
    stores: parseStores(f.get('stores')),
    ...(f.has('max-in-flight') ? { maxInFlight: numberFlag(f, 'max-in-flight', 5) } : {}),
  });
  console.log(
    JSON.stringify({
      bench: 'latency',
      model: 'express',
      stores,
      workload: run.workload.name,
      p50PublishMsModelled: run.result['aggregatedPublishLatency50pct'],
      p99PublishMsModelled: run.result.aggregatedPublishLatency99pct,
      breakdown: b,
      eventLoopDelayMs,
      loadavg: load,
    }),
  );
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
