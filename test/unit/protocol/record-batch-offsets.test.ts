import { describe, expect, it } from 'vitest';
import {
  type RecordInput,
  decodeRecordBatch,
  encodeRecordBatch,
  readBatchHeader,
  splitBatches,
  withBaseOffset,
} from '../../../protocol/record-batch/index.js';
import { codeOf } from '../../support/sluice-error.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array | null): string | null => (b === null ? null : new TextDecoder().decode(b));
const T0 = 1_700_000_000_000;

/** What the log cleaner keeps of a ten-record batch: offsets 2, 3, 7 (a tombstone) and nothing after. */
const survivors: RecordInput[] = [
  { key: utf8('a'), value: utf8('A2'), timestamp: T0 + 20, offsetDelta: 2 },
  {
    key: utf8('b'),
    value: utf8('B3'),
    headers: [{ key: 'h', value: utf8('x') }],
    timestamp: T0 + 5,
    offsetDelta: 3,
  },
  { key: utf8('c'), value: null, timestamp: T0 + 70, offsetDelta: 7 },
];

describe('explicit record offsets', () => {
  it('round-trips records at their own offsets with the batch span kept', () => {
    const batch = encodeRecordBatch(survivors, {
      baseOffset: 100,
      lastOffsetDelta: 9,
      producerId: 42,
      producerEpoch: 3,
      baseSequence: 17,
    });
    const { header, records } = decodeRecordBatch(batch);
    expect(header.baseOffset).toBe(100);
    expect(header.lastOffsetDelta).toBe(9);
    expect(header.recordCount).toBe(3);
    expect([header.producerId, header.producerEpoch, header.baseSequence]).toEqual([42, 3, 17]);
    expect(header.baseTimestamp).toBe(T0 + 20);
    expect(header.maxTimestamp).toBe(T0 + 70);
    expect(records.map((r) => [r.offset, text(r.key), text(r.value), r.timestamp])).toEqual([
      [102, 'a', 'A2', T0 + 20],
      [103, 'b', 'B3', T0 + 5],
      [107, 'c', null, T0 + 70],
    ]);
    expect(records[1]!.headers.map((h) => [h.key, text(h.value)])).toEqual([['h', 'x']]);
    // The reader moves the batch to its true base offset; the CRC does not cover it.
    const moved = decodeRecordBatch(withBaseOffset(batch, 5000));
    expect(moved.records.map((r) => r.offset)).toEqual([5002, 5003, 5007]);
  });

  it('compresses records with gaps like any other batch', () => {
    for (const compression of ['gzip', 'snappy', 'lz4'] as const) {
      const batch = encodeRecordBatch(survivors, { lastOffsetDelta: 12, compression });
      const { header, records } = decodeRecordBatch(batch);
      expect(header.compression).toBe(compression);
      expect(header.lastOffsetDelta).toBe(12);
      expect(records.map((r) => r.offset)).toEqual([2, 3, 7]);
    }
  });

  it('defaults the last offset delta to the last record’s and fills missing deltas one past the previous', () => {
    const batch = encodeRecordBatch([
      { key: null, value: utf8('x'), timestamp: T0, offsetDelta: 4 },
      { key: null, value: utf8('y'), timestamp: T0 },
      { key: null, value: utf8('z'), timestamp: T0, offsetDelta: 9 },
    ]);
    const { header, records } = decodeRecordBatch(batch);
    expect(header.lastOffsetDelta).toBe(9);
    expect(records.map((r) => r.offset)).toEqual([4, 5, 9]);
  });

  it('writes the same bytes as before when no offsets are given', () => {
    const plain: RecordInput[] = [
      { key: utf8('k'), value: utf8('v1'), timestamp: T0 },
      { key: utf8('k'), value: utf8('v2'), timestamp: T0 + 1 },
    ];
    const explicit = plain.map((r, i) => ({ ...r, offsetDelta: i }));
    expect(Buffer.from(encodeRecordBatch(explicit, { lastOffsetDelta: 1 }))).toEqual(
      Buffer.from(encodeRecordBatch(plain)),
    );
    expect(readBatchHeader(encodeRecordBatch(plain)).lastOffsetDelta).toBe(1);
  });

  it('encodes a header-only batch that keeps the span and producer fields, as Kafka’s cleaner does', () => {
    const empty = encodeRecordBatch([], {
      baseOffset: 40,
      lastOffsetDelta: 5,
      producerId: 7,
      producerEpoch: 1,
      baseSequence: 30,
      compression: 'gzip',
    });
    expect(empty.length).toBe(61);
    const { header, records } = decodeRecordBatch(empty);
    expect(records).toEqual([]);
    expect(header.recordCount).toBe(0);
    expect(header.lastOffsetDelta).toBe(5);
    expect(header.compression).toBe('none');
    expect([header.baseTimestamp, header.maxTimestamp]).toEqual([-1, -1]);
    expect([header.producerId, header.producerEpoch, header.baseSequence]).toEqual([7, 1, 30]);
    const appendTime = decodeRecordBatch(
      encodeRecordBatch([], { lastOffsetDelta: 0, timestampType: 'LogAppendTime', logAppendTime: T0 }),
    ).header;
    expect([appendTime.timestampType, appendTime.maxTimestamp]).toEqual(['LogAppendTime', T0]);
    // Concatenated with a normal batch, both split and verify.
    const both = Buffer.concat([empty, encodeRecordBatch(survivors, { lastOffsetDelta: 7 })]);
    expect(splitBatches(both).map((b) => [b.header.recordCount, b.header.lastOffsetDelta])).toEqual([
      [0, 5],
      [3, 7],
    ]);
  });

  it('refuses offsets that do not increase or that pass the last offset delta', () => {
    const at = (offsetDelta: number) => ({ key: null, value: null, timestamp: T0, offsetDelta });
    expect(codeOf(() => encodeRecordBatch([at(3), at(3)]))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch([at(3), at(1)]))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch([at(-1)]))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch([at(1.5)]))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch([at(0x80000000)]))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch([at(4)], { lastOffsetDelta: 3 }))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch([], { lastOffsetDelta: -1 }))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch([]))).toBe('INVALID_RECORD');
    expect(
      codeOf(() =>
        encodeRecordBatch([at(0)], { baseOffset: Number.MAX_SAFE_INTEGER - 2, lastOffsetDelta: 3 }),
      ),
    ).toBe('INVALID_RECORD');
  });
});
