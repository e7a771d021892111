/**
 * `npm run bench:quotas`: client quotas through the local stack (`npm start`'s code path). Four
 * well-behaved producers and two consumers run alone, then beside a noisy producer offering ten times
 * its producer_byte_rate, then the same with the app served by several instances sharing the rate
 * (extra local HTTP servers over the same DynamoDB Local and S3 emulator, requests spread round-robin).
 * Prints, per phase: the noisy client's admitted bytes against its quota (the error of the shared
 * rate), the others' throughput and p99 latency against the phase without the noisy one, whether every
 * throttled answer said how long to wait; and at the end whether every acknowledged record reads back.
 *
 * Options: --seconds N (per phase, default 60), --instances N (default 3), --quota BYTES (default 4096).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { SluiceClient } from '../sdk/index.js';
import type { FetchLike } from '../sdk/transport.js';
import { startTarget } from './target.js';
import { summarize } from './stats.js';
import { flags, numberFlag } from './flags.js';

const options = flags();
const seconds = numberFlag(options, 'seconds', 60);
const instanceCount = numberFlag(options, 'instances', 3);
const QUOTA = numberFlag(options, 'quota', 4_096);
const GOOD_PRODUCERS = 4;
const GOOD_INTERVAL_MS = 1000;
const GOOD_RECORDS = 10;
const RECORD_BYTES = 400;
/** The noisy producer sends NOISY_BYTES every NOISY_INTERVAL_MS: 10 × its quota. */
const NOISY_INTERVAL_MS = 100;
const NOISY_BYTES = (QUOTA * 10 * NOISY_INTERVAL_MS) / 1000;
/** Producers send on schedule without waiting for answers (open loop), up to this many at once. */
const GOOD_MAX_IN_FLIGHT = 4;
const NOISY_MAX_IN_FLIGHT = 8;

interface Exchange {
  client: string;
  method: string;
  path: string;
  status: number;
  requestBytes: number;
  at: number;
  throttleMs: number | undefined;
  retryAfter: string | null;
}

