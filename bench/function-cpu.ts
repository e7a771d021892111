/**
 * `npm run bench:function-cpu`: CPU time per request of each function's own code, through its
 * composition root (functions/<job>.ts) over in-memory stores, so no emulator's CPU and no network
 * wait is in the figure: what Lambda's CPU share (memory / 1,769 MB of a vCPU, AWS's documented
 * ratio) stretches. Each case warms up, then runs `--requests` times (default 200); the median CPU
 * milliseconds per request (user + system, process.cpuUsage) are reported, and for each memory size
 * the milliseconds that CPU takes at that size's share. As deployed, each request runs in an
 * invocation's telemetry scope (Powertools' Logger and Metrics, writing to a sink that drops the
 * lines) and within client quotas. infra/constructs/sluice-functions.ts sizes the functions from these
 * figures (docs/cost.md "Right-sizing").
 *
 * The maintenance function (functions/maintenance.ts) is measured per scheduled run: one with nothing to
 * do, over no topic (the run's fixed part) and over 64 partitions (per partition); and `--rolls` runs
 * (default 10) that each roll one 16 MiB segment out of 1 MiB batches produced through the produce
 * function (per MiB rolled), with the memory the roll holds above what was live before it.
 *
 * Flags: --requests N, --rolls N. The last stdout line is one JSON object.
 */
import { adminRouter } from '../functions/admin.js';
import { fetchRouter } from '../functions/fetch.js';
import { groupsRouter } from '../functions/groups.js';
import { maintenanceOf } from '../functions/maintenance.js';
import { produceRouter } from '../functions/produce.js';
import { PowertoolsTelemetry } from '../functions/telemetry.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ManualClock } from '../lib/adapters/fault/index.js';
import { MemoryMetadataStore } from '../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import type { Maintenance, MaintenanceReport } from '../lib/core/maintenance.js';
import type { Router } from '../lib/http/router.js';
import type { ObjectStore } from '../lib/ports/object-store.js';
import type { SluiceDeps } from '../lib/services.js';
import { encodeRecordBatch } from '../protocol/record-batch/encode.js';
import { flags, numberFlag } from './flags.js';
import { round, summarize } from './stats.js';

/** Lambda gives a function a whole vCPU at 1,769 MB, and CPU in proportion to memory below it. */
export const FULL_VCPU_MB = 1769;
export const MEMORY_SIZES = [128, 256, 512, 1024, 1769] as const;

/** CPU milliseconds at `memoryMb`'s share of a vCPU, for `cpuMs` measured on a whole core. */
export const cpuMsAt = (cpuMs: number, memoryMb: number): number =>
  cpuMs * Math.max(1, FULL_VCPU_MB / memoryMb);

/** The deployed functions' telemetry, its log lines and EMF documents dropped instead of printed. */
const telemetry = new PowertoolsTelemetry({ sink: { log: () => {}, emf: () => {} } });

const deps = (): SluiceDeps => {
  const clock = new ManualClock(1_700_000_000_000);
  return {
    store: new MemoryMetadataStore(),
    objectStores: [new MemoryObjectStore('s0', undefined, clock)],
    clock,
    config: { clusterId: 'cpu', materializeAfterAck: false, clientQuotas: {} },
    telemetry,
  };
};

const req = (
  method: string,
  path: string,
  body?: Uint8Array,
  headers: Record<string, string> = {},
  query: Record<string, string> = {},
) => ({
  method,
  path,
  query,
  headers,
  body: body ?? new Uint8Array(),
});

const jsonBody = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

const batchOf = (records: number, recordBytes: number): Uint8Array =>
  encodeRecordBatch(
    Array.from({ length: records }, (_, i) => ({
      key: null,
      value: new Uint8Array(recordBytes).fill(i % 251),
      timestamp: 1_700_000_000_000 + i,
      headers: [],
    })),
  );

interface Case {
  job: string;
  name: string;
  router: Router;
  request: () => ReturnType<typeof req>;
}

/** One request as an invocation of its function (functions/environment.ts httpHandler). */
const invoke = (c: Case) => telemetry.run({ function: c.job }, () => c.router.handle(c.request()));

