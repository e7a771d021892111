/**
 * `npx tsx bench/client-cost.ts [--seconds S]`: what the load generator itself costs. The limit's
 * producers (4 producers × 4 partitions, 1 MiB batches of 1 KiB records, SDK over nodeHttpFetch)
 * send to a server that only reads each body and answers like Sluice would, so the CPU per request
 * is the client's encoding and checksumming plus the loopback hop — work the raw limit never does,
 * and which in AWS happens on the client's machine and API Gateway's, not on Sluice's.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SluiceClient } from '../sdk/client.js';
import { nodeHttpFetch } from '../sdk/node-http.js';
import { cpuMsPer, cpuSeconds } from './cpu.js';
import { flags, numberFlag } from './flags.js';
import { BenchProducer, newProducerRecorder } from './omb-producer.js';
import { round } from './stats.js';

const seconds = numberFlag(flags(), 'seconds', 10);
let next = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/json; charset=utf-8');
    if (req.url === '/v1/producers') return res.end(JSON.stringify({ producerId: 1, producerEpoch: 0 }));
    const baseOffset = next;
    next += 1000;
    res.end(
      JSON.stringify({ baseOffset, lastOffset: baseOffset + 999, logAppendTime: -1, logStartOffset: 0 }),
    );
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const client = new SluiceClient({
  url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  fetch: nodeHttpFetch(),
});
const recorder = newProducerRecorder();
const before = cpuSeconds();
const started = performance.now();
const until = Date.now() + seconds * 1000;
const options = {
  topic: 't',
  partitions: 4,
  messageSize: 1024,
  rate: 0,
  batchBytes: 1024 * 1024,
  lingerMs: 5,
};
await Promise.all(
  Array.from({ length: 4 }, () =>
    new BenchProducer(client.producer({ maxInFlightRequests: 1 }), options, recorder).run(until),
  ),
);
const requests = recorder.published.values.length;
const cpu = cpuMsPer(before, cpuSeconds(), requests);
server.close();
console.log(
  JSON.stringify({
    bench: 'client-cost',
    requests,
    requestsPerSec: round(requests / ((performance.now() - started) / 1000), 1),
    clientCpuMsPerRequest: cpu['total'],
    errors: recorder.errors.values.length,
  }),
);
