/**
 * A JSON produce request through Producer.produce: which records it refuses and with what, which
 * partition each record goes to, how its records are cut into RecordBatches at max.message.bytes, and
 * the timestamps its answer, its batches and its tail entries carry.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { T0, bytes, metricPoints, produceCluster, records } from '../../../support/produce-support.js';

afterEach(() => vi.restoreAllMocks());

const offsetsOf = (results: unknown[]) =>
  results.map((r) => {
    const { partition, offset } = r as { partition: number; offset: number };
    return [partition, offset];
  });

describe('a JSON produce request', () => {
  it('refuses a keyless record on a compacted topic, naming the first one, and writes nothing', async () => {
    const c = await produceCluster({ configs: { 'cleanup.policy': 'compact' } });
    const producer = c.sluice.producer;
    await expect(producer.produce('t', { records: records(['a']), acks: '1' })).rejects.toMatchObject({
      code: 'INVALID_RECORD',
      message: 'compacted topic t cannot accept a record without a key (record 0 has none)',
    });
    const mixed = [...records(['a'], { key: bytes('k') }), ...records(['b', 'c'])];
    await expect(producer.produce('t', { records: mixed, acks: '1' })).rejects.toMatchObject({
      code: 'INVALID_RECORD',
      message: 'compacted topic t cannot accept a record without a key (record 1 has none)',
    });
    expect(c.objectKeys()).toEqual({ s0: [] });
    expect(c.commits()).toHaveLength(0);
  });

  it('answers a request of no records with no results, writing nothing', async () => {
    const c = await produceCluster();
    expect(await c.sluice.producer.produce('t', { records: [], acks: '1' })).toEqual([]);
    expect(c.objectKeys()).toEqual({ s0: [] });
    expect(c.commits()).toHaveLength(0);
  });

  it('keeps the keyless records of one request on one partition and moves the next request on', async () => {
    const c = await produceCluster({ partitions: 3 });
    // The starting partition is random per instance: 0.5 makes it 500000 % 3 = 2.
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const producer = c.producerWith({});
    const sent = [];
    for (let i = 0; i < 4; i++)
      sent.push(offsetsOf(await producer.produce('t', { records: records([`a${i}`, `b${i}`]), acks: '1' })));
    expect(sent).toEqual([
      [
        [2, 0],
        [2, 1],
      ],
      [
        [0, 0],
        [0, 1],
      ],
      [
        [1, 0],
        [1, 1],
      ],
      [
        [2, 2],
        [2, 3],
      ],
    ]);
  });

  it('sends a keyed record to its key’s partition and an explicit partition where it names', async () => {
    const c = await produceCluster({ partitions: 3 });
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const producer = c.producerWith({});
    const results = await producer.produce('t', {
      records: [
        ...records(['x'], { key: bytes('user-1') }),
        ...records(['y'], { key: bytes('user-4') }),
        ...records(['z'], { key: bytes('user-1'), partition: 1 }),
        ...records(['w']),
      ],
      acks: '1',
    });
    expect(offsetsOf(results)).toEqual([
      [2, 0],
      [1, 0],
      [1, 1],
      [0, 0],
    ]);
  });

  it('puts keyless records with an Idempotency-Key on the partition the key names, on every retry', async () => {
    const c = await produceCluster({ partitions: 8 });
    const request = { records: records(['a', 'b']), acks: '1' as const, idempotencyKey: 'order-20' };
    // Instances' sticky counters start at 0 (0.5 * 10^6 % 8) and 1 (123457 % 8): neither is used.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const first = await c.producerWith({}).produce('t', request);
    expect(offsetsOf(first)).toEqual([
      [4, 0],
      [4, 1],
    ]);
    random.mockReturnValue(0.123457);
    expect(await c.producerWith({}).produce('t', request)).toEqual(first);
    expect((await c.state(4)).nextOffset).toBe(2);
    expect(c.commits()).toHaveLength(1);
  });

  describe('max.message.bytes', () => {
    // 21 bytes of record overhead + key 3 + value 5 + one header (10 + key 1 + value 2) = 42 bytes,
    // and a batch adds 61: one record fits a batch of 103 bytes.
    const sized = (value = 'vvvvv') =>
      records([value], { key: bytes('kkk'), headers: [{ key: 'h', value: bytes('hv') }] });

    it('refuses a record whose key, value and headers would overflow a batch alone', async () => {
      const c = await produceCluster({ configs: { 'max.message.bytes': '102' } });
      await expect(
        c.sluice.producer.produce('t', { records: [...sized(), ...sized()], acks: '1' }),
      ).rejects.toMatchObject({
        code: 'MESSAGE_TOO_LARGE',
        message: 'record 0 is about 42 bytes; topic allows max.message.bytes=102 per batch',
      });
      const nullHeader = records(['v'.repeat(17)], { key: null, headers: [{ key: 'hh', value: null }] });
      // 21 + 0 + 17 + (10 + 2 + 0) = 50: 111 bytes with the batch.
      await expect(c.producerWith({}).produce('t', { records: nullHeader, acks: '1' })).rejects.toMatchObject(
        {
          message: 'record 0 is about 50 bytes; topic allows max.message.bytes=102 per batch',
        },
      );
      expect(c.objectKeys()).toEqual({ s0: [] });
    });

    it('accepts a record that fills a batch exactly', async () => {
      const c = await produceCluster({ configs: { 'max.message.bytes': '103' } });
      expect(offsetsOf(await c.sluice.producer.produce('t', { records: sized(), acks: '1' }))).toEqual([
        [0, 0],
      ]);
    });

    it.each([
      // Two 42-byte records fill 61 + 84 = 145 bytes: one batch; a byte less and they take two.
      [145, [2, 1]],
      [144, [1, 1, 1]],
      [187, [3]],
    ])('cuts three records into batches of at most %i bytes: %j', async (limit, perBatch) => {
      const c = await produceCluster({ configs: { 'max.message.bytes': String(limit) } });
      const sent = [...sized('aaaaa'), ...sized('bbbbb'), ...sized('ccccc')];
      const results = await c.sluice.producer.produce('t', { records: sent, acks: '1' });
      expect(offsetsOf(results)).toEqual([
        [0, 0],
        [0, 1],
        [0, 2],
      ]);
      const [entry] = (await c.state()).tail;
      const batches = await c.stored('s0', entry!.objectKey);
      expect(batches.map((b) => b.records.length)).toEqual(perBatch);
      expect(batches.flatMap((b) => b.records.map((r) => Buffer.from(r.value!).toString()))).toEqual([
        'aaaaa',
        'bbbbb',
        'ccccc',
      ]);
    });

    it('counts each partition’s records and the bytes of all its batches, per topic', async () => {
      // Kills the mutants of produce.ts's countIn and of the sum of a write's batch lengths.
      const c = await produceCluster({ partitions: 2, configs: { 'max.message.bytes': '144' } });
      const m = metricPoints();
      const sent = [
        ...['aaaaa', 'bbbbb', 'ccccc'].flatMap((v) => sized(v).map((r) => ({ ...r, partition: 0 }))),
        ...records(['d'], { partition: 1 }),
      ];
      await c.producerWith({ telemetry: m.telemetry }).produce('t', { records: sent, acks: '1' });
      const [first] = (await c.state(0)).tail;
      const [second] = (await c.state(1)).tail;
      // One object holds both partitions' batches: partition 0's three, then partition 1's.
      const batches = await c.stored('s0', first!.objectKey);
      expect(batches.map((b) => b.records.length)).toEqual([1, 1, 1, 1]);
      expect([first!.position, second!.position]).toEqual([0, first!.sizeInBytes]);
      expect(m.points).toEqual([
        ['MessagesInPerSec', 3, { topic: 't' }],
        ['BytesInPerSec', first!.sizeInBytes, { topic: 't' }],
        ['MessagesInPerSec', 1, { topic: 't' }],
        ['BytesInPerSec', second!.sizeInBytes, { topic: 't' }],
      ]);
    });
  });

  it('records the first and the largest timestamp of a CreateTime request, and no Idempotency-Key mark', async () => {
    const c = await produceCluster();
    const sent = [5_000, 3_000, 9_000].map((timestamp, i) => ({ ...records([`v${i}`])[0]!, timestamp }));
    const results = await c.sluice.producer.produce('t', { records: sent, acks: '1' });
    expect(results.map((r) => ('timestamp' in r ? r.timestamp : -1))).toEqual([5_000, 3_000, 9_000]);
    const { tail } = await c.state();
    expect(tail).toEqual([
      {
        objectKey: expect.any(String),
        position: 0,
        sizeInBytes: expect.any(Number),
        offsetCount: 3,
        recordCount: 3,
        maxTimestamp: 9_000,
        firstTimestamp: 3_000,
      },
    ]);
    const [stored] = await c.stored('s0', tail[0]!.objectKey);
    expect([stored!.header.timestampType, stored!.header.maxTimestamp]).toEqual(['CreateTime', 9_000]);
  });

  it('stamps the broker time over the records’ own on a LogAppendTime topic', async () => {
    const c = await produceCluster({ configs: { 'message.timestamp.type': 'LogAppendTime' } });
    const sent = [5_000, 3_000].map((timestamp, i) => ({ ...records([`v${i}`])[0]!, timestamp }));
    const results = await c.sluice.producer.produce('t', { records: sent, acks: '1' });
    expect(results).toEqual([
      { partition: 0, offset: 0, timestamp: T0 },
      { partition: 0, offset: 1, timestamp: T0 },
    ]);
    const { tail } = await c.state();
    expect([tail[0]!.maxTimestamp, tail[0]!.firstTimestamp]).toEqual([T0, T0]);
    const [stored] = await c.stored('s0', tail[0]!.objectKey);
    expect([stored!.header.timestampType, stored!.header.maxTimestamp]).toEqual(['LogAppendTime', T0]);
  });
  it('answers a retry on a LogAppendTime topic with the first append time, not the records’ own', async () => {
    const c = await produceCluster({ configs: { 'message.timestamp.type': 'LogAppendTime' } });
    const sent = [5_000, 3_000].map((timestamp, i) => ({ ...records([`v${i}`])[0]!, timestamp }));
    const request = { records: sent, acks: '1' as const, idempotencyKey: 'order-1' };
    const first = await c.sluice.producer.produce('t', request);
    c.clock.time += 9_000;
    expect(await c.sluice.producer.produce('t', request)).toEqual(first);
    expect(first.map((r) => ('timestamp' in r ? r.timestamp : -1))).toEqual([T0, T0]);
  });
});
