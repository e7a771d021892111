/**
 * `npm run bench -- --duration S`: a harness after the OpenMessaging Benchmark. For each workload
 * (bench/workloads/*.json, OMB's fields) it creates the topics, starts one consumer group per
 * subscription, produces at the workload's rate for the duration, and writes OMB's result document to
 * bench/results/. Against the in-process local stack (default; `--url` targets any Sluice) it then
 *   - measures the local limit: Sluice produce-only at the workload's concurrency and batch size,
 *     alternating with the same S3 PUTs and DynamoDB UpdateItems sent straight to the emulators;
 *   - measures what a batch costs at 64 KiB … 4 MiB and prices it (bench/cost.ts);
 *   - draws the plots (SVG).
 * The last stdout line is one JSON object with the headline figures.
 *
 * Flags: --duration S (default: the workload's testDurationMinutes), --warmup S (5),
 * --workload file[,file] (default: the 2k-rate latency and the max-rate workloads), --limit-seconds S (20),
 * --cost-requests N (16),
 * --skip-limit, --skip-cost, --plots DIR (bench/results), --url URL,
 * --model none|standard|express (the AWS latency model of the main runs; default none),
 * --skip-modelled (the express RF=3 acks=all 1 MiB/s run, bench/latency.ts; --modelled-stores memory|emulators), --skip-scaling (1/8/32 producers under the
 * standard model; --scaling-seconds 20), --skip-cold-start (--cold-start-runs 5).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { SluiceClient } from '../sdk/client.js';
import { nodeHttpFetch } from '../sdk/node-http.js';
import type { PerBatchCounts } from './cost.js';
import {
  DURATION_MODEL,
  FUNCTION_MEMORY_MB,
  PRICES,
  apiGatewayUnits,
  confluentBasic,
  kinesisOnDemand,
  mskServerless,
  sluiceCost,
  sluicePerGiB,
} from './cost.js';
import { measureBatchCost } from './cost-run.js';
import { billTotal, deployment, usdPerGiBWrittenAndReadOnce } from './cost-model.js';
import { measureUsage, usageRunFor } from './cost-usage.js';
import { cpuMsPer, cpuSeconds } from './cpu.js';
import { flags, modelFlag, numberFlag } from './flags.js';
import { measureColdStarts } from './cold-start.js';
import type { PhaseResult } from './produce.js';
import { producePhase } from './produce.js';
import { newProducerRecorder } from './omb-producer.js';
import type { WorkloadRun } from './omb-run.js';
import { runProducers, runWorkload } from './omb-run.js';
import { modelledRun, parseStores } from './latency.js';
import { simulateProduceLatency } from './latency-sim.js';
import { measureRawLimit } from './raw-limit.js';
import { round } from './stats.js';
import { costPlot, ombPlots } from './plots.js';
import type { BenchTarget } from './target.js';
import { startTarget } from './target.js';
import { MIN_PAIRS, pairOrder, summarizeRatios } from './ab-pairs.js';
import { startNullProduceGateway } from './null-produce.js';
import type { Workload } from './workload.js';
import { readWorkload, withDefaults } from './workload.js';

const MIB = 2 ** 20;
/** A fixed-rate run for latency, then a max-rate run for throughput. */
const DEFAULT_WORKLOADS = [
  'bench/workloads/1-topic-1-partition-1kb-2k-rate.json',
  'bench/workloads/1-topic-4-partitions-1kb-max-rate.json',
];
const BATCH_SIZES = [64 * 1024, 256 * 1024, MIB, 4 * MIB];

/**
 * Sluice produce-only at the workload's concurrency, alternating with two limits: the fair one (the
 * same SDK requests through the same gateway to a produce function that only PUTs and commits,
 * bench/null-produce.ts) and the old raw one (PUTs and UpdateItems straight at the emulators, no
 * client, no HTTP; skipped under a latency model, which it does not go through).
 */
