/**
 * A consume-transform-produce application written against kafkajs only, as a Kafka user would write it
 * (test/integration/gateway-transactions.test.ts runs it through the Kafka gateway and SIGKILLs it):
 * a `readUncommitted: false` consumer of `<input>` in group `<group>`, and a transactional producer that
 * writes `out-<value>` to `<output>` for every input record and commits the consumer's offsets in the
 * same transaction (sendOffsets), one transaction per fetched batch. It prints `committed <n>` after
 * each commit, and runs until killed.
 * Usage: app.ts <bootstrap> <input> <output> <group> <transactional.id>
 */
import { Kafka, logLevel } from 'kafkajs';

const [bootstrap, input, output, group, transactionalId] = process.argv.slice(2);
if (!bootstrap || !input || !output || !group || !transactionalId)
  throw new Error('usage: app.ts <bootstrap> <input> <output> <group> <transactional.id>');

const kafka = new Kafka({
  clientId: 'ctp',
  brokers: [bootstrap],
  logLevel: process.env['GWTXN_DEBUG'] ? logLevel.WARN : logLevel.NOTHING,
  retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 2_000 },
});
const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
const consumer = kafka.consumer({
  groupId: group,
  readUncommitted: false,
  sessionTimeout: 6_000,
  heartbeatInterval: 500,
  maxBytesPerPartition: 2_048,
});
await producer.connect();
await consumer.connect();
await consumer.subscribe({ topic: input, fromBeginning: true });
let committed = 0;
await consumer.run({
  autoCommit: false,
  eachBatch: async ({ batch, heartbeat, isRunning, isStale }) => {
    if (batch.messages.length === 0 || !isRunning() || isStale()) return;
    const transaction = await producer.transaction();
    try {
      await transaction.send({
        topic: output,
        messages: batch.messages.map((m) => ({
          key: m.key,
          value: `out-${m.value?.toString() ?? ''}`,
        })),
      });
      const next = String(Number(batch.lastOffset()) + 1);
      await transaction.sendOffsets({
        consumerGroupId: group,
        topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }],
      });
      await transaction.commit();
    } catch (error) {
      await transaction.abort().catch(() => undefined);
      throw error;
    }
    committed += batch.messages.length;
    console.log(`committed ${committed}`);
    await heartbeat();
  },
});
