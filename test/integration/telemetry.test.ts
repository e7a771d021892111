/**
 * The functions' telemetry through the local stack: the EMF documents a request emits, read back over
 * HTTP at GET /_local/metrics (names, dimensions, units, values), and its log lines with the request
 * id and the Kafka resource.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecordBatch } from '../../protocol/record-batch/index.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;
const lines: string[] = [];
const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };

interface Emf {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [key: string]: unknown;
}

beforeAll(async () => {
  t = await startTestStack({ telemetryLog: (line) => lines.push(line) });
  expect((await t.call('POST', '/v1/topics', { name: 'orders', partitions: 2 })).status).toBe(201);
});
afterAll(async () => {
  await t?.stack.stop();
});

/** Runs `step`, then reads back over HTTP the EMF documents emitted meanwhile. */
const emitted = async (step: () => Promise<unknown>): Promise<Emf[]> => {
  const before = (await t.call('GET', '/_local/metrics')).json.last as number;
  await step();
  const r = await t.call('GET', `/_local/metrics?after=${before}`);
  expect(r.status).toBe(200);
  return (r.json.documents as { document: Emf }[]).map((d) => d.document);
};

/** The one document that carries `metric` with these dimension values. */
const documentOf = (docs: Emf[], metric: string, dimensions: Record<string, string>): Emf => {
  const found = docs.filter(
    (d) =>
      d._aws.CloudWatchMetrics[0]!.Metrics.some((m) => m.Name === metric) &&
      Object.entries(dimensions).every(([k, v]) => d[k] === v),
  );
  expect(found, `${metric} ${JSON.stringify(dimensions)} in ${JSON.stringify(docs)}`).toHaveLength(1);
  return found[0]!;
};

const unitOf = (doc: Emf, metric: string): string | undefined =>
  doc._aws.CloudWatchMetrics[0]!.Metrics.find((m) => m.Name === metric)?.Unit;

describe('EMF documents of one request', () => {
  it('a JSON produce: MessagesInPerSec and BytesInPerSec per topic, RequestLatencyMs per API', async () => {
    let elapsed = 0;
    const docs = await emitted(async () => {
      const started = performance.now();
      const r = await t.call('POST', '/v1/topics/orders/records', {
        records: [
          { key: 'k', value: 'one', partition: 1 },
          { key: 'k', value: 'two', partition: 1 },
          { key: 'k', value: 'three', partition: 0 },
        ],
      });
      elapsed = performance.now() - started;
      expect(r.status).toBe(200);
    });
    const topic = documentOf(docs, 'MessagesInPerSec', { topic: 'orders' });
    expect(topic._aws.CloudWatchMetrics[0]!.Namespace).toBe('Sluice');
    expect(topic._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'topic']]);
    expect(topic['service']).toBe('sluice');
    expect(unitOf(topic, 'MessagesInPerSec')).toBe('Count');
    expect(unitOf(topic, 'BytesInPerSec')).toBe('Bytes');
    // Two partitions, one document: the counters of the request are summed per topic.
    expect(topic['MessagesInPerSec']).toBe(3);
    // Two RecordBatches of 61 bytes of header plus their records.
    expect(topic['BytesInPerSec']).toBeGreaterThan(2 * 61);
    const latency = documentOf(docs, 'RequestLatencyMs', { API: 'Produce' });
    expect(latency._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'API']]);
    expect(unitOf(latency, 'RequestLatencyMs')).toBe('Milliseconds');
    expect(latency['RequestLatencyMs']).toBeGreaterThan(0);
    expect(latency['RequestLatencyMs']).toBeLessThan(elapsed);
    expect(Math.abs(latency._aws.Timestamp - Date.now())).toBeLessThan(60_000);
    // Nothing else: no error counter, no other API.
    expect(docs).toHaveLength(2);
  });

  it('a binary produce counts the batch bytes exactly, and a fetch its record bytes', async () => {
    const batch = encodeRecordBatch(
      ['a', 'bb', 'ccc'].map((v, i) => ({
        key: null,
        value: Buffer.from(v),
        timestamp: 1_700_000_000_000 + i,
      })),
    );
    const produced = await emitted(async () => {
      expect((await t.call('POST', '/v1/topics/orders/partitions/0/batches', batch, BATCH)).status).toBe(200);
    });
    const topic = documentOf(produced, 'BytesInPerSec', { topic: 'orders' });
    expect(topic['BytesInPerSec']).toBe(batch.length);
    expect(topic['MessagesInPerSec']).toBe(3);

    const fetched = await emitted(async () => {
      const r = await t.call('GET', '/v1/topics/orders/partitions/0/records?offset=1');
      expect(r.json.records.map((x: { value: string }) => x.value)).toEqual(['a', 'bb', 'ccc']);
    });
    // Kafka's record size here: key, value and header bytes (a, bb, ccc).
    expect(documentOf(fetched, 'BytesOutPerSec', { topic: 'orders' })['BytesOutPerSec']).toBe(6);
    expect(documentOf(fetched, 'RequestLatencyMs', { API: 'Fetch' })).toBeDefined();
  });

  it('an error answer counts ErrorsPerSec per API and Kafka error code', async () => {
    const docs = await emitted(async () => {
      expect((await t.call('POST', '/v1/topics/missing/records', { records: [{ value: 'x' }] })).status).toBe(
        404,
      );
    });
    const errors = documentOf(docs, 'ErrorsPerSec', { API: 'Produce', error: 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect(errors._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'API', 'error']]);
    expect(errors['ErrorsPerSec']).toBe(1);
    expect(docs.some((d) => 'MessagesInPerSec' in d)).toBe(false);
  });

  it('maintenance reports the partition gauges and each group lag', async () => {
    const commit = await t.call('POST', '/v1/groups/billing/offsets', {
      offsets: [{ topic: 'orders', partition: 1, offset: 1 }],
    });
    expect(commit.status).toBe(200);
    const docs = await emitted(() => t.stack.runMaintenance());
    const gauges = documentOf(docs, 'UnderReplicatedPartitions', {});
    expect(gauges._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service']]);
    expect(gauges).toMatchObject({
      UnderReplicatedPartitions: 0,
      UnderMinIsrPartitionCount: 0,
      OfflinePartitionsCount: 0,
    });
    // Partition 1 holds two records; the group committed 1.
    const perPartition = documentOf(docs, 'records-lag-max', {
      group: 'billing',
      topic: 'orders',
      partition: '1',
    });
    expect(perPartition._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([
      ['service', 'group', 'topic', 'partition'],
    ]);
    expect(perPartition['records-lag-max']).toBe(1);
    const group = docs.filter((d) => d['group'] === 'billing' && d['topic'] === undefined);
    expect(group).toHaveLength(1);
    expect(group[0]!['records-lag-max']).toBe(1);
  });
});