const measureLimit = async (target: BenchTarget, workload: Workload, seconds: number, pairs: number) => {
  const w = withDefaults(workload);
  const stack = target.stack!;
  const client = new SluiceClient({ url: target.url, fetch: nodeHttpFetch() });
  const nullGateway = await startNullProduceGateway(stack, stack.latencyModel);
  const nullClient = new SluiceClient({ url: nullGateway.url, fetch: nodeHttpFetch() });
  const fair = { bytes: 0, seconds: 0, requests: 0 };
  const withRaw = stack.latencyModel === 'none';
  const concurrency = w.producersPerTopic * w.partitionsPerTopic;
  // Interleaved A/B pairs (Sluice, fair), A first then B first in turn; limitRatioFair is the
  // median of the pairs' ratios (bench/ab-pairs.ts), so one noisy pair cannot make it exceed 1.
  const rounds = Math.max(MIN_PAIRS, pairs);
  const fairRatios: number[] = [];
  const sluice = { bytes: 0, seconds: 0, puts: 0, putBytes: 0, requests: 0 };
  const raw = { bytes: 0, seconds: 0, requests: 0 };
  const cpu = {
    sluice: new Map<string, number>(),
    raw: new Map<string, number>(),
    fair: new Map<string, number>(),
  };
  const addCpu = (into: Map<string, number>, before: Map<string, number>) => {
    for (const [k, v] of cpuSeconds()) into.set(k, (into.get(k) ?? 0) + v - (before.get(k) ?? 0));
  };
  const rawRuns = [];
  for (let round_ = 0; round_ < rounds; round_++) {
    const topic = `limit-${Date.now().toString(36)}`;
    await client.admin().createTopic({ name: topic, partitions: w.partitionsPerTopic });
    const runSluice = async (): Promise<number> => {
      const recorder = newProducerRecorder();
      target.meterDelta();
      const sluiceCpu = cpuSeconds();
      const started = performance.now();
      const until = Date.now() + (seconds / rounds) * 1000;
      await runProducers(client, w, topic, 0, recorder, until);
      const elapsed = (performance.now() - started) / 1000;
      sluice.seconds += elapsed;
      addCpu(cpu.sluice, sluiceCpu);
      sluice.requests += recorder.published.values.length;
      const bytes = recorder.published.values.reduce((a, b) => a + b, 0) * w.messageSize;
      sluice.bytes += bytes;
      const storage = target.meterDelta();
      sluice.puts += storage.objects.objectPuts;
      sluice.putBytes += storage.objects.objectPutBytes;
      return bytes / MIB / elapsed;
    };
    const runFair = async (): Promise<number> => {
      const fairRecorder = newProducerRecorder();
      const fairCpu = cpuSeconds();
      const fairStarted = performance.now();
      await runProducers(nullClient, w, topic, 0, fairRecorder, Date.now() + (seconds / rounds) * 1000);
      const elapsed = (performance.now() - fairStarted) / 1000;
      fair.seconds += elapsed;
      addCpu(cpu.fair, fairCpu);
      fair.requests += fairRecorder.published.values.length;
      const bytes = fairRecorder.published.values.reduce((a, b) => a + b, 0) * w.messageSize;
      fair.bytes += bytes;
      return bytes / MIB / elapsed;
    };
    const rate: Record<'A' | 'B', number> = { A: 0, B: 0 };
    for (const side of pairOrder(round_)) rate[side] = side === 'A' ? await runSluice() : await runFair();
    fairRatios.push(rate.A / rate.B);
    if (!withRaw) continue;
    const rawCpu = cpuSeconds();
    const r = await measureRawLimit({
      endpoints: stack.endpoints,
      tableName: stack.tableName,
      bucket: stack.buckets[0]!,
      concurrency,
      partitions: w.partitionsPerTopic,
      objectBytes: Math.round(sluice.putBytes / Math.max(1, sluice.puts)),
      seconds: seconds / rounds,
    });
    addCpu(cpu.raw, rawCpu);
    rawRuns.push(r);
    raw.requests += r.requests;
    raw.seconds += r.seconds;
    raw.bytes += r.requests * r.objectBytes;
  }
  await nullGateway.stop();
  const sluiceMiBps = sluice.bytes / MIB / sluice.seconds;
  const rawMiBps = withRaw ? raw.bytes / MIB / raw.seconds : undefined;
  const fairMiBps = fair.bytes / MIB / fair.seconds;
  const fairSummary = summarizeRatios(fairRatios);
  return {
    concurrency,
    latencyModel: stack.latencyModel,
    objectBytes: Math.round(sluice.putBytes / Math.max(1, sluice.puts)),
    sluiceMiBPerSec: round(sluiceMiBps),
    fairMiBPerSec: round(fairMiBps),
    limitRatioFair: round(fairSummary.median, 3),
    limitRatioFairSpread: {
      min: round(fairSummary.min, 3),
      max: round(fairSummary.max, 3),
      iqr: round(fairSummary.iqr, 3),
      pairs: fairSummary.pairs.map((r) => round(r, 3)),
    },
    /** The pooled ratio (all Sluice bytes over all fair bytes), for comparison with older runs. */
    limitRatioFairPooled: round(sluiceMiBps / fairMiBps, 3),
    rawMiBPerSec: rawMiBps === undefined ? null : round(rawMiBps),
    limitRatio: rawMiBps === undefined ? null : round(sluiceMiBps / rawMiBps, 3),
    sluiceCpuMsPerRequest: cpuMsPer(new Map(), cpu.sluice, sluice.requests),
    fairCpuMsPerRequest: cpuMsPer(new Map(), cpu.fair, fair.requests),
    rawCpuMsPerRequest: withRaw ? cpuMsPer(new Map(), cpu.raw, raw.requests) : null,
    raw: rawRuns,
  };
};

