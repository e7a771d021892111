/**
 * POST /v1/fetch (Kafka's Fetch over many partitions) through the router on the memory stores: one
 * long poll over every partition, answering as soon as any has data or an error; whole batches per
 * partition under the partition and answer budgets (the first batch always sent); per-partition
 * errors beside answers; hostile bodies refused whole; and the wake race: records committed while a
 * poll is being answered are never skipped by the next poll.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  decodeRecordBatch,
  encodeRecordBatch,
  splitBatches,
} from '../../../../protocol/record-batch/index.js';
import { memorySluice } from '../../../support/log-support.js';
import { routerFetch } from '../../../support/router-fetch.js';
import { SluiceClient } from '../../../../sdk/client.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { keys } from '../../../../lib/core/keys.js';
import type { FetchedBatches, PartitionFetch } from '../../../../lib/core/log/fetch-request.js';

const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };
const T0 = 1_700_000_000_000;

const batchOf = (values: string[]) =>
  encodeRecordBatch(
    values.map((v, i) => ({ key: null, value: new Uint8Array(Buffer.from(v)), timestamp: T0 + i })),
  );

/** Topics `a` (2 partitions) and `b` (1); `produce` sends one batch to a partition. */
const setup = async (config: Parameters<typeof memorySluice>[0] = {}) => {
  const s = memorySluice(config);
  expect((await s.http('POST', '/v1/topics', { name: 'a', partitions: 2 })).status).toBe(201);
  expect((await s.http('POST', '/v1/topics', { name: 'b', partitions: 1 })).status).toBe(201);
  const produce = async (topic: string, partition: number, values: string[]) => {
    const r = await s.http(
      'POST',
      `/v1/topics/${topic}/partitions/${partition}/batches`,
      batchOf(values),
      BATCH,
    );
    expect(r.status).toBe(200);
  };
  const fetch = async (body: unknown) => s.http('POST', '/v1/fetch', body);
  /** Each partition's answer with its batches decoded to [offset, value] pairs. */
  const values = (partitions: Record<string, unknown>[]) =>
    partitions.map((p) => {
      const { recordBatches, ...rest } = p;
      if (typeof recordBatches !== 'string') return rest;
      const bytes = new Uint8Array(Buffer.from(recordBatches, 'base64'));
      const records = splitBatches(bytes).flatMap(({ start, end }) =>
        decodeRecordBatch(bytes.subarray(start, end)).records.map((r) => [
          r.offset,
          Buffer.from(r.value!).toString(),
        ]),
      );
      return { ...rest, records };
    });
  return { ...s, produce, fetch, values };
};

