/**
 * `npm run bench:produce`: how produce throughput on ONE partition holds up under concurrency.
 * Through the local stack over HTTP (handlers in this process, DynamoDB Local and s3rver as children),
 * 1 and then 32 concurrent idempotent producers each send binary RecordBatches of `--records` records
 * of `--record-bytes` bytes per request, back to back, for `--seconds` each.
 *
 * Then, for scale, the same concurrency against the emulators alone (one S3 PUT of the same size and
 * one DynamoDB UpdateItem per request, bench/raw-limit.ts).
 *
 * Flags: --seconds 20, --warmup 3, --records 100, --record-bytes 1024, --concurrency 1,8,32, --skip-raw,
 * --model none|standard|express (AWS latency model of every storage call; figures are then modelled),
 * --plots DIR (where produce-scaling.svg goes; default bench/results),
 * --url (a running Sluice instead of the in-process stack; then storage counts are unavailable).
 * The last stdout line is one JSON object with every figure.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { SluiceClient } from '../sdk/client.js';
import { nodeHttpFetch } from '../sdk/node-http.js';
import type { Message } from '../sdk/types.js';
import { cpuMsPer, cpuSeconds } from './cpu.js';
import { flags, modelFlag, numberFlag } from './flags.js';
import type { RawLimitResult } from './raw-limit.js';
import { measureRawLimit } from './raw-limit.js';
import { round, summarize } from './stats.js';
import { producePlot } from './plots.js';
import type { BenchTarget, Readings } from './target.js';
import { startTarget } from './target.js';

const MIB = 1024 * 1024;

export interface PhaseResult {
  producers: number;
  seconds: number;
  requests: number;
  records: number;
  bytes: number;
  recordsPerSec: number;
  requestsPerSec: number;
  mibPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  storage: Readings;
  /** CPU ms per request by process (Linux only), and cores kept busy on average. */
  cpuMsPerRequest: Record<string, number>;
  cpuCoresBusy: number;
}

/** `producers` idempotent producers sending to partition 0 of `topic` back to back for `seconds`. */
export const producePhase = async (
  target: BenchTarget,
  topic: string,
  {
    producers,
    seconds,
    warmupSeconds,
    records,
    recordBytes,
  }: { producers: number; seconds: number; warmupSeconds: number; records: number; recordBytes: number },
): Promise<PhaseResult> => {
  const client = new SluiceClient({ url: target.url, fetch: nodeHttpFetch() });
  const value = randomBytes(recordBytes);
  const messages: Message[] = Array.from({ length: records }, () => ({ value }));
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  let stopAt = Date.now() + warmupSeconds * 1000;
  // One producer (one producer id) per worker for warm-up and measurement alike, as a long-lived
  // client would be: each idempotent producer adds its sequence state to the partition item.
  const sdkProducers = Array.from({ length: producers }, () => client.producer({ acks: 'all' }));
  const worker = async (producer: (typeof sdkProducers)[number]) => {
    while (Date.now() < stopAt) {
      const started = performance.now();
      try {
        await producer.sendBatch(topic, 0, messages);
        if (measuring) latencies.push(performance.now() - started);
      } catch (error) {
        if (measuring) errors++;
        console.error(`send failed: ${String(error)}`);
      }
    }
  };
  // Warm-up (JIT, sockets, producer ids) is neither timed nor metered.
  await Promise.all(sdkProducers.map(worker));
  target.meterDelta();
  measuring = true;
  const cpuBefore = cpuSeconds();
  const started = performance.now();
  stopAt = Date.now() + seconds * 1000;
  await Promise.all(sdkProducers.map(worker));
  const elapsed = (performance.now() - started) / 1000;
  const storage = target.meterDelta();
  const cpuMsPerRequest = cpuMsPer(cpuBefore, cpuSeconds(), latencies.length);
  const summary = summarize(latencies);
  const bytes = latencies.length * records * recordBytes;
  return {
    producers,
    seconds: round(elapsed),
    requests: latencies.length,
    records: latencies.length * records,
    bytes,
    recordsPerSec: round((latencies.length * records) / elapsed, 1),
    requestsPerSec: round(latencies.length / elapsed, 1),
    mibPerSec: round(bytes / MIB / elapsed),
    p50Ms: round(summary.p50, 2),
    p99Ms: round(summary.p99, 2),
    maxMs: round(summary.max, 2),
    errors,
    storage,
    cpuMsPerRequest,
    cpuCoresBusy: round(((cpuMsPerRequest['total'] ?? 0) * latencies.length) / 1000 / elapsed, 2),
  };
};

const perMiB = (phase: PhaseResult) => {
  const mib = phase.bytes / MIB;
  const { objects, metadata } = phase.storage;
  return {
    s3PutsPerMiB: round(objects.objectPuts / mib, 4),
    s3GetsPerMiB: round(objects.objectGets / mib, 4),
    dynamoWriteUnitsPerMiB: round(metadata.writeUnits / mib, 3),
    dynamoReadUnitsPerMiB: round(metadata.readUnits / mib, 3),
    dynamoWritesPerRequest: round(metadata.metadataWrites / phase.requests, 3),
    dynamoReadsPerRequest: round(metadata.metadataReads / phase.requests, 3),
  };
};

