/**
 * Fetch and ListOffsets through the Fetcher, pinned exactly: the answer at the high watermark, the
 * maxBytes boundary for records and for whole batches (and the first one always sent), long polling to
 * the millisecond, batch granularity inside a multi-batch entry, fetches that take several index reads,
 * and hostile stores: a batch that passes its checksum but does not decode, an index with no entry for
 * the offset, retention passing the offset mid-fetch, a GET that fails once, and a partition item whose
 * high watermark lies inside a stored batch.
 */
import { describe, expect, it, vi } from 'vitest';
import { keys, offsetFromBatchSk } from '../../../../lib/core/keys.js';
import { pageEntries, pageItem } from '../../../../lib/core/log/batch-index.js';
import { applyRetention } from '../../../../lib/core/log/retention.js';
import type { FetchRequest } from '../../../../lib/core/log/fetch-request.js';
import {
  decodeRecordBatch,
  encodeRecordBatch,
  recordSize,
  splitBatches,
} from '../../../../protocol/record-batch/index.js';
import { RECORDS } from '../../../../protocol/record-batch/header.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { withRecordsSection } from '../../../support/batch-surgery.js';
import type { MemorySluiceOptions } from '../../../support/log-support.js';
import { memorySluice } from '../../../support/log-support.js';
import { routerFetch } from '../../../support/router-fetch.js';
import { SluiceClient } from '../../../../sdk/client.js';
import type { Telemetry } from '../../../../lib/ports/telemetry.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';

const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };
const T0 = 1_700_000_000_000;

const batchOf = (values: string[], timestamp = T0) =>
  encodeRecordBatch(
    values.map((v, i) => ({ key: null, value: new Uint8Array(Buffer.from(v)), timestamp: timestamp + i })),
  );

const text = (value: Uint8Array | null) => (value === null ? null : Buffer.from(value).toString());

/** A one-partition topic `t`; `produce` sends one request of the given batches and returns its base offset. */
const setup = async (config: Parameters<typeof memorySluice>[0] = {}, options: MemorySluiceOptions = {}) => {
  const s = memorySluice(config, options);
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions: 1 })).status).toBe(201);
  const produce = async (...batches: (string[] | Uint8Array)[]): Promise<number> => {
    const body = new Uint8Array(
      Buffer.concat(batches.map((b) => (b instanceof Uint8Array ? b : batchOf(b)))),
    );
    const r = await s.http('POST', '/v1/topics/t/partitions/0/batches', body, BATCH);
    expect(r.status).toBe(200);
    return r.body.baseOffset as number;
  };
  const request = (r: Partial<FetchRequest>): FetchRequest => ({
    offset: 0,
    maxBytes: 1 << 20,
    maxWaitMs: 0,
    ...r,
  });
  const records = async (r: Partial<FetchRequest>) => {
    const answer = await s.sluice.fetcher.fetchRecords('t', 0, request(r));
    return { ...answer, records: answer.records.map((x) => [x.offset, text(x.value)]) };
  };
  /** Each returned batch as its base offset and values. */
  const batches = async (r: Partial<FetchRequest>) => {
    const answer = await s.sluice.fetcher.fetchBatches('t', 0, request(r));
    return {
      ...answer,
      batches: answer.batches.map((bytes) => {
        const { header, records } = decodeRecordBatch(bytes);
        return [header.baseOffset, records.map((x) => text(x.value))];
      }),
    };
  };
  const failure = async (r: Partial<FetchRequest>) => {
    const error = await s.sluice.fetcher.fetchRecords('t', 0, request(r)).then(
      () => new Error('the fetch answered'),
      (e: unknown) => e,
    );
    if (!(error instanceof SluiceError)) throw error;
    return { code: error.code, message: error.message };
  };
  const topic = await s.sluice.catalog.get('t');
  return { ...s, topic, produce, records, batches, failure };
};

