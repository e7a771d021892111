/**
 * `npm run bench:latency -- --duration S`: produce latency as it would be on AWS with S3 Express One
 * Zone stores — the modelled workload (RF=3, acks=all, 1 MiB/s) on a local stack of three stores that
 * waits by the express latency model — with every batch traced (bench/trace.ts) and the slowest 1 % of
 * messages cut into phases (bench/latency-breakdown.ts). `npm run bench` runs the same as its modelled
 * run. Figures are modelled, not AWS measurements.
 *
 * Flags: --duration S (30), --warmup S (5), --workload FILE (the RF=3 1 MiB/s workload).
 */
import { pathToFileURL } from 'node:url';
import type { Breakdown } from './latency-breakdown.js';
import { breakdown } from './latency-breakdown.js';
import { flags, numberFlag } from './flags.js';
import type { WorkloadRun } from './omb-run.js';
import { runWorkload } from './omb-run.js';
import { startTarget } from './target.js';
import type { RequestTrace } from './trace.js';
import { installTracing, traced, tracedFetch } from './trace.js';
import { readWorkload } from './workload.js';

/** The modelled-latency run of issue 14: S3 Express One Zone stores, RF=3, acks=all, 1 MiB/s. */
export const MODELLED_WORKLOAD = 'bench/workloads/1-topic-1-partition-1kb-1mib-rate-rf3.json';

export const modelledRun = async (
  seconds: number,
  warmupSeconds: number,
  file = MODELLED_WORKLOAD,
): Promise<{ run: WorkloadRun; breakdown: Breakdown }> => {
  const target = await startTarget({ latencyModel: 'express', storeCount: 3 });
  const uninstall = installTracing(await import('../functions/runtime.js'));
  const traces: { sealedAtEpochMs: number; trace: RequestTrace }[] = [];
  try {
    const run = await runWorkload(target, file, await readWorkload(file), {
      seconds,
      warmupSeconds,
      wrapFetch: tracedFetch,
      wrapSend: (handedAt, send) => {
        const [trace, sent] = traced(handedAt, send);
        traces.push({ sealedAtEpochMs: Date.now(), trace });
        return sent;
      },
    });
    const r = run.result;
    // Warm-up batches are not in the OMB figures; keep the breakdown to the same messages.
    const b = breakdown(traces.filter((t) => t.sealedAtEpochMs >= run.startMs).map((t) => t.trace));
    console.log(
      `modelled (express, RF=3, acks=all, 1 MiB/s): publish p50/p99 ${r['aggregatedPublishLatency50pct']}/${r.aggregatedPublishLatency99pct} ms, ` +
        `end-to-end p50/p99 ${r['aggregatedEndToEndLatency50pct']}/${r.aggregatedEndToEndLatency99pct} ms (modelled, not AWS measurements)`,
    );
    console.log(`  mean ms per phase, all ${b.messages} messages: ${JSON.stringify(b.meanMs)}`);
    console.log(
      `  mean ms per phase, slowest 1 % (${b.slowest.messages} messages ≥ ${b.publishP99Ms} ms in ${b.slowest.batches} batches): ${JSON.stringify(b.slowestMeanMs)}`,
    );
    console.log(`  those batches: ${JSON.stringify(b.slowest)}`);
    return { run, breakdown: b };
  } finally {
    uninstall();
    await target.stop();
  }
};

const main = async () => {
  const f = flags();
  const { run, breakdown: b } = await modelledRun(
    numberFlag(f, 'duration', 30),
    numberFlag(f, 'warmup', 5),
    f.get('workload') ?? MODELLED_WORKLOAD,
  );
  console.log(
    JSON.stringify({
      bench: 'latency',
      model: 'express',
      workload: run.workload.name,
      p50PublishMsModelled: run.result['aggregatedPublishLatency50pct'],
      p99PublishMsModelled: run.result.aggregatedPublishLatency99pct,
      breakdown: b,
    }),
  );
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
