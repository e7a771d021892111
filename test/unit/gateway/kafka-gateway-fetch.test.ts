/**
 * The Kafka gateway's Fetch against the real routes in this process: one Kafka Fetch over many
 * partitions is one POST /v1/fetch (one long poll, never a request per partition), with Kafka's
 * per-partition answers: records, high watermark, log start, the last stable offset and aborted
 * transactions under read_committed, and each partition's own error (unknown topic, offset out of
 * range, a topic the client may not read) while the others still answer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../lib/adapters/memory/object-store.js';
import type { Authorizer } from '../../../lib/auth/authorizer.js';
import { createSluice } from '../../../functions/app.js';
import type { Router } from '../../../lib/http/router.js';
import { Kafka, logLevel } from 'kafkajs';
import type { ApiHandler } from '../../../gateway/api.js';
import { API_HANDLERS } from '../../../gateway/apis/index.js';
import { fetch as fetchApi } from '../../../gateway/apis/fetch.js';
import { KafkaGateway } from '../../../gateway/server.js';
import type { Message } from '../../../protocol/kafka/codec.js';
import { ERROR } from '../../../protocol/kafka/error-codes.js';
import { Fetch } from '../../../protocol/kafka/messages/fetch.js';
import { decodeRecordBatch, splitBatches } from '../../../protocol/record-batch/index.js';
import { SluiceClient } from '../../../sdk/client.js';
import type { FetchLike } from '../../../sdk/transport.js';
import { kafkaWire } from '../../support/kafka-wire-client.js';
import type { KafkaWire } from '../../support/kafka-wire-client.js';
import { routerFetch } from '../../support/router-fetch.js';
import { RealTimeClock, TestClock } from '../../support/log-support.js';

const open: { gateway: KafkaGateway; wire: KafkaWire }[] = [];
afterEach(async () => {
  for (const { gateway, wire } of open.splice(0)) {
    wire.close();
    await gateway.close();
  }
});

/** A request the gateway sent to Sluice: its path, its JSON body, the answer's status. */
interface Sent {
  path: string;
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

const CALLER = {
  principalArn: 'arn:aws:iam::111122223333:user/alice',
  accountId: '1',
  apiId: 'a',
  stage: 's',
};

/** A Sluice (memory storage) behind a gateway; every HTTP request the gateway makes is recorded. */
const start = async ({
  clock = new TestClock(),
  authorizer,
  upstream,
  apis,
}: {
  clock?: TestClock;
  authorizer?: Authorizer;
  upstream?: (inner: FetchLike) => FetchLike;
  apis?: readonly ApiHandler[];
} = {}) => {
  const sluice = createSluice({
    store: new MemoryMetadataStore(),
    objectStores: [new MemoryObjectStore('s0', undefined, clock)],
    clock,
    config: { clusterId: 'test', topicCacheTtlMs: 60_000 },
    ...(authorizer ? { authorizer } : {}),
  });
  const router = sluice.router();
  // As API Gateway's IAM authorizer does, every request arrives with its signer.
  const signed = { handle: (request) => router.handle({ ...request, caller: CALLER }) } as Router;
  const exchanges: Sent[] = [];
  const inner = routerFetch(signed);
  const fetch: FetchLike = async (url, init) => {
    const response = await inner(url, init);
    const body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
    exchanges.push({ path: new URL(url).pathname, status: response.status, body });
    return response;
  };
  const gateway = new KafkaGateway({
    sluice: { url: 'http://sluice.test', fetch: upstream ? upstream(fetch) : fetch },
    port: 0,
    host: '127.0.0.1',
    ...(apis ? { apis } : {}),
  });
  await gateway.listen();
  const wire = await kafkaWire(gateway.bootstrap);
  open.push({ gateway, wire });
  const client = new SluiceClient({ url: 'http://sluice.test', fetch });
  const admin = client.admin();
  const produce = async (topic: string, partition: number, ...values: string[]) => {
    const producer = client.producer();
    await producer.sendBatch(
      topic,
      partition,
      values.map((value) => ({ value })),
    );
  };
  const upstreamFetches = () => exchanges.filter((e) => e.path === '/v1/fetch');
  const upstreamReads = () => exchanges.filter((e) => e.path.endsWith('/records'));
  return { wire, admin, client, produce, exchanges, upstreamFetches, upstreamReads, gateway };
};

interface Wanted {
  topic: string;
  partitions: [partition: number, fetchOffset: number][];
}

const fetchRequest = (
  topics: Wanted[],
  over: Partial<{ maxWaitMs: number; minBytes: number; maxBytes: number; isolationLevel: number }> = {},
) => ({
  replicaId: -1,
  maxWaitMs: 0,
  minBytes: 1,
  maxBytes: 52_428_800,
  isolationLevel: 0,
  sessionId: 0,
  sessionEpoch: -1,
  topics: topics.map((t) => ({
    topic: t.topic,
    partitions: t.partitions.map(([partition, fetchOffset]) => ({
      partition,
      currentLeaderEpoch: -1,
      fetchOffset,
      logStartOffset: -1,
      partitionMaxBytes: 1_048_576,
    })),
  })),
  forgottenTopicsData: [],
  rackId: '',
  ...over,
});

interface PartitionAnswer {
  partitionIndex: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  abortedTransactions: { producerId: number; firstOffset: number }[] | null;
  records: Uint8Array | null;
}

/** The answer as `topic-partition` → its numbers and the values of its records. */
const answerOf = (body: Message) => {
  const out: Record<string, PartitionAnswer & { values: string[] }> = {};
  for (const t of body['responses'] as { topic: string; partitions: PartitionAnswer[] }[]) {
    for (const p of t.partitions) {
      const bytes = p.records ?? new Uint8Array(0);
      const values = splitBatches(bytes).flatMap(({ start, end }) => {
        const batch = decodeRecordBatch(bytes.subarray(start, end));
        return batch.header.isControl
          ? []
          : batch.records.map((r) => new TextDecoder().decode(r.value ?? new Uint8Array()));
      });
      out[`${t.topic}-${p.partitionIndex}`] = { ...p, values };
    }
  }
  return out;
};

describe('Kafka Fetch through the gateway', () => {
  it('serves a Fetch over four partitions, with errors of their own beside them, in one upstream request', async () => {
    const { wire, admin, produce, upstreamFetches, upstreamReads } = await start();
    await admin.createTopic({ name: 'orders', partitions: 4 });
    for (let p = 0; p < 4; p++) await produce('orders', p, `a${p}`, `b${p}`);
    const body = await wire.send(
      Fetch,
      12,
      fetchRequest(
        [
          {
            topic: 'orders',
            partitions: [
              [0, 0],
              [1, 1],
              [2, 2],
              [3, 0],
            ],
          },
          { topic: 'missing', partitions: [[0, 0]] },
        ],
        { maxWaitMs: 500 },
      ),
    );
    const answer = answerOf(body);
    expect(upstreamFetches()).toHaveLength(1);
    expect(upstreamReads()).toHaveLength(0);
    expect(body['sessionId']).toBe(0);
    expect(answer['orders-0']).toMatchObject({ errorCode: 0, highWatermark: 2, logStartOffset: 0 });
    expect(answer['orders-0']!.values).toEqual(['a0', 'b0']);
    // The client skips records before its fetch offset inside a whole batch, as with a broker.
    expect(answer['orders-1']!.values).toEqual(['a1', 'b1']);
    expect(answer['orders-2']).toMatchObject({ errorCode: 0, highWatermark: 2, values: [] });
    expect(answer['orders-3']!.values).toEqual(['a3', 'b3']);
    // read_uncommitted: no aborted transactions list, the LSO is the high watermark.
    expect(answer['orders-3']).toMatchObject({ abortedTransactions: null, lastStableOffset: 2 });
    expect(answer['missing-0']).toMatchObject({
      errorCode: ERROR.UNKNOWN_TOPIC_OR_PARTITION,
      records: null,
      highWatermark: -1,
    });
    const upstream = upstreamFetches()[0]!;
    expect(upstream.status).toBe(200);
    expect(upstream.body).toEqual({
      maxBytes: 4_194_304,
      maxWaitMs: 500,
      partitions: [
        { topic: 'orders', partition: 0, offset: 0, maxBytes: 1_048_576 },
        { topic: 'orders', partition: 1, offset: 1, maxBytes: 1_048_576 },
        { topic: 'orders', partition: 2, offset: 2, maxBytes: 1_048_576 },
        { topic: 'orders', partition: 3, offset: 0, maxBytes: 1_048_576 },
        { topic: 'missing', partition: 0, offset: 0, maxBytes: 1_048_576 },
      ],
    });
  });

  it('answers an offset outside the log OFFSET_OUT_OF_RANGE with the bounds, the other partitions their records', async () => {
    const { wire, admin, produce, upstreamFetches } = await start();
    await admin.createTopic({ name: 'orders', partitions: 2 });
    await produce('orders', 0, 'x');
    await produce('orders', 1, 'y');
    const answer = answerOf(
      await wire.send(
        Fetch,
        11,
        fetchRequest([
          {
            topic: 'orders',
            partitions: [
              [0, 9],
              [1, 0],
            ],
          },
        ]),
      ),
    );
    expect(answer['orders-0']).toMatchObject({
      errorCode: ERROR.OFFSET_OUT_OF_RANGE,
      highWatermark: 1,
      logStartOffset: 0,
      records: null,
    });
    expect(answer['orders-1']).toMatchObject({ errorCode: 0, values: ['y'] });
    expect(upstreamFetches()).toHaveLength(1);
  });

  it('a caught-up consumer waits in one long poll that the first record on any partition ends', async () => {
    const { wire, admin, produce, upstreamFetches } = await start({ clock: new RealTimeClock() });
    await admin.createTopic({ name: 'orders', partitions: 4 });
    const started = Date.now();
    const fetching = wire.send(
      Fetch,
      12,
      fetchRequest(
        [
          {
            topic: 'orders',
            partitions: [
              [0, 0],
              [1, 0],
              [2, 0],
              [3, 0],
            ],
          },
        ],
        { maxWaitMs: 5_000 },
      ),
    );
    await new Promise((r) => setTimeout(r, 300));
    await produce('orders', 3, 'late');
    const answer = answerOf(await fetching);
    const took = Date.now() - started;
    expect(answer['orders-3']!.values).toEqual(['late']);
    expect(answer['orders-0']).toMatchObject({ errorCode: 0, values: [], highWatermark: 0 });
    expect(took).toBeLessThan(4_000);
    expect(upstreamFetches()).toHaveLength(1);
    expect(upstreamFetches()[0]!.body).toMatchObject({ maxWaitMs: 5_000 });
  });

  it('asks again for what time is left while fewer than min_bytes came', async () => {
    const { wire, admin, produce, upstreamFetches } = await start({ clock: new RealTimeClock() });
    await admin.createTopic({ name: 'orders', partitions: 2 });
    const fetching = wire.send(
      Fetch,
      12,
      fetchRequest(
        [
          {
            topic: 'orders',
            partitions: [
              [0, 0],
              [1, 0],
            ],
          },
        ],
        {
          maxWaitMs: 1_500,
          minBytes: 10_000,
        },
      ),
    );
    await new Promise((r) => setTimeout(r, 200));
    await produce('orders', 0, 'first');
    await new Promise((r) => setTimeout(r, 400));
    await produce('orders', 1, 'second');
    const answer = answerOf(await fetching);
    expect(answer['orders-0']!.values).toEqual(['first']);
    expect(answer['orders-1']!.values).toEqual(['second']);
    const asked = upstreamFetches().map((e) => (e.body as { partitions: { offset: number }[] }).partitions);
    expect(asked.length).toBeGreaterThanOrEqual(2);
    // The later rounds start where the first answer ended.
    expect(asked[1]!.map((p) => p.offset)).toEqual([1, 0]);
  });

  it('answers min_bytes 0 at once, without waiting', async () => {
    const { wire, admin, upstreamFetches } = await start();
    await admin.createTopic({ name: 'orders', partitions: 1 });
    await wire.send(
      Fetch,
      12,
      fetchRequest([{ topic: 'orders', partitions: [[0, 0]] }], { maxWaitMs: 5_000, minBytes: 0 }),
    );
    expect(upstreamFetches().map((e) => (e.body as { maxWaitMs: number }).maxWaitMs)).toEqual([0]);
  });

  it('keeps max_bytes over the answer but always returns the first batch (KIP-74)', async () => {
    const { wire, admin, produce } = await start();
    await admin.createTopic({ name: 'orders', partitions: 2 });
    await produce('orders', 0, 'x'.repeat(500));
    await produce('orders', 1, 'y'.repeat(500));
    const answer = answerOf(
      await wire.send(
        Fetch,
        12,
        fetchRequest(
          [
            {
              topic: 'orders',
              partitions: [
                [0, 0],
                [1, 0],
              ],
            },
          ],
          { maxBytes: 100 },
        ),
      ),
    );
    expect(answer['orders-0']!.values).toEqual(['x'.repeat(500)]);
    expect(answer['orders-1']).toMatchObject({ errorCode: 0, values: [], highWatermark: 1 });
  });

  it('under read_committed answers the last stable offset and the aborted transactions', async () => {
    const { wire, admin, client, produce, upstreamFetches } = await start();
    await admin.createTopic({ name: 'orders', partitions: 2 });
    const aborted = client.producer({ transactionalId: 'tx-a' });
    await aborted.initTransactions();
    aborted.beginTransaction();
    await aborted.sendBatch('orders', 0, [{ value: 'gone' }]);
    await aborted.abortTransaction();
    await produce('orders', 0, 'kept');
    const open = client.producer({ transactionalId: 'tx-b' });
    await open.initTransactions();
    open.beginTransaction();
    await produce('orders', 1, 'before');
    await open.sendBatch('orders', 1, [{ value: 'pending' }]);
    const request = fetchRequest(
      [
        {
          topic: 'orders',
          partitions: [
            [0, 0],
            [1, 0],
          ],
        },
      ],
      { isolationLevel: 1 },
    );
    const answer = answerOf(await wire.send(Fetch, 12, request));
    expect(upstreamFetches()[0]!.body).toMatchObject({ isolationLevel: 'read_committed' });
    // Partition 0: the aborted batch, its ABORT marker and a committed record; the client drops the
    // aborted producer's records up to the marker.
    expect(answer['orders-0']).toMatchObject({ errorCode: 0, highWatermark: 3, lastStableOffset: 3 });
    expect(answer['orders-0']!.abortedTransactions).toEqual([
      { producerId: expect.any(Number), firstOffset: 0 },
    ]);
    expect(answer['orders-0']!.values).toEqual(['gone', 'kept']);
    // Partition 1: the open transaction holds the LSO at its first offset; nothing past it comes back.
    expect(answer['orders-1']).toMatchObject({ highWatermark: 2, lastStableOffset: 1, values: ['before'] });
    expect(answer['orders-1']!.abortedTransactions).toEqual([]);
    const uncommitted = answerOf(await wire.send(Fetch, 12, { ...request, isolationLevel: 0 }));
    expect(uncommitted['orders-1']).toMatchObject({
      values: ['before', 'pending'],
      abortedTransactions: null,
    });
  });

  it('answers TOPIC_AUTHORIZATION_FAILED on the refused topic’s partitions only', async () => {
    const authorizer: Authorizer = {
      allowed: async (_, checks) => checks.map((c) => c.resource !== 'secret'),
    };
    const { wire, admin, produce, upstreamFetches } = await start({ authorizer });
    await admin.createTopic({ name: 'orders', partitions: 2 });
    await admin.createTopic({ name: 'secret', partitions: 1 });
    await produce('orders', 1, 'mine');
    const answer = answerOf(
      await wire.send(
        Fetch,
        12,
        fetchRequest(
          [
            {
              topic: 'orders',
              partitions: [
                [0, 0],
                [1, 0],
              ],
            },
            { topic: 'secret', partitions: [[0, 0]] },
          ],
          { maxWaitMs: 5_000 },
        ),
      ),
    );
    expect(answer['secret-0']).toMatchObject({ errorCode: ERROR.TOPIC_AUTHORIZATION_FAILED, records: null });
    expect(answer['orders-1']).toMatchObject({ errorCode: 0, values: ['mine'] });
    expect(answer['orders-0']).toMatchObject({ errorCode: 0, values: [] });
    // The whole request refused, then each topic asked once without a wait (an error answers at once).
    const [whole, ...byTopic] = upstreamFetches();
    expect([whole!.status, whole!.body.maxWaitMs]).toEqual([403, 5_000]);
    const topicOf = (e: Sent) => e.body.partitions.map((p: { topic: string }) => p.topic).join();
    expect(byTopic.map((e) => [topicOf(e), e.status, e.body.maxWaitMs]).sort()).toEqual([
      ['orders,orders', 200, 0],
      ['secret', 403, 0],
    ]);
  });

  it('answers hostile partitions itself and asks Sluice only about the rest, once each', async () => {
    const { wire, admin, produce, upstreamFetches } = await start();
    await admin.createTopic({ name: 'orders', partitions: 1 });
    await produce('orders', 0, 'x');
    const answer = answerOf(
      await wire.send(
        Fetch,
        12,
        fetchRequest([
          {
            topic: 'orders',
            partitions: [
              [0, -5],
              [-1, 0],
              [0, 0],
              [0, 0],
            ],
          },
          { topic: '../etc', partitions: [[0, 0]] },
        ]),
      ),
    );
    const body = upstreamFetches()[0]!.body as { partitions: unknown[] };
    expect(upstreamFetches()).toHaveLength(1);
    expect(body.partitions).toEqual([{ topic: 'orders', partition: 0, offset: 0, maxBytes: 1_048_576 }]);
    expect(answer['../etc-0']!.errorCode).toBe(ERROR.UNKNOWN_TOPIC_OR_PARTITION);
    expect(answer['orders--1']!.errorCode).toBe(ERROR.UNKNOWN_TOPIC_OR_PARTITION);
    // The same partition named three times: offset -5 out of range, the first 0 read, the repeat empty.
    const raw = (
      (
        await wire.send(
          Fetch,
          12,
          fetchRequest([
            {
              topic: 'orders',
              partitions: [
                [0, -5],
                [0, 0],
                [0, 0],
              ],
            },
          ]),
        )
      )['responses'] as { partitions: PartitionAnswer[] }[]
    )[0]!.partitions;
    expect(raw.map((p) => p.errorCode)).toEqual([ERROR.OFFSET_OUT_OF_RANGE, 0, 0]);
    expect(raw.map((p) => p.records?.length ?? null)).toEqual([null, expect.any(Number), 0]);
    expect(raw[1]!.records!.length).toBeGreaterThan(0);
  });

  it('splits a Fetch over more partitions than one API request takes, and ends every wait with the first data', async () => {
    const { wire, admin, produce, upstreamFetches } = await start();
    await admin.createTopic({ name: 'wide', partitions: 1_200 });
    await produce('wide', 1_100, 'far');
    const partitions = Array.from({ length: 1_200 }, (_, p): [number, number] => [p, 0]);
    const answer = answerOf(
      await wire.send(Fetch, 12, fetchRequest([{ topic: 'wide', partitions }], { maxWaitMs: 1_000 })),
    );
    expect(answer['wide-1100']!.values).toEqual(['far']);
    expect(answer['wide-5']).toMatchObject({ errorCode: 0, values: [] });
    const sizes = upstreamFetches().map((e) => (e.body as { partitions: unknown[] }).partitions.length);
    expect(sizes.slice(0, 2).sort()).toEqual([1_000, 200]);
  });

  it('answers each partition UNKNOWN_SERVER_ERROR when Sluice’s answer does not cover the request', async () => {
    const lying =
      (inner: FetchLike): FetchLike =>
      async (url, init) => {
        const response = await inner(url, init);
        if (!url.endsWith('/v1/fetch')) return response;
        const body = (await response.json()) as { partitions: unknown[] };
        return new Response(JSON.stringify({ partitions: body.partitions.slice(1) }), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
      };
    const { wire, admin } = await start({ upstream: lying });
    await admin.createTopic({ name: 'orders', partitions: 2 });
    const answer = answerOf(
      await wire.send(
        Fetch,
        12,
        fetchRequest([
          {
            topic: 'orders',
            partitions: [
              [0, 0],
              [1, 0],
            ],
          },
        ]),
      ),
    );
    expect([answer['orders-0']!.errorCode, answer['orders-1']!.errorCode]).toEqual([
      ERROR.UNKNOWN_SERVER_ERROR,
      ERROR.UNKNOWN_SERVER_ERROR,
    ]);
  });

  it('a kafkajs group consumer over four partitions: every Kafka Fetch it sends is one upstream request', async () => {
    // The gateway's own Fetch handler, noting how many upstream fetches each Kafka Fetch made
    // (kafkajs has one Fetch in flight per broker, so they do not overlap).
    const perKafkaFetch: number[] = [];
    let upstreamSoFar = (): number => 0;
    const counted: ApiHandler = {
      ...fetchApi,
      handle: async (request, ctx) => {
        const before = upstreamSoFar();
        const answer = await fetchApi.handle(request, ctx);
        if (!ctx.connection.closed.aborted) perKafkaFetch.push(upstreamSoFar() - before);
        return answer;
      },
    };
    const { admin, produce, upstreamFetches, upstreamReads, gateway } = await start({
      clock: new RealTimeClock(),
      apis: API_HANDLERS.map((h) => (h === fetchApi ? counted : h)),
    });
    upstreamSoFar = () => upstreamFetches().length;
    await admin.createTopic({ name: 'orders', partitions: 4 });
    for (let p = 0; p < 4; p++) await produce('orders', p, `a${p}`, `b${p}`);
    const kafka = new Kafka({
      brokers: [gateway.bootstrap],
      clientId: 'counted',
      logLevel: logLevel.NOTHING,
    });
    const consumer = kafka.consumer({ groupId: 'counting', maxWaitTimeInMs: 200 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    const seen: string[] = [];
    const all = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === 8) resolve();
        },
      });
    });
    await all;
    // A few more polls of the caught-up consumer, waiting.
    await new Promise((r) => setTimeout(r, 600));
    await consumer.disconnect();
    expect(seen.sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'b0', 'b1', 'b2', 'b3']);
    expect(perKafkaFetch.length).toBeGreaterThanOrEqual(2);
    expect(perKafkaFetch.every((n) => n === 1)).toBe(true);
    for (const e of upstreamFetches()) expect(e.body.partitions).toHaveLength(4);
    expect(upstreamReads()).toHaveLength(0);
  }, 30_000);
});
