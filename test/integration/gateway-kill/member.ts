/**
 * A kafkajs group member for the gateway crash test: prints `processed <partition> <offset> <value>`
 * for each record, and only then lets kafkajs resolve (and later auto-commit) its offset, so a
 * record the test never saw printed was never committed.
 */
import { Kafka, logLevel } from 'kafkajs';

const [bootstrap, topic, group, name] = process.argv.slice(2) as [string, string, string, string];
const kafka = new Kafka({ brokers: [bootstrap], clientId: name, logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({ groupId: group, sessionTimeout: 6_000, heartbeatInterval: 1_000 });
const print = (line: string) =>
  new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve()));

await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
consumer.on(consumer.events.GROUP_JOIN, (event) => {
  void print(`joined ${JSON.stringify(event.payload.memberAssignment)}`);
});
await consumer.run({
  autoCommitInterval: 500,
  eachMessage: async ({ partition, message }) => {
    await print(`processed ${partition} ${message.offset} ${message.value?.toString() ?? ''}`);
  },
});
process.once('SIGTERM', () => {
  void consumer.disconnect().then(() => process.exit(0));
});
