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
 * Flags: --requests N. The last stdout line is one JSON object.
 */
import { adminRouter } from '../functions/admin.js';
import { fetchRouter } from '../functions/fetch.js';
import { groupsRouter } from '../functions/groups.js';
import { produceRouter } from '../functions/produce.js';
import { PowertoolsTelemetry } from '../functions/telemetry.js';
import { ManualClock } from '../lib/adapters/fault/index.js';
import { MemoryMetadataStore } from '../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import type { Router } from '../lib/http/router.js';
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

const main = async () => {
  const f = flags();
  const requests = numberFlag(f, 'requests', 200);
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
  console.log(JSON.stringify({ bench: 'function-cpu', requests, results }));
};

await main();
