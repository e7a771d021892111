/**
 * `npm run bench:wake-latency`: how long a caught-up consumer takes to get a record, through the local
 * stack `npm start` runs (in-process, DynamoDB Local + s3rver), both ways it can wait, in one run:
 * - `poll`: a `POST /v1/fetch` long poll (maxWaitMs 5 s) at the partition's end, which re-reads the
 *   partition item every pollIntervalMs (100 ms), so the wait after the commit is up to one interval
 *   plus a read;
 * - `socket`: a registration on the wait socket (ws://…/v1/wait) at the partition's end; the stream
 *   emulation hands the commit to the notifier, which sends `ready`, and the consumer then fetches
 *   (maxWaitMs 0): the figure is to that fetch's answer.
 * After a random pause a producer sends one record; the figure is from the produce's answer (the
 * record is committed) to the consumer's answer holding it, and from the produce's start. Repeated
 * `--samples` times (default 40) per mode; p50 and p99 reported.
 *
 * Then a steady stream (sdk/fetch-pacing.ts): the SDK consumer on the wait socket reads 8 partitions
 * while records arrive at `--rate` a second (default 25, spread over the partitions, each its own
 * produce) for `--seconds` (default 10), once paced (pacedFetchMs 500, the default) and once
 * registering after every fetch (pacedFetchMs 0): per record the time from its produce's answer to
 * its delivery (p50 / p99), and the fetches a second, those naming the connection (which register),
 * the registration writes they made (the server's `waitingAt` answers that moved) and the ready
 * frames the consumer got. Figures from the shared machine are indicative.
 *
 * Flags: --samples N, --rate N, --seconds N. The last stdout line is one JSON object.
 */