describe('fetch bounds', () => {
  it('answers a fetch at the high watermark with nothing, and one past it with OFFSET_OUT_OF_RANGE', async () => {
    const s = await setup();
    await s.produce(['a', 'b']);
    expect(await s.records({ offset: 2 })).toEqual({
      records: [],
      nextOffset: 2,
      highWatermark: 2,
      logStartOffset: 0,
    });
    expect(await s.batches({ offset: 2 })).toEqual({
      batches: [],
      nextOffset: 2,
      highWatermark: 2,
      logStartOffset: 0,
    });
    expect(await s.failure({ offset: 3 })).toEqual({
      code: 'OFFSET_OUT_OF_RANGE',
      message: "offset 3 is outside t-0's log [0, 2]",
    });
  });

  it('answers ListOffsets latest at the high watermark, or at the last stable offset for read_committed only', async () => {
    const s = await setup();
    const client = new SluiceClient({ url: 'http://sluice.invalid', fetch: routerFetch(s.sluice.router()) });
    const producer = client.producer({ transactionalId: 'app' });
    await producer.initTransactions();
    await s.produce(['a']);
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ key: 'k', value: 'open' }]);
    // The open transaction holds the last stable offset at 1; the high watermark is 2.
    expect(await s.sluice.fetcher.listOffsets('t', 0, 'latest')).toEqual({ offset: 2, timestamp: -1 });
    expect(await s.sluice.fetcher.listOffsets('t', 0, 'latest', 'read_uncommitted')).toEqual({
      offset: 2,
      timestamp: -1,
    });
    expect(await s.sluice.fetcher.listOffsets('t', 0, 'latest', 'read_committed')).toEqual({
      offset: 1,
      timestamp: -1,
    });
  });

  it('answers ListOffsets earliest and latest with timestamp -1', async () => {
    const s = await setup();
    await s.produce(['a', 'b', 'c']);
    expect(await s.sluice.fetcher.listOffsets('t', 0, 'earliest')).toEqual({ offset: 0, timestamp: -1 });
    expect(await s.sluice.fetcher.listOffsets('t', 0, 'latest')).toEqual({ offset: 3, timestamp: -1 });
  });
});

describe('maxBytes', () => {
  it('takes records while their sizes sum to at most maxBytes, and always the first', async () => {
    const s = await setup();
    await s.produce(['aaaa', 'bbb', 'cc']);
    // recordSize counts key + value + headers: 4, 3 and 2 bytes here.
    expect([
      ...['aaaa', 'bbb'].map((v) => recordSize({ key: null, value: Buffer.from(v), headers: [] })),
    ]).toEqual([4, 3]);
    expect(await s.records({ maxBytes: 7 })).toMatchObject({
      records: [
        [0, 'aaaa'],
        [1, 'bbb'],
      ],
      nextOffset: 2,
    });
    expect(await s.records({ maxBytes: 6 })).toMatchObject({ records: [[0, 'aaaa']], nextOffset: 1 });
    expect(await s.records({ maxBytes: 1 })).toMatchObject({ records: [[0, 'aaaa']], nextOffset: 1 });
  });

  it('takes whole batches while their bytes sum to at most maxBytes, and always the first', async () => {
    const s = await setup();
    await s.produce(['a0', 'a1']);
    await s.produce(['b0']);
    await s.produce(['c0']);
    const sizes = [batchOf(['a0', 'a1']).length, batchOf(['b0']).length];
    expect(await s.batches({ maxBytes: sizes[0]! + sizes[1]! })).toEqual({
      batches: [
        [0, ['a0', 'a1']],
        [2, ['b0']],
      ],
      nextOffset: 3,
      highWatermark: 4,
      logStartOffset: 0,
    });
    expect(await s.batches({ maxBytes: sizes[0]! + sizes[1]! - 1 })).toMatchObject({
      batches: [[0, ['a0', 'a1']]],
      nextOffset: 2,
    });
    expect(await s.batches({ maxBytes: 1 })).toMatchObject({ batches: [[0, ['a0', 'a1']]], nextOffset: 2 });
  });

  it('keeps reading the index until maxBytes of records, though the stored batches passed it first', async () => {
    // Each stored batch is ~70 bytes for a 1-byte record: the first index read (sized by stored
    // bytes) covers two entries, so ten records take several reads.
    const s = await setup({ tailFlushEntries: 3 });
    for (let i = 0; i < 10; i++) await s.produce([String(i)]);
    await s.sluice.maintenance.run();
    const all = await s.records({ maxBytes: 100 });
    expect(all.records).toEqual(Array.from({ length: 10 }, (_, i) => [i, String(i)]));
    expect(all.nextOffset).toBe(10);
    expect((await s.records({ offset: 3, maxBytes: 5 })).records).toEqual([
      [3, '3'],
      [4, '4'],
      [5, '5'],
      [6, '6'],
      [7, '7'],
    ]);
  });
});

