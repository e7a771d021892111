/**
 * The consume-transform-produce loop of the transactions SIGKILL test, a process of its own: reads
 * TXN_INPUT with read_committed in group TXN_GROUP, writes each record's value upper-cased to the same
 * partition of TXN_OUTPUT, and commits the output and the input positions in one transaction of
 * transactional.id TXN_ID per fetched batch. Prints `committed <partition> <nextOffset>` after each
 * commit; a failure ends the process with status 1. Kafka's loop (KIP-98, KIP-447): the positions go
 * with `sendOffsetsToTransaction(offsets, consumer.groupMetadata())`, the consumer never commits itself.
 */
import { SluiceClient } from '../../../sdk/client.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const input = env('TXN_INPUT');
const output = env('TXN_OUTPUT');
const client = new SluiceClient({ url: env('TXN_URL') });
const consumer = client.consumer({
  groupId: env('TXN_GROUP'),
  isolationLevel: 'read_committed',
  autoCommit: false,
  maxWaitMs: 500,
  maxPartitionBytes: 4096,
});
const producer = client.producer({ transactionalId: env('TXN_ID'), transactionTimeoutMs: 30_000 });

await producer.initTransactions();
console.log('initialized');
consumer.subscribe({ topics: [input], fromBeginning: true });
await consumer.run({
  eachBatch: async ({ batch }) => {
    producer.beginTransaction();
    try {
      await producer.sendBatch(
        output,
        batch.partition,
        batch.records.map((r) => ({
          key: r.key,
          value: Buffer.from(r.value ?? new Uint8Array())
            .toString('utf8')
            .toUpperCase(),
        })),
      );
      await producer.sendOffsetsToTransaction(
        [{ topic: input, partition: batch.partition, offset: batch.nextOffset }],
        consumer.groupMetadata(),
      );
      await producer.commitTransaction();
    } catch (error) {
      if (producer.transactionState === 'ABORTABLE_ERROR') await producer.abortTransaction();
      throw error;
    }
    console.log(`committed ${batch.partition} ${batch.nextOffset}`);
  },
});
