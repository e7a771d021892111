/**
 * Issue 10, class 1: every binary batch is validated in full before anything is written, whatever the
 * topic's cleanup.policy, and one bad stored batch never makes the records before it unreadable.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { decodePartitionState } from '../../../../lib/core/log/partition-codec.js';
import { RECORDS } from '../../../../protocol/record-batch/header.js';
import { encodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import { editHeader, withRecordsSection } from '../../../support/batch-surgery.js';
import { memorySluice } from '../../../support/log-support.js';

const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };
const GZIP = 1;
const T = 1_700_000_000_000;
const rec = (value: string, timestamp = T) => ({
  key: new Uint8Array(Buffer.from(`k-${value}`)),
  value: new Uint8Array(Buffer.from(value)),
  timestamp,
});
const good = (values: string[]) => encodeRecordBatch(values.map((v) => rec(v)));
const recordsOf = (batch: Uint8Array) => batch.subarray(RECORDS);

const setup = async () => {
  const s = memorySluice();
  expect((await s.http('POST', '/v1/topics', { name: 'd', partitions: 1 })).status).toBe(201);
  const topic = await s.sluice.catalog.get('d');
  // Two records acknowledged before any attack: they must stay readable whatever follows.
  const first = await s.http('POST', '/v1/topics/d/partitions/0/batches', good(['a', 'b']), BATCH);
  expect(first.body).toMatchObject({ baseOffset: 0, lastOffset: 1 });
  const snapshot = async () => {
    const state = decodePartitionState((await s.store.get(keys.partitionState(topic.topicId, 0)))!);
    return { nextOffset: state.nextOffset, tail: state.tail.length, objects: s.objects.keys().length };
  };
  return { ...s, snapshot, before: await snapshot() };
};

const values = (body: { records: { value: string }[] }) => body.records.map((r) => r.value);

// Three one-record batches' records sections, each with offsetDelta 0, glued under one header.
const sameOffsets = () => {
  const sections = ['x', 'y', 'z'].map((v) => recordsOf(good([v])));
  return editHeader(withRecordsSection(good(['x', 'y', 'z']), Buffer.concat(sections)), {});
};

// Concatenated gzip members of 16 MiB of zeros: 12 of them inflate to 192 MiB from ~200 KiB.
const gzipBomb = () => {
  const member = gzipSync(Buffer.alloc(16 * 1024 * 1024));
  return withRecordsSection(good(['bomb']), Buffer.concat(Array.from({ length: 12 }, () => member)), GZIP);
};

const attacks: [string, () => Uint8Array, string][] = [
  [
    'a record count larger than its records',
    () => editHeader(good(['x', 'y']), { recordCount: 3 }),
    'INVALID_RECORD',
  ],
  [
    'a record count smaller than its records',
    () => editHeader(good(['x', 'y', 'z']), { recordCount: 2, lastOffsetDelta: 1 }),
    'INVALID_RECORD',
  ],
  [
    'a records section of random bytes',
    () =>
      withRecordsSection(good(['x']), new Uint8Array(Buffer.from('7f3a91c2d4e5f60718293a4b5c6d7e8f', 'hex'))),
    'INVALID_RECORD',
  ],
  [
    'the gzip flag on data that is not gzip',
    () => editHeader(good(['x', 'y']), { attributes: GZIP }),
    'CORRUPT_MESSAGE',
  ],
  ['gzip that inflates to 192 MiB', gzipBomb, 'CORRUPT_MESSAGE'],
  [
    'lastOffsetDelta far beyond the record count',
    () => editHeader(good(['x']), { lastOffsetDelta: 999_999 }),
    'INVALID_RECORD',
  ],
  ['three records with offset delta 0', sameOffsets, 'INVALID_RECORD'],
  [
    'maxTimestamp unlike its records',
    () => editHeader(good(['x']), { maxTimestamp: T + 86_400_000 }),
    'INVALID_RECORD',
  ],
  ['a producer id below -1', () => editHeader(good(['x']), { producerId: -7 }), 'INVALID_RECORD'],
  [
    'a LogAppendTime batch from a producer',
    () => editHeader(good(['x']), { attributes: 0x08 }),
    'INVALID_RECORD',
  ],
];

describe('binary produce validates every batch in full (cleanup.policy=delete)', () => {
  it.each(attacks)('refuses %s with 400, changing nothing', async (_, make, code) => {
    const s = await setup();
    const reply = await s.http('POST', '/v1/topics/d/partitions/0/batches', make(), BATCH);
    expect([reply.status, reply.body.error.code]).toEqual([400, code]);
    expect(await s.snapshot()).toEqual(s.before);
    const fetched = await s.http('GET', '/v1/topics/d/partitions/0/records?offset=0');
    expect([fetched.status, values(fetched.body), fetched.body.highWatermark]).toEqual([200, ['a', 'b'], 2]);
  });

  it('refuses a whole request when its second batch is bad, writing neither', async () => {
    const s = await setup();
    const body = Buffer.concat([good(['c']), editHeader(good(['x']), { lastOffsetDelta: 5 })]);
    const reply = await s.http('POST', '/v1/topics/d/partitions/0/batches', body, BATCH);
    expect([reply.status, reply.body.error.code]).toEqual([400, 'INVALID_RECORD']);
    expect(reply.body.error.message).toContain('batch 1');
    expect(await s.snapshot()).toEqual(s.before);
  });

  it('still accepts a gzip batch that inflates within max.message.bytes, offsets dense', async () => {
    const s = await setup();
    const batch = encodeRecordBatch(
      ['c', 'd', 'e'].map((v) => rec(v)),
      { compression: 'gzip' },
    );
    const reply = await s.http('POST', '/v1/topics/d/partitions/0/batches', batch, BATCH);
    expect(reply.body).toMatchObject({ baseOffset: 2, lastOffset: 4 });
    const fetched = await s.http('GET', '/v1/topics/d/partitions/0/records?offset=0');
    expect(fetched.body.records.map((r: { offset: number; value: string }) => [r.offset, r.value])).toEqual([
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
      [3, 'd'],
      [4, 'e'],
    ]);
  });
});

describe('a bad stored batch never hides its neighbours', () => {
  it('answers 503, not a client error, for a stored batch whose CRC holds but whose records do not parse', async () => {
    const s = await setup();
    const third = encodeRecordBatch([rec('c', T + 5)]); // later than a and b: ListOffsets(T + 5) lands here
    expect((await s.http('POST', '/v1/topics/d/partitions/0/batches', third, BATCH)).status).toBe(200);
    const [, second] = s.objects.keys();
    // Same length, valid CRC, records section of 0xff: what a bug in a writer could leave behind.
    await s.objects.put(
      second!,
      withRecordsSection(third, new Uint8Array(third.length - RECORDS).fill(0xff)),
    );
    const before = await s.http('GET', '/v1/topics/d/partitions/0/records?offset=0');
    expect([before.status, values(before.body), before.body.nextOffset]).toEqual([200, ['a', 'b'], 2]);
    for (const path of ['records?offset=2', `offsets?at=${T + 5}`]) {
      const bad = await s.http('GET', `/v1/topics/d/partitions/0/${path}`);
      expect([path, bad.status, bad.body.error.code]).toEqual([path, 503, 'KAFKA_STORAGE_ERROR']);
    }
  });

  it('answers the records before a batch whose stored bytes were damaged', async () => {
    const s = await setup();
    expect((await s.http('POST', '/v1/topics/d/partitions/0/batches', good(['c']), BATCH)).status).toBe(200);
    const [, second] = s.objects.keys();
    const stored = await s.objects.get(second!);
    stored[stored.length - 1] = stored.at(-1)! ^ 0xff; // a flipped bit in the records: the CRC no longer matches
    await s.objects.put(second!, stored);
    const fetched = await s.http('GET', '/v1/topics/d/partitions/0/records?offset=0');
    expect([fetched.status, values(fetched.body), fetched.body.nextOffset]).toEqual([200, ['a', 'b'], 2]);
    const bad = await s.http('GET', '/v1/topics/d/partitions/0/records?offset=2');
    expect([bad.status, bad.body.error.code]).toEqual([503, 'KAFKA_STORAGE_ERROR']);
    expect(bad.body.error.message).not.toMatch(/Exception|stack|at \//);
  });
});