const perMiB = (run: WorkloadRun) => {
  const mib = run.publishedBytes / MIB;
  const { objects, metadata, invocations } = run.storage;
  return {
    s3PutsPerMiB: round(objects.objectPuts / mib, 3),
    s3GetsPerMiB: round(objects.objectGets / mib, 3),
    dynamodbWriteUnitsPerMiB: round(metadata.writeUnits / mib, 2),
    dynamodbReadUnitsPerMiB: round(metadata.readUnits / mib, 2),
    invocationsPerMiB: Object.fromEntries(
      Object.entries(invocations).map(([k, v]) => [k, round(v / mib, 2)]),
    ),
  };
};

/**
 * Dollars per GiB produced for the workload as it ran: every storage request the meters counted, every
 * Lambda invocation with the latency the client saw (an upper bound: local emulators on a shared
 * machine; long polls bill their wait), API Gateway units from the body sizes.
 */
const asRunCost = (run: WorkloadRun) => {
  const gib = run.publishedBytes / 2 ** 30;
  const byJob = new Map<string, { invocations: number; ms: number }>();
  for (const c of run.calls) {
    const j = byJob.get(c.job) ?? { invocations: 0, ms: 0 };
    j.invocations += 1;
    j.ms += c.ms;
    byJob.set(c.job, j);
  }
  const cost = sluiceCost({
    s3Puts: run.storage.objects.objectPuts,
    s3Gets: run.storage.objects.objectGets,
    s3Lists: run.storage.objects.objectLists,
    dynamodbWriteUnits: run.storage.metadata.writeUnits,
    dynamodbReadUnits: run.storage.metadata.readUnits,
    lambda: [...byJob].map(([job, j]) => ({
      invocations: j.invocations,
      memoryMb: FUNCTION_MEMORY_MB[job as keyof typeof FUNCTION_MEMORY_MB] ?? 1024,
      totalDurationMs: j.ms,
    })),
    apiGatewayRequests: run.calls.reduce((s, c) => s + apiGatewayUnits(c.requestBytes, c.responseBytes), 0),
  });
  return Object.fromEntries(Object.entries(cost).map(([k, v]) => [k, round(v / gib, 5)]));
};

const kib = (bytes: number) => (bytes >= MIB ? `${bytes / MIB} MiB` : `${bytes / 1024} KiB`);

/**
 * 1, 8 and 32 idempotent producers on one partition under the standard model, with the CPU per
 * request and cores busy beside records/s, so a protocol limit shows apart from a CPU limit.
 */