describe('BytesOutPerSec', () => {
  it('counts the record bytes a fetch returns, under its topic, and nothing for an empty answer', async () => {
    const points: [string, number, Record<string, unknown>][] = [];
    const telemetry: Telemetry = {
      metric: (name, value, dimensions) => points.push([name, value, dimensions]),
      log: () => {},
      annotate: () => {},
    };
    const s = await setup({}, { telemetry });
    await s.produce(['aaaa', 'bbb']);
    points.length = 0;
    expect((await s.records({ offset: 2 })).records).toEqual([]);
    expect(points).toEqual([]);
    expect((await s.records({})).records).toHaveLength(2);
    // recordSize counts key + value + headers: 4 + 3 bytes.
    expect(points).toEqual([['BytesOutPerSec', 7, { topic: 't' }]]);
    points.length = 0;
    expect((await s.batches({})).batches).toHaveLength(1);
    expect(points).toEqual([['BytesOutPerSec', batchOf(['aaaa', 'bbb']).length, { topic: 't' }]]);
  });
});

describe('batch granularity', () => {
  it('sends the batch holding the offset and skips batches of its entry that end before it', async () => {
    const s = await setup();
    expect(await s.produce(['a0', 'a1'], ['b0'], ['c0', 'c1'])).toBe(0);
    expect((await s.batches({ offset: 2 })).batches).toEqual([
      [2, ['b0']],
      [3, ['c0', 'c1']],
    ]);
    expect((await s.batches({ offset: 1 })).batches).toEqual([
      [0, ['a0', 'a1']],
      [2, ['b0']],
      [3, ['c0', 'c1']],
    ]);
    expect(await s.records({ offset: 4 })).toMatchObject({ records: [[4, 'c1']], nextOffset: 5 });
  });
});

describe('long poll', () => {
  it('waits maxWaitMs to the millisecond, polling every pollIntervalMs, when no data comes', async () => {
    const s = await setup({ pollIntervalMs: 300 });
    await s.produce(['a']);
    const sleep = vi.spyOn(s.clock, 'sleep');
    const start = s.clock.now();
    expect(await s.records({ offset: 1, maxWaitMs: 500 })).toEqual({
      records: [],
      nextOffset: 1,
      highWatermark: 1,
      logStartOffset: 0,
    });
    expect(s.clock.now() - start).toBe(500);
    expect(sleep.mock.calls).toEqual([[300], [200]]);
  });

  it('caps maxWaitMs at MAX_WAIT_MS (20 s)', async () => {
    const s = await setup({ pollIntervalMs: 5_000 });
    const start = s.clock.now();
    expect((await s.records({ maxWaitMs: 60_000 })).records).toEqual([]);
    expect(s.clock.now() - start).toBe(20_000);
  });

  it('answers at once when data is there, and as soon as it arrives otherwise', async () => {
    const s = await setup({ pollIntervalMs: 100 });
    await s.produce(['a']);
    const start = s.clock.now();
    expect((await s.records({ maxWaitMs: 1_000 })).records).toEqual([[0, 'a']]);
    expect(s.clock.now()).toBe(start);
    const sleep = s.clock.sleep.bind(s.clock);
    let polls = 0;
    vi.spyOn(s.clock, 'sleep').mockImplementation(async (ms) => {
      // The record is committed during the third wait.
      if (++polls === 3) await s.produce(['b']);
      await sleep(ms);
    });
    expect(await s.records({ offset: 1, maxWaitMs: 1_000 })).toMatchObject({
      records: [[1, 'b']],
      nextOffset: 2,
    });
    expect(s.clock.now() - start).toBe(300);
  });
});

