/**
 * `npm run bench:wake-latency`: how long a caught-up consumer's long poll takes to answer a record,
 * through the local stack `npm start` runs (in-process, DynamoDB Local + s3rver). A consumer keeps a
 * `POST /v1/fetch` long poll (maxWaitMs 5 s) at the partition's end; after a random pause a producer
 * sends one record; the figure is from the produce's answer (the record is committed) to the poll's
 * answer holding it, and from the produce's start. Repeated `--samples` times (default 40); p50 and
 * p99 reported. The poll re-reads the partition item every pollIntervalMs (100 ms), so the wait after
 * the commit is up to one interval plus a read. Figures from the shared machine are indicative.
 *
 * Flags: --samples N, --json. The last stdout line is one JSON object.
 */
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
    const afterAck: number[] = [];
    const afterSend: number[] = [];
    let offset = 0;
    for (let i = 0; i < samples; i++) {
      const polled = fetch(`${stack.url}/v1/fetch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ partitions: [{ topic: 'wake', partition: 0, offset }], maxWaitMs: 5_000 }),
      }).then(async (response) => ({ at: performance.now(), body: (await response.json()) as unknown }));
      // Let the poll reach its wait, then a random point in the poll interval.
      await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 200));
      const sentAt = performance.now();
      await producer.sendBatch('wake', 0, [{ value: new TextEncoder().encode(`r${i}`) }]);
      const ackedAt = performance.now();
      const answer = await polled;
      const next = (answer.body as { partitions?: { nextOffset?: number }[] }).partitions?.[0]?.nextOffset;
      if (next !== offset + 1)
        throw new Error(`poll ${i} answered without the record: ${JSON.stringify(answer.body)}`);
      afterAck.push(Math.max(0, answer.at - ackedAt));
      afterSend.push(answer.at - sentAt);
      offset += 1;
    }
    const a = summarize(afterAck);
    const s = summarize(afterSend);
    console.log(
      `wake latency over ${samples} polls: after the produce's answer p50 ${round(a.p50, 1)} / p99 ${round(a.p99, 1)} ms; ` +
        `after the produce was sent p50 ${round(s.p50, 1)} / p99 ${round(s.p99, 1)} ms`,
    );
    console.log(
      JSON.stringify({
        bench: 'wake-latency',
        samples,
        afterAckMs: { p50: round(a.p50, 1), p99: round(a.p99, 1) },
        afterSendMs: { p50: round(s.p50, 1), p99: round(s.p99, 1) },
      }),
    );
  } finally {
    await stack.stop();
  }
};

await main();
