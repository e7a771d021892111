/**
 * A kafkajs idempotent producer for the gateway crash test: sends `count` records `<id>-<i>` in
 * batches of 50 and prints `acked <value> …` once Kafka's acks=-1 answer arrived for each batch.
 */
import { Kafka, logLevel } from 'kafkajs';

const [bootstrap, topic, id, count] = process.argv.slice(2) as [string, string, string, string];
const kafka = new Kafka({ brokers: [bootstrap], clientId: `producer-${id}`, logLevel: logLevel.NOTHING });
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
const print = (line: string) =>
  new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve()));

await producer.connect();
for (let start = 0; start < Number(count); start += 50) {
  const values = Array.from({ length: Math.min(50, Number(count) - start) }, (_, i) => `${id}-${start + i}`);
  await producer.send({ topic, acks: -1, messages: values.map((value) => ({ key: value, value })) });
  await print(`acked ${values.join(' ')}`);
}
await producer.disconnect();