describe('hostile stores', () => {
  it('fails a batch that passes its checksum but does not decode, keeping the records before it', async () => {
    const s = await setup();
    await s.produce(['good']);
    await s.produce(['bad']);
    const [, second] = s.objects.keys();
    const stored = await s.objects.get(second!);
    // The records section replaced by bytes that are no record, the CRC re-sealed over them.
    const garbled = withRecordsSection(stored, new Uint8Array(stored.length - RECORDS).fill(0xff));
    expect(splitBatches(garbled)).toHaveLength(1);
    await s.objects.put(second!, garbled);
    expect(await s.records({})).toMatchObject({ records: [[0, 'good']], nextOffset: 1 });
    const error = await s.failure({ offset: 1 });
    expect(error.code).toBe('KAFKA_STORAGE_ERROR');
    expect(error.message).toMatch(/^stored batch at offset 1 does not decode: ./);
  });

  it('reports an index with no entry for the offset as a storage error, not a skip', async () => {
    const s = await setup({ tailFlushEntries: 2 });
    await s.produce(['a']);
    await s.produce(['b']);
    await s.sluice.maintenance.run();
    const pages = await s.store.query({
      pk: keys.partitionPk(s.topic.topicId, 0),
      sk: { beginsWith: keys.batchPrefix },
    });
    expect(pages.items).toHaveLength(1);
    await s.store.delete({ pk: pages.items[0]!.pk, sk: pages.items[0]!.sk });
    expect(await s.failure({ offset: 0 })).toEqual({
      code: 'KAFKA_STORAGE_ERROR',
      message: 'the batch index of t-0 has no entry for offset 0',
    });
  });
});