const measure = async (c: Case, requests: number): Promise<number> => {
  for (let i = 0; i < 20; i++) await invoke(c);
  const samples: number[] = [];
  for (let i = 0; i < requests; i++) {
    const before = process.cpuUsage();
    const response = await invoke(c);
    const used = process.cpuUsage(before);
    if (response.status >= 400)
      throw new Error(`${c.name} answered ${response.status}: ${JSON.stringify(response.body)}`);
    samples.push((used.user + used.system) / 1000);
  }
  return summarize(samples).p50;
};

/** How many partitions the idle maintenance run walks: the 100 MiB/s shape's (bench/cost-model.ts). */
const IDLE_PARTITIONS = 64;
/** 1 MiB batches produced before each measured roll: 16 fill a 16 MiB segment, the 17th closes it. */
const ROLL_BATCHES = 17;

/** As deployed (functions/environment.ts): the orphan scan once an hour, not on every run. */
const maintenanceDeps = (): SluiceDeps & { clock: ManualClock; segmentStore: MemoryObjectStore } => {
  const clock = new ManualClock(1_700_000_000_000);
  return {
    store: new MemoryMetadataStore(),
    objectStores: [new MemoryObjectStore('s0', undefined, clock)],
    segmentStore: new MemoryObjectStore('segments', undefined, clock),
    clock,
    config: {
      clusterId: 'cpu',
      materializeAfterAck: false,
      clientQuotas: {},
      orphanScanIntervalMs: 3_600_000,
    },
    telemetry,
  };
};

const createTopic = async (admin: Router, name: string, partitions: number) => {
  const response = await admin.handle(
    req('POST', '/v1/topics', jsonBody({ name, partitions }), { 'content-type': 'application/json' }),
  );
  if (response.status >= 400) throw new Error(`topic ${name}: ${response.status}`);
};

const produceTo = async (produce: Router, topic: string, partition: number, batch: Uint8Array) => {
  const path = `/v1/topics/${topic}/partitions/${partition}/batches`;
  const response = await produce.handle(
    req('POST', path, batch, { 'content-type': 'application/vnd.kafka.record-batch' }),
  );
  if (response.status >= 400) throw new Error(`produce to ${topic}-${partition}: ${response.status}`);
};

/** One scheduled run as an invocation of the maintenance function (functions/maintenance.ts handler). */
const runMaintenance = async (
  maintenance: Maintenance,
): Promise<{ cpuMs: number; report: MaintenanceReport }> => {
  const before = process.cpuUsage();
  const report = await telemetry.run({ function: 'maintenance' }, () => maintenance.run());
  const used = process.cpuUsage(before);
  if (report.errors.length > 0) throw new Error(`maintenance run failed: ${report.errors.join('; ')}`);
  return { cpuMs: (used.user + used.system) / 1000, report };
};

/**
 * Whole-core CPU of a maintenance run with nothing to do: over no topic (the run's fixed part), and over
 * IDLE_PARTITIONS partitions that each hold an indexed batch (its reads and checks per partition).
 */
const measureIdle = async (requests: number, partitions: number) => {
  const fixed = maintenanceOf(maintenanceDeps());
  const d = maintenanceDeps();
  const admin = adminRouter(d);
  const produce = produceRouter(d);
  await createTopic(admin, 'idle', partitions);
  const small = batchOf(16, 1024);
  for (let p = 0; p < partitions; p++) await produceTo(produce, 'idle', p, small);
  const walked = maintenanceOf(d);
  // The first run indexes the tails and claims the hour's orphan scan; the runs after it find nothing.
  await runMaintenance(walked);
  const samples = { fixed: [] as number[], walked: [] as number[] };
  for (let i = 0; i < 20 + requests; i++) {
    const f = await runMaintenance(fixed);
    const w = await runMaintenance(walked);
    if (w.report.partitions !== partitions || w.report.entriesIndexed + w.report.segmentsRolled > 0)
      throw new Error(`an idle run over ${partitions} partitions did work: ${JSON.stringify(w.report)}`);
    if (i < 20) continue;
    samples.fixed.push(f.cpuMs);
    samples.walked.push(w.cpuMs);
  }
  const fixedMs = summarize(samples.fixed).p50;
  const runMs = summarize(samples.walked).p50;
  return { fixedMs, runMs, perPartitionMs: Math.max(0, runMs - fixedMs) / partitions };
};