const main = async () => {
  const f = flags();
  const seconds = numberFlag(f, 'seconds', 20);
  const warmupSeconds = numberFlag(f, 'warmup', 3);
  const records = numberFlag(f, 'records', 100);
  const recordBytes = numberFlag(f, 'record-bytes', 1024);
  const concurrency_ = (f.get('concurrency') ?? '1,8,32').split(',').map(Number);
  const latencyModel = modelFlag(f);
  const loadavgAtStart = loadavg().map((l) => round(l, 2));
  const target = await startTarget(f.get('url') ? { url: f.get('url')! } : { latencyModel });
  if (latencyModel !== 'none')
    console.log(`latency model ${latencyModel}: storage waits as modelled for AWS; latencies are modelled`);
  const admin = new SluiceClient({ url: target.url, fetch: nodeHttpFetch() }).admin();
  const phases: PhaseResult[] = [];
  const raw: (RawLimitResult & { cpuMsPerRequest: Record<string, number>; cpuCoresBusy: number })[] = [];
  try {
    for (const producers of concurrency_) {
      const topic = `bench-produce-${producers}-${Date.now()}`;
      await admin.createTopic({ name: topic, partitions: 1 });
      const phase = await producePhase(target, topic, {
        producers,
        seconds,
        warmupSeconds,
        records,
        recordBytes,
      });
      phases.push(phase);
      console.log(
        `${String(producers).padStart(3)} producer(s), 1 partition: ${phase.recordsPerSec} records/s, ${phase.requestsPerSec} requests/s, ` +
          `${phase.mibPerSec} MiB/s, p50 ${phase.p50Ms} ms, p99 ${phase.p99Ms} ms, errors ${phase.errors}; ` +
          `CPU ms/request ${JSON.stringify(phase.cpuMsPerRequest)} (${phase.cpuCoresBusy} cores busy)` +
          (phase.storage.metered ? `; per MiB: ${JSON.stringify(perMiB(phase))}` : ''),
      );
    }
    // The floor under the same load: the emulators alone, one object PUT and one UpdateItem per request.
    const stack = target.stack;
    // The raw floor goes straight at the emulators, outside any latency model: only comparable unmodelled.
    if (stack && !f.has('skip-raw') && latencyModel === 'none') {
      const objectBytes = Math.round(
        phases[0]!.storage.objects.objectPutBytes / Math.max(1, phases[0]!.storage.objects.objectPuts),
      );
      for (const concurrency of concurrency_) {
        const cpuBefore = cpuSeconds();
        const measured = await measureRawLimit({
          endpoints: stack.endpoints,
          tableName: stack.tableName,
          bucket: stack.buckets[0]!,
          concurrency,
          partitions: 1,
          objectBytes,
          seconds,
        });
        const cpuMsPerRequest = cpuMsPer(cpuBefore, cpuSeconds(), measured.requests);
        const r = {
          ...measured,
          cpuMsPerRequest,
          cpuCoresBusy: round(
            ((cpuMsPerRequest['total'] ?? 0) * measured.requests) / 1000 / measured.seconds,
            2,
          ),
        };
        raw.push(r);
        console.log(
          `raw floor, ${String(concurrency).padStart(3)} writer(s), ${objectBytes} B objects: ${r.requestsPerSec} requests/s, ` +
            `p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms; CPU ms/request ${JSON.stringify(cpuMsPerRequest)} (${r.cpuCoresBusy} cores busy)`,
        );
      }
    }
  } finally {
    await target.stop();
  }
  const first = phases[0]!;
  const last = phases[phases.length - 1]!;
  const ratio = round(last.recordsPerSec / first.recordsPerSec, 2);
  const rawRatio =
    raw.length > 1 ? round(raw[raw.length - 1]!.requestsPerSec / raw[0]!.requestsPerSec, 2) : undefined;
  console.log(
    `scaling ${first.producers} → ${last.producers} producers on one partition: ${ratio}x (target ≥ 4x)`,
  );
  if (rawRatio !== undefined) console.log(`the emulators alone scale ${rawRatio}x over the same concurrency`);
  const summary = {
    bench: 'produce',
    format: 'binary RecordBatch v2, idempotent, acks=all, no compression',
    latencyModel,
    recordsPerRequest: records,
    recordBytes,
    phases: phases.map((p) => ({ ...p, storage: undefined, ...(p.storage.metered ? perMiB(p) : {}) })),
    scaling: ratio,
    rawFloor: raw,
    rawScaling: rawRatio ?? null,
    machine: { cpus: cpus().length, loadavgAtStart, loadavgAtEnd: loadavg().map((l) => round(l, 2)) },
  };
  await mkdir('bench/results', { recursive: true });
  const plots = f.get('plots') ?? 'bench/results';
  await mkdir(plots, { recursive: true });
  await writeFile(join(plots, 'produce-scaling.svg'), producePlot(summary));
  const file = `bench/results/${new Date().toISOString().replace(/[:.]/g, '-')}-produce.json`;
  await writeFile(file, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(JSON.stringify({ ...summary, results: file }));
};

if (process.argv[1]?.endsWith('produce.ts')) await main();