describe('POST /v1/fetch', () => {
  it('answers every partition in request order, whole batches from each offset', async () => {
    const s = await setup();
    await s.produce('a', 0, ['a0', 'a1']);
    await s.produce('a', 0, ['a2']);
    await s.produce('b', 0, ['b0']);
    const r = await s.fetch({
      partitions: [
        { topic: 'b', partition: 0, offset: 0 },
        { topic: 'a', partition: 1, offset: 0 },
        { topic: 'a', partition: 0, offset: 2 },
      ],
    });
    expect(r.status).toBe(200);
    expect(s.values(r.body.partitions)).toEqual([
      { topic: 'b', partition: 0, highWatermark: 1, logStartOffset: 0, nextOffset: 1, records: [[0, 'b0']] },
      { topic: 'a', partition: 1, highWatermark: 0, logStartOffset: 0, nextOffset: 0, records: [] },
      { topic: 'a', partition: 0, highWatermark: 3, logStartOffset: 0, nextOffset: 3, records: [[2, 'a2']] },
    ]);
  });

  it('holds one poll over all partitions and answers when any of them gets data', async () => {
    const s = await setup({ pollIntervalMs: 100 });
    const sleep = s.clock.sleep.bind(s.clock);
    let polls = 0;
    vi.spyOn(s.clock, 'sleep').mockImplementation(async (ms) => {
      // Committed during the fourth wait, to the last partition named.
      if (++polls === 4) await s.produce('b', 0, ['late']);
      await sleep(ms);
    });
    const start = s.clock.now();
    const r = await s.fetch({
      maxWaitMs: 5_000,
      partitions: [
        { topic: 'a', partition: 0, offset: 0 },
        { topic: 'a', partition: 1, offset: 0 },
        { topic: 'b', partition: 0, offset: 0 },
      ],
    });
    expect(s.clock.now() - start).toBe(400);
    expect(s.values(r.body.partitions).map((p) => p['records'])).toEqual([[], [], [[0, 'late']]]);
  });

  it('waits maxWaitMs (capped at 20 s) and answers every partition empty when nothing comes', async () => {
    const s = await setup({ pollIntervalMs: 300 });
    const start = s.clock.now();
    const r = await s.fetch({ maxWaitMs: 500, partitions: [{ topic: 'a', partition: 0, offset: 0 }] });
    expect(s.clock.now() - start).toBe(500);
    expect(r.body.partitions).toEqual([
      { topic: 'a', partition: 0, highWatermark: 0, logStartOffset: 0, nextOffset: 0, recordBatches: '' },
    ]);
    const again = s.clock.now();
    await s.fetch({ maxWaitMs: 20_000, partitions: [{ topic: 'a', partition: 0, offset: 0 }] });
    expect(s.clock.now() - again).toBe(20_000);
    expect(
      (await s.fetch({ maxWaitMs: 20_001, partitions: [{ topic: 'a', partition: 0, offset: 0 }] })).status,
    ).toBe(400);
  });

  it('keeps to the partition and answer budgets, except the first batch of the answer', async () => {
    const s = await setup();
    await s.produce('a', 0, ['x'.repeat(300)]);
    await s.produce('a', 0, ['y'.repeat(300)]);
    await s.produce('a', 1, ['z'.repeat(300)]);
    // Each budget below one batch: only the answer's first batch comes back.
    const tiny = await s.fetch({
      maxBytes: 10,
      partitions: [
        { topic: 'a', partition: 0, offset: 0, maxBytes: 10 },
        { topic: 'a', partition: 1, offset: 0, maxBytes: 10 },
      ],
    });
    expect(
      s.values(tiny.body.partitions).map((p) => [p['nextOffset'], (p['records'] as unknown[]).length]),
    ).toEqual([
      [1, 1],
      [0, 0],
    ]);
    // Room for two batches over the answer: both of partition 0, none left for partition 1.
    const batchBytes = Buffer.from(
      (await s.fetch({ partitions: [{ topic: 'a', partition: 1, offset: 0 }] })).body.partitions[0]
        .recordBatches,
      'base64',
    ).length;
    const two = await s.fetch({
      maxBytes: 2 * batchBytes,
      partitions: [
        { topic: 'a', partition: 0, offset: 0 },
        { topic: 'a', partition: 1, offset: 0 },
      ],
    });
    expect(
      s.values(two.body.partitions).map((p) => [p['nextOffset'], (p['records'] as unknown[]).length]),
    ).toEqual([
      [2, 2],
      [0, 0],
    ]);
    // The partition budget alone: one batch from each.
    const each = await s.fetch({
      partitions: [
        { topic: 'a', partition: 0, offset: 0, maxBytes: batchBytes },
        { topic: 'a', partition: 1, offset: 0, maxBytes: batchBytes },
      ],
    });
    expect(s.values(each.body.partitions).map((p) => p['nextOffset'])).toEqual([1, 1]);
  });

  it("answers a partition's error as its own and the others beside it, at once", async () => {
    const s = await setup({ pollIntervalMs: 100 });
    await s.produce('a', 0, ['a0']);
    const start = s.clock.now();
    const r = await s.fetch({
      maxWaitMs: 5_000,
      partitions: [
        { topic: 'a', partition: 0, offset: 5 },
        { topic: 'nope', partition: 0, offset: 0 },
        { topic: 'a', partition: 7, offset: 0 },
        { topic: 'a', partition: 1, offset: 0 },
      ],
    });
    expect(s.clock.now()).toBe(start);
    expect(r.status).toBe(200);
    const [range, unknown, badPartition, fine] = r.body.partitions;
    expect(range).toEqual({
      topic: 'a',
      partition: 0,
      highWatermark: 1,
      logStartOffset: 0,
      error: expect.objectContaining({ code: 'OFFSET_OUT_OF_RANGE', retriable: false }),
    });
    expect(unknown).toEqual({
      topic: 'nope',
      partition: 0,
      error: expect.objectContaining({ code: 'UNKNOWN_TOPIC_OR_PARTITION' }),
    });
    expect(badPartition.error.code).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(fine).toEqual({
      topic: 'a',
      partition: 1,
      highWatermark: 0,
      logStartOffset: 0,
      nextOffset: 0,
      recordBatches: '',
    });
  });

  it.each([
    ['no partitions', { partitions: [] }],
    ['partitions not an array', { partitions: 'a' }],
    ['a partition not an object', { partitions: [7] }],
    [
      'a repeated partition',
      {
        partitions: [
          { topic: 'a', partition: 0, offset: 0 },
          { topic: 'a', partition: 0, offset: 3 },
        ],
      },
    ],
    ['an unknown field', { partitions: [{ topic: 'a', partition: 0, offset: 0 }], minBytes: 1 }],
    ['an unknown partition field', { partitions: [{ topic: 'a', partition: 0, offset: 0, epoch: 1 }] }],
    ['a negative offset', { partitions: [{ topic: 'a', partition: 0, offset: -1 }] }],
    ['a fractional partition', { partitions: [{ topic: 'a', partition: 0.5, offset: 0 }] }],
    ['a missing offset', { partitions: [{ topic: 'a', partition: 0 }] }],
    ['a string offset', { partitions: [{ topic: 'a', partition: 0, offset: '0' }] }],
    ['an empty topic', { partitions: [{ topic: '', partition: 0, offset: 0 }] }],
    ['a zero maxBytes', { maxBytes: 0, partitions: [{ topic: 'a', partition: 0, offset: 0 }] }],
    ['a negative wait', { maxWaitMs: -1, partitions: [{ topic: 'a', partition: 0, offset: 0 }] }],
    [
      'over 1000 partitions',
      { partitions: Array.from({ length: 1001 }, (_, i) => ({ topic: 'a', partition: i, offset: 0 })) },
    ],
  ])('refuses %s with 400 INVALID_REQUEST', async (_, body) => {
    const s = await setup();
    const r = await s.fetch(body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_REQUEST');
  });

  it('refuses a body that is not JSON', async () => {
    const s = await setup();
    const r = await s.http('POST', '/v1/fetch', new Uint8Array(Buffer.from('{"partitions": [')));
    expect(r.status).toBe(400);
  });

  it('never skips a record committed while a poll is answered (the wake race)', async () => {
    const s = await setup({ pollIntervalMs: 10 });
    const sent: string[] = [];
    const seen: [number, string][] = [];
    // Commits land during the waits and the reads of the answer alike, by hooking every sleep and
    // every partition-item read the fetcher makes.
    let n = 0;
    const store = s.store;
    const get = store.get.bind(store);
    let producing = Promise.resolve();
    vi.spyOn(store, 'get').mockImplementation(async (key, options) => {
      const item = await get(key, options);
      if (n < 60 && key.sk === 'STATE') {
        const value = `r${n++}`;
        sent.push(value);
        producing = producing.then(() => s.produce('a', n % 2, [value]));
      }
      return item;
    });
    const offsets = [0, 0];
    for (let round = 0; round < 200 && seen.length < 60; round++) {
      await producing;
      const r = await s.fetch({
        maxWaitMs: 50,
        partitions: [
          { topic: 'a', partition: 0, offset: offsets[0] },
          { topic: 'a', partition: 1, offset: offsets[1] },
        ],
      });
      for (const [i, p] of s.values(r.body.partitions).entries()) {
        let expected = offsets[i]!;
        for (const [offset, value] of p['records'] as [number, string][]) {
          // Offsets of each partition arrive in order, without a gap.
          expect(offset).toBe(expected++);
          seen.push([i, value]);
        }
        expect(p['nextOffset']).toBe(expected);
        offsets[i] = expected;
      }
    }
    await producing;
    expect(sent).toHaveLength(60);
    expect(seen.map(([, v]) => v).sort()).toEqual([...sent].sort());
    expect(offsets[0]! + offsets[1]!).toBe(sent.length);
  });
});

describe('Fetcher.fetchMany, exactly', () => {
  const ALL = 1 << 20;
  const many = (s: Awaited<ReturnType<typeof setup>>, partitions: PartitionFetch[], more = {}) =>
    s.sluice.fetcher.fetchMany({ partitions, maxBytes: ALL, maxWaitMs: 0, ...more });

  it('answers an offset below the log start with OFFSET_OUT_OF_RANGE, though a stored batch still holds it', async () => {
    const s = await setup();
    await s.produce('a', 0, ['a0', 'a1']);
    const topic = await s.sluice.catalog.get('a');
    await s.store.update(keys.partitionState(topic.topicId, 0), [{ set: 'logStartOffset', value: 1 }]);
    const [answer] = await many(s, [{ topic: 'a', partition: 0, offset: 0, maxBytes: ALL }]);
    expect(answer).toEqual({
      topic: 'a',
      partition: 0,
      error: expect.objectContaining({ code: 'OFFSET_OUT_OF_RANGE' }),
    });
  });

  it('throws an error of the store that is no SluiceError rather than answer it as a partition’s', async () => {
    const s = await setup();
    await s.produce('a', 0, ['a0']);
    vi.spyOn(s.store, 'get').mockRejectedValue(new Error('socket hang up'));
    await expect(many(s, [{ topic: 'a', partition: 0, offset: 0, maxBytes: ALL }])).rejects.toThrow(
      'socket hang up',
    );
  });

  it('answers a read that fails with KAFKA_STORAGE_ERROR as that partition’s error, the others beside it', async () => {
    const s = await setup();
    await s.produce('a', 0, ['a0']);
    await s.produce('a', 1, ['b0']);
    vi.spyOn(s.objects, 'get').mockRejectedValueOnce(new Error('connection reset'));
    const [failed, fine] = await many(s, [
      { topic: 'a', partition: 0, offset: 0, maxBytes: ALL },
      { topic: 'a', partition: 1, offset: 0, maxBytes: ALL },
    ]);
    expect(failed).toEqual({
      topic: 'a',
      partition: 0,
      error: expect.objectContaining({ code: 'KAFKA_STORAGE_ERROR' }),
    });
    expect(failed).toHaveProperty('error', expect.any(SluiceError));
    expect(fine).toMatchObject({ topic: 'a', partition: 1, nextOffset: 1, highWatermark: 1 });
  });

  it('throws a failure of the index read that is no SluiceError', async () => {
    const s = await setup({ tailFlushEntries: 1 });
    await s.produce('a', 0, ['a0']);
    await s.sluice.maintenance.run();
    const query = vi.spyOn(s.store, 'query').mockRejectedValue(new Error('throttled'));
    await expect(many(s, [{ topic: 'a', partition: 0, offset: 0, maxBytes: ALL }])).rejects.toThrow(
      'throttled',
    );
    expect(query).toHaveBeenCalled();
  });

  it('reads nothing for a partition at its last stable offset, nor once the answer’s budget is spent', async () => {
    const s = await setup();
    const client = new SluiceClient({ url: 'http://sluice.invalid', fetch: routerFetch(s.sluice.router()) });
    const producer = client.producer({ transactionalId: 'app' });
    await producer.initTransactions();
    await s.produce('a', 0, ['x']);
    producer.beginTransaction();
    await producer.sendBatch('a', 0, [{ key: 'k', value: 'open' }]);
    let gets = s.objects.meter.read().objectGets;
    // The open transaction holds a-0's last stable offset at 1, below its high watermark 2.
    const [atStable] = await many(s, [{ topic: 'a', partition: 0, offset: 1, maxBytes: ALL }], {
      isolationLevel: 'read_committed',
    });
    expect(atStable).toMatchObject({ batches: [], nextOffset: 1, highWatermark: 2 });
    expect(s.objects.meter.read().objectGets - gets).toBe(0);

    await s.produce('a', 1, ['y']);
    const [first] = await many(s, [{ topic: 'a', partition: 1, offset: 0, maxBytes: ALL }]);
    const size = (first as FetchedBatches).batches[0]!.length;
    gets = s.objects.meter.read().objectGets;
    // a-1's batch takes the whole answer: a-0 is not read.
    const spent = await many(
      s,
      [
        { topic: 'a', partition: 1, offset: 0, maxBytes: ALL },
        { topic: 'a', partition: 0, offset: 0, maxBytes: ALL },
      ],
      { maxBytes: size },
    );
    expect(spent.map((p) => ('nextOffset' in p ? p.nextOffset : p.error))).toEqual([1, 0]);
    expect(s.objects.meter.read().objectGets - gets).toBe(1);
  });

  it('locates the entries its budget covers with one index read, not one read per entry', async () => {
    const s = await setup({ tailFlushEntries: 1 });
    for (const value of ['a', 'b', 'c', 'd']) await s.produce('a', 0, [value]);
    await s.sluice.maintenance.run();
    const query = vi.spyOn(s.store, 'query');
    const [answer] = await many(s, [{ topic: 'a', partition: 0, offset: 0, maxBytes: ALL }]);
    expect(answer).toMatchObject({ nextOffset: 4 });
    expect((answer as FetchedBatches).batches).toHaveLength(4);
    expect(query.mock.calls.length).toBe(2);
  });
});
