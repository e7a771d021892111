/**
 * Measures what a batch costs Sluice at several batch sizes: `requests` binary produces of
 * `batchBytes` to one partition, then one consumer reading everything once with fetches of
 * `maxBytes = batchBytes`. The storage meters count S3 requests and DynamoDB units; API Gateway units
 * come from the request and response sizes the client saw. Lambda time is both measured here (client
 * latency, an upper bound on a loaded machine with emulators) and modelled for AWS (cost.ts).
 */
import { randomBytes } from 'node:crypto';
import { SluiceClient } from '../sdk/client.js';
import type { Message } from '../sdk/types.js';
import type { PerBatchCounts, SideCounts } from './cost.js';
import { apiGatewayUnits, modelledDurationMs } from './cost.js';
import { meteredFetch } from './metered-fetch.js';
import { round } from './stats.js';
import type { BenchTarget } from './target.js';

const RECORD_BYTES = 1024;
/** The SDK's upper bound for a record's framing and a RecordBatch header, so a batch fits its size. */
const FRAMING_PER_RECORD = 21;
const BATCH_HEADER = 61;

export interface MeasuredBatchCost {
  /** Counts with Lambda durations as measured locally. */
  measured: PerBatchCounts;
  /** The same counts with Lambda durations from the AWS duration model. */
  modelled: PerBatchCounts;
  produceRequests: number;
  fetchRequests: number;
}

export const measureBatchCost = async (
  target: BenchTarget,
  { batchBytes, requests }: { batchBytes: number; requests: number },
): Promise<MeasuredBatchCost> => {
  const metered = meteredFetch();
  const client = new SluiceClient({ url: target.url, fetch: metered.fetch });
  const topic = `bench-cost-${batchBytes}-${Date.now()}`;
  await client.admin().createTopic({ name: topic, partitions: 1 });
  const value = randomBytes(RECORD_BYTES);
  const count = Math.max(1, Math.floor((batchBytes - BATCH_HEADER) / (RECORD_BYTES + FRAMING_PER_RECORD)));
  const messages: Message[] = Array.from({ length: count }, () => ({ value }));
  const producer = client.producer();
  await producer.sendBatch(topic, 0, [{ value }]); // producer id and sockets, outside the counts
  const batchSize = count * RECORD_BYTES;

  metered.calls.length = 0;
  target.meterDelta();
  for (let i = 0; i < requests; i++) await producer.sendBatch(topic, 0, messages);
  const produceStorage = target.meterDelta();
  const produceCalls = metered.calls.filter((c) => c.path.endsWith('/batches'));
  // Ask for exactly one stored batch per fetch: its stored size is the produce request's body.
  const storedBytes = produceCalls[0]?.requestBytes ?? batchSize;

  metered.calls.length = 0;
  const consumer = client.consumer();
  let offset = 1;
  for (;;) {
    const batch = await consumer.fetch(topic, 0, offset, { maxBytes: storedBytes });
    offset = batch.nextOffset;
    if (offset >= batch.highWatermark) break;
  }
  const fetchStorage = target.meterDelta();
  const fetchCalls = metered.calls.filter((c) => c.path.endsWith('/records'));

  const side = (
    storage: ReturnType<BenchTarget['meterDelta']>,
    calls: typeof produceCalls,
    job: 'produce' | 'fetch',
    durations: 'measured' | 'modelled',
  ): SideCounts => ({
    requests: calls.length / requests,
    s3Puts: storage.objects.objectPuts / requests,
    s3Gets: storage.objects.objectGets / requests,
    writeUnits: storage.metadata.writeUnits / requests,
    readUnits: storage.metadata.readUnits / requests,
    apiUnits: calls.reduce((s, c) => s + apiGatewayUnits(c.requestBytes, c.responseBytes), 0) / requests,
    durationMs:
      calls.reduce(
        (s, c) =>
          s +
          (durations === 'measured'
            ? c.ms
            : modelledDurationMs(job, Math.max(c.requestBytes, c.responseBytes))),
        0,
      ) / requests,
  });
  const counts = (durations: 'measured' | 'modelled'): PerBatchCounts => ({
    batchBytes: batchSize,
    produce: roundSide(side(produceStorage, produceCalls, 'produce', durations)),
    fetch: roundSide(side(fetchStorage, fetchCalls, 'fetch', durations)),
  });
  return {
    measured: counts('measured'),
    modelled: counts('modelled'),
    produceRequests: produceCalls.length,
    fetchRequests: fetchCalls.length,
  };
};

const roundSide = (s: SideCounts): SideCounts =>
  Object.fromEntries(Object.entries(s).map(([k, v]) => [k, round(v as number, 4)])) as unknown as SideCounts;