import { WebSocket } from 'ws';
import { startLocalStack } from '../local/stack.js';
import { SluiceClient, nodeHttpFetch } from '../sdk/index.js';
import { flags, numberFlag } from './flags.js';
import { round, summarize } from './stats.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const main = async () => {
  const f = flags();
  const samples = numberFlag(f, 'samples', 40);
  const stack = await startLocalStack({ port: 0, maintenanceIntervalMs: 0, storeCount: 1 });
  try {
    const fetch = nodeHttpFetch();
    const client = new SluiceClient({ url: stack.url, fetch });
    await client.admin().createTopic({ name: 'wake', partitions: 1 });
    const producer = client.producer();
    let offset = 0;
    const fetchAt = async (at: number) => {
      const response = await fetch(`${stack.url}/v1/fetch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ partitions: [{ topic: 'wake', partition: 0, offset: at }], maxWaitMs: 0 }),
      });
      return (await response.json()) as { partitions?: { nextOffset?: number }[] };
    };
    const measure = async (wait: (at: number) => Promise<{ at: number; body: unknown }>) => {
      const afterAck: number[] = [];
      const afterSend: number[] = [];
      for (let i = 0; i < samples; i++) {
        const answered = wait(offset);
        // Let the consumer reach its wait, then a random point in the poll interval.
        await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 200));
        const sentAt = performance.now();
        await producer.sendBatch('wake', 0, [{ value: new TextEncoder().encode(`r${offset}`) }]);
        const ackedAt = performance.now();
        const answer = await answered;
        const next = (answer.body as { partitions?: { nextOffset?: number }[] }).partitions?.[0]?.nextOffset;
        if (next !== offset + 1)
          throw new Error(`wait ${i} answered without the record: ${JSON.stringify(answer.body)}`);
        afterAck.push(Math.max(0, answer.at - ackedAt));
        afterSend.push(answer.at - sentAt);
        offset += 1;
      }
      const a = summarize(afterAck);
      const s = summarize(afterSend);
      return {
        afterAckMs: { p50: round(a.p50, 1), p99: round(a.p99, 1) },
        afterSendMs: { p50: round(s.p50, 1), p99: round(s.p99, 1) },
      };
    };
    const poll = await measure((at) =>
      fetch(`${stack.url}/v1/fetch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ partitions: [{ topic: 'wake', partition: 0, offset: at }], maxWaitMs: 5_000 }),
      }).then(async (response) => ({ at: performance.now(), body: (await response.json()) as unknown })),
    );
    // The wait socket: one connection, a registration per wait, a fetch once told.
    const { waitUrl } = await client.admin().cluster();
    if (!waitUrl) throw new Error('the local stack names no wait socket');
    const ws = new WebSocket(waitUrl);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    let told: (() => void) | undefined;
    ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(String(data)) as { type: string };
      if (frame.type !== 'ready') throw new Error(`the wait socket answered ${String(data)}`);
      told?.();
    });
    const socket = await measure(async (at) => {
      const ready = new Promise<void>((resolve) => (told = resolve));
      ws.send(
        JSON.stringify({ action: 'wait', partitions: [{ topic: 'wake', partition: 0, fetchOffset: at }] }),
      );
      await ready;
      const body = await fetchAt(at);
      return { at: performance.now(), body };
    });
    ws.close();
    const rate = numberFlag(f, 'rate', 25);
    const seconds = numberFlag(f, 'seconds', 10);
    const steady = async (pacedFetchMs: number) => {
      const topic = `steady-${pacedFetchMs}`;
      const partitions = 8;
      await client.admin().createTopic({ name: topic, partitions });
      const counted = { fetches: 0, registering: 0, frames: 0 };
      const countingFetch: typeof fetch = (input, init) => {
        if (String(input).endsWith('/v1/fetch')) {
          counted.fetches += 1;
          if (typeof init?.body === 'string' && init.body.includes('"wait":')) counted.registering += 1;
        }
        return fetch(input, init);
      };
      const reader = new SluiceClient({ url: stack.url, fetch: countingFetch });
      const consumer = reader.consumer({ pacedFetchMs });
      consumer.subscribe({ topics: [topic], fromBeginning: true });
      const ackedAt = new Map<string, number>();
      const latencies: number[] = [];
      const early: string[] = [];
      const running = consumer.run({
        eachMessage: ({ message }) => {
          const value = new TextDecoder().decode(message.value!);
          const acked = ackedAt.get(value);
          if (acked === undefined) early.push(value);
          else latencies.push(performance.now() - acked);
          return Promise.resolve();
        },
      });
      // Let the consumer reach its first wait.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const before = { ...counted };
      const started = performance.now();
      const sends: Promise<void>[] = [];
      const total = Math.round(rate * seconds);
      for (let i = 0; i < total; i++) {
        const due = started + (i * 1000) / rate;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
        const value = `s${i}`;
        sends.push(
          producer
            .sendBatch(topic, i % partitions, [{ value: new TextEncoder().encode(value) }])
            .then(() => void ackedAt.set(value, performance.now())),
        );
      }
      await Promise.all(sends);
      const elapsedSec = (performance.now() - started) / 1000;
      for (let t = 0; t < 200 && latencies.length + early.length < total; t++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      await consumer.stop();
      await running;
      if (latencies.length + early.length !== total)
        throw new Error(
          `steady stream (pacedFetchMs ${pacedFetchMs}): ${latencies.length + early.length} of ${total} delivered`,
        );
      const l = summarize(latencies);
      const perSec = (n: number) => round(n / elapsedSec, 2);
      return {
        pacedFetchMs,
        records: total,
        afterAckMs: { p50: round(l.p50, 1), p99: round(l.p99, 1) },
        // A record delivered before its produce's answer arrived counts as no wait.
        deliveredBeforeAck: early.length,
        fetchesPerSec: perSec(counted.fetches - before.fetches),
        registeringFetchesPerSec: perSec(counted.registering - before.registering),
      };
    };
    const paced = await steady(500);
    const registering = await steady(0);
    for (const r of [paced, registering])
      console.log(
        `steady stream, ${rate} records/s over 8 partitions for ${seconds} s, pacedFetchMs ${r.pacedFetchMs}: ` +
          `after the produce's answer p50 ${r.afterAckMs.p50} / p99 ${r.afterAckMs.p99} ms; ` +
          `${r.fetchesPerSec} fetches/s, ${r.registeringFetchesPerSec} of them naming the connection`,
      );
    for (const [mode, r] of [
      ['long poll (POST /v1/fetch, maxWaitMs 5000)', poll],
      ['wait socket (ready, then a fetch)', socket],
    ] as const)
      console.log(
        `wake latency, ${mode}, over ${samples} waits: after the produce's answer p50 ${r.afterAckMs.p50} / p99 ${r.afterAckMs.p99} ms; ` +
          `after the produce was sent p50 ${r.afterSendMs.p50} / p99 ${r.afterSendMs.p99} ms`,
      );
    console.log(
      JSON.stringify({
        bench: 'wake-latency',
        samples,
        poll,
        socket,
        steady: { rate, seconds, paced, registering },
      }),
    );
  } finally {
    await stack.stop();
  }
};

await main();
