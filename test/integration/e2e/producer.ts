/**
 * One producer process of the end-to-end group test: `node --import tsx producer.ts URL TOPIC ID COUNT`
 * sends COUNT keyed records `ID-n` through the SDK (JSON produce with an Idempotency-Key per request,
 * so retries never write twice) in requests of 500, and prints `done` when every one is acknowledged.
 */
import { SluiceClient } from '../../../sdk/client.js';
import { nodeHttpFetch } from '../../../sdk/node-http.js';

const [url, topic, id, countText] = process.argv.slice(2);
const count = Number(countText);
const client = new SluiceClient({ url: url!, fetch: nodeHttpFetch() });
const producer = client.producer();
const BATCH = 500;
for (let n = 0; n < count; n += BATCH) {
  const messages = Array.from({ length: Math.min(BATCH, count - n) }, (_, i) => ({
    key: `${id}-${(n + i) % 64}`,
    value: `${id}-${n + i}`,
  }));
  await producer.send({ topic: topic!, messages });
  // Spread the writes over a few seconds, so consumers read while producers write.
  await new Promise((resolve) => setTimeout(resolve, 15));
}
process.stdout.write('done\n');