const scalingRun = async (seconds: number) => {
  const target = await startTarget({ latencyModel: 'standard' });
  const phases: PhaseResult[] = [];
  try {
    const topic = `scaling-${Date.now().toString(36)}`;
    await new SluiceClient({ url: target.url }).admin().createTopic({ name: topic, partitions: 1 });
    for (const producers of [1, 8, 32]) {
      target.meterDelta();
      const phase = await producePhase(target, topic, {
        producers,
        seconds,
        warmupSeconds: 3,
        records: 100,
        recordBytes: 1024,
      });
      phases.push(phase);
      console.log(
        `scaling (standard model): ${producers} producer(s) ${phase.recordsPerSec} records/s, p50/p99 ${phase.p50Ms}/${phase.p99Ms} ms, ` +
          `CPU ms/request ${JSON.stringify(phase.cpuMsPerRequest)}, ${phase.cpuCoresBusy} cores busy`,
      );
    }
  } finally {
    await target.stop();
  }
  const scaling32 = round(phases[2]!.recordsPerSec / phases[0]!.recordsPerSec, 2);
  console.log(`scaling32 (32 ÷ 1 producers, one partition, standard model): ${scaling32}x (target ≥ 4)`);
  return { model: 'standard', phases: phases.map(({ storage: _storage, ...p }) => p), scaling32 };
};

