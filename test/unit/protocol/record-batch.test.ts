import { describe, expect, it } from 'vitest';
import {
  AbortedFilter,
  type RecordInput,
  controlTypeOf,
  crc32c,
  decodeRecordBatch,
  encodeControlBatch,
  encodeRecordBatch,
  readBatchHeader,
  recordSize,
  splitBatches,
  withBaseOffset,
  withLogAppendTime,
} from '../../../protocol/record-batch/index.js';
import {
  ByteReader,
  sizeOfVarint,
  sizeOfVarlong,
  writeVarint,
  writeVarlong,
} from '../../../protocol/record-batch/varint.js';
import { editHeader, withRecordsSection } from '../../support/batch-surgery.js';
import { codeOf, errorOf } from '../../support/sluice-error.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const T0 = 1_700_000_000_000;

/** Recomputes the CRC after a test edits CRC-covered bytes, so that the edit reaches the record parser. */
function reseal(batch: Uint8Array): Uint8Array {
  new DataView(batch.buffer, batch.byteOffset).setUint32(17, crc32c(batch, 21));
  return batch;
}
const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
/** XORs one byte (a bit flip when `mask` has one bit). */
const flip = (b: Uint8Array, at: number, mask: number): void => view(b).setUint8(at, b[at]! ^ mask);

const three: RecordInput[] = [
  { key: utf8('a'), value: utf8('first'), timestamp: T0 + 10 },
  { key: null, value: null, headers: [{ key: 'h', value: null }], timestamp: T0 + 30 },
  { key: utf8('c'), value: utf8('third'), headers: [{ key: 'x', value: utf8('1') }], timestamp: T0 },
];