describe('hostile stores, continued', () => {
  it('fails a GET that fails once with the storage error, with no second try on the same tier', async () => {
    const s = await setup();
    await s.produce(['a']);
    const [object] = s.objects.keys();
    const get = vi.spyOn(s.objects, 'get').mockRejectedValueOnce(new Error('connection reset'));
    expect(await s.failure({})).toEqual({
      code: 'KAFKA_STORAGE_ERROR',
      message: `object ${object} could not be read`,
    });
    expect(get).toHaveBeenCalledTimes(1);
    expect((await s.records({})).records).toEqual([[0, 'a']]);
  });

  it('answers OFFSET_OUT_OF_RANGE when retention passes the offset between the state read and the index read', async () => {
    const s = await setup({ tailFlushEntries: 1 });
    for (const value of ['a', 'b']) {
      await s.produce([value]);
      await s.sluice.maintenance.run();
    }
    await s.produce(['c']);
    const key = keys.partitionState(s.topic.topicId, 0);
    const stale = await s.store.get(key);
    expect(stale?.['logStartOffset']).toBe(0);
    const config = { 'cleanup.policy': 'delete', 'retention.ms': -1, 'retention.bytes': 1 } as const;
    expect(await applyRetention(s.store, s.topic.topicId, 0, config, s.clock.now())).toMatchObject({
      logStartOffset: 2,
    });
    // The fetch reads the partition item as it was before retention ran.
    const get = s.store.get.bind(s.store);
    let served = false;
    vi.spyOn(s.store, 'get').mockImplementation(async (k, options) => {
      if (served || k.sk !== key.sk) return get(k, options);
      served = true;
      return stale;
    });
    expect(await s.failure({ offset: 0 })).toEqual({
      code: 'OFFSET_OUT_OF_RANGE',
      message: "offset 0 is outside t-0's log [2, 3]",
    });
    expect(served).toBe(true);
  });

  it('never answers past a high watermark, nor before a log start, that fall inside a stored entry', async () => {
    const s = await setup();
    // One entry of two batches (offsets 0-1 and 2-3), then an entry at 4.
    expect(await s.produce(['a0', 'a1'], batchOf(['b0', 'b1'], T0 + 10))).toBe(0);
    expect(await s.produce(['c0'])).toBe(4);
    expect((await s.sluice.maintenance.run()).entriesIndexed).toBe(2);
    await s.store.update(keys.partitionState(s.topic.topicId, 0), [
      { set: stateAttr.highWatermark, value: 2 },
      { set: 'logStartOffset', value: 1 },
    ]);
    const gets = s.objects.meter.read().objectGets;
    expect(await s.records({ offset: 1 })).toEqual({
      records: [[1, 'a1']],
      nextOffset: 2,
      highWatermark: 2,
      logStartOffset: 1,
    });
    // Only the entry below the HW is read: the one above it may not be on every in-sync store.
    expect(s.objects.meter.read().objectGets - gets).toBe(1);
    expect(await s.batches({ offset: 1 })).toEqual({
      batches: [[0, ['a0', 'a1']]],
      nextOffset: 2,
      highWatermark: 2,
      logStartOffset: 1,
    });
    expect(await s.sluice.fetcher.listOffsets('t', 0, T0)).toEqual({ offset: 1, timestamp: T0 + 1 });
    expect(await s.sluice.fetcher.listOffsets('t', 0, T0 + 10)).toEqual({ offset: null, timestamp: null });
    expect(await s.failure({ offset: 0 })).toEqual({
      code: 'OFFSET_OUT_OF_RANGE',
      message: "offset 0 is outside t-0's log [1, 2]",
    });
    // At the boundary of the entry above it, the HW still keeps that entry unread.
    await s.store.update(keys.partitionState(s.topic.topicId, 0), [
      { set: stateAttr.highWatermark, value: 4 },
    ]);
    const before = s.objects.meter.read().objectGets;
    expect(await s.records({ offset: 1 })).toMatchObject({
      records: [
        [1, 'a1'],
        [2, 'b0'],
        [3, 'b1'],
      ],
      nextOffset: 4,
    });
    expect(s.objects.meter.read().objectGets - before).toBe(1);
  });

  it('never answers a record at or past a high watermark that falls inside a stored batch', async () => {
    const s = await setup();
    expect(await s.produce(['a0', 'a1', 'a2'])).toBe(0);
    await s.store.update(keys.partitionState(s.topic.topicId, 0), [
      { set: stateAttr.highWatermark, value: 1 },
    ]);
    expect(await s.records({})).toEqual({
      records: [[0, 'a0']],
      nextOffset: 1,
      highWatermark: 1,
      logStartOffset: 0,
    });
  });

  it('resolves a store for a consumer’s fetch only to read: an empty one at the HW answers though the leader’s is gone', async () => {
    const s = await setup();
    await s.produce(['a']);
    // The leader names a store this deployment no longer configures.
    await s.store.update(keys.partitionState(s.topic.topicId, 0), [{ set: 'leader', value: 's9' }]);
    expect(await s.records({ offset: 1 })).toEqual({
      records: [],
      nextOffset: 1,
      highWatermark: 1,
      logStartOffset: 0,
    });
    expect(await s.failure({ offset: 0 })).toEqual({
      code: 'NOT_LEADER_OR_FOLLOWER',
      message: 'store s9 is not configured in this deployment',
    });
  });

  it('refuses a fetch from a store that is not an in-sync replica, naming the ISR', async () => {
    const s = await setup();
    await s.produce(['a']);
    expect((await s.records({ replica: 's0' })).records).toEqual([[0, 'a']]);
    expect(await s.failure({ replica: 's9' })).toEqual({
      code: 'NOT_LEADER_OR_FOLLOWER',
      message: 'store s9 is not an in-sync replica of this partition; in-sync: s0',
    });
  });
});

