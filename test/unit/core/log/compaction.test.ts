import { describe, expect, it, vi } from 'vitest';
import {
  decodeRecordBatch,
  encodeRecordBatch,
  splitBatches,
} from '../../../../protocol/record-batch/index.js';
import type { Row } from '../../../support/compaction-support.js';
import { BATCH, latestPerKey, RAW, setup, utf8 } from '../../../support/compaction-support.js';
import { memorySluice } from '../../../support/log-support.js';

describe('compaction', () => {
  it('keeps only the latest record per key at its original offset and readers step over the gaps', async () => {
    const s = await setup();
    const t0 = s.clock.now() - 1000;
    const written: Row[] = [];
    // 60 records over 7 keys in requests of 1 to 5 records, timestamps rising with the offset.
    const sizes = [1, 3, 5, 2, 4, 5, 1, 5, 3, 2, 5, 4, 5, 3, 4, 1, 3, 4];
    let i = 0;
    for (const size of sizes) {
      const batch = Array.from({ length: size }, (_, j): [string, string, number] => {
        const n = i + j;
        return [`k${(n * n + 3 * n) % 7}`, `v${n}`, t0 + n];
      });
      const offsets = await s.produce(batch);
      batch.forEach(([key, value], j) => written.push([offsets[j]!, key, value]));
      i += size;
    }
    expect(i).toBe(60);
    const expected = latestPerKey(written);
    expect(expected.map((r) => r[1]).sort()).toEqual(['k0', 'k3', 'k4', 'k5']);
    const objectsBefore = s.objects.keys().length;

    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    expect(report.recordsCompacted).toBe(60 - expected.length);

    const all = await s.fetchRows(0);
    expect(all.rows).toEqual(expected);
    expect(all.nextOffset).toBe(60);
    expect(await s.consumeAll()).toEqual(expected);
    for (const from of [1, expected[2]![0], expected[2]![0] + 1, 59]) {
      const page = await s.fetchRows(from);
      expect(page.rows).toEqual(expected.filter((r) => r[0] >= from));
      expect(page.nextOffset).toBe(60);
    }

    // Every entry keeps its span; the emptied ones hold header-only batches.
    const index = await s.index();
    expect(index).toHaveLength(sizes.length);
    expect(index.map((e) => e['offsetCount'])).toEqual(sizes);
    const counts = index.map((e) => e['recordCount'] as number);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(expected.length);
    expect(counts.filter((c) => c === 0).length).toBeGreaterThan(5);
    const state = await s.state();
    expect((await s.cleaner()).cleanedThrough).toBe(60);
    expect(state.tailBase).toBe(60);

    // ListOffsets by timestamp lands on the first surviving record at or after it.
    for (const ts of [t0 - 5, t0, t0 + 17, expected[3]![0] + t0, t0 + 59]) {
      const at = await s.http('GET', `/v1/topics/t/partitions/0/offsets?at=${ts}`);
      const first = expected.find((r) => r[0] + t0 >= ts)!;
      expect(at.body).toEqual({ offset: first[0], timestamp: first[0] + t0 });
    }
    expect((await s.http('GET', `/v1/topics/t/partitions/0/offsets?at=${t0 + 60}`)).body.offset).toBeNull();

    // Nothing is dirty now: a second run reads and writes nothing.
    const puts = s.objects.meter.read().objectPuts;
    const again = await s.sluice.maintenance.run();
    expect(again.recordsCompacted).toBe(0);
    expect(s.objects.meter.read().objectPuts).toBe(puts);
    expect(await s.compact()).toMatchObject({ skipped: 'below-dirty-ratio', dirtyRatio: 0 });
    // New objects were written; the old ones stay until the collector takes them.
    expect(s.objects.keys().length).toBeGreaterThan(objectsBefore);
  });

  it('returns valid raw batches with their true offsets, spans and producer fields', async () => {
    const s = await setup();
    const { producerId } = (await s.http('POST', '/v1/producers')).body;
    const rec = (key: string, value: string) => ({ key: utf8(key), value: utf8(value), timestamp: 1000 });
    const first = encodeRecordBatch([rec('a', 'a0'), rec('b', 'b0'), rec('x', 'x0')], {
      producerId,
      producerEpoch: 0,
      baseSequence: 0,
    });
    const second = encodeRecordBatch([rec('b', 'b1'), rec('c', 'c1'), rec('a', 'a1')], {
      producerId,
      producerEpoch: 0,
      baseSequence: 3,
      compression: 'gzip',
    });
    const sent = await s.http(
      'POST',
      '/v1/topics/t/partitions/0/batches',
      Buffer.concat([first, second]),
      BATCH,
    );
    expect(sent.body.baseOffset).toBe(0);
    await s.produce([
      ['c', 'c2'],
      ['y', 'y2'],
    ]);
    await s.sluice.maintenance.run();

    const raw = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0', undefined, RAW);
    expect(raw.status).toBe(200);
    expect(raw.headers?.['sluice-next-offset']).toBe('8');
    const batches = splitBatches(raw.body); // verifies every CRC
    expect(
      batches.map(({ header }) => [
        header.baseOffset,
        header.lastOffsetDelta,
        header.recordCount,
        header.baseSequence,
        header.compression,
      ]),
    ).toEqual([
      [0, 2, 1, 0, 'none'],
      [3, 2, 2, 3, 'gzip'],
      [6, 1, 2, -1, 'none'],
    ]);
    expect(batches.slice(0, 2).map((b) => [b.header.producerId, b.header.producerEpoch])).toEqual([
      [producerId, 0],
      [producerId, 0],
    ]);
    const records = batches.flatMap(({ start, end }) =>
      decodeRecordBatch(raw.body.subarray(start, end)).records.map((r) => [
        r.offset,
        Buffer.from(r.key!).toString(),
        Buffer.from(r.value!).toString(),
      ]),
    );
    expect(records).toEqual([
      [2, 'x', 'x0'],
      [3, 'b', 'b1'],
      [5, 'a', 'a1'],
      [6, 'c', 'c2'],
      [7, 'y', 'y2'],
    ]);
    // A fetch inside a batch's gap still gets the batch that holds the next record.
    const inGap = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=4', undefined, RAW);
    expect(splitBatches(inGap.body).map((b) => b.header.baseOffset)).toEqual([3, 6]);
  });

  it('keeps a tombstone until delete.retention.ms has passed, then drops it', async () => {
    const s = await setup({ 'delete.retention.ms': '60000' });
    await s.produce([
      ['a', 'a0'],
      ['b', 'b0'],
    ]);
    await s.produce([['a', null]]);
    await s.produce([['b', 'b1']]);
    const first = await s.sluice.maintenance.run();
    expect(first.recordsCompacted).toBe(2);
    expect((await s.fetchRows()).rows).toEqual([
      [2, 'a', null],
      [3, 'b', 'b1'],
    ]);
    expect((await s.cleaner()).oldestTombstone).toBe(s.clock.now());

    s.clock.time += 59_000;
    expect((await s.sluice.maintenance.run()).recordsCompacted).toBe(0);
    expect((await s.fetchRows()).rows).toEqual([
      [2, 'a', null],
      [3, 'b', 'b1'],
    ]);

    s.clock.time += 2_000;
    const late = await s.sluice.maintenance.run();
    expect(late.errors).toEqual([]);
    expect(late.recordsCompacted).toBe(1);
    const after = await s.fetchRows();
    expect(after.rows).toEqual([[3, 'b', 'b1']]);
    expect(after.nextOffset).toBe(4);
    expect((await s.fetchRows(2)).rows).toEqual([[3, 'b', 'b1']]);
    expect((await s.cleaner()).oldestTombstone).toBeUndefined();
    expect((await s.index()).map((e) => [e['offsetCount'], e['recordCount']])).toEqual([
      [2, 0],
      [1, 0],
      [1, 1],
    ]);
  });

  it('drops a tombstone that is already old on its first cleaning, with every older record of its key', async () => {
    const s = await setup({ 'delete.retention.ms': '1000' });
    const old = s.clock.now() - 10_000;
    await s.produce([
      ['gone', 'g0', old],
      ['kept', 'k0', old],
    ]);
    await s.produce([['gone', 'g1', old]]);
    await s.produce([['gone', null, old]]);
    const report = await s.sluice.maintenance.run();
    expect(report.recordsCompacted).toBe(3);
    expect((await s.consumeAll()).map((r) => r.slice(1))).toEqual([['kept', 'k0']]);
    expect((await s.fetchRows(0)).nextOffset).toBe(4);
  });

  it('never touches the tail: records there neither change nor supersede indexed ones', async () => {
    const s = await setup();
    for (let round = 0; round < 4; round++)
      await s.produce(['a', 'b', 'c'].map((k): [string, string] => [k, `${k}${round}`]));
    expect(await s.sluice.maintenance.indexTail(s.topic.topicId, 0)).toBe(4);
    for (let round = 4; round < 7; round++)
      await s.produce(['a', 'b', 'c'].map((k): [string, string] => [k, `${k}${round}`]));
    const tail = (await s.state()).tail;
    expect(tail).toHaveLength(3);

    const result = await s.compact();
    expect(result).toMatchObject({ cleanedThrough: 12, entriesRewritten: 3, recordsRemoved: 9 });
    const state = await s.state();
    expect(state.tail).toEqual(tail);
    expect(state.tailBase).toBe(12);
    expect((await s.fetchRows()).rows).toEqual(
      [3, 4, 5, 6].flatMap((round) => ['a', 'b', 'c'].map((k, i): Row => [round * 3 + i, k, `${k}${round}`])),
    );
  });

  it('leaves the replaced objects to the orphan collector, which deletes them after the grace period', async () => {
    const s = await setup();
    for (let round = 0; round < 5; round++) await s.produce([['k', `v${round}`]]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const original = (await s.index()).map((e) => e['objectKey'] as string);
    expect(new Set(original).size).toBe(5);
    await s.sluice.maintenance.run();
    const objects = (await s.index()).map((e) => e['objectKey'] as string);
    // The last entry kept its object; the four others point into one new object.
    expect(objects[4]).toBe(original[4]);
    expect(new Set(objects.slice(0, 4)).size).toBe(1);
    expect(original).not.toContain(objects[0]);
    const referenced = new Set(objects);
    expect(s.objects.keys()).toHaveLength(6);
    expect(await s.sluice.maintenance.collectOrphans(s.topic.topicId, 1)).toBe(0);
    s.clock.time += 16 * 60_000;
    expect(await s.sluice.maintenance.collectOrphans(s.topic.topicId, 1)).toBe(4);
    expect(new Set(s.objects.keys())).toEqual(referenced);
    expect(await s.consumeAll()).toEqual([[4, 'k', 'v4']]);
  });

  it('loses nothing that producers commit while a pass is between writing its object and swapping', async () => {
    const s = await setup({}, 2);
    const written: Row[] = [];
    const send = async (records: [string, string][]) => {
      const offsets = await s.produce(records);
      records.forEach(([k, v], j) => written.push([offsets[j]!, k, v]));
    };
    for (let round = 0; round < 6; round++)
      await send([
        ['a', `a${round}`],
        ['b', `b${round}`],
      ]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const put = s.objects.put.bind(s.objects);
    let injected = false;
    const spy = vi.spyOn(s.objects, 'put').mockImplementation(async (key, body) => {
      if (!injected) {
        injected = true;
        // Commits that overwrite the same keys, and a materializer that moves them into the index.
        await Promise.all([send([['a', 'late-a']]), send([['c', 'late-c']]), send([['b', 'late-b']])]);
        await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
      }
      return put(key, body);
    });
    const result = await s.compact();
    spy.mockRestore();
    expect(injected).toBe(true);
    expect(result.skipped).toBeUndefined();
    expect(result.cleanedThrough).toBe(12);
    expect(result.recordsRemoved).toBe(10);
    // The pass only knew the first 12 offsets; everything committed meanwhile is there.
    const late = written.filter((r) => r[0] >= 12);
    expect(late).toHaveLength(3);
    expect((await s.fetchRows()).rows).toEqual([
      [10, 'a', 'a5'],
      [11, 'b', 'b5'],
      ...late.sort((x, y) => x[0] - y[0]),
    ]);
    // Below the dirty ratio (3 dirty entries against 12 clean ones) the next run leaves it so.
    expect((await s.sluice.maintenance.run()).recordsCompacted).toBe(0);
    expect(await s.consumeAll()).toEqual([[10, 'a', 'a5'], [11, 'b', 'b5'], ...late]);
  });

  it('keeps every acknowledged latest value with produces and maintenance runs interleaved', async () => {
    const s = await setup({}, 2);
    const written: Row[] = [];
    const send = async (i: number) => {
      const records: [string, string][] = [
        [`k${i % 5}`, `v${i}`],
        [`k${(i * 3) % 7}`, `w${i}`],
      ];
      const offsets = await s.produce(records);
      records.forEach(([k, v], j) => written.push([offsets[j]!, k, v]));
    };
    let compacted = 0;
    for (let wave = 0; wave < 4; wave++) {
      const [report] = await Promise.all([
        s.sluice.maintenance.run(),
        ...Array.from({ length: 10 }, (_, j) => send(wave * 10 + j)),
      ]);
      expect(report.errors).toEqual([]);
      compacted += report.recordsCompacted;
    }
    compacted += (await s.sluice.maintenance.run()).recordsCompacted;
    expect(compacted).toBeGreaterThan(40);
    written.sort((x, y) => x[0] - y[0]);
    expect(written.map((r) => r[0])).toEqual(Array.from({ length: 80 }, (_, i) => i));
    expect(await s.consumeAll()).toEqual(latestPerKey(written));
    const state = await s.state();
    expect(state.nextOffset).toBe(80);
    for (const entry of await s.index())
      await expect(s.objects.get(entry['objectKey'] as string)).resolves.toBeTruthy();
  });

  it('cancels a swap whose index item changed under it and leaves the log as it was', async () => {
    const s = await setup();
    for (let round = 0; round < 4; round++) await s.produce([['k', `v${round}`]]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const before = await s.index();
    const transact = s.store.transact.bind(s.store);
    // A retention run (or another cleaner) rewrites the first entry between our read and our swap.
    const spy = vi.spyOn(s.store, 'transact').mockImplementationOnce(async (ops) => {
      await s.repoint(0, 'elsewhere');
      return transact(ops);
    });
    const raced = await s.compact();
    spy.mockRestore();
    expect(raced).toMatchObject({ skipped: 'raced', entriesRewritten: 0, recordsRemoved: 0 });
    expect((await s.cleaner()).cleanedThrough).toBeUndefined();
    const after = await s.index();
    expect(after[0]!['objectKey']).toBe('elsewhere');
    expect(after.slice(1)).toEqual(before.slice(1));
    // Once the entry is back, the next pass cleans.
    await s.repoint(0, before[0]!.objectKey);
    expect(await s.compact()).toMatchObject({ cleanedThrough: 4, recordsRemoved: 3 });
    expect(await s.consumeAll()).toEqual([[3, 'k', 'v3']]);
  });

  it('lets two concurrent passes remove each record once', async () => {
    const s = await setup();
    for (let round = 0; round < 8; round++)
      await s.produce([
        ['a', `a${round}`],
        ['b', `b${round}`],
      ]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    const results = await Promise.all([s.compact(), s.compact()]);
    expect(results.reduce((n, r) => n + r.recordsRemoved, 0)).toBe(14);
    expect(results.map((r) => r.skipped ?? 'done').sort()).toEqual(['done', 'raced']);
    expect(await s.consumeAll()).toEqual([
      [14, 'a', 'a7'],
      [15, 'b', 'b7'],
    ]);
    for (const entry of await s.index())
      await expect(s.objects.get(entry['objectKey'] as string)).resolves.toBeTruthy();
  });

  it('rejects keyless records on compacted topics, for JSON and for binary batches', async () => {
    for (const policy of ['compact', 'compact,delete']) {
      const s = await setup({ 'cleanup.policy': policy });
      const json = await s.http('POST', '/v1/topics/t/records', {
        records: [
          { key: 'a', value: '1', partition: 0 },
          { value: 'no key', partition: 0 },
        ],
      });
      expect(json.status).toBe(400);
      expect(json.body.error.code).toBe('INVALID_RECORD');
      expect(json.body.error.message).toMatch(/without a key/);
      const keyless = encodeRecordBatch([
        { key: utf8('a'), value: utf8('1'), timestamp: 1 },
        { key: null, value: utf8('2'), timestamp: 1 },
      ]);
      const binary = await s.http('POST', '/v1/topics/t/partitions/0/batches', keyless, BATCH);
      expect(binary.status).toBe(400);
      expect(binary.body.error.code).toBe('INVALID_RECORD');
      expect(s.objects.keys()).toEqual([]);
      expect((await s.state()).nextOffset).toBe(0);
      const keyed = encodeRecordBatch([{ key: utf8('a'), value: utf8('1'), timestamp: 1 }], {
        compression: 'lz4',
      });
      expect((await s.http('POST', '/v1/topics/t/partitions/0/batches', keyed, BATCH)).status).toBe(200);
      expect(await s.produce([['b', '2']])).toEqual([1]);
    }
    const plain = memorySluice();
    await plain.http('POST', '/v1/topics', { name: 'd', partitions: 1 });
    const ok = await plain.http('POST', '/v1/topics/d/records', { records: [{ value: 'no key' }] });
    expect(ok.status).toBe(200);
  });

  it('applies retention and compaction together under compact,delete', async () => {
    const s = await setup({ 'cleanup.policy': 'compact,delete', 'retention.ms': '60000' });
    const now = s.clock.now();
    await s.produce([
      ['a', 'a0', now - 300_000],
      ['b', 'b0', now - 300_000],
    ]);
    await s.produce([['c', 'c1', now - 200_000]]);
    await s.produce([
      ['a', 'a2', now - 10],
      ['d', 'd2', now - 10],
    ]);
    await s.produce([['a', 'a3', now]]);
    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    expect(report.batchesExpired).toBe(2);
    expect(report.recordsCompacted).toBe(1);
    expect((await s.state()).logStartOffset).toBe(3);
    expect((await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0')).status).toBe(416);
    expect((await s.fetchRows(3)).rows).toEqual([
      [4, 'd', 'd2'],
      [5, 'a', 'a3'],
    ]);
    expect((await s.http('GET', `/v1/topics/t/partitions/0/offsets?at=${now - 20}`)).body).toEqual({
      offset: 4,
      timestamp: now - 10,
    });
  });

  it('drops keyless records left from before a topic became compacted, as Kafka’s cleaner does', async () => {
    const s = await setup({ 'cleanup.policy': 'delete' });
    await s.produce([
      [null, 'no key'],
      ['a', 'a0'],
    ]);
    await s.produce([['b', 'b1']]);
    expect((await s.http('PATCH', '/v1/topics/t', { configs: { 'cleanup.policy': 'compact' } })).status).toBe(
      200,
    );
    const report = await s.sluice.maintenance.run();
    expect(report.recordsCompacted).toBe(1);
    expect(await s.consumeAll()).toEqual([
      [1, 'a', 'a0'],
      [2, 'b', 'b1'],
    ]);
  });

  it('does nothing on topics with cleanup.policy=delete', async () => {
    const s = await setup({ 'cleanup.policy': 'delete' });
    await s.produce([['a', '1']]);
    await s.produce([['a', '2']]);
    const report = await s.sluice.maintenance.run();
    expect(report.recordsCompacted).toBe(0);
    expect(await s.compact()).toMatchObject({ skipped: 'not-compacted', recordsRemoved: 0 });
    expect((await s.fetchRows()).rows).toEqual([
      [0, 'a', '1'],
      [1, 'a', '2'],
    ]);
  });
});