describe('crc32c', () => {
  it('matches the CRC-32C check value and the empty input', () => {
    expect(crc32c(utf8('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });

  it('agrees with a bit-at-a-time reference at every length and alignment', () => {
    const reference = (bytes: Uint8Array): number => {
      let crc = 0xffffffff;
      for (const b of bytes) {
        crc ^= b;
        for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
      }
      return (crc ^ 0xffffffff) >>> 0;
    };
    const data = Uint8Array.from({ length: 80 }, (_, i) => (i * 167 + 13) & 0xff);
    for (let start = 0; start < 9; start++) {
      for (let end = start; end <= data.length; end += 3) {
        expect(crc32c(data, start, end)).toBe(reference(data.subarray(start, end)));
      }
    }
    // Views whose buffer offset is not word-aligned (the word loop must align itself first).
    const big = Uint8Array.from({ length: 1000 }, (_, i) => (i * 31 + 7) & 0xff);
    for (let shift = 0; shift < 8; shift++) {
      const view = big.subarray(shift, 1000 - shift);
      expect(crc32c(view)).toBe(reference(view));
      expect(crc32c(view, 5, 517)).toBe(reference(view.subarray(5, 517)));
    }
  });

  it('rejects a range outside the buffer', () => {
    expect(() => crc32c(new Uint8Array(4), 2, 5)).toThrow(RangeError);
    expect(() => crc32c(new Uint8Array(4), 3, 2)).toThrow(RangeError);
  });

  it('names the range it rejects: not integers, before the start, past the end, reversed', () => {
    const four = new Uint8Array(4);
    for (const [start, end] of [
      [0.5, 4],
      [0, 3.5],
      [-1, 4],
      [0, 5],
      [3, 2],
    ] as const) {
      expect(() => crc32c(four, start, end)).toThrow(
        new RangeError(`crc32c: invalid range [${start}, ${end}) of 4 bytes`),
      );
    }
    // The empty ranges at either end are ranges too.
    expect([crc32c(four, 0, 0), crc32c(four, 4, 4), crc32c(four, 4)]).toEqual([0, 0, 0]);
    expect(crc32c(four, 0, 4)).toBe(crc32c(four));
  });
});

describe('varints', () => {
  // Encodings as Kafka's ByteUtils writes them.
  it.each([
    [0, '00'],
    [-1, '01'],
    [1, '02'],
    [63, '7e'],
    [-64, '7f'],
    [64, '8001'],
    [300, 'd804'],
    [2147483647, 'feffffff0f'],
    [-2147483648, 'ffffffff0f'],
  ])('varint %i is %s', (value, encoded) => {
    const buf = new Uint8Array(5);
    const end = writeVarint(buf, 0, value);
    expect(hex(buf.subarray(0, end))).toBe(encoded);
    expect(sizeOfVarint(value)).toBe(end);
    expect(new ByteReader(buf, 0, end).readVarint()).toBe(value);
  });

  it.each([
    [0, '00'],
    [-1, '01'],
    [T0, '80a0abfef962'],
    [-T0, 'ff9fabfef962'],
    [Number.MAX_SAFE_INTEGER, 'feffffffffffff1f'],
    [-Number.MAX_SAFE_INTEGER, 'fdffffffffffff1f'],
  ])('varlong %i is %s', (value, encoded) => {
    const buf = new Uint8Array(10);
    const end = writeVarlong(buf, 0, value);
    expect(hex(buf.subarray(0, end))).toBe(encoded);
    expect(sizeOfVarlong(value)).toBe(end);
    expect(new ByteReader(buf, 0, end).readVarlong()).toBe(value);
  });

  it('drops bits past 32 in a 5-byte varint exactly as Java does', () => {
    expect(new ByteReader(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x7f), 0, 5).readVarint()).toBe(-2147483648);
  });

  it('rejects over-long, truncated and out-of-range varints as INVALID_RECORD', () => {
    const read = (bytes: number[], long: boolean) => () => {
      const r = new ByteReader(Uint8Array.from(bytes), 0, bytes.length);
      return long ? r.readVarlong() : r.readVarint();
    };
    expect(codeOf(read([0x80, 0x80, 0x80, 0x80, 0x80, 0x01], false))).toBe('INVALID_RECORD');
    expect(codeOf(read([0x80], false))).toBe('INVALID_RECORD');
    expect(codeOf(read(Array(10).fill(0x80).concat(1), true))).toBe('INVALID_RECORD');
    // 2^54, the zigzag form of 2^53: one past what a double holds exactly.
    expect(codeOf(read([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20], true))).toBe('INVALID_RECORD');
  });
});

describe('encodeRecordBatch', () => {
  it('writes the header Kafka’s producer would, with Java’s defaults', () => {
    const batch = encodeRecordBatch(three);
    expect(readBatchHeader(batch)).toEqual({
      baseOffset: 0,
      batchLength: batch.length - 12,
      partitionLeaderEpoch: -1,
      magic: 2,
      crc: crc32c(batch, 21),
      compression: 'none',
      timestampType: 'CreateTime',
      isTransactional: false,
      isControl: false,
      lastOffsetDelta: 2,
      baseTimestamp: T0 + 10, // the first record's, not the smallest
      maxTimestamp: T0 + 30,
      producerId: -1,
      producerEpoch: -1,
      baseSequence: -1,
      recordCount: 3,
    });
  });

  it('lays a record out as length, attributes, deltas, key, value, headers', () => {
    const batch = encodeRecordBatch([
      { key: utf8('k'), value: utf8('v'), timestamp: T0 },
      { key: null, value: utf8(''), headers: [{ key: 'h', value: null }], timestamp: T0 - 1 },
    ]);
    expect(hex(batch.subarray(61))).toBe(
      '10' +
        '00' +
        '00' +
        '00' +
        '026b' +
        '0276' +
        '00' + // body 8 bytes: attrs, ts+0, offset 0, "k", "v", 0 headers
        '12' +
        '00' +
        '01' +
        '02' +
        '01' +
        '00' +
        '02' +
        '0268' +
        '01', // ts-1, offset 1, null key, "", 1 header "h"=null
    );
  });

  it('writes options into the header', () => {
    const batch = encodeRecordBatch(three, {
      baseOffset: 2 ** 40,
      partitionLeaderEpoch: 9,
      producerId: 2 ** 33,
      producerEpoch: 5,
      baseSequence: 77,
      compression: 'gzip',
      isTransactional: true,
      isControl: true,
    });
    expect(readBatchHeader(batch)).toMatchObject({
      baseOffset: 2 ** 40,
      partitionLeaderEpoch: 9,
      producerId: 2 ** 33,
      producerEpoch: 5,
      baseSequence: 77,
      compression: 'gzip',
      isTransactional: true,
      isControl: true,
    });
    expect(view(batch).getInt16(21)).toBe(0b110001);
  });

  it('stamps logAppendTime into maxTimestamp, and every decoded record carries it', () => {
    const batch = encodeRecordBatch(three, { timestampType: 'LogAppendTime', logAppendTime: T0 + 999 });
    const { header, records } = decodeRecordBatch(batch);
    expect(header).toMatchObject({
      timestampType: 'LogAppendTime',
      maxTimestamp: T0 + 999,
      baseTimestamp: T0 + 10,
    });
    expect(records.map((r) => r.timestamp)).toEqual([T0 + 999, T0 + 999, T0 + 999]);
  });

  it('rejects what it cannot encode faithfully', () => {
    expect(codeOf(() => encodeRecordBatch([]))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch(three, { timestampType: 'LogAppendTime' }))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch([{ key: null, value: null, timestamp: 1.5 }]))).toBe(
      'INVALID_RECORD',
    );
    expect(codeOf(() => encodeRecordBatch([{ key: null, value: null, timestamp: 2 ** 53 }]))).toBe(
      'INVALID_RECORD',
    );
    const far = [
      { key: null, value: null, timestamp: -(2 ** 52) },
      { key: null, value: null, timestamp: 2 ** 52 },
    ];
    expect(codeOf(() => encodeRecordBatch(far))).toBe('INVALID_RECORD');
    const notBytes = { key: 'text', value: null, timestamp: 0 } as unknown as RecordInput;
    expect(codeOf(() => encodeRecordBatch([notBytes]))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch(three, { baseOffset: -1 }))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch(three, { producerEpoch: 40_000 }))).toBe('INVALID_RECORD');
    expect(codeOf(() => encodeRecordBatch(three, { baseOffset: Number.MAX_SAFE_INTEGER - 1 }))).toBe(
      'INVALID_RECORD',
    );
  });

  it('refuses to write zstd or an unknown codec', () => {
    expect(codeOf(() => encodeRecordBatch(three, { compression: 'zstd' }))).toBe(
      'UNSUPPORTED_COMPRESSION_TYPE',
    );
    const bogus = { compression: 'brotli' } as unknown as { compression: 'none' };
    expect(codeOf(() => encodeRecordBatch(three, bogus))).toBe('UNSUPPORTED_COMPRESSION_TYPE');
  });
});

