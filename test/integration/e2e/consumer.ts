/**
 * One consumer process of the end-to-end group test: `node --import tsx consumer.ts URL TOPIC GROUP`
 * joins GROUP through the SDK and, per fetched batch, prints `R partition offset value` for each record,
 * commits the batch's next offset under its member epoch and then prints `C partition offset`. stdout
 * is a pipe, written synchronously, so what a SIGKILLed process printed is what it did. SIGTERM stops
 * it cleanly (commit, leave the group).
 */
import { SluiceClient } from '../../../sdk/client.js';
import { SluiceError } from '../../../sdk/errors.js';
import { nodeHttpFetch } from '../../../sdk/node-http.js';

const FENCED = ['STALE_MEMBER_EPOCH', 'FENCED_MEMBER_EPOCH', 'UNKNOWN_MEMBER_ID'];

const [url, topic, group] = process.argv.slice(2);
const client = new SluiceClient({ url: url!, fetch: nodeHttpFetch() });
const consumer = client.consumer({ groupId: group!, maxWaitMs: 1_000, autoCommitIntervalMs: 0 });
consumer.subscribe({ topics: [topic!], fromBeginning: true });
process.on('SIGTERM', () => void consumer.stop());
const decoder = new TextDecoder();
await consumer.run({
  eachBatch: async ({ batch }) => {
    process.stdout.write(
      batch.records.map((r) => `R ${batch.partition} ${r.offset} ${decoder.decode(r.value!)}\n`).join(''),
    );
    try {
      await consumer.commitOffsets([
        { topic: batch.topic, partition: batch.partition, offset: batch.nextOffset },
      ]);
      process.stdout.write(`C ${batch.partition} ${batch.nextOffset}\n`);
    } catch (error) {
      // Fenced by a rebalance: the partition's next owner starts from the last accepted commit.
      if (!(error instanceof SluiceError) || !FENCED.includes(error.code)) throw error;
      process.stdout.write(`F ${batch.partition} ${batch.nextOffset} ${error.code}\n`);
    }
  },
});
process.stdout.write('stopped\n');