/** A fetch that spreads requests over the instances' URLs and records every exchange. */
const observedFetch = (urls: () => readonly string[], log: Exchange[]): FetchLike => {
  let next = 0;
  return async (input, init) => {
    const list = urls();
    const base = list[next++ % list.length]!;
    const url = new URL(input);
    const target = `${base}${url.pathname}${url.search}`;
    const response = await globalThis.fetch(target, init);
    const headers = new Headers(init.headers as ConstructorParameters<typeof Headers>[0]);
    const throttle = response.headers.get('sluice-throttle-time-ms');
    log.push({
      client: headers.get('kafka-client-id') ?? '',
      method: init.method ?? 'GET',
      path: url.pathname,
      status: response.status,
      requestBytes: typeof init.body === 'string' ? Buffer.byteLength(init.body) : 0,
      at: Date.now(),
      throttleMs: throttle === null ? undefined : Number(throttle),
      retryAfter: response.headers.get('retry-after'),
    });
    return response;
  };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Calls `send(k)` on schedule, every `intervalMs` from `start` until `end`, without waiting for
 * answers but with at most `maxInFlight` outstanding (then it waits, as a producer's full buffer does).
 */
const openLoop = async (
  start: number,
  end: number,
  intervalMs: number,
  maxInFlight: number,
  send: (k: number) => Promise<void>,
): Promise<void> => {
  const inFlight = new Set<Promise<void>>();
  for (let k = 0; start + k * intervalMs < end; k++) {
    const due = start + k * intervalMs;
    if (due > Date.now()) await sleep(due - Date.now());
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    if (Date.now() >= end) break;
    const call: Promise<void> = send(k).finally(() => inFlight.delete(call));
    inFlight.add(call);
  }
  await Promise.all(inFlight);
};

interface Acked {
  topic: string;
  partition: number;
  offset: number;
  value: string;
}

interface PhaseResult {
  name: string;
  goodRecordsPerSec: number;
  goodP99Ms: number;
  consumedPerSec: number;
  consumerP99Ms: number;
  /** The samples behind the p99s (a baseline's two halves are pooled). */
  samples: { good: number[]; consumer: number[] };
  noisy?: { admittedBytes: number; ratio: number; refused: number; throttled: number; withoutWait: number };
}

const main = async () => {
  const target = await startTarget({ log: () => {} });
  const stack = target.stack!;
  const children: ChildProcess[] = [];
  let urls: string[] = [stack.url];
  const log: Exchange[] = [];
  const fetch = observedFetch(() => urls, log);
  const acked: Acked[] = [];
  try {
    const admin = new SluiceClient({ url: stack.url, fetch, clientId: 'bench-admin' }).admin();
    await admin.createTopic({ name: 'good', partitions: 4 });
    await admin.createTopic({ name: 'noisy', partitions: 4 });
    // Everyone has a generous default; the noisy client id its own quota.
    await admin.alterClientQuotas([
      {
        entity: { 'client-id': null },
        ops: [
          { key: 'producer_byte_rate', value: 4 * 1024 * 1024 },
          { key: 'consumer_byte_rate', value: 8 * 1024 * 1024 },
        ],
      },
      { entity: { 'client-id': 'noisy' }, ops: [{ key: 'producer_byte_rate', value: QUOTA }] },
    ]);
    const consumed: { at: number; latency: number }[] = [];
    const consumers = [0, 1].map((i) =>
      new SluiceClient({ url: stack.url, fetch, clientId: `reader-${i}` }).consumer({
        groupId: 'bench-readers',
        maxWaitMs: 500,
      }),
    );
    for (const c of consumers) {
      c.subscribe({ topics: ['good'], fromBeginning: true });
      void c.run({
        eachBatch: async ({ batch }) => {
          const now = Date.now();
          for (const r of batch.records) consumed.push({ at: now, latency: now - r.timestamp });
        },
      });
    }

    const phase = async (name: string, withNoisy: boolean, length = seconds): Promise<PhaseResult> => {
      const start = Date.now();
      const end = start + length * 1000;
      const sends: { at: number; latency: number; records: number }[] = [];
      const good = Array.from({ length: GOOD_PRODUCERS }, async (_, i) => {
        const producer = new SluiceClient({ url: stack.url, fetch, clientId: `good-${i}` }).producer();
        await openLoop(start, end, GOOD_INTERVAL_MS, GOOD_MAX_IN_FLIGHT, async (k) => {
          const sent = Date.now();
          const messages = Array.from({ length: GOOD_RECORDS }, (_, j) => ({
            key: `g${i}-${k}-${j}`,
            value: `${name}:${i}:${k}:${j}:`.padEnd(RECORD_BYTES, 'g'),
            timestamp: sent,
          }));
          const results = await producer.send({ topic: 'good', messages });
          sends.push({ at: Date.now(), latency: Date.now() - sent, records: messages.length });
          results.forEach((r, j) =>
            acked.push({
              topic: 'good',
              partition: r.partition,
              offset: 'offset' in r ? r.offset : -1,
              value: messages[j]!.value,
            }),
          );
        });
      });
      // Offers 10 × its quota on schedule (a producer whose buffer is always full); the SDK holds its
      // requests for the throttle time it is told, so its requests wait in flight.
      const noisyClient = new SluiceClient({ url: stack.url, fetch, clientId: 'noisy' }).producer();
      const noisy = withNoisy
        ? [
            openLoop(start, end, NOISY_INTERVAL_MS, NOISY_MAX_IN_FLIGHT, async (k) => {
              const value = `${name}:${k}:`.padEnd(NOISY_BYTES - 200, 'n');
              const results = await noisyClient.send({ topic: 'noisy', messages: [{ value }] });
              acked.push({
                topic: 'noisy',
                partition: results[0]!.partition,
                offset: 'offset' in results[0]! ? results[0].offset : -1,
                value,
              });
            }),
          ]
        : [];
      const from = log.length;
      await Promise.all([...good, ...noisy]);
      const inWindow = (at: number) => at >= start && at < end;
      const goodSends = sends.filter((s) => inWindow(s.at));
      const consumedNow = consumed.filter((c) => inWindow(c.at));
      const exchanges = log.slice(from);
      const noisyAnswers = exchanges.filter((e) => e.client === 'noisy');
      const throttled = exchanges.filter((e) => e.status === 429 || (e.throttleMs ?? 0) > 0);
      const admittedBytes = noisyAnswers
        .filter((e) => e.status === 200 && e.method === 'POST' && inWindow(e.at))
        .reduce((sum, e) => sum + e.requestBytes, 0);
      return {
        name,
        goodRecordsPerSec: goodSends.reduce((s, x) => s + x.records, 0) / length,
        goodP99Ms: summarize(goodSends.map((s) => s.latency)).p99,
        consumedPerSec: consumedNow.length / length,
        consumerP99Ms: summarize(consumedNow.map((c) => c.latency)).p99,
        samples: { good: goodSends.map((s) => s.latency), consumer: consumedNow.map((c) => c.latency) },
        ...(withNoisy
          ? {
              noisy: {
                admittedBytes,
                ratio: admittedBytes / (QUOTA * length),
                refused: noisyAnswers.filter((e) => e.status === 429).length,
                throttled: throttled.length,
                withoutWait: throttled.filter((e) => !(e.throttleMs! > 0) || e.retryAfter === null).length,
              },
            }
          : {}),
      };
    };

    // Warm up (topics cached, the group assigned), then the phases side by side: each noisy phase
    // between two halves of a phase without it, so load from elsewhere on the machine that drifts
    // during the run weighs on both alike.
    await sleep(3_000);
    const half = seconds / 2;
    const comparisons: { baseline: PhaseResult; noisy: PhaseResult }[] = [];
    const sandwich = async (label: string) => {
      const before = await phase(`${label}: alone (before)`, false, half);
      const noisy = await phase(`${label}: with noisy`, true);
      const after = await phase(`${label}: alone (after)`, false, half);
      comparisons.push({ baseline: mean(`${label}: alone`, before, after), noisy });
    };
    await sandwich('1 instance');
    for (let i = 1; i < instanceCount; i++) children.push(await startInstance(urls));
    urls = [stack.url, ...children.map((c) => (c as ChildProcess & { url: string }).url)];
    await sandwich(`${instanceCount} instances`);
    await Promise.all(consumers.map((c) => c.stop()));

    // Every acknowledged record reads back at its offset, byte for byte.
    const reader = new SluiceClient({ url: stack.url, clientId: 'bench-verifier' }).consumer();
    const byPartition = new Map<string, Map<number, string>>();
    let lost = 0;
    for (const a of acked) {
      const key = `${a.topic}/${a.partition}`;
      let read = byPartition.get(key);
      if (!read) {
        read = new Map();
        for (let offset = 0; ;) {
          const batch = await reader.fetch(a.topic, a.partition, offset, { maxBytes: 4 * 1024 * 1024 });
          for (const r of batch.records) read.set(r.offset, new TextDecoder().decode(r.value!));
          if (batch.nextOffset >= batch.highWatermark) break;
          offset = batch.nextOffset;
        }
        byPartition.set(key, read);
      }
      if (read.get(a.offset) !== a.value) lost++;
    }

    const pct = (x: number, y: number) => `${x >= y ? '+' : ''}${(((x - y) / y) * 100).toFixed(1)} %`;
    console.log(
      `\nclient quotas through the local stack: noisy quota ${QUOTA} B/s, offered ${QUOTA * 10} B/s, ${seconds} s; baselines ${half} s before + ${half} s after\n`,
    );
    console.log(
      'phase                          | good rec/s (Δ)    | good p99 ms (Δ)   | consumed rec/s (Δ) | consumer p99 ms (Δ) | noisy admitted/quota | 429s | throttled answers | without a wait',
    );
    for (const { baseline: b, noisy: r } of comparisons) {
      for (const row of [b, r]) {
        const d = (x: number, y: number) => (row === b ? '' : ` (${pct(x, y)})`);
        console.log(
          [
            row.name.padEnd(30),
            `${row.goodRecordsPerSec.toFixed(1)}${d(row.goodRecordsPerSec, b.goodRecordsPerSec)}`.padEnd(17),
            `${row.goodP99Ms.toFixed(0)}${d(row.goodP99Ms, b.goodP99Ms)}`.padEnd(17),
            `${row.consumedPerSec.toFixed(1)}${d(row.consumedPerSec, b.consumedPerSec)}`.padEnd(18),
            `${row.consumerP99Ms.toFixed(0)}${d(row.consumerP99Ms, b.consumerP99Ms)}`.padEnd(19),
            (row.noisy ? `${row.noisy.ratio.toFixed(3)} (${pct(row.noisy.ratio, 1)})` : '-').padEnd(20),
            String(row.noisy?.refused ?? '-').padEnd(4),
            String(row.noisy?.throttled ?? '-').padEnd(17),
            String(row.noisy?.withoutWait ?? '-'),
          ].join(' | '),
        );
      }
    }
    console.log(`\nacknowledged records: ${acked.length}, missing or changed on read-back: ${lost}`);
    const strip = ({ samples: _samples, ...rest }: PhaseResult) => rest;
    console.log(
      JSON.stringify({
        seconds,
        quota: QUOTA,
        instances: instanceCount,
        comparisons: comparisons.map((c) => ({ baseline: strip(c.baseline), noisy: strip(c.noisy) })),
        acked: acked.length,
        lost,
      }),
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(
      children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))),
    );
    await target.stop();
  }
};

/** Two halves of a baseline as one phase: rates averaged, p99s over both halves' samples pooled. */
const mean = (name: string, a: PhaseResult, b: PhaseResult): PhaseResult => {
  const samples = {
    good: [...a.samples.good, ...b.samples.good],
    consumer: [...a.samples.consumer, ...b.samples.consumer],
  };
  return {
    name,
    goodRecordsPerSec: (a.goodRecordsPerSec + b.goodRecordsPerSec) / 2,
    goodP99Ms: summarize(samples.good).p99,
    consumedPerSec: (a.consumedPerSec + b.consumedPerSec) / 2,
    consumerP99Ms: summarize(samples.consumer).p99,
    samples,
  };
};

/** Another app instance over this stack's emulators, table and buckets (bench/quota-instance.ts). */
const startInstance = async (urls: readonly string[]): Promise<ChildProcess & { url: string }> => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./quota-instance.ts', import.meta.url).pathname],
    {
      env: { ...process.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) =>
      reject(new Error(`instance exited with ${code} (instances so far: ${urls.length})`)),
    );
  });
  return Object.assign(child, { url: (JSON.parse(line) as { url: string }).url });
};

await main();