describe('decodeRecordBatch', () => {
  it('returns absolute offsets, CreateTime timestamps, keys, values and headers in order', () => {
    const { records } = decodeRecordBatch(encodeRecordBatch(three, { baseOffset: 100 }));
    expect(records).toEqual([
      { offset: 100, timestamp: T0 + 10, key: utf8('a'), value: utf8('first'), headers: [] },
      { offset: 101, timestamp: T0 + 30, key: null, value: null, headers: [{ key: 'h', value: null }] },
      {
        offset: 102,
        timestamp: T0,
        key: utf8('c'),
        value: utf8('third'),
        headers: [{ key: 'x', value: utf8('1') }],
      },
    ]);
  });

  it('detects a corrupted byte by its CRC unless told not to verify', () => {
    const batch = encodeRecordBatch(three);
    flip(batch, batch.length - 7, 0x01); // "third" → "thisd" (after it: header count, "x" and "1")
    expect(codeOf(() => decodeRecordBatch(batch))).toBe('CORRUPT_MESSAGE');
    expect(decodeRecordBatch(batch, { verifyCrc: false }).records[2]!.value).toEqual(utf8('thisd'));
  });

  it('wants exactly one batch', () => {
    const batch = encodeRecordBatch(three);
    const two = Buffer.concat([batch, batch]);
    expect(codeOf(() => decodeRecordBatch(two))).toBe('CORRUPT_MESSAGE');
    expect(codeOf(() => decodeRecordBatch(batch.subarray(0, batch.length - 1)))).toBe('CORRUPT_MESSAGE');
  });

  it('reports records that do not match the declared count as INVALID_RECORD', () => {
    const fewer = encodeRecordBatch(three);
    view(fewer).setInt32(57, 2);
    expect(codeOf(() => decodeRecordBatch(reseal(fewer)))).toBe('INVALID_RECORD');
    const more = encodeRecordBatch(three);
    view(more).setInt32(57, 4);
    expect(codeOf(() => decodeRecordBatch(reseal(more)))).toBe('INVALID_RECORD');
  });

  it('reports a record whose length disagrees with its fields as INVALID_RECORD', () => {
    const batch = encodeRecordBatch([{ key: utf8('k'), value: utf8('v'), timestamp: T0 }]);
    batch[61] = 0x0e; // declares 7 body bytes where there are 8
    expect(codeOf(() => decodeRecordBatch(reseal(batch)))).toBe('INVALID_RECORD');
  });

  it('reports a null header key and a negative header count as INVALID_RECORD', () => {
    const withHeader = encodeRecordBatch([
      { key: null, value: null, headers: [{ key: 'h', value: null }], timestamp: 0 },
    ]);
    // length 9, attributes, timestamp and offset deltas, null key, null value, 1 header: "h" = null
    expect(hex(withHeader.subarray(61))).toBe('12' + '000000' + '0101' + '02' + '0268' + '01');
    const nullKey = new Uint8Array(withHeader);
    nullKey[61 + 7] = 0x01; // header key length -1
    expect(codeOf(() => decodeRecordBatch(reseal(nullKey)))).toBe('INVALID_RECORD');
    const negativeCount = new Uint8Array(withHeader);
    negativeCount[61 + 6] = 0x01; // header count -1
    expect(codeOf(() => decodeRecordBatch(reseal(negativeCount)))).toBe('INVALID_RECORD');
  });

  it('keeps byte views of the batch rather than copies', () => {
    const batch = encodeRecordBatch([{ key: utf8('k'), value: utf8('value'), timestamp: 0 }]);
    const { records } = decodeRecordBatch(batch);
    expect(records[0]!.value!.buffer).toBe(batch.buffer);
  });
});

