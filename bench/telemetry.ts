/**
 * `npm run bench:telemetry [-- --requests 2000 --pairs 7]`: what the Powertools telemetry costs per
 * request against the hand-written logger it replaced, in one run, on the same in-memory Sluice:
 *
 * - old: the router's JSON line on a 5xx (`console.error(JSON.stringify(entry))`), nothing else;
 * - new: functions/telemetry.ts — each request in a telemetry scope, RequestLatencyMs and the topic
 *   counters as EMF documents built by Powertools' Metrics, log lines by its Logger.
 *
 * Both write their lines to /dev/null with a synchronous write, as Lambda's stdout would take them.
 * The workload is a mix of a JSON produce (one record), a fetch of it, and one refused request (an
 * unknown topic: the new side counts ErrorsPerSec) in four. CPU time is process.cpuUsage() over
 * each batch, in interleaved A/B pairs (bench/ab-pairs.ts); bytes are what each side wrote. Then
 * prints the observability bill of the cost model's three shapes with the measured bytes.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { MemoryMetadataStore } from '../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import { createSluice } from '../functions/app.js';
import type { Sluice } from '../functions/app.js';
import { systemClock } from '../lib/ports/clock.js';
import type { Telemetry } from '../lib/ports/telemetry.js';
import { PowertoolsTelemetry } from '../functions/telemetry.js';
import { pairOrder, summarizeRatios } from './ab-pairs.js';
import { SHAPES } from './cost-model.js';
import { observabilityMonthly, observedWorkload } from './cost-telemetry.js';
import { flags, numberFlag } from './flags.js';

const args = flags();
const REQUESTS = numberFlag(args, 'requests', 2000);
const PAIRS = numberFlag(args, 'pairs', 7);

const devNull = openSync('/dev/null', 'w');
let written = 0;
const write = (line: string) => {
  const bytes = Buffer.byteLength(line) + 1;
  written += bytes;
  writeSync(devNull, `${line}\n`);
};

/** The logger this change replaced: a JSON line per 5xx, through the same write. */
const oldLogger: Telemetry = {
  log: (level, message, fields) => write(JSON.stringify({ level, msg: message, ...fields })),
  metric: () => {},
  annotate: () => {},
};

const powertools = new PowertoolsTelemetry({
  sink: { log: (record) => write(JSON.stringify(record)), emf: (line) => write(line) },
});

interface Side {
  sluice: Sluice;
  scope: <T>(keys: Record<string, string>, run: () => Promise<T>) => Promise<T>;
}

const build = async (telemetry: Telemetry, scope: Side['scope']): Promise<Side> => {
  const sluice = createSluice({
    store: new MemoryMetadataStore(),
    objectStores: [new MemoryObjectStore('s0', undefined, systemClock)],
    clock: systemClock,
    config: { clusterId: 'bench', topicCacheTtlMs: 60_000 },
    telemetry,
  });
  await sluice.catalog.create({ name: 'orders', partitions: 4, replicationFactor: 1, configs: {} });
  return { sluice, scope };
};

const request = (method: string, path: string, body?: unknown) => ({
  method,
  path: path.split('?')[0]!,
  query: Object.fromEntries(new URLSearchParams(path.split('?')[1] ?? '')),
  headers: { 'content-type': 'application/json' },
  body: body === undefined ? new Uint8Array() : new Uint8Array(Buffer.from(JSON.stringify(body))),
});

/** `n` requests of the mix; returns CPU microseconds and bytes written. */
const run = async (side: Side, n: number): Promise<{ cpuUs: number; bytes: number }> => {
  const router = side.sluice.router();
  const before = written;
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const kind = i % 4;
    const req =
      kind === 3
        ? request('POST', '/v1/topics/missing/records', { records: [{ value: 'x' }] })
        : kind === 1
          ? request('GET', `/v1/topics/orders/partitions/${i % 4}/records?offset=0&maxBytes=1024`)
          : request('POST', '/v1/topics/orders/records', {
              records: [{ key: `k${i}`, value: `value ${i}` }],
            });
    await side.scope({ function: kind === 1 ? 'fetch' : 'produce', requestId: `r-${i}` }, () =>
      router.handle(req),
    );
  }
  const used = process.cpuUsage(cpu);
  return { cpuUs: used.user + used.system, bytes: written - before };
};

const main = async () => {
  const old = await build(oldLogger, (_keys, go) => go());
  const fresh = await build(powertools, (keys, go) => powertools.run(keys, go));
  // Warm both (JIT, caches) before measuring.
  await run(old, 200);
  await run(fresh, 200);
  const results = {
    A: [] as { cpuUs: number; bytes: number }[],
    B: [] as { cpuUs: number; bytes: number }[],
  };
  for (let i = 0; i < PAIRS; i++) {
    for (const side of pairOrder(i)) results[side].push(await run(side === 'A' ? old : fresh, REQUESTS));
  }
  closeSync(devNull);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const oldCpu = median(results.A.map((x) => x.cpuUs / REQUESTS));
  const newCpu = median(results.B.map((x) => x.cpuUs / REQUESTS));
  // The overhead is the median of the pairs' differences (each pair ran back to back).
  const extra = median(results.B.map((b, i) => (b.cpuUs - results.A[i]!.cpuUs) / REQUESTS));
  const ratio = summarizeRatios(results.B.map((b, i) => b.cpuUs / results.A[i]!.cpuUs));
  const oldBytes = results.A[0]!.bytes / REQUESTS;
  const newBytes = results.B[0]!.bytes / REQUESTS;
  console.log(`Telemetry overhead per request (in-memory Sluice, ${REQUESTS} requests × ${PAIRS} A/B pairs;`);
  console.log('mix: 2 produce, 1 fetch, 1 refused produce in 4; lines written to /dev/null)');
  console.log('');
  console.log('| logger | CPU per request (median) | log bytes per request |');
  console.log('| --- | --- | --- |');
  console.log(`| old: JSON line per 5xx | ${oldCpu.toFixed(1)} µs | ${oldBytes.toFixed(1)} |`);
  console.log(`| Powertools Logger + Metrics (EMF) | ${newCpu.toFixed(1)} µs | ${newBytes.toFixed(1)} |`);
  console.log(
    `| difference (median of pairs) | ${extra >= 0 ? '+' : ''}${extra.toFixed(1)} µs (new/old ${ratio.median.toFixed(3)}, pairs ${ratio.min.toFixed(3)}–${ratio.max.toFixed(3)}) | +${(newBytes - oldBytes).toFixed(1)} |`,
  );
  console.log('');
  console.log('Observability per month (bench/cost-telemetry.ts, RF=1; RF=3 adds MaxLag per store):');
  console.log('');
  console.log(
    '| shape | metrics | requests/month | EMF GiB | metrics $ | logs $ | alarms $ | dashboard $ | X-Ray $ | total $ |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const shape of SHAPES) {
    const c = observabilityMonthly(shape, observedWorkload(shape, newBytes));
    const $ = (v: number) => v.toFixed(2);
    console.log(
      `| ${shape.name} | ${c.metrics.total} | ${(c.requestsPerMonth / 1e6).toFixed(1)} M | ${c.logGiB.toFixed(2)} | ${$(c.usd.metrics)} | ${$(c.usd.logs)} | ${$(c.usd.alarms)} | ${$(c.usd.dashboard)} | ${$(c.usd.xray)} | ${$(c.usd.total)} |`,
    );
  }
};

await main();