/** An object store that samples the process's memory as each call starts and as each read returns. */
const sampling = (store: ObjectStore, sample: () => void): ObjectStore => ({
  id: store.id,
  location: store.location,
  put: async (key, body) => {
    sample();
    await store.put(key, body);
  },
  get: async (key, range) => {
    const bytes = await store.get(key, range);
    sample();
    return bytes;
  },
  delete: (keys) => store.delete(keys),
  list: (prefix, options) => store.list(prefix, options),
});

/** A full garbage collection (V8's gc, exposed here), so a memory baseline is what is live. */
const collect: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

/**
 * A run that rolls one 16 MiB segment (the default segment.bytes) out of ROLL_BATCHES 1 MiB batches
 * produced through the produce function, on fresh stores each time: whole-core CPU per MiB rolled, and
 * the memory the run holds above what was live before it (heap and array buffers, sampled at each object
 * store call, where the segment's batches, its bytes and its encoding are alive; and RSS). Throws unless
 * the run wrote the segment, so the figure cannot measure a run that rolled nothing.
 */
const measureRoll = async (rolls: number) => {
  const big = batchOf(1000, 1024);
  const samples: { cpuMsPerMiB: number; rolledMiB: number; heapPeakMiB: number; rssPeakMiB: number }[] = [];
  for (let i = 0; i < 2 + rolls; i++) {
    const d = maintenanceDeps();
    const admin = adminRouter(d);
    const produce = produceRouter(d);
    await createTopic(admin, 'roll', 1);
    for (let b = 0; b < ROLL_BATCHES; b++) await produceTo(produce, 'roll', 0, big);
    await d.clock.advance(60_000);
    collect();
    const base = process.memoryUsage();
    let heapPeak = 0;
    let rssPeak = 0;
    const sample = () => {
      const now = process.memoryUsage();
      heapPeak = Math.max(heapPeak, now.heapUsed + now.arrayBuffers - base.heapUsed - base.arrayBuffers);
      rssPeak = Math.max(rssPeak, now.rss - base.rss);
    };
    const maintenance = maintenanceOf({
      ...d,
      objectStores: d.objectStores.map((s) => sampling(s, sample)),
      segmentStore: sampling(d.segmentStore, sample),
    });
    const { cpuMs, report } = await runMaintenance(maintenance);
    sample();
    const segments = await d.segmentStore.list('');
    const rolledBytes = segments.objects.reduce((sum, o) => sum + o.size, 0);
    if (report.segmentsRolled !== 1 || segments.objects.length !== 1 || rolledBytes < 15 * 2 ** 20)
      throw new Error(
        `the roll run wrote ${segments.objects.length} segment(s) of ${rolledBytes} bytes: ${JSON.stringify(report)}`,
      );
    if (i < 2) continue;
    const rolledMiB = rolledBytes / 2 ** 20;
    samples.push({
      cpuMsPerMiB: cpuMs / rolledMiB,
      rolledMiB,
      heapPeakMiB: heapPeak / 2 ** 20,
      rssPeakMiB: rssPeak / 2 ** 20,
    });
  }
  collect();
  return {
    cpuMsPerMiB: summarize(samples.map((s) => s.cpuMsPerMiB)).p50,
    rolledMiB: samples[0]!.rolledMiB,
    heapPeakMiB: Math.max(...samples.map((s) => s.heapPeakMiB)),
    rssPeakMiB: Math.max(...samples.map((s) => s.rssPeakMiB)),
    rssMiB: process.memoryUsage().rss / 2 ** 20,
  };
};