describe('readBatchHeader', () => {
  const batch = encodeRecordBatch(three, { baseOffset: 5 });

  it('reads a batch at a position inside a larger buffer', () => {
    const both = Buffer.concat([batch, encodeRecordBatch(three, { baseOffset: 8 })]);
    expect(readBatchHeader(both, batch.length).baseOffset).toBe(8);
  });

  it('rejects a truncated header', () => {
    expect(codeOf(() => readBatchHeader(batch.subarray(0, 60)))).toBe('CORRUPT_MESSAGE');
  });

  const edits: [string, (b: Uint8Array) => void, string][] = [
    ['magic 1', (b) => view(b).setInt8(16, 1), 'CORRUPT_MESSAGE'],
    ['a batchLength shorter than the header', (b) => view(b).setInt32(8, 48), 'CORRUPT_MESSAGE'],
    ['a batchLength past the buffer', (b) => view(b).setInt32(8, b.length - 11), 'CORRUPT_MESSAGE'],
    ['codec 5', (b) => view(b).setInt16(21, 5), 'UNSUPPORTED_COMPRESSION_TYPE'],
    ['a negative record count', (b) => view(b).setInt32(57, -1), 'CORRUPT_MESSAGE'],
    ['a negative baseOffset', (b) => view(b).setBigInt64(0, -1n), 'CORRUPT_MESSAGE'],
    ['a baseOffset beyond 2^53', (b) => view(b).setBigInt64(0, 2n ** 53n), 'CORRUPT_MESSAGE'],
    ['a last offset beyond 2^53', (b) => view(b).setBigInt64(0, 2n ** 53n - 2n), 'CORRUPT_MESSAGE'],
    ['a maxTimestamp beyond 2^53', (b) => view(b).setBigInt64(35, -(2n ** 60n)), 'CORRUPT_MESSAGE'],
  ];
  it.each(edits)('rejects %s', (_name, edit, code) => {
    const copy = new Uint8Array(batch);
    edit(copy);
    expect(codeOf(() => readBatchHeader(copy))).toBe(code);
  });
});