describe('log lines', () => {
  it('carry the function, the Kafka resource and the request id, readably', async () => {
    lines.length = 0;
    await t.stack.runMaintenance();
    const run = lines.find((l) => l.includes('maintenance run'));
    expect(run).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}maintenance run {2}function=maintenance \{"maintenance":\{/,
    );
  });

  it('a failed request logs its API, topic, partition and API Gateway request id', async () => {
    const runtime = await import('../../local/runtime.js');
    const previous = runtime.currentStorageLayer();
    // Every object write fails: the produce answers a 5xx, which the router logs.
    runtime.setStorageLayer((storage) => ({
      ...storage,
      objectStores: storage.objectStores.map(
        (s) =>
          new Proxy(s, {
            get: (target, name, receiver) =>
              name === 'put'
                ? () => Promise.reject(new Error('disk on fire'))
                : (Reflect.get(target, name, receiver) as unknown),
          }),
      ),
    }));
    lines.length = 0;
    try {
      const r = await t.call(
        'POST',
        '/v1/topics/orders/partitions/1/batches',
        encodeRecordBatch([{ key: null, value: Buffer.from('x'), timestamp: 1 }]),
        BATCH,
      );
      expect(r.status).toBeGreaterThanOrEqual(500);
      expect(JSON.stringify(r.json)).not.toContain('disk on fire');
    } finally {
      runtime.setStorageLayer(previous);
    }
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toMatch(
      / ERROR request failed {2}function=produce API=Produce topic=orders partition=1 requestId=[0-9a-f-]{36} /,
    );
    expect(line).toContain('disk on fire');
  });
});

describe('GET /_local/metrics', () => {
  it('refuses what it does not serve', async () => {
    expect((await t.call('GET', '/_local/metrics?after=-1')).json.error.code).toBe('INVALID_REQUEST');
    expect((await t.call('DELETE', '/_local/metrics')).status).toBe(405);
    const all = await t.call('GET', `/_local/metrics?after=999999999`);
    expect(all.json.documents).toEqual([]);
  });
});
