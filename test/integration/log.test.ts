/** Produce, fetch and ListOffsets of API.md over real HTTP, with the log's invariants checked on what comes back. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRecordBatch, encodeRecordBatch, splitBatches } from '../../protocol/record-batch/index.js';
import { partitionForKey } from '../../protocol/partitioner.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;
const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };
const bytes = (s: string) => new Uint8Array(Buffer.from(s));

beforeAll(async () => {
  t = await startTestStack();
  for (const [name, partitions, configs] of [
    ['events', 4, {}],
    ['small', 1, { 'max.message.bytes': '300' }],
    ['stamped', 1, { 'message.timestamp.type': 'LogAppendTime' }],
    ['binary', 2, {}],
    ['polled', 1, {}],
    ['timed', 1, {}],
  ] as const) {
    expect((await t.call('POST', '/v1/topics', { name, partitions, configs })).status).toBe(201);
  }
});
afterAll(async () => {
  await t?.stack.stop();
});

const hw = async (topic: string, partition: number): Promise<number> =>
  (await t.call('GET', `/v1/topics/${topic}`)).json.partitions[partition].highWatermark;

describe('JSON produce and fetch', () => {
  it('places keyed records like the Java client and reads them back in order', async () => {
    const records = Array.from({ length: 20 }, (_, i) => ({
      key: `user-${i % 5}`,
      value: `v${i}`,
      headers: [{ key: 'n', value: String(i) }],
    }));
    const r = await t.call('POST', '/v1/topics/events/records', { records });
    expect(r.status).toBe(200);
    expect(r.json.results).toHaveLength(20);
    r.json.results.forEach((res: { partition: number }, i: number) =>
      expect(res.partition).toBe(partitionForKey(bytes(`user-${i % 5}`), 4)),
    );
    for (let p = 0; p < 4; p++) {
      const mine = r.json.results
        .map((x: { partition: number }, i: number) => ({ ...x, i }))
        .filter((x: { partition: number }) => x.partition === p);
      const fetched = await t.call('GET', `/v1/topics/events/partitions/${p}/records?offset=0`);
      expect(fetched.status).toBe(200);
      expect(fetched.json.highWatermark).toBe(mine.length);
      expect(fetched.json.nextOffset).toBe(mine.length);
      expect(fetched.json.records.map((x: { value: string }) => x.value)).toEqual(
        mine.map((x: { i: number }) => `v${x.i}`),
      );
      expect(fetched.json.records.map((x: { offset: number }) => x.offset)).toEqual(
        mine.map((_: unknown, k: number) => k),
      );
      expect(fetched.json.records[0]?.headers).toEqual(
        mine.length ? [{ key: 'n', value: String(mine[0].i) }] : undefined,
      );
    }
  });

  it('round-trips base64 and json encodings and null keys and values', async () => {
    const raw = new Uint8Array([0, 255, 1, 128, 10]);
    const b64 = Buffer.from(raw).toString('base64');
    const a = await t.call('POST', '/v1/topics/events/records', {
      encoding: 'base64',
      records: [
        { key: b64, value: b64, partition: 0, headers: [{ key: 'h', value: b64 }] },
        { key: null, value: null, partition: 0 },
      ],
    });
    expect(a.status).toBe(200);
    const j = await t.call('POST', '/v1/topics/events/records', {
      encoding: 'json',
      records: [{ key: 'k', value: { a: [1, 'x', null] }, partition: 0 }],
    });
    expect(j.status).toBe(200);
    const from = a.json.results[0].offset;
    const f = await t.call('GET', `/v1/topics/events/partitions/0/records?offset=${from}&encoding=base64`);
    expect(f.json.records[0]).toMatchObject({
      offset: from,
      key: b64,
      value: b64,
      headers: [{ key: 'h', value: b64 }],
    });
    expect(f.json.records[1]).toMatchObject({ key: null, value: null });
    const fj = await t.call('GET', `/v1/topics/events/partitions/0/records?offset=${from + 2}&encoding=json`);
    expect(fj.json.records[0].value).toEqual({ a: [1, 'x', null] });
  });

  it('starts inside a stored batch and honours maxBytes but returns at least one record', async () => {
    const r = await t.call('POST', '/v1/topics/events/records', {
      records: Array.from({ length: 10 }, (_, i) => ({ value: 'x'.repeat(100) + i, partition: 3 })),
    });
    const base = r.json.results[0].offset;
    const mid = await t.call('GET', `/v1/topics/events/partitions/3/records?offset=${base + 4}&maxBytes=250`);
    expect(mid.json.records.map((x: { offset: number }) => x.offset)).toEqual([base + 4, base + 5]);
    expect(mid.json.nextOffset).toBe(base + 6);
    const one = await t.call('GET', `/v1/topics/events/partitions/3/records?offset=${base}&maxBytes=1`);
    expect(one.json.records).toHaveLength(1);
    expect(one.json.nextOffset).toBe(base + 1);
  });

  it('answers offsets outside the log with 416 and the bounds', async () => {
    const high = await hw('events', 1);
    const r = await t.call('GET', `/v1/topics/events/partitions/1/records?offset=${high + 1}`);
    expect(r.status).toBe(416);
    expect(r.json.error.code).toBe('OFFSET_OUT_OF_RANGE');
    expect(r.json.highWatermark).toBe(high);
    expect(r.json.logStartOffset).toBe(0);
    const atEnd = await t.call('GET', `/v1/topics/events/partitions/1/records?offset=${high}`);
    expect(atEnd.status).toBe(200);
    expect(atEnd.json.records).toEqual([]);
    expect(atEnd.json.nextOffset).toBe(high);
  });

  it('long-polls until data arrives', async () => {
    const started = Date.now();
    const waiting = t.call('GET', '/v1/topics/polled/partitions/0/records?offset=0&maxWaitMs=10000');
    await new Promise((r) => setTimeout(r, 400));
    await t.call('POST', '/v1/topics/polled/records', { records: [{ value: 'late' }] });
    const r = await waiting;
    expect(r.json.records.map((x: { value: string }) => x.value)).toEqual(['late']);
    expect(Date.now() - started).toBeLessThan(5000);
    const empty = Date.now();
    const none = await t.call('GET', '/v1/topics/polled/partitions/0/records?offset=1&maxWaitMs=600');
    expect(none.json.records).toEqual([]);
    expect(Date.now() - empty).toBeGreaterThanOrEqual(550);
  });

  it('makes an Idempotency-Key request exactly-once', async () => {
    const body = { records: [{ key: 'a', value: '1' }, { key: 'b', value: '2' }, { value: 'keyless' }] };
    const first = await t.call('POST', '/v1/topics/events/records', body, { 'idempotency-key': 'order-77' });
    expect(first.status).toBe(200);
    const before = await Promise.all([0, 1, 2, 3].map((p) => hw('events', p)));
    const retry = await t.call('POST', '/v1/topics/events/records', body, { 'idempotency-key': 'order-77' });
    expect(retry.status).toBe(200);
    expect(
      retry.json.results.map((x: { partition: number; offset: number }) => [x.partition, x.offset]),
    ).toEqual(first.json.results.map((x: { partition: number; offset: number }) => [x.partition, x.offset]));
    expect(await Promise.all([0, 1, 2, 3].map((p) => hw('events', p)))).toEqual(before);
  });
});

describe('bad input changes nothing', () => {
  it.each([
    ['malformed JSON', '{"records": [', 400, 'INVALID_REQUEST'],
    ['no records', { records: [] }, 400, 'INVALID_REQUEST'],
    ['bad base64', { encoding: 'base64', records: [{ value: 'not base64!' }] }, 400, 'INVALID_REQUEST'],
    ['bad encoding', { encoding: 'hex', records: [{ value: 'a' }] }, 400, 'INVALID_REQUEST'],
    ['acks 0', { acks: '0', records: [{ value: 'a' }] }, 400, 'INVALID_REQUEST'],
    ['unknown field', { records: [{ value: 'a', colour: 'red' }] }, 400, 'INVALID_REQUEST'],
    ['bad timestamp', { records: [{ value: 'a', timestamp: 'now' }] }, 400, 'INVALID_REQUEST'],
    [
      'unknown partition',
      { records: [{ value: 'a' }, { value: 'b', partition: 9 }] },
      404,
      'UNKNOWN_TOPIC_OR_PARTITION',
    ],
    [
      'oversized record',
      { records: [{ value: 'ok' }, { value: 'x'.repeat(400) }] },
      413,
      'MESSAGE_TOO_LARGE',
    ],
  ])('%s', async (_, body, status, code) => {
    const topic = code === 'MESSAGE_TOO_LARGE' ? 'small' : 'events';
    const before = await Promise.all(
      [0, 1, 2, 3].slice(0, topic === 'small' ? 1 : 4).map((p) => hw(topic, p)),
    );
    const r = await t.call('POST', `/v1/topics/${topic}/records`, body);
    expect(r.status).toBe(status);
    expect(r.json.error.code).toBe(code);
    expect(await Promise.all(before.map((_, p) => hw(topic, p)))).toEqual(before);
  });

  it('rejects a body over the deployment limit with 413 before any write', async () => {
    const r = await t.call('POST', '/v1/topics/events/records', {
      records: [{ value: 'x'.repeat(4 * 1024 * 1024) }],
    });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('RECORD_LIST_TOO_LARGE');
  });

  it("refuses a body over API Gateway's 10 MiB payload limit at the gateway", async () => {
    const before = await hw('events', 0);
    const r = await t.call('POST', '/v1/topics/events/records', {
      records: [{ value: 'x'.repeat(11 * 1024 * 1024), partition: 0 }],
    });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('RECORD_LIST_TOO_LARGE');
    expect(r.json.error.message).toMatch(/API Gateway/);
    expect(await hw('events', 0)).toBe(before);
  });

  it('rejects an unknown topic with 404', async () => {
    const r = await t.call('POST', '/v1/topics/nope/records', { records: [{ value: 'a' }] });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('UNKNOWN_TOPIC_OR_PARTITION');
  });
});

describe('binary RecordBatch produce and fetch', () => {
  const batch = (values: string[], producer?: { id: number; epoch: number; seq: number }) =>
    encodeRecordBatch(
      values.map((v, i) => ({ key: null, value: bytes(v), timestamp: 1_700_000_000_000 + i })),
      producer ? { producerId: producer.id, producerEpoch: producer.epoch, baseSequence: producer.seq } : {},
    );

  it('assigns offsets and returns true base offsets on a raw fetch', async () => {
    const a = await t.call(
      'POST',
      '/v1/topics/binary/partitions/0/batches',
      batch(['a0', 'a1', 'a2']),
      BATCH,
    );
    expect(a.status).toBe(200);
    expect(a.json).toEqual({ baseOffset: 0, lastOffset: 2, logAppendTime: -1, logStartOffset: 0 });
    const two = Buffer.concat([batch(['b0']), batch(['c0', 'c1'])]);
    const b = await t.call('POST', '/v1/topics/binary/partitions/0/batches', new Uint8Array(two), BATCH);
    expect(b.json).toMatchObject({ baseOffset: 3, lastOffset: 5 });
    const raw = await t.call('GET', '/v1/topics/binary/partitions/0/records?offset=4', undefined, {
      accept: 'application/vnd.kafka.record-batch',
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('sluice-high-watermark')).toBe('6');
    expect(raw.headers.get('sluice-next-offset')).toBe('6');
    expect(raw.headers.get('sluice-log-start-offset')).toBe('0');
    const parts = splitBatches(raw.bytes);
    // Batch granularity: the stored batch holding offset 3 ends before 4, so it is not sent.
    expect(parts.map((p) => p.header.baseOffset)).toEqual([4]);
    const decoded = parts.flatMap((p) => decodeRecordBatch(raw.bytes.subarray(p.start, p.end)).records);
    expect(decoded.map((r) => [r.offset, Buffer.from(r.value!).toString()])).toEqual([
      [4, 'c0'],
      [5, 'c1'],
    ]);
  });

  it('is idempotent with producer ids: duplicates return the original offsets, gaps and stale epochs are refused', async () => {
    const p = await t.call('POST', '/v1/producers');
    expect(p.status).toBe(200);
    const { producerId, producerEpoch } = p.json;
    expect(producerEpoch).toBe(0);
    const first = batch(['x0', 'x1'], { id: producerId, epoch: 0, seq: 0 });
    const r1 = await t.call('POST', '/v1/topics/binary/partitions/1/batches', first, BATCH);
    const r2 = await t.call(
      'POST',
      '/v1/topics/binary/partitions/1/batches',
      batch(['x2'], { id: producerId, epoch: 0, seq: 2 }),
      BATCH,
    );
    const dup = await t.call('POST', '/v1/topics/binary/partitions/1/batches', first, BATCH);
    expect(dup.status).toBe(200);
    expect(dup.json.baseOffset).toBe(r1.json.baseOffset);
    expect(dup.json.lastOffset).toBe(r1.json.lastOffset);
    const gap = await t.call(
      'POST',
      '/v1/topics/binary/partitions/1/batches',
      batch(['x9'], { id: producerId, epoch: 0, seq: 9 }),
      BATCH,
    );
    expect(gap.status).toBe(409);
    expect(gap.json.error.code).toBe('OUT_OF_ORDER_SEQUENCE_NUMBER');
    const bumped = await t.call(
      'POST',
      '/v1/topics/binary/partitions/1/batches',
      batch(['y0'], { id: producerId, epoch: 1, seq: 0 }),
      BATCH,
    );
    expect(bumped.status).toBe(200);
    const stale = await t.call(
      'POST',
      '/v1/topics/binary/partitions/1/batches',
      batch(['z'], { id: producerId, epoch: 0, seq: 3 }),
      BATCH,
    );
    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe('INVALID_PRODUCER_EPOCH');
    expect(await hw('binary', 1)).toBe(r2.json.lastOffset + 2);
  });

  it('refuses corrupt batches and wrong content types, writing nothing', async () => {
    const good = batch(['ok']);
    const corrupt = new Uint8Array(good);
    corrupt[corrupt.length - 1]! ^= 0xff;
    const before = await hw('binary', 0);
    const r = await t.call('POST', '/v1/topics/binary/partitions/0/batches', corrupt, BATCH);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('CORRUPT_MESSAGE');
    const truncated = await t.call(
      'POST',
      '/v1/topics/binary/partitions/0/batches',
      good.subarray(0, 30),
      BATCH,
    );
    expect(truncated.json.error.code).toBe('CORRUPT_MESSAGE');
    const wrongType = await t.call('POST', '/v1/topics/binary/partitions/0/batches', good, {
      'content-type': 'application/octet-stream',
    });
    expect(wrongType.status).toBe(400);
    const noPartition = await t.call('POST', '/v1/topics/binary/partitions/7/batches', good, BATCH);
    expect(noPartition.status).toBe(404);
    expect(await hw('binary', 0)).toBe(before);
  });

  it('stamps LogAppendTime when the topic asks for it', async () => {
    const before = Date.now();
    const r = await t.call('POST', '/v1/topics/stamped/partitions/0/batches', batch(['t']), BATCH);
    expect(r.json.logAppendTime).toBeGreaterThanOrEqual(before - 1000);
    const f = await t.call('GET', '/v1/topics/stamped/partitions/0/records?offset=0');
    expect(f.json.records[0].timestamp).toBe(r.json.logAppendTime);
  });
});

describe('ListOffsets', () => {
  it('finds earliest, latest and the first offset at a timestamp', async () => {
    await t.call('POST', '/v1/topics/timed/records', {
      records: [100, 200, 300].map((ts) => ({ value: `at-${ts}`, timestamp: 1_600_000_000_000 + ts })),
    });
    const high = await hw('timed', 0);
    expect((await t.call('GET', '/v1/topics/timed/partitions/0/offsets?at=earliest')).json).toEqual({
      offset: 0,
      timestamp: -1,
    });
    expect((await t.call('GET', '/v1/topics/timed/partitions/0/offsets?at=latest')).json).toEqual({
      offset: high,
      timestamp: -1,
    });
    const at = await t.call('GET', `/v1/topics/timed/partitions/0/offsets?at=${1_600_000_000_150}`);
    expect(at.json).toEqual({ offset: high - 2, timestamp: 1_600_000_000_200 });
    const future = await t.call('GET', `/v1/topics/timed/partitions/0/offsets?at=${Date.now() + 86_400_000}`);
    expect(future.json.offset).toBeNull();
  });
});