const main = async () => {
  const f = flags();
  const requests = numberFlag(f, 'requests', 200);
  const rolls = numberFlag(f, 'rolls', 10);
  const shared = deps();
  const admin = adminRouter(shared);
  const produce = produceRouter(shared);
  const fetch = fetchRouter(shared);
  const groups = groupsRouter(shared);
  await admin.handle(
    req('POST', '/v1/topics', jsonBody({ name: 'cpu', partitions: 1 }), {
      'content-type': 'application/json',
    }),
  );
  const big = batchOf(1000, 1024);
  const small = batchOf(16, 1024);
  const batches = { 'content-type': 'application/vnd.kafka.record-batch' };
  // Something to read: one 1 MiB batch at offset 0.
  await produce.handle(req('POST', '/v1/topics/cpu/partitions/0/batches', big, batches));
  const cases: Case[] = [
    {
      job: 'produce',
      name: 'produce 1 MiB batch (1,000 records)',
      router: produce,
      request: () => req('POST', '/v1/topics/cpu/partitions/0/batches', big, batches),
    },
    {
      job: 'produce',
      name: 'produce 16 KiB batch (16 records)',
      router: produce,
      request: () => req('POST', '/v1/topics/cpu/partitions/0/batches', small, batches),
    },
    {
      job: 'fetch',
      name: 'fetch 1 MiB (RecordBatch bytes)',
      router: fetch,
      request: () =>
        req(
          'GET',
          '/v1/topics/cpu/partitions/0/records',
          undefined,
          { accept: 'application/vnd.kafka.record-batch' },
          { offset: '0', maxBytes: String(2 ** 20) },
        ),
    },
    {
      job: 'groups',
      name: 'groups heartbeat (a join)',
      router: groups,
      request: (() => {
        let member: { memberId: string; memberEpoch: number } | undefined;
        return () =>
          req(
            'POST',
            '/v1/groups/g/heartbeat',
            jsonBody(
              member
                ? { ...member }
                : { memberId: null, memberEpoch: 0, subscribedTopics: ['cpu'], rebalanceTimeoutMs: 30_000 },
            ),
            { 'content-type': 'application/json' },
          );
      })(),
    },
    { job: 'admin', name: 'admin describe cluster', router: admin, request: () => req('GET', '/v1/cluster') },
  ];
  const results = [];
  for (const c of cases) {
    const cpuMs = round(await measure(c, requests), 2);
    const at = Object.fromEntries(MEMORY_SIZES.map((m) => [m, round(cpuMsAt(cpuMs, m), 1)]));
    results.push({ job: c.job, case: c.name, cpuMs, cpuMsAtMemoryMb: at });
    console.log(
      `${c.name.padEnd(38)} ${cpuMs} ms CPU on a whole core; at ${MEMORY_SIZES.map((m) => `${m} MB ${at[m]}`).join(', ')} ms`,
    );
  }
  const idle = await measureIdle(requests, IDLE_PARTITIONS);
  const roll = await measureRoll(rolls);
  const maintenanceCases = [
    { case: 'maintenance run, nothing to do (fixed)', unit: 'per run', cpuMs: idle.fixedMs },
    {
      case: `maintenance run, nothing to do (per partition of ${IDLE_PARTITIONS})`,
      unit: 'per partition',
      cpuMs: idle.perPartitionMs,
    },
    { case: 'maintenance roll into a 16 MiB segment', unit: 'per MiB rolled', cpuMs: roll.cpuMsPerMiB },
  ];
  for (const c of maintenanceCases) {
    const cpuMs = round(c.cpuMs, 3);
    const at = Object.fromEntries(MEMORY_SIZES.map((m) => [m, round(cpuMsAt(cpuMs, m), 2)]));
    results.push({ job: 'maintenance', case: c.case, unit: c.unit, cpuMs, cpuMsAtMemoryMb: at });
    console.log(
      `${c.case} ${cpuMs} ms CPU ${c.unit} on a whole core; at ${MEMORY_SIZES.map((m) => `${m} MB ${at[m]}`).join(', ')} ms`,
    );
  }
  const memory = {
    rolledMiB: round(roll.rolledMiB, 2),
    heapPeakMiB: round(roll.heapPeakMiB, 1),
    rssPeakMiB: round(roll.rssPeakMiB, 1),
    processRssMiB: round(roll.rssMiB, 1),
  };
  console.log(
    `maintenance roll of ${memory.rolledMiB} MiB: at most ${memory.heapPeakMiB} MiB of heap and buffers above what was live before the run (RSS grew at most ${memory.rssPeakMiB} MiB; the whole bench process ${memory.processRssMiB} MiB, its stores included)`,
  );
  console.log(
    JSON.stringify({ bench: 'function-cpu', requests, rolls, results, maintenanceRollMemory: memory }),
  );
};

await main();