describe('splitBatches', () => {
  const a = encodeRecordBatch(three, { baseOffset: 0 });
  const b = encodeRecordBatch(three.slice(0, 1), { baseOffset: 3, compression: 'gzip' });
  const c = encodeRecordBatch(three, { baseOffset: 4, compression: 'lz4' });
  const all = Buffer.concat([a, b, c]);

  it('finds each batch with its header', () => {
    const batches = splitBatches(all);
    expect(batches.map(({ start, end }) => [start, end])).toEqual([
      [0, a.length],
      [a.length, a.length + b.length],
      [a.length + b.length, all.length],
    ]);
    expect(batches.map((x) => x.header.baseOffset)).toEqual([0, 3, 4]);
    expect(batches.map((x) => x.header.compression)).toEqual(['none', 'gzip', 'lz4']);
    const offsets = batches.flatMap((x) =>
      decodeRecordBatch(all.subarray(x.start, x.end)).records.map((r) => r.offset),
    );
    expect(offsets).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('returns nothing for no bytes', () => {
    expect(splitBatches(new Uint8Array(0))).toEqual([]);
  });

  it('rejects a trailing partial batch and a bad CRC anywhere', () => {
    expect(codeOf(() => splitBatches(all.subarray(0, all.length - 1)))).toBe('CORRUPT_MESSAGE');
    const bad = new Uint8Array(all);
    flip(bad, a.length + 30, 0x80);
    expect(() => splitBatches(bad)).toThrow(`batch at byte ${a.length} is corrupt`);
  });

  it('reports a flipped attribute bit as corruption, not as an unknown codec', () => {
    const flipped = new Uint8Array(a);
    view(flipped).setUint8(22, 0x07);
    expect(codeOf(() => splitBatches(flipped))).toBe('CORRUPT_MESSAGE');
    expect(codeOf(() => decodeRecordBatch(flipped))).toBe('CORRUPT_MESSAGE');
  });
});

describe('withBaseOffset', () => {
  it('returns a copy with the new offset whose CRC still verifies, leaving the input (even a Buffer) alone', () => {
    const original = Buffer.from(encodeRecordBatch(three));
    const moved = withBaseOffset(original, 2 ** 45);
    expect(readBatchHeader(original).baseOffset).toBe(0);
    expect(decodeRecordBatch(moved).records.map((r) => r.offset)).toEqual([
      2 ** 45,
      2 ** 45 + 1,
      2 ** 45 + 2,
    ]);
    expect(moved.subarray(8)).toEqual(new Uint8Array(original.subarray(8)));
  });

  it('rejects offsets that are negative or would pass 2^53, and anything but one batch', () => {
    const batch = encodeRecordBatch(three);
    expect(codeOf(() => withBaseOffset(batch, -1))).toBe('INVALID_RECORD');
    expect(codeOf(() => withBaseOffset(batch, Number.MAX_SAFE_INTEGER - 1))).toBe('INVALID_RECORD');
    expect(codeOf(() => withBaseOffset(Buffer.concat([batch, batch]), 0))).toBe('CORRUPT_MESSAGE');
  });
});

describe('withLogAppendTime', () => {
  it('sets the timestamp type and maxTimestamp and re-seals the CRC, on a copy', () => {
    const original = encodeRecordBatch(three, { compression: 'snappy' });
    const stamped = withLogAppendTime(original, T0 + 5000);
    const { header, records } = decodeRecordBatch(stamped);
    expect(header).toMatchObject({
      timestampType: 'LogAppendTime',
      maxTimestamp: T0 + 5000,
      baseTimestamp: T0 + 10,
    });
    expect(header.crc).toBe(crc32c(stamped, 21));
    expect(records.map((r) => r.timestamp)).toEqual([T0 + 5000, T0 + 5000, T0 + 5000]);
    expect(readBatchHeader(original)).toMatchObject({ timestampType: 'CreateTime', maxTimestamp: T0 + 30 });
  });

  it('never re-seals a batch that was already corrupt', () => {
    const batch = encodeRecordBatch(three);
    flip(batch, 70, 0x10);
    expect(codeOf(() => withLogAppendTime(batch, T0))).toBe('CORRUPT_MESSAGE');
  });
});

describe('recordSize', () => {
  it('counts key, value, UTF-8 header keys and header values; null counts nothing', () => {
    expect(recordSize({ key: null, value: null, headers: [] })).toBe(0);
    expect(
      recordSize({ key: utf8('abc'), value: new Uint8Array(10), headers: [{ key: 'h', value: null }] }),
    ).toBe(14);
    const keys = ['é', '€', '😀', '\ud800'];
    expect(
      recordSize({ key: null, value: null, headers: keys.map((key) => ({ key, value: utf8('vv') })) }),
    ).toBe(2 + 3 + 4 + 3 + 4 * 2);
    for (const key of keys)
      expect(recordSize({ key: null, value: null, headers: [{ key, value: null }] })).toBe(utf8(key).length);
  });
});

describe('control batches', () => {
  const marker = { producerId: 7, producerEpoch: 3, timestamp: T0 };
  /** A control batch whose one record has `key` (Kafka's is int16 version, int16 type). */
  const controlWithKey = (key: Uint8Array | null): Uint8Array =>
    encodeRecordBatch([{ key, value: new Uint8Array(6), timestamp: T0 }], {
      producerId: 7,
      producerEpoch: 3,
      baseSequence: -1,
      isTransactional: true,
      isControl: true,
    });
  const typeOf = (batch: Uint8Array): string => controlTypeOf(batch, readBatchHeader(batch));

  it('writes a marker as Kafka does: sequence -1, key (0, type), value (0, coordinatorEpoch)', () => {
    const batch = encodeControlBatch({ ...marker, type: 'ABORT', coordinatorEpoch: 9 });
    const header = readBatchHeader(batch);
    expect(header).toMatchObject({
      isControl: true,
      isTransactional: true,
      producerId: 7,
      producerEpoch: 3,
      baseSequence: -1,
      recordCount: 1,
    });
    const [record] = decodeRecordBatch(batch).records;
    expect(hex(record!.key!)).toBe('00000000');
    expect(hex(record!.value!)).toBe('000000000009');
    expect(hex(decodeRecordBatch(encodeControlBatch({ ...marker, type: 'COMMIT' })).records[0]!.value!)).toBe(
      '000000000000',
    );
  });

  it('reads the marker type from the record key; a type Kafka does not know is UNKNOWN', () => {
    expect(typeOf(encodeControlBatch({ ...marker, type: 'ABORT' }))).toBe('ABORT');
    expect(typeOf(encodeControlBatch({ ...marker, type: 'COMMIT' }))).toBe('COMMIT');
    expect(typeOf(controlWithKey(Uint8Array.of(0, 0, 0, 2)))).toBe('UNKNOWN');
    expect(typeOf(controlWithKey(Uint8Array.of(0, 0, 0xff, 0xff)))).toBe('UNKNOWN');
  });

  it('does not check the CRC again: the frame it is given was verified when read', () => {
    const batch = encodeControlBatch({ ...marker, type: 'COMMIT' });
    batch[20]! ^= 1; // the last CRC byte
    expect(() => decodeRecordBatch(batch)).toThrow(/CRC/i);
    expect(typeOf(batch)).toBe('COMMIT');
  });

  it('refuses a batch that is not a control batch with INVALID_RECORD', () => {
    const batch = encodeRecordBatch([{ key: Uint8Array.of(0, 0, 0, 1), value: null, timestamp: T0 }]);
    const error = errorOf(() => typeOf(batch));
    expect([error.code, error.message]).toEqual(['INVALID_RECORD', 'not a control batch']);
  });

  it('refuses a control batch without a 4-byte key, or without a record, with CORRUPT_MESSAGE', () => {
    const empty = editHeader(withRecordsSection(controlWithKey(null), new Uint8Array(0)), {
      recordCount: 0,
      lastOffsetDelta: 0,
    });
    expect(readBatchHeader(empty).recordCount).toBe(0);
    for (const batch of [controlWithKey(null), controlWithKey(Uint8Array.of(0, 0, 1)), empty]) {
      const error = errorOf(() => typeOf(batch));
      expect([error.code, error.message]).toEqual(['CORRUPT_MESSAGE', 'control record without a key']);
    }
  });
});

describe('AbortedFilter', () => {
  const header = (producerId: number, isControl = false) =>
    readBatchHeader(
      isControl
        ? encodeControlBatch({ type: 'ABORT', producerId, producerEpoch: 0, timestamp: T0 })
        : encodeRecordBatch([{ key: null, value: utf8('v'), timestamp: T0 }], {
            producerId,
            producerEpoch: 0,
            baseSequence: 0,
            isTransactional: true,
          }),
    );

  it('takes the aborted transactions in any order, as Kafka’s consumer does (it queues them by offset)', () => {
    // Producer 1's transaction from 10 and producer 2's from 20 are aborted; producer 2's batch at 15
    // belongs to an earlier, committed transaction. The list comes over the wire unsorted.
    const filter = new AbortedFilter([
      { producerId: 2, firstOffset: 20 },
      { producerId: 1, firstOffset: 10 },
    ]);
    expect([
      filter.keeps(header(1), 10),
      filter.keeps(header(2), 15),
      filter.keeps(header(1, true), 18), // producer 1's ABORT marker
      filter.keeps(header(1), 19),
      filter.keeps(header(2), 20),
      filter.keeps(header(2), 21),
    ]).toEqual([false, true, false, true, false, false]);
  });
});