describe('a lying index', () => {
  it('ends a fetch whose next read makes no progress instead of reading the same entry again', async () => {
    const s = await setup({ tailFlushEntries: 1000 });
    for (const value of ['a', 'b']) await s.produce([value]);
    await s.sluice.maintenance.run();
    const [page] = (
      await s.store.query({ pk: keys.partitionPk(s.topic.topicId, 0), sk: { beginsWith: keys.batchPrefix } })
    ).items;
    // The first entry claims two offsets, though its batch holds one.
    const entries = pageEntries(page!).map((x, i) => (i === 0 ? { ...x.entry, offsetCount: 2 } : x.entry));
    await s.store.put(pageItem(s.topic.topicId, 0, offsetFromBatchSk(page!.sk), entries));
    expect(await s.records({ maxBytes: 1 })).toMatchObject({ records: [[0, 'a']], nextOffset: 1 });
  });
});

describe('transaction markers and aborted batches', () => {
  const producerOf = async (s: Awaited<ReturnType<typeof setup>>, transactionalId: string) => {
    const client = new SluiceClient({ url: 'http://sluice.invalid', fetch: routerFetch(s.sluice.router()) });
    const producer = client.producer({ transactionalId });
    await producer.initTransactions();
    return producer;
  };

  it('moves nextOffset past a marker to the next record, and no further when maxBytes ends the answer there', async () => {
    const s = await setup();
    const producer = await producerOf(s, 'app');
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ key: 'k', value: 'x' }]);
    await producer.commitTransaction();
    // x at 0, its commit marker at 1.
    expect(await s.records({})).toMatchObject({ records: [[0, 'x']], nextOffset: 2 });
    expect(await s.produce(['y'])).toBe(2);
    expect(await s.records({})).toMatchObject({
      records: [
        [0, 'x'],
        [2, 'y'],
      ],
      nextOffset: 3,
    });
    // Room for x only (key + value, 2 bytes): the answer ends before y, which the next fetch starts at.
    expect(await s.records({ maxBytes: 2 })).toMatchObject({ records: [[0, 'x']], nextOffset: 2 });
  });

  it('moves a read_committed nextOffset past an aborted batch, up to the last stable offset', async () => {
    const s = await setup();
    const aborting = await producerOf(s, 'aborting');
    const open = await producerOf(s, 'open');
    aborting.beginTransaction();
    await aborting.sendBatch('t', 0, [
      { key: 'k', value: 'a0' },
      { key: 'k', value: 'a1' },
    ]);
    open.beginTransaction();
    await open.sendBatch('t', 0, [{ key: 'k', value: 'o2' }]);
    await aborting.abortTransaction();
    // The aborted batch holds 0-1, the open transaction starts at 2 (the last stable offset), the
    // abort marker is at 3.
    expect(await s.records({ isolationLevel: 'read_committed' })).toEqual({
      records: [],
      nextOffset: 2,
      highWatermark: 4,
      logStartOffset: 0,
      lastStableOffset: 2,
    });
  });
});

describe('compacted batches', () => {
  it('moves nextOffset past the offsets the cleaner removed from the end of a batch', async () => {
    const s = memorySluice();
    const created = await s.http('POST', '/v1/topics', {
      name: 'c',
      partitions: 1,
      configs: { 'cleanup.policy': 'compact' },
    });
    expect(created.status).toBe(201);
    for (const records of [
      [
        ['a', '1'],
        ['b', '1'],
      ],
      [['b', '2']],
      [['c', '1']],
    ])
      expect(
        (
          await s.http('POST', '/v1/topics/c/records', {
            records: records.map(([key, value]) => ({ key, value, partition: 0 })),
          })
        ).status,
      ).toBe(200);
    expect((await s.sluice.maintenance.run()).recordsCompacted).toBe(1);
    const page = await s.sluice.fetcher.fetchRecords('c', 0, { offset: 0, maxBytes: 1, maxWaitMs: 0 });
    expect([page.records.map((r) => [r.offset, text(r.value)]), page.nextOffset]).toEqual([[[0, '1']], 2]);
  });
});
