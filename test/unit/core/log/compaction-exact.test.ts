import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { pageItem } from '../../../../lib/core/log/batch-index.js';
import { MIN_CLEANABLE_DIRTY_RATIO } from '../../../../lib/core/log/compaction.js';
import { applyRetention } from '../../../../lib/core/log/retention.js';
import { timeMarkItem } from '../../../../lib/core/log/time-index.js';
import {
  decodeRecordBatch,
  encodeRecordBatch,
  splitBatches,
} from '../../../../protocol/record-batch/index.js';
import { BATCH, RAW, setup, utf8 } from '../../../support/compaction-support.js';

type Setup = Awaited<ReturnType<typeof setup>>;

/** Batches from independent encoders (kafkajs, the reference zstd tool). */
const golden = JSON.parse(
  readFileSync(new URL('../../../fixtures/record-batch/kafkajs-golden.json', import.meta.url), 'utf8'),
) as {
  recordSets: Record<string, { key: string | null; value: string | null }[]>;
  cases: { compression: string; records: string; batch: string }[];
};

const NOTHING = { entriesRewritten: 0, recordsRemoved: 0, tombstonesDropped: 0 };

/** `rounds` requests, each writing every key once (values `${key}${round}`), then all indexed. */
const rounds = async (s: Setup, keyNames: readonly string[], count: number, from = 0) => {
  for (let round = from; round < from + count; round++)
    await s.produce(keyNames.map((k): [string, string] => [k, `${k}${round}`]));
  await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
};

/** The partition's time marks, in key order. */
const timeIndex = async (s: Setup) =>
  (await s.store.query({ pk: keys.partitionPk(s.topic.topicId, 0), sk: { beginsWith: keys.timePrefix } }))
    .items;

const bytesOf = (entries: readonly { sizeInBytes: number }[]) =>
  entries.reduce((sum, e) => sum + e.sizeInBytes, 0);

describe('the dirty ratio', () => {
  it('is 0 on an empty partition, which no pass cleans, and no pass runs on a partition that does not exist', async () => {
    const s = await setup();
    expect(await s.compact()).toEqual({
      skipped: 'below-dirty-ratio',
      dirtyRatio: 0,
      cleanedThrough: 0,
      ...NOTHING,
    });
    // Not even with a min.cleanable.dirty.ratio of 0: there is nothing to clean.
    expect(await s.compact(undefined, { config: { 'min.cleanable.dirty.ratio': 0 } })).toEqual({
      skipped: 'below-dirty-ratio',
      dirtyRatio: 0,
      cleanedThrough: 0,
      ...NOTHING,
    });
    expect(await s.compact(undefined, { partition: 7 })).toEqual({
      skipped: 'not-compacted',
      dirtyRatio: 0,
      cleanedThrough: 0,
      ...NOTHING,
    });
    expect(s.objects.keys()).toEqual([]);
  });

  it('is the dirty bytes over all bytes since the log start, and a pass runs from min.cleanable.dirty.ratio on', async () => {
    const s = await setup();
    await rounds(s, ['a', 'b'], 4);
    const first = await s.compact();
    expect(first).toEqual({
      dirtyRatio: 1,
      cleanedThrough: 8,
      entriesRewritten: 3,
      recordsRemoved: 6,
      tombstonesDropped: 0,
    });
    const clean = bytesOf(await s.index());
    expect((await s.cleaner()).cleanBytes).toBe(clean);

    await rounds(s, ['a', 'b'], 2, 4);
    const dirty = bytesOf((await s.index()).slice(4));
    const ratio = dirty / (clean + dirty);
    expect(ratio).toBeGreaterThan(0.2);
    expect(ratio).toBeLessThan(MIN_CLEANABLE_DIRTY_RATIO);
    // The default threshold (0.5) is not reached, nor one just above the ratio: the pass reports why.
    const below = { skipped: 'below-dirty-ratio', dirtyRatio: ratio, cleanedThrough: 8, ...NOTHING };
    expect(await s.compact(undefined, { config: { 'min.cleanable.dirty.ratio': undefined } })).toEqual(below);
    expect(await s.compact(undefined, { config: { 'min.cleanable.dirty.ratio': ratio + 1e-9 } })).toEqual(
      below,
    );
    expect((await s.index()).map((e) => e['recordCount'])).toEqual([0, 0, 0, 2, 2, 2]);
    // A threshold equal to the ratio is reached.
    expect(await s.compact(undefined, { config: { 'min.cleanable.dirty.ratio': ratio } })).toEqual({
      dirtyRatio: ratio,
      cleanedThrough: 12,
      entriesRewritten: 2,
      recordsRemoved: 4,
      tombstonesDropped: 0,
    });
    expect((await s.index()).map((e) => e['recordCount'])).toEqual([0, 0, 0, 0, 0, 2]);
  });

  it('follows the topic’s min.cleanable.dirty.ratio over the default', async () => {
    const s = await setup({ 'min.cleanable.dirty.ratio': '0.9' });
    await rounds(s, ['a'], 2);
    await s.compact();
    await rounds(s, ['a'], 4, 2);
    const index = await s.index();
    const ratio = bytesOf(index.slice(2)) / bytesOf(index);
    expect(ratio).toBeGreaterThan(MIN_CLEANABLE_DIRTY_RATIO);
    expect(ratio).toBeLessThan(0.9);
    expect(await s.compact()).toEqual({
      skipped: 'below-dirty-ratio',
      dirtyRatio: ratio,
      cleanedThrough: 2,
      ...NOTHING,
    });
  });
});

