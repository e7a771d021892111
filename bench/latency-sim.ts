/**
 * `npm run bench:latency-sim -- --seconds S`: the modelled produce latency in simulated time. The same
 * workload as bench/latency.ts (1 MiB/s of 1 KiB records, RF=3, acks=all, linger 5 ms) goes through
 * the SDK's producer, the real routes and the core, onto in-memory stores that wait by the express
 * model on a manual clock: only the model's waits take time, and Sluice's own CPU takes none. So the
 * figure is the protocol's latency under the model — linger, requests in flight, the commit, the gap
 * waits, materialization — whatever the machine's load, where bench/latency.ts adds this machine's
 * CPU and scheduling delay. Modelled, not AWS measurements. Runs 1 and 5 requests in flight.
 *
 * The tail's move runs after the produce's answer, as deployed; `--before` adds the same runs with the
 * move before the answer (as it was), so both figures come from one invocation.
 *
 * Flags: --seconds S (simulated, default 30), --seed N (1), --before.
 */
import { pathToFileURL } from 'node:url';
import { storeId } from '../lib/config/environment.js';
import { createSluice } from '../functions/app.js';
import { ManualClock, macrotask } from '../lib/adapters/fault/index.js';
import { latencyModels, withLatency } from '../lib/adapters/latency/index.js';
import { MemoryMetadataStore } from '../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import { SluiceClient } from '../sdk/client.js';
import { routerFetch } from '../test/support/router-fetch.js';
import { flags, numberFlag } from './flags.js';
import { round, summarize } from './stats.js';

/** Simulated time moves in steps this long; each step lets the work it woke settle. */
const STEP_MS = 0.25;
/** Event-loop turns after each step: enough for a request's continuations to reach their next wait. */
const TURNS_PER_STEP = 8;
const RATE_PER_MS = 1024 / 1000;
const LINGER_MS = 5;
const RECORD = new Uint8Array(1024).fill(7);

const settle = async () => {
  for (let i = 0; i < TURNS_PER_STEP; i++) await macrotask();
};

/** Runs `work` while moving the clock, until it settles. */
const driven = async <T>(clock: ManualClock, work: Promise<T>): Promise<T> => {
  let done = false;
  const tracked = work.finally(() => (done = true));
  tracked.catch(() => undefined);
  while (!done) {
    await clock.advance(STEP_MS);
    await settle();
  }
  return tracked;
};

export interface SimulatedRun {
  maxInFlight: number;
  materializeAfterAck: boolean;
  simulatedSeconds: number;
  messages: number;
  batches: number;
  errors: number;
  publishMs: { p50: number; p99: number; p999: number; max: number };
}

export const simulateProduceLatency = async ({
  seconds,
  maxInFlight,
  seed = 1,
  materializeAfterAck = true,
}: {
  seconds: number;
  maxInFlight: number;
  seed?: number;
  materializeAfterAck?: boolean;
}): Promise<SimulatedRun> => {
  const clock = new ManualClock(1_700_000_000_000);
  const storage = withLatency(
    latencyModels.express,
    {
      store: new MemoryMetadataStore(),
      objectStores: [0, 1, 2].map((i) => new MemoryObjectStore(storeId(i), undefined, clock)),
    },
    seed,
    clock,
  );
  const sluice = createSluice({
    ...storage,
    clock,
    // As deployed (functions/environment.ts): a commit ahead of its sequence waits up to 100 ms, and
    // the produce that fills the tail answers before moving it.
    config: { clusterId: 'latency-sim', sequenceGapWaitMs: 100, materializeAfterAck },
  });
  const client = new SluiceClient({ url: 'http://sluice.invalid', fetch: routerFetch(sluice.router()) });
  const topic = 'latency';
  await driven(clock, client.admin().createTopic({ name: topic, partitions: 1, replicationFactor: 3 }));
  const producer = client.producer({ maxInFlightRequests: maxInFlight });
  await driven(clock, producer.sendBatch(topic, 0, [{ value: RECORD }])); // producer id, outside the figures

  const latencies: number[] = [];
  const start = clock.now();
  const end = start + seconds * 1000;
  let nextAt = start;
  let open: number[] = [];
  let openedAt = start;
  let pending = 0;
  let batches = 0;
  let errors = 0;
  const sent: Promise<unknown>[] = [];
  const seal = () => {
    const handed = open;
    open = [];
    pending++;
    batches++;
    sent.push(
      producer
        .sendBatch(
          topic,
          0,
          handed.map(() => ({ value: RECORD })),
        )
        .then(
          () => {
            for (const h of handed) latencies.push(clock.now() - h);
          },
          () => (errors += handed.length),
        )
        .finally(() => pending--),
    );
  };
  while (clock.now() < end) {
    for (; nextAt <= clock.now(); nextAt += 1 / RATE_PER_MS) {
      if (open.length === 0) openedAt = nextAt;
      open.push(nextAt);
    }
    // As the benchmark producer and Kafka's accumulator: a lingered batch goes when a slot is free.
    if (open.length > 0 && clock.now() - openedAt >= LINGER_MS && pending < maxInFlight) seal();
    await clock.advance(STEP_MS);
    await settle();
  }
  if (open.length > 0) seal();
  await driven(clock, Promise.all(sent));
  const s = summarize(latencies);
  return {
    maxInFlight,
    materializeAfterAck,
    simulatedSeconds: seconds,
    messages: latencies.length,
    batches,
    errors,
    publishMs: { p50: round(s.p50, 2), p99: round(s.p99, 2), p999: round(s.p999, 2), max: round(s.max, 2) },
  };
};

const main = async () => {
  const f = flags();
  const seconds = numberFlag(f, 'seconds', 30);
  const seed = numberFlag(f, 'seed', 1);
  const runs: SimulatedRun[] = [];
  const modes = f.has('before') ? [false, true] : [true];
  for (const materializeAfterAck of modes)
    for (const maxInFlight of [1, 5]) {
      const run = await simulateProduceLatency({ seconds, maxInFlight, seed, materializeAfterAck });
      runs.push(run);
      console.log(
        `simulated (express model, RF=3, acks=all, 1 MiB/s, ${maxInFlight} in flight, ${seconds} s, tail moved ${materializeAfterAck ? 'after' : 'before'} the answer): publish p50/p99/p99.9/max ` +
          `${run.publishMs.p50}/${run.publishMs.p99}/${run.publishMs.p999}/${run.publishMs.max} ms over ${run.messages} messages in ${run.batches} batches, ${run.errors} errors (modelled, not AWS measurements)`,
      );
    }
  console.log(JSON.stringify({ bench: 'latency-sim', model: 'express', seed, runs }));
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
