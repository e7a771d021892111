import { describe, expect, it } from 'vitest';
import { decodeRecordBatch, splitBatches } from '../../../protocol/record-batch/index.js';
import { SluiceClient } from '../../../sdk/client.js';
import type { FetchLike } from '../../../sdk/transport.js';

interface Seen {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** A fake Sluice: records each request and answers with the handler's [status, body]. */
const fakeServer = (handler: (req: Seen, n: number) => [number, unknown] | Promise<[number, unknown]>) => {
  const seen: Seen[] = [];
  const fetch: FetchLike = async (input, init) => {
    const body =
      init.body === undefined
        ? new Uint8Array(0)
        : typeof init.body === 'string'
          ? new TextEncoder().encode(init.body)
          : (init.body as Uint8Array);
    const req = {
      method: init.method ?? 'GET',
      url: new URL(input),
      headers: { ...(init.headers as Record<string, string>) },
      body,
    };
    seen.push(req);
    const [status, out] = await handler(req, seen.length);
    return new Response(out === undefined ? null : JSON.stringify(out), { status });
  };
  const client = new SluiceClient({
    url: 'http://sluice.test',
    fetch,
    retry: { retries: 3, sleep: async () => {} },
  });
  return { client, seen };
};

const error = (code: string, retriable: boolean) => ({
  error: { code, message: code.toLowerCase(), retriable },
});
const jsonOf = (req: Seen) => JSON.parse(new TextDecoder().decode(req.body)) as Record<string, unknown>;

describe('Producer.send (JSON)', () => {
  it('sends utf8 records and returns the results in order', async () => {
    const { client, seen } = fakeServer(() => [
      200,
      {
        results: [
          { partition: 0, offset: 7, timestamp: 1 },
          { partition: 1, offset: 3, timestamp: 2 },
        ],
      },
    ]);
    const results = await client.producer().send({
      topic: 'orders/eu',
      messages: [
        { key: 'k1', value: 'v1', headers: { trace: 'abc' } },
        { value: 'v2', partition: 1, timestamp: 1_700_000_000_000 },
      ],
    });
    expect(results.map((r) => ('offset' in r ? r.offset : -1))).toEqual([7, 3]);
    expect(seen[0]!.url.pathname).toBe('/v1/topics/orders%2Feu/records');
    expect(jsonOf(seen[0]!)).toEqual({
      encoding: 'utf8',
      acks: 'all',
      records: [
        { key: 'k1', value: 'v1', headers: [{ key: 'trace', value: 'abc' }] },
        { key: null, value: 'v2', headers: [], partition: 1, timestamp: 1_700_000_000_000 },
      ],
    });
  });

  it('switches the whole request to base64 when any field is bytes', async () => {
    const { client, seen } = fakeServer(() => [
      200,
      {
        results: [
          { partition: 0, offset: 0, timestamp: 1 },
          { partition: 0, offset: 1, timestamp: 1 },
        ],
      },
    ]);
    await client
      .producer({ acks: '1' })
      .send({ topic: 't', messages: [{ key: 'ü', value: new Uint8Array([0, 255]) }, { value: null }] });
    const body = jsonOf(seen[0]!);
    expect(body['encoding']).toBe('base64');
    expect(body['acks']).toBe('1');
    expect(body['records']).toEqual([
      { key: Buffer.from('ü').toString('base64'), value: 'AP8=', headers: [] },
      { key: null, value: null, headers: [] },
    ]);
  });

  it('retries with the same Idempotency-Key until it succeeds', async () => {
    const { client, seen } = fakeServer((_req, n) =>
      n < 3
        ? [503, error('NOT_ENOUGH_REPLICAS', true)]
        : [200, { results: [{ partition: 0, offset: 1, timestamp: 1 }] }],
    );
    await client.producer().send({ topic: 't', messages: [{ value: 'x' }] });
    expect(seen).toHaveLength(3);
    const keys = seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
  });

  it('uses a new Idempotency-Key for each send', async () => {
    const { client, seen } = fakeServer(() => [
      200,
      { results: [{ partition: 0, offset: 1, timestamp: 1 }] },
    ]);
    const producer = client.producer();
    await producer.send({ topic: 't', messages: [{ value: 'a' }] });
    await producer.send({ topic: 't', messages: [{ value: 'a' }] });
    expect(seen[0]!.headers['idempotency-key']).not.toBe(seen[1]!.headers['idempotency-key']);
  });

  it('retries a request whose partition failed retriably, and throws a definite per-record failure', async () => {
    const partial = {
      results: [
        { partition: 0, offset: 5, timestamp: 1 },
        { partition: 1, error: error('NOT_ENOUGH_REPLICAS', true).error },
      ],
    };
    const { client, seen } = fakeServer((_r, n) =>
      n === 1
        ? [200, partial]
        : [
            200,
            {
              results: [
                { partition: 0, offset: 5, timestamp: 1 },
                { partition: 1, offset: 9, timestamp: 1 },
              ],
            },
          ],
    );
    const results = await client.producer().send({
      topic: 't',
      messages: [
        { value: 'a', partition: 0 },
        { value: 'b', partition: 1 },
      ],
    });
    expect(seen).toHaveLength(2);
    expect(results[1]).toEqual({ partition: 1, offset: 9, timestamp: 1 });

    const definite = { results: [{ partition: 0, error: error('MESSAGE_TOO_LARGE', false).error }] };
    const other = fakeServer(() => [200, definite]);
    await expect(
      other.client.producer().send({ topic: 't', messages: [{ value: 'a' }] }),
    ).rejects.toMatchObject({
      code: 'MESSAGE_TOO_LARGE',
      details: { results: definite.results },
    });
    expect(other.seen).toHaveLength(1);
  });

  it('without idempotence sends no key and does not retry a partial failure', async () => {
    const partial = {
      results: [
        { partition: 0, offset: 5, timestamp: 1 },
        { partition: 1, error: error('NOT_ENOUGH_REPLICAS', true).error },
      ],
    };
    const { client, seen } = fakeServer(() => [200, partial]);
    await expect(
      client.producer({ idempotent: false }).send({ topic: 't', messages: [{ value: 'a' }, { value: 'b' }] }),
    ).rejects.toMatchObject({
      code: 'NOT_ENOUGH_REPLICAS',
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers['idempotency-key']).toBeUndefined();
  });
});

/** A fake binary produce endpoint: InitProducerId hands out ids 100, 101, …; batches are decoded. */
const batchServer = (fail: (n: number) => [number, unknown] | undefined = () => undefined) => {
  let nextId = 100;
  let nextOffset = 0;
  const batches: {
    producerId: number;
    baseSequence: number;
    values: string[];
    raw: Uint8Array;
    partition: string;
  }[] = [];
  let n = 0;
  const server = fakeServer((req) => {
    if (req.url.pathname === '/v1/producers') return [200, { producerId: nextId++, producerEpoch: 0 }];
    n++;
    const injected = fail(n);
    for (const part of splitBatches(req.body)) {
      const bytes = req.body.subarray(part.start, part.end);
      const decoded = decodeRecordBatch(bytes);
      batches.push({
        producerId: part.header.producerId,
        baseSequence: part.header.baseSequence,
        values: decoded.records.map((r) => new TextDecoder().decode(r.value!)),
        raw: bytes,
        partition: req.url.pathname.split('/')[5]!,
      });
    }
    if (injected) return injected;
    const count = splitBatches(req.body).reduce((s, p) => s + p.header.recordCount, 0);
    const baseOffset = nextOffset;
    nextOffset += count;
    return [200, { baseOffset, lastOffset: baseOffset + count - 1, logAppendTime: -1, logStartOffset: 0 }];
  });
  return { ...server, batches };
};

const messages = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({ value: `${prefix}${i}` }));

describe('Producer.sendBatch (binary, idempotent)', () => {
  it('gets a producer id once and advances the sequence per partition by the records sent', async () => {
    const { client, seen, batches } = batchServer();
    const producer = client.producer();
    const first = await producer.sendBatch('t', 0, messages('a', 3));
    await producer.sendBatch('t', 0, messages('b', 2));
    await producer.sendBatch('t', 1, messages('c', 1));
    expect(first).toEqual({ baseOffset: 0, lastOffset: 2, logAppendTime: -1, logStartOffset: 0 });
    expect(seen.filter((s) => s.url.pathname === '/v1/producers')).toHaveLength(1);
    expect(batches.map((b) => [b.partition, b.producerId, b.baseSequence, b.values.length])).toEqual([
      ['0', 100, 0, 3],
      ['0', 100, 3, 2],
      ['1', 100, 0, 1],
    ]);
    const post = seen.find((s) => s.url.pathname.endsWith('/batches'))!;
    expect(post.headers['content-type']).toBe('application/vnd.kafka.record-batch');
    expect(post.url.searchParams.has('acks')).toBe(false);
  });

  it('retries a retriable failure with byte-identical batches (same sequence)', async () => {
    const { client, batches } = batchServer((n) =>
      n === 1 ? [504, error('REQUEST_TIMED_OUT', true)] : undefined,
    );
    const producer = client.producer({ acks: '1' });
    await producer.sendBatch('t', 0, messages('x', 4));
    expect(batches).toHaveLength(2);
    expect(Buffer.compare(batches[0]!.raw, batches[1]!.raw)).toBe(0);
    await producer.sendBatch('t', 0, messages('y', 1));
    expect(batches[2]!.baseSequence).toBe(4);
  });

  it('with maxInFlightRequests 1 sends one partition’s concurrent calls one at a time, in call order', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const order: string[] = [];
    const { client } = fakeServer(async (req) => {
      if (req.url.pathname === '/v1/producers') return [200, { producerId: 1, producerEpoch: 0 }];
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 5 * Math.random()));
      const part = splitBatches(req.body)[0]!;
      order.push(`${part.header.baseSequence}`);
      inFlight--;
      return [
        200,
        { baseOffset: part.header.baseSequence, lastOffset: 0, logAppendTime: -1, logStartOffset: 0 },
      ];
    });
    const producer = client.producer({ maxInFlightRequests: 1 });
    const results = await Promise.all(
      Array.from({ length: 8 }, () => producer.sendBatch('t', 0, messages('m', 2))),
    );
    expect(maxInFlight).toBe(1);
    expect(order).toEqual(['0', '2', '4', '6', '8', '10', '12', '14']);
    expect(results.map((r) => r.baseOffset)).toEqual([0, 2, 4, 6, 8, 10, 12, 14]);
  });

  /**
   * A partition that commits as Sluice does: only the next sequence of the producer (a retried one
   * answers its original offset), OUT_OF_ORDER_SEQUENCE_NUMBER for any other; each request waits a
   * seeded random while before it reaches the commit, so pipelined requests arrive out of order.
   */
  const sequencedServer = (
    seed: number,
    refuse: (n: number) => [number, unknown] | undefined = () => undefined,
  ) => {
    let state = seed;
    const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let inFlight = 0;
    let maxInFlight = 0;
    let requests = 0;
    let nextId = 100;
    const log: { producerId: number; values: string[] }[] = [];
    const last = new Map<number, number>();
    const committed = new Map<string, number>();
    const { client } = fakeServer(async (req) => {
      if (req.url.pathname === '/v1/producers') return [200, { producerId: nextId++, producerEpoch: 0 }];
      const n = ++requests;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 8 * random()));
      inFlight--;
      const refused = refuse(n);
      if (refused) return refused;
      const part = splitBatches(req.body)[0]!;
      const { producerId, baseSequence, recordCount } = part.header;
      const original = committed.get(`${producerId}/${baseSequence}`);
      if (original !== undefined)
        return [200, { baseOffset: original, lastOffset: 0, logAppendTime: -1, logStartOffset: 0 }];
      if (baseSequence !== (last.get(producerId) ?? -1) + 1)
        return [409, error('OUT_OF_ORDER_SEQUENCE_NUMBER', false)];
      last.set(producerId, baseSequence + recordCount - 1);
      const baseOffset = log.reduce((sum, b) => sum + b.values.length, 0);
      committed.set(`${producerId}/${baseSequence}`, baseOffset);
      const decoded = decodeRecordBatch(req.body.subarray(part.start, part.end));
      log.push({ producerId, values: decoded.records.map((r) => new TextDecoder().decode(r.value!)) });
      return [
        200,
        { baseOffset, lastOffset: baseOffset + recordCount - 1, logAppendTime: -1, logStartOffset: 0 },
      ];
    });
    return {
      client,
      log,
      get maxInFlight() {
        return maxInFlight;
      },
    };
  };

  it.each([1, 2, 3])(
    'keeps up to 5 requests in flight by default and still lands every call in call order (seed %i)',
    async (seed) => {
      const server = sequencedServer(seed);
      const producer = server.client.producer();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => producer.sendBatch('t', 0, messages(`c${i}-`, 2))),
      );
      expect(server.maxInFlight).toBe(5);
      expect(results.map((r) => r.baseOffset)).toEqual(Array.from({ length: 20 }, (_, i) => 2 * i));
      expect(server.log.flatMap((b) => b.values)).toEqual(
        Array.from({ length: 20 }, (_, i) => [`c${i}-0`, `c${i}-1`]).flat(),
      );
      expect(new Set(server.log.map((b) => b.producerId))).toEqual(new Set([100]));
    },
  );

  it('fails the calls in flight behind a failed one, never lands them out of order, and goes on under a new producer id', async () => {
    // The 3rd request to reach the server is refused for good (a record too large, say).
    const server = sequencedServer(7, (n) =>
      n === 3 ? [413, error('MESSAGE_TOO_LARGE', false)] : undefined,
    );
    const producer = server.client.producer();
    const settled = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => producer.sendBatch('t', 0, messages(`c${i}-`, 1))),
    );
    const ok = settled.map((r) => r.status === 'fulfilled');
    // Whatever landed is a prefix of the calls: nothing after a failed call landed before it.
    const landed = server.log.flatMap((b) => b.values);
    const firstFailed = ok.indexOf(false);
    expect(firstFailed).toBeGreaterThanOrEqual(0);
    expect(ok.slice(firstFailed).every((x) => !x)).toBe(true);
    expect(landed).toEqual(Array.from({ length: firstFailed }, (_, i) => `c${i}-0`));
    const after = await producer.sendBatch('t', 0, messages('later-', 1));
    expect(after.baseOffset).toBe(firstFailed);
    expect(server.log.at(-1)).toEqual({ producerId: 101, values: ['later-0'] });
  });

  it('refuses more than 5 requests in flight with idempotence, and fewer than 1', () => {
    const { client } = fakeServer(() => [200, {}]);
    expect(() => client.producer({ maxInFlightRequests: 6 })).toThrow(/maxInFlightRequests/);
    expect(() => client.producer({ maxInFlightRequests: 0 })).toThrow(/maxInFlightRequests/);
    expect(() => client.producer({ idempotent: false, maxInFlightRequests: 8 })).not.toThrow();
  });

  it('starts a new producer id after a send whose outcome is unknown', async () => {
    const { client, batches } = batchServer((n) =>
      n <= 4 ? [503, error('KAFKA_STORAGE_ERROR', true)] : undefined,
    );
    const producer = client.producer();
    await expect(producer.sendBatch('t', 0, messages('a', 2))).rejects.toMatchObject({
      code: 'KAFKA_STORAGE_ERROR',
    });
    await producer.sendBatch('t', 0, messages('b', 2));
    expect(batches.slice(0, 4).every((b) => b.producerId === 100 && b.baseSequence === 0)).toBe(true);
    expect(batches[4]).toMatchObject({ producerId: 101, baseSequence: 0 });
  });

  it('keeps the sequence after a definite rejection, which wrote nothing', async () => {
    const { client, batches } = batchServer((n) =>
      n === 1 ? [400, error('CORRUPT_MESSAGE', false)] : undefined,
    );
    const producer = client.producer();
    await expect(producer.sendBatch('t', 0, messages('a', 2))).rejects.toMatchObject({
      code: 'CORRUPT_MESSAGE',
      status: 400,
    });
    await producer.sendBatch('t', 0, messages('b', 1));
    expect(batches.map((b) => [b.producerId, b.baseSequence])).toEqual([
      [100, 0],
      [100, 0],
    ]);
  });

  it('splits a large send into several batches with contiguous sequences in one request', async () => {
    const { client, seen, batches } = batchServer();
    const big = Array.from({ length: 10 }, (_, i) => ({ value: `${i}`.padEnd(300, '.') }));
    await client.producer({ maxBatchBytes: 1_000 }).sendBatch('t', 0, big);
    expect(seen.filter((s) => s.url.pathname.endsWith('/batches'))).toHaveLength(1);
    expect(batches.length).toBeGreaterThan(3);
    let expected = 0;
    for (const b of batches) {
      expect(b.baseSequence).toBe(expected);
      expected += b.values.length;
    }
    expect(batches.flatMap((b) => b.values.map((v) => v.replace(/\.+$/, '')))).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
    ]);
  });

  it('without idempotence sends producer id -1 and never calls InitProducerId', async () => {
    const { client, seen, batches } = batchServer();
    await client.producer({ idempotent: false }).sendBatch('t', 2, messages('a', 1), { acks: '1' });
    expect(seen.some((s) => s.url.pathname === '/v1/producers')).toBe(false);
    expect(batches[0]).toMatchObject({ producerId: -1, baseSequence: -1, partition: '2' });
    expect(seen[0]!.url.searchParams.get('acks')).toBe('1');
  });
});