describe('the clean bytes', () => {
  it('count for nothing once retention has moved the log start to where the clean part ends', async () => {
    const s = await setup({ 'cleanup.policy': 'compact,delete' });
    const old = s.clock.now() - 600_000;
    for (let round = 0; round < 2; round++)
      await s.produce([
        ['a', `a${round}`, old],
        ['b', `b${round}`, old],
      ]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    expect(await s.compact()).toMatchObject({ cleanedThrough: 4, recordsRemoved: 2 });
    expect((await s.cleaner()).cleanBytes).toBe(bytesOf(await s.index()));
    const retention = {
      'cleanup.policy': 'compact,delete',
      'retention.ms': 60_000,
      'retention.bytes': -1,
    } as const;
    expect(await applyRetention(s.store, s.topic.topicId, 0, retention, s.clock.now())).toEqual({
      logStartOffset: 4,
      batchesDeleted: 2,
    });
    await rounds(s, ['a'], 2);
    // The clean part [4, 4) is empty: every byte since the log start is dirty.
    expect(await s.compact()).toEqual({
      dirtyRatio: 1,
      cleanedThrough: 6,
      entriesRewritten: 1,
      recordsRemoved: 1,
      tombstonesDropped: 0,
    });
  });
});

describe('a cleaned entry', () => {
  it('holds its survivors’ count and min and max timestamps; an emptied one is a header-only batch without any', async () => {
    const s = await setup();
    await s.produce([
      ['x', 'x0', 3000],
      ['d', 'd0', 4000],
    ]);
    await s.produce([
      ['y', 'y1', 3000],
      ['d', 'd1', 9000],
      ['w', 'w1', 5000],
    ]);
    await s.produce([
      ['z', 'z2', 0],
      ['v', 'v2', 2000],
      ['d', 'd2', 1000],
    ]);
    await s.produce([
      ['d', 'd3', 6000],
      ['x', 'x3', 6000],
    ]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const before = await s.index();
    expect(await s.compact()).toEqual({
      dirtyRatio: 1,
      cleanedThrough: 10,
      entriesRewritten: 3,
      recordsRemoved: 4,
      tombstonesDropped: 0,
    });
    const after = await s.index();
    expect(
      after.map((e) => [e['offsetCount'], e['recordCount'], e['maxTimestamp'], e['firstTimestamp']]),
    ).toEqual([
      [2, 0, -1, -1],
      [3, 2, 5000, 3000],
      [3, 2, 2000, 0],
      [2, 2, 6000, 6000],
    ]);
    expect(after[0]!.sizeInBytes).toBe(61);
    expect(after[3]).toEqual(before[3]);
    expect((await s.fetchRows()).rows).toEqual([
      [2, 'y', 'y1'],
      [4, 'w', 'w1'],
      [5, 'z', 'z2'],
      [6, 'v', 'v2'],
      [8, 'd', 'd3'],
      [9, 'x', 'x3'],
    ]);
    // The time index follows: the running max now first rises at offset 2 and ends at 6000, not 9000.
    expect((await s.state()).maxTimestampSoFar).toBe(6000);
    expect(await timeIndex(s)).toEqual([
      timeMarkItem(s.topic.topicId, 0, { maxTimestamp: 6000, baseOffset: 2, prev: -1 }),
    ]);
    expect((await s.http('GET', '/v1/topics/t/partitions/0/offsets?at=5500')).body).toEqual({
      offset: 8,
      timestamp: 6000,
    });
  });
});

describe('tombstones', () => {
  it('go once their batch is older than delete.retention.ms, not at it, and each one dropped is counted', async () => {
    const s = await setup({ 'delete.retention.ms': '1000' });
    const now = s.clock.now();
    await s.produce([['a', 'a0', now - 5000]]);
    await s.produce([['a', null, now - 1000]]);
    await s.produce([['b', 'b0', now - 5000]]);
    await s.produce([['b', null, now - 1001]]);
    await s.produce([['c', 'c0', now - 5000]]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    expect(await s.compact(now)).toEqual({
      dirtyRatio: 1,
      cleanedThrough: 5,
      entriesRewritten: 3,
      recordsRemoved: 3,
      tombstonesDropped: 1,
    });
    expect((await s.fetchRows()).rows).toEqual([
      [1, 'a', null],
      [4, 'c', 'c0'],
    ]);
    expect((await s.cleaner()).oldestTombstone).toBe(now - 1000);

    // Nothing dirty, and the kept tombstone is at the horizon, not past it: no pass.
    expect(await s.compact(now)).toEqual({
      skipped: 'below-dirty-ratio',
      dirtyRatio: 0,
      cleanedThrough: 5,
      ...NOTHING,
    });
    // A millisecond later it is due, and the pass that drops it clears the cleaner's record of it.
    expect(await s.compact(now + 1)).toEqual({
      dirtyRatio: 0,
      cleanedThrough: 5,
      entriesRewritten: 1,
      recordsRemoved: 1,
      tombstonesDropped: 1,
    });
    expect(Object.hasOwn(await s.cleaner(), 'oldestTombstone')).toBe(false);
    expect((await s.fetchRows()).rows).toEqual([[4, 'c', 'c0']]);
  });

  it('that are kept record the oldest max timestamp among their batches, across batches and entries', async () => {
    const s = await setup();
    const now = s.clock.now();
    const tombstone = (key: string, timestamp: number) =>
      encodeRecordBatch([{ key: utf8(key), value: null, timestamp }]);
    await s.produce([['k', null, now - 300]]);
    const two = Buffer.concat([tombstone('m', now - 500), tombstone('n', now - 800)]);
    expect((await s.http('POST', '/v1/topics/t/partitions/0/batches', two, BATCH)).status).toBe(200);
    await s.produce([['q', 'q0', now - 100]]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    expect(await s.compact(now)).toEqual({ dirtyRatio: 1, cleanedThrough: 4, ...NOTHING });
    expect((await s.cleaner()).oldestTombstone).toBe(now - 800);
  });
});

describe('the offset map', () => {
  /** Rewrites the index's record counts, as an index claiming that many records would read. */
  const claimCounts = async (s: Setup, counts: readonly number[]) => {
    const entries = (await s.index()).map((e, i) => ({ ...e, recordCount: counts[i] ?? e.recordCount }));
    await s.store.put(pageItem(s.topic.topicId, 0, 0, entries));
  };

  it('holds 500,000 records at most, always one entry, and the pass cleans only through what it mapped', async () => {
    const s = await setup();
    await rounds(s, ['k'], 3);
    await claimCounts(s, [250_000, 250_000, 1]);
    // 250,000 + 250,000 fit; one more does not: offset 1 is the latest k the pass knows of.
    expect(await s.compact()).toEqual({
      dirtyRatio: 1,
      cleanedThrough: 2,
      entriesRewritten: 1,
      recordsRemoved: 1,
      tombstonesDropped: 0,
    });
    expect((await s.fetchRows()).rows).toEqual([
      [1, 'k', 'k1'],
      [2, 'k', 'k2'],
    ]);

    const big = await setup();
    await rounds(big, ['k'], 2);
    await claimCounts(big, [600_000, 1]);
    expect(await big.compact()).toEqual({ dirtyRatio: 1, cleanedThrough: 1, ...NOTHING });
    expect((await big.fetchRows()).rows).toEqual([
      [0, 'k', 'k0'],
      [1, 'k', 'k1'],
    ]);
  });

  it('reads each entry once to map it and once to clean it', async () => {
    const s = await setup();
    await rounds(s, ['k'], 40);
    expect(s.objects.keys()).toHaveLength(40);
    const gets = s.objects.meter.read().objectGets;
    expect(await s.compact()).toMatchObject({ cleanedThrough: 40, entriesRewritten: 39 });
    expect(s.objects.meter.read().objectGets - gets).toBe(80);
  });
});

describe('a rewritten batch', () => {
  it('keeps LogAppendTime and its append time, and a batch of the entry that lost nothing keeps its bytes', async () => {
    const s = await setup({ 'message.timestamp.type': 'LogAppendTime' });
    const appended = s.clock.now();
    const two = Buffer.concat([
      encodeRecordBatch([
        { key: utf8('a'), value: utf8('a0'), timestamp: 1000 },
        { key: utf8('c'), value: utf8('c0'), timestamp: 1500 },
      ]),
      encodeRecordBatch([{ key: utf8('b'), value: utf8('b0'), timestamp: 2000 }]),
    ]);
    expect((await s.http('POST', '/v1/topics/t/partitions/0/batches', two, BATCH)).status).toBe(200);
    s.clock.time += 10;
    await s.produce([['a', 'a1']]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const raw = async () => {
      const r = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0', undefined, RAW);
      return { body: r.body as Uint8Array, batches: splitBatches(r.body) };
    };
    const before = await raw();
    expect(await s.compact()).toMatchObject({ cleanedThrough: 4, entriesRewritten: 1, recordsRemoved: 1 });
    const after = await raw();
    expect(
      after.batches.map(({ header }) => [
        header.baseOffset,
        header.timestampType,
        header.maxTimestamp,
        header.recordCount,
      ]),
    ).toEqual([
      [0, 'LogAppendTime', appended, 1],
      [2, 'LogAppendTime', appended, 1],
      [3, 'LogAppendTime', appended + 10, 1],
    ]);
    const bytesOfBatch = (view: typeof before, i: number) =>
      Buffer.from(view.body.subarray(view.batches[i]!.start, view.batches[i]!.end));
    expect(bytesOfBatch(after, 1).equals(bytesOfBatch(before, 1))).toBe(true);
    const [first] = after.batches;
    const records = decodeRecordBatch(after.body.subarray(first!.start, first!.end)).records;
    expect(
      records.map((r) => [
        r.offset,
        Buffer.from(r.key!).toString(),
        Buffer.from(r.value!).toString(),
        r.timestamp,
      ]),
    ).toEqual([[1, 'c', 'c0', appended]]);
  });

  it('of zstd, which Sluice reads but cannot write, is rewritten uncompressed', async () => {
    // The reference tool's frame declares a window over the default max.message.bytes.
    const s = await setup({ 'cleanup.policy': 'delete', 'max.message.bytes': '8388608' });
    const zstd = golden.cases.find((c) => c.compression === 'zstd')!;
    const sent = Buffer.from(zstd.batch, 'hex');
    expect((await s.http('POST', '/v1/topics/t/partitions/0/batches', sent, BATCH)).status).toBe(200);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    // Compacted since (the keyless records are from before): the pass drops them and must rewrite the batch.
    const result = await s.compact(undefined, { config: { 'cleanup.policy': 'compact' } });
    const records = golden.recordSets[zstd.records]!;
    const keyless = records.filter((r) => r.key === null).length;
    expect(result).toMatchObject({ entriesRewritten: 1, recordsRemoved: keyless });
    const r = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0', undefined, RAW);
    const [batch, ...rest] = splitBatches(r.body);
    expect(rest).toEqual([]);
    expect([batch!.header.compression, batch!.header.recordCount, batch!.header.lastOffsetDelta]).toEqual([
      'none',
      records.length - keyless,
      records.length - 1,
    ]);
    const kept = decodeRecordBatch(r.body).records.map((x) => [
      x.offset,
      Buffer.from(x.key!).toString('hex'),
    ]);
    expect(kept).toEqual(records.flatMap((x, offset) => (x.key === null ? [] : [[offset, x.key]])));
  });
});

describe('what the cleaner never sees', () => {
  it('is a producer-made control batch or a transactional batch without a producer: produce refuses them', async () => {
    const s = await setup();
    const record = { key: utf8('a'), value: utf8('a0'), timestamp: 1000 };
    const refusals = [
      [{ isTransactional: true }, 'batch 0 is transactional without a producer id, epoch and sequence'],
      [
        { isTransactional: true, isControl: true },
        'batch 0 is a control batch; only the transaction coordinator writes those',
      ],
    ] as const;
    for (const [flags, message] of refusals) {
      const r = await s.http(
        'POST',
        '/v1/topics/t/partitions/0/batches',
        encodeRecordBatch([record], flags),
        BATCH,
      );
      expect([r.status, r.body.error.code, r.body.error.message]).toEqual([400, 'INVALID_RECORD', message]);
    }
    expect(s.objects.keys()).toEqual([]);
    expect((await s.state()).nextOffset).toBe(0);
  });
});