const main = async () => {
  const f = flags();
  const files = f.get('workload')?.split(',') ?? DEFAULT_WORKLOADS;
  const warmupSeconds = numberFlag(f, 'warmup', 5);
  const limitPairs = numberFlag(f, 'limit-pairs', MIN_PAIRS);
  // Each side of each pair runs limitSeconds / pairs; five pairs need more than the old 20 s.
  const limitSeconds = numberFlag(f, 'limit-seconds', 50);
  const costRequests = numberFlag(f, 'cost-requests', 16);
  const plots = f.get('plots') ?? 'bench/results';
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    loadavgAtStart: loadavg().map((l) => round(l, 2)),
  };
  const latencyModel = modelFlag(f);
  const target = await startTarget(f.get('url') ? { url: f.get('url')! } : { latencyModel });
  const runs: WorkloadRun[] = [];
  let modelled: Awaited<ReturnType<typeof modelledRun>> | undefined;
  let simulated: Awaited<ReturnType<typeof simulateProduceLatency>> | undefined;
  let scaling: Awaited<ReturnType<typeof scalingRun>> | undefined;
  let coldStarts: Awaited<ReturnType<typeof measureColdStarts>> | undefined;
  let limit: Awaited<ReturnType<typeof measureLimit>> | undefined;
  const costs: { batchBytes: number; measured: PerBatchCounts; modelled: PerBatchCounts }[] = [];
  let fullUsdPerGiB: number | undefined;
  try {
    for (const file of files) {
      const workload = await readWorkload(file);
      const seconds = f.has('duration') ? numberFlag(f, 'duration', 60) : workload.testDurationMinutes * 60;
      const run = await runWorkload(target, file, workload, { seconds, warmupSeconds });
      runs.push(run);
      const r = run.result;
      console.log(
        `${workload.name}: publish ${r.publishRate.join(', ')} msg/s per 10 s; consume ${r.consumeRate.join(', ')}; ` +
          `publish p50/p99/p99.9/max ${r['aggregatedPublishLatency50pct']}/${r.aggregatedPublishLatency99pct}/${r['aggregatedPublishLatency999pct']}/${r['aggregatedPublishLatencyMax']} ms; ` +
          `end-to-end p50/p99/p99.9/max ${r['aggregatedEndToEndLatency50pct']}/${r.aggregatedEndToEndLatency99pct}/${r['aggregatedEndToEndLatency999pct']}/${r['aggregatedEndToEndLatencyMax']} ms`,
      );
      if (run.storage.metered) {
        console.log(`  storage per MiB produced (and consumed): ${JSON.stringify(perMiB(run))}`);
        console.log(`  USD per GiB produced, as run (local Lambda times): ${JSON.stringify(asRunCost(run))}`);
      }
    }
    if (target.stack && !f.has('skip-limit')) {
      const maxRate = runs.find((r) => r.workload.producerRate === 0) ?? runs[0]!;
      limit = await measureLimit(target, maxRate.workload, limitSeconds, limitPairs);
      console.log(
        `limit at ${limit.concurrency} concurrent writers, ${kib(limit.objectBytes)} objects (model ${limit.latencyModel}): Sluice ${limit.sluiceMiBPerSec} MiB/s, ` +
          `same requests to a PUT + commit-only produce function ${limit.fairMiBPerSec} MiB/s → limitRatioFair ${limit.limitRatioFair} ` +
          `(median of ${limit.limitRatioFairSpread.pairs.length} interleaved A/B pairs, range ${limit.limitRatioFairSpread.min}-${limit.limitRatioFairSpread.max}, IQR ${limit.limitRatioFairSpread.iqr}; pairs ${limit.limitRatioFairSpread.pairs.join(', ')}; target ≥ 0.8); ` +
          (limit.limitRatio === null
            ? 'raw limit skipped under a latency model; '
            : `raw S3 PUT + DynamoDB UpdateItem, no client ${limit.rawMiBPerSec} MiB/s → limitRatio ${limit.limitRatio}; `) +
          `CPU ms per request: Sluice ${JSON.stringify(limit.sluiceCpuMsPerRequest)}, fair ${JSON.stringify(limit.fairCpuMsPerRequest)}`,
      );
    }
    if (target.stack && !f.has('skip-cost')) {
      for (const batchBytes of BATCH_SIZES) {
        const c = await measureBatchCost(target, { batchBytes, requests: costRequests });
        costs.push({ batchBytes, measured: c.measured, modelled: c.modelled });
        const m = sluicePerGiB(c.modelled);
        console.log(
          `batch ${kib(batchBytes)}: per batch ${JSON.stringify({ produce: c.modelled.produce, fetch: c.modelled.fetch })} → $${m.total.toFixed(5)}/GiB written and read once`,
        );
      }
      // The full model (docs/cost.md): the same GiB with its roll, retirement and expiry, RF=1.
      const usage = await measureUsage(usageRunFor(MIB, 1));
      fullUsdPerGiB = billTotal(
        usdPerGiBWrittenAndReadOnce(deployment(1, 'standard'), usage, DURATION_MODEL),
      );
      console.log(
        `full model, 1 MiB requests, RF=1 S3 Standard: $${fullUsdPerGiB.toFixed(5)}/GiB written and read once`,
      );
    }
  } finally {
    await target.stop();
  }
  if (!f.has('url')) {
    const seconds = f.has('duration') ? numberFlag(f, 'duration', 60) : 60;
    if (!f.has('skip-modelled')) {
      modelled = await modelledRun(seconds, warmupSeconds, { stores: parseStores(f.get('modelled-stores')) });
      simulated = await simulateProduceLatency({ seconds: Math.min(seconds, 20), maxInFlight: 5 });
      console.log(
        `modelled in simulated time (no CPU, bench/latency-sim.ts): publish p50/p99 ${simulated.publishMs.p50}/${simulated.publishMs.p99} ms`,
      );
    }
    if (!f.has('skip-scaling'))
      scaling = await scalingRun(Math.min(seconds, numberFlag(f, 'scaling-seconds', 20)));
    // Last and apart: an emulator that fails to start here (a loaded machine) must not lose the
    // figures above, which are written below.
    if (!f.has('skip-cold-start'))
      coldStarts = await measureColdStarts(numberFlag(f, 'cold-start-runs', 5), (line) =>
        console.log(`cold start: ${line}`),
      ).catch((error: unknown) => {
        console.error(`cold start not measured: ${String(error)}; run npm run bench:cold-start`);
        return undefined;
      });
  }

  await mkdir('bench/results', { recursive: true });
  await mkdir(plots, { recursive: true });
  const latencyRun = runs.find((r) => r.workload.producerRate > 0) ?? runs[0]!;
  const throughputRun = runs.find((r) => r.workload.producerRate === 0) ?? runs[runs.length - 1]!;
  const meanRate = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const trafficOf = (run: WorkloadRun) => ({
    ingressMiBPerSec: (meanRate(run.result.publishRate) * run.workload.messageSize) / MIB,
    readFanout: run.workload.subscriptionsPerTopic,
    partitions: run.workload.topics * run.workload.partitionsPerTopic,
    recordBytes: run.workload.messageSize,
    topics: run.workload.topics,
  });
  const curve = costs.map((c) => ({
    batchBytes: c.batchBytes,
    modelled: sluicePerGiB(c.modelled),
    measuredDurations: sluicePerGiB(c.measured),
  }));
  const atMiB = curve.find((c) => c.batchBytes === MIB);
  const comparisons = runs.map((run) => {
    const traffic = trafficOf(run);
    return {
      workload: run.workload.name,
      traffic,
      sluiceAt1MiB: atMiB?.modelled.total,
      sluiceAsRun: run.storage.metered ? asRunCost(run) : undefined,
      kinesisOnDemand: kinesisOnDemand(traffic),
      mskServerless: mskServerless(traffic),
      confluentBasic: confluentBasic(traffic),
    };
  });

  for (const run of runs) {
    const name = `${stamp}-${basename(run.file, '.json')}.json`;
    const doc = {
      ...run.result,
      sluice: {
        storagePerMiB: run.storage.metered ? perMiB(run) : undefined,
        usdPerGiBAsRun: run.storage.metered ? asRunCost(run) : undefined,
        machine,
        durationSeconds: run.measuredSeconds,
      },
    };
    await writeFile(join('bench/results', name), `${JSON.stringify(doc, null, 2)}\n`);
    for (const { file, svg } of ombPlots(run.result, basename(run.file, '.json')))
      await writeFile(join(plots, file), svg);
  }
  const summaryDoc = {
    machine: { ...machine, loadavgAtEnd: loadavg().map((l) => round(l, 2)) },
    prices: PRICES,
    latencyModel,
    limit,
    modelled: modelled
      ? {
          workload: modelled.run.workload,
          model: 'express',
          stores: modelled.stores,
          storeCount: 3,
          result: modelled.run.result,
          breakdown: modelled.breakdown,
          eventLoopDelayMs: modelled.eventLoopDelayMs,
          loadavg: modelled.loadavg,
          simulated,
        }
      : undefined,
    scaling,
    coldStarts,
    costs,
    curve,
    comparisons,
  };
  await writeFile(join('bench/results', `${stamp}-summary.json`), `${JSON.stringify(summaryDoc, null, 2)}\n`);
  const compared = comparisons.find((c) => c.workload === throughputRun.workload.name) ?? comparisons[0]!;
  if (curve.length > 0)
    await writeFile(join(plots, 'cost-per-gib.svg'), costPlot({ readOn: PRICES.readOn, curve, compared }));

  const t = throughputRun.result;
  const l = latencyRun.result;
  console.log(
    JSON.stringify({
      bench: 'omb',
      throughputWorkload: throughputRun.workload.name,
      latencyWorkload: latencyRun.workload.name,
      durationSeconds: throughputRun.measuredSeconds,
      produceRecordsPerSec: round(meanRate(t.publishRate), 1),
      consumeRecordsPerSec: round(meanRate(t.consumeRate), 1),
      p50PublishMs: l['aggregatedPublishLatency50pct'],
      p99PublishMs: l.aggregatedPublishLatency99pct,
      p50EndToEndMs: l['aggregatedEndToEndLatency50pct'],
      p99EndToEndMs: l.aggregatedEndToEndLatency99pct,
      usdPerGiB: fullUsdPerGiB === undefined ? null : round(fullUsdPerGiB, 5),
      usdPerGiBRequestsOnly: atMiB ? round(atMiB.modelled.total, 5) : null,
      usdPerGiBWithLocalLambdaTimes: atMiB ? round(atMiB.measuredDurations.total, 5) : null,
      limitRatio: limit?.limitRatio ?? null,
      limitRatioFair: limit?.limitRatioFair ?? null,
      limitRatioFairSpread: limit?.limitRatioFairSpread ?? null,
      latencyModel,
      scaling32: scaling?.scaling32 ?? null,
      p99PublishMsModelled: modelled?.run.result.aggregatedPublishLatency99pct ?? null,
      p99PublishMsModelledSimulated: simulated?.publishMs.p99 ?? null,
      coldStartMs: coldStarts?.coldStartMs ?? null,
      produceColdStartMs: coldStarts?.produceColdStartMs ?? null,
      sluiceMiBPerSecAtLimit: limit?.sluiceMiBPerSec ?? null,
      rawMiBPerSecAtLimit: limit?.rawMiBPerSec ?? null,
      results: `bench/results/${stamp}-*.json`,
    }),
  );
};

await main();
