/**
 * The encoder's input checks and the header rewrites, one bound at a time: the value at the bound is
 * written into the header exactly, one past it is refused with INVALID_RECORD and a message naming the
 * field, its range and the value given.
 */
import { describe, expect, it } from 'vitest';
import {
  type EncodeOptions,
  type RecordInput,
  crc32c,
  decodeRecordBatch,
  encodeRecordBatch,
  readBatchHeader,
  stampPartitionLeaderEpoch,
  withBaseOffset,
  withLogAppendTime,
} from '../../../protocol/record-batch/index.js';
import { editHeader } from '../../support/batch-surgery.js';
import { errorOf } from '../../support/sluice-error.js';

const MAX = Number.MAX_SAFE_INTEGER;
const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);
const T = 1_700_000_000_000;
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const rec = (timestamp = T, extra: Partial<RecordInput> = {}): RecordInput => ({
  key: null,
  value: utf8('v'),
  timestamp,
  ...extra,
});
const three = [rec(T), rec(T + 1), rec(T + 2)];

const refusal = (fn: () => unknown) => {
  const { code, message } = errorOf(fn);
  return { code, message };
};
const invalid = (message: string) => ({ code: 'INVALID_RECORD', message });
const outOfRange = (field: string, min: number, max: number, got: unknown) =>
  invalid(`${field} must be an integer in [${min}, ${max}], got ${String(got)}`);
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('encodeRecordBatch option bounds', () => {
  // field, lowest accepted, highest accepted; one past either end is refused.
  const bounds: [keyof EncodeOptions & keyof ReturnType<typeof readBatchHeader>, number, number][] = [
    ['baseOffset', 0, MAX],
    ['partitionLeaderEpoch', INT32_MIN, INT32_MAX],
    ['producerId', -MAX, MAX],
    ['producerEpoch', -0x8000, 0x7fff],
    ['baseSequence', INT32_MIN, INT32_MAX],
  ];

  it.each(bounds)('%s: writes %d and %d exactly, refuses one past either', (field, min, max) => {
    for (const value of [min, max]) {
      const header = decodeRecordBatch(encodeRecordBatch([rec()], { [field]: value })).header;
      expect(header[field]).toBe(value);
    }
    for (const value of [min - 1, max + 1]) {
      expect(refusal(() => encodeRecordBatch([rec()], { [field]: value }))).toEqual(
        outOfRange(field, min, max, value),
      );
    }
    expect(refusal(() => encodeRecordBatch([rec()], { [field]: 0.5 }))).toEqual(
      outOfRange(field, min, max, 0.5),
    );
  });

  it('refuses a value that is not a number at all, naming what it got', () => {
    const text = { producerEpoch: '3' } as unknown as EncodeOptions;
    expect(refusal(() => encodeRecordBatch([rec()], text))).toEqual(
      outOfRange('producerEpoch', -0x8000, 0x7fff, '3'),
    );
  });

  it('holds record timestamps to ±(2^53-1), for the first record and any later one', () => {
    expect(decodeRecordBatch(encodeRecordBatch([rec(MAX)])).records[0]!.timestamp).toBe(MAX);
    expect(decodeRecordBatch(encodeRecordBatch([rec(-MAX)])).records[0]!.timestamp).toBe(-MAX);
    expect(refusal(() => encodeRecordBatch([rec(MAX + 1)]))).toEqual(
      outOfRange('timestamp', -MAX, MAX, MAX + 1),
    );
    expect(refusal(() => encodeRecordBatch([rec(0), rec(-MAX - 1)]))).toEqual(
      outOfRange('timestamp', -MAX, MAX, -MAX - 1),
    );
  });

  it('refuses timestamps more than 2^53 ms apart in one batch, and takes them 2^53-1 apart', () => {
    const apart = encodeRecordBatch([rec(0), rec(MAX)]);
    expect(decodeRecordBatch(apart).records.map((r) => r.timestamp)).toEqual([0, MAX]);
    expect(refusal(() => encodeRecordBatch([rec(-1), rec(MAX)]))).toEqual(
      invalid('timestamps in one batch are more than 2^53 ms apart'),
    );
  });

  it('holds offset deltas to [0, 2^31-1] and the last offset delta to [last record’s, 2^31-1]', () => {
    const far = encodeRecordBatch([rec(T, { offsetDelta: INT32_MAX })]);
    expect(decodeRecordBatch(far).records.map((r) => r.offset)).toEqual([INT32_MAX]);
    expect(refusal(() => encodeRecordBatch([rec(T, { offsetDelta: INT32_MAX + 1 })]))).toEqual(
      outOfRange('offsetDelta', 0, INT32_MAX, INT32_MAX + 1),
    );
    expect(refusal(() => encodeRecordBatch([rec(T, { offsetDelta: -1 })]))).toEqual(
      outOfRange('offsetDelta', 0, INT32_MAX, -1),
    );
    expect(readBatchHeader(encodeRecordBatch([rec()], { lastOffsetDelta: INT32_MAX })).lastOffsetDelta).toBe(
      INT32_MAX,
    );
    expect(refusal(() => encodeRecordBatch([rec()], { lastOffsetDelta: INT32_MAX + 1 }))).toEqual(
      outOfRange('lastOffsetDelta', 0, INT32_MAX, INT32_MAX + 1),
    );
    const gaps = [rec(T, { offsetDelta: 2 }), rec(T, { offsetDelta: 6 })];
    expect(readBatchHeader(encodeRecordBatch(gaps, { lastOffsetDelta: 6 })).lastOffsetDelta).toBe(6);
    expect(refusal(() => encodeRecordBatch(gaps, { lastOffsetDelta: 5 }))).toEqual(
      outOfRange('lastOffsetDelta', 6, INT32_MAX, 5),
    );
    expect(refusal(() => encodeRecordBatch([], { lastOffsetDelta: -1 }))).toEqual(
      outOfRange('lastOffsetDelta', 0, INT32_MAX, -1),
    );
  });

  it('refuses offset deltas that repeat or go back, naming the record', () => {
    const at = (offsetDelta: number) => rec(T, { offsetDelta });
    expect(refusal(() => encodeRecordBatch([at(3), at(4), at(4)]))).toEqual(
      invalid('offset deltas must increase: record 2 has 4 after 4'),
    );
    expect(refusal(() => encodeRecordBatch([at(3), at(1)]))).toEqual(
      invalid('offset deltas must increase: record 1 has 1 after 3'),
    );
  });

  it('takes a last offset of exactly 2^53-1 and refuses one past it', () => {
    const top = encodeRecordBatch(three, { baseOffset: MAX - 2 });
    expect(decodeRecordBatch(top).records.map((r) => r.offset)).toEqual([MAX - 2, MAX - 1, MAX]);
    expect(refusal(() => encodeRecordBatch(three, { baseOffset: MAX - 1 }))).toEqual(
      invalid('too many records for one batch'),
    );
  });

  it('needs a logAppendTime with LogAppendTime, within ±(2^53-1)', () => {
    const options = { timestampType: 'LogAppendTime' } as const;
    expect(refusal(() => encodeRecordBatch([rec()], options))).toEqual(
      outOfRange('logAppendTime', -MAX, MAX, undefined),
    );
    expect(refusal(() => encodeRecordBatch([rec()], { ...options, logAppendTime: MAX + 1 }))).toEqual(
      outOfRange('logAppendTime', -MAX, MAX, MAX + 1),
    );
    const stamped = encodeRecordBatch([rec()], { ...options, logAppendTime: -MAX });
    expect(readBatchHeader(stamped)).toMatchObject({ timestampType: 'LogAppendTime', maxTimestamp: -MAX });
  });

  it('refuses keys, values and header values that are not bytes, and header keys that are not strings', () => {
    const as = (r: object) => r as unknown as RecordInput;
    expect(refusal(() => encodeRecordBatch([as({ key: 'k', value: null, timestamp: 0 })]))).toEqual(
      invalid('key must be a Uint8Array or null'),
    );
    expect(refusal(() => encodeRecordBatch([as({ key: null, timestamp: 0 })]))).toEqual(
      invalid('value must be a Uint8Array or null'),
    );
    const headerValue = as({ key: null, value: null, headers: [{ key: 'h', value: [1] }], timestamp: 0 });
    expect(refusal(() => encodeRecordBatch([headerValue]))).toEqual(
      invalid('header value must be a Uint8Array or null'),
    );
    const headerKey = as({ key: null, value: null, headers: [{ key: 7, value: null }], timestamp: 0 });
    expect(refusal(() => encodeRecordBatch([headerKey]))).toEqual(invalid('header keys must be strings'));
  });

  it('refuses no records without a lastOffsetDelta', () => {
    expect(refusal(() => encodeRecordBatch([]))).toEqual(invalid('a record batch needs at least one record'));
  });

  it('refuses more than 2^31-1 records and a record over 2 GiB before writing anything', () => {
    const sparse: RecordInput[] = [];
    sparse.length = 2 ** 31; // holes: the count is refused before any record is read
    expect(refusal(() => encodeRecordBatch(sparse))).toEqual(invalid('too many records for one batch'));
    // Zero pages the kernel never backs: sizing the record is enough to refuse it.
    const huge = new Uint8Array(2 ** 31 - 8);
    expect(refusal(() => encodeRecordBatch([rec(T, { value: huge })]))).toEqual(
      invalid('record larger than 2 GiB'),
    );
  });

  it('writes a record with a 1 KiB value with a 2-byte length and the header fields Kafka’s producer would', () => {
    const value = new Uint8Array(1024).fill(0x61);
    const batch = encodeRecordBatch([rec(T, { value })], {
      producerId: 12,
      producerEpoch: 3,
      baseSequence: 40,
      partitionLeaderEpoch: 7,
    });
    // length 1031 (zigzag 2062: 8e 10), then attributes, ts 0, offset 0, null key, value length 1024
    // (zigzag 2048: 80 10), the value, 0 headers
    const bodySize = 1 + 1 + 1 + 1 + 2 + 1024 + 1;
    expect(hex(batch.subarray(61, 61 + 9))).toBe('8e10' + '00' + '00' + '00' + '01' + '8010' + '61');
    expect(hex(batch.subarray(-2))).toBe('6100');
    expect(batch.length).toBe(61 + 2 + bodySize);
    expect(hex(batch.subarray(0, 61))).toBe(
      '0000000000000000' + // baseOffset
        (batch.length - 12).toString(16).padStart(8, '0') +
        '00000007' + // partitionLeaderEpoch
        '02' +
        crc32c(batch, 21).toString(16).padStart(8, '0') +
        '0000' + // attributes
        '00000000' + // lastOffsetDelta
        T.toString(16).padStart(16, '0') +
        T.toString(16).padStart(16, '0') +
        '000000000000000c' + // producerId
        '0003' +
        '00000028' + // baseSequence
        '00000001',
    );
  });
});

describe('encodeRecordBatch size bounds (int32 in the format), with stand-ins for 2 GiB inputs', () => {
  // Inputs this large cannot be allocated in a test: the stand-ins only claim their length. The check
  // after the bound (LogAppendTime without logAppendTime, or a map that refuses) shows the bound passed.
  const noAppendTime = { timestampType: 'LogAppendTime' } as const;
  const afterBound = outOfRange('logAppendTime', -MAX, MAX, undefined);
  /** A Uint8Array that says it holds `length` bytes. */
  const claiming = (length: number): Uint8Array =>
    Object.defineProperty(new Uint8Array(0), 'length', { value: length });

  it('takes a record body of exactly INT32_MAX bytes and refuses one byte more', () => {
    // body: attributes, timestampDelta 0, offsetDelta 0, null key (1 byte each), the value's 5-byte
    // varint length and its bytes, 0 headers (1 byte): 10 + value.length.
    const valueOf = (body: number) => rec(T, { value: claiming(body - 10) });
    expect(refusal(() => encodeRecordBatch([valueOf(INT32_MAX)], noAppendTime))).toEqual(afterBound);
    expect(refusal(() => encodeRecordBatch([valueOf(INT32_MAX + 1)], noAppendTime))).toEqual(
      invalid('record larger than 2 GiB'),
    );
  });

  it('refuses a batch whose batchLength would be INT32_MAX + 1, though each record fits', () => {
    // One record of body 10 + value bytes (5-byte varint length): batch = 61 + 5 + 10 + value bytes.
    // The batch's 2 GiB buffer is allocated but never written (the stand-in value has no bytes), so
    // the refusal costs no memory; one byte less would be encoded, with a CRC pass over 2 GiB.
    const value = claiming(INT32_MAX + 1 + 12 - 61 - 15);
    expect(refusal(() => encodeRecordBatch([rec(T, { value })]))).toEqual(invalid('batch larger than 2 GiB'));
  });

  it('takes a record count of exactly INT32_MAX and refuses one more', () => {
    const records = (count: number): RecordInput[] => {
      const sparse: RecordInput[] = [];
      sparse.length = count;
      // Past the count check the encoder maps the records; stop there rather than visit 2^31 holes.
      return Object.defineProperty(sparse, 'map', {
        value: () => {
          throw new Error('mapped the records');
        },
      });
    };
    expect(() => encodeRecordBatch(records(INT32_MAX))).toThrow('mapped the records');
    expect(refusal(() => encodeRecordBatch(records(INT32_MAX + 1)))).toEqual(
      invalid('too many records for one batch'),
    );
  });
});

describe('withBaseOffset', () => {
  it('rewrites baseOffset into a copy, the CRC still valid, and leaves the input alone', () => {
    const batch = encodeRecordBatch(three, { baseOffset: 0 });
    const moved = withBaseOffset(batch, 40);
    expect(decodeRecordBatch(moved).records.map((r) => r.offset)).toEqual([40, 41, 42]);
    expect(readBatchHeader(batch).baseOffset).toBe(0);
    expect(hex(moved.subarray(8))).toBe(hex(batch.subarray(8)));
  });

  it('takes the base offset that puts the last offset at 2^53-1 and refuses one more', () => {
    const batch = encodeRecordBatch(three);
    expect(readBatchHeader(withBaseOffset(batch, MAX - 2)).baseOffset).toBe(MAX - 2);
    expect(refusal(() => withBaseOffset(batch, MAX - 1))).toEqual(
      outOfRange('baseOffset', 0, MAX - 2, MAX - 1),
    );
    expect(refusal(() => withBaseOffset(batch, -1))).toEqual(outOfRange('baseOffset', 0, MAX - 2, -1));
  });

  it('bounds a header-only batch with lastOffsetDelta -1 at 2^53-1, not past it', () => {
    const empty = editHeader(encodeRecordBatch([], { lastOffsetDelta: 0 }), { lastOffsetDelta: -1 });
    expect(readBatchHeader(withBaseOffset(empty, MAX)).baseOffset).toBe(MAX);
    expect(refusal(() => withBaseOffset(empty, MAX + 1))).toEqual(outOfRange('baseOffset', 0, MAX, MAX + 1));
  });

  it('wants exactly one batch', () => {
    const batch = encodeRecordBatch([rec()]);
    const two = new Uint8Array([...batch, ...batch]);
    expect(refusal(() => withBaseOffset(two, 1))).toEqual({
      code: 'CORRUPT_MESSAGE',
      message: `expected one batch of ${batch.length} bytes, got ${two.length}`,
    });
  });
});

describe('stampPartitionLeaderEpoch', () => {
  it('writes the epoch in place, bytes 12 to 15 only, the CRC still valid', () => {
    const batch = encodeRecordBatch(three);
    const before = new Uint8Array(batch);
    stampPartitionLeaderEpoch(batch, INT32_MAX);
    expect(decodeRecordBatch(batch).header.partitionLeaderEpoch).toBe(INT32_MAX);
    expect(hex(batch.subarray(12, 16))).toBe('7fffffff');
    expect(hex(batch.subarray(16))).toBe(hex(before.subarray(16)));
    stampPartitionLeaderEpoch(batch, 0);
    expect(readBatchHeader(batch).partitionLeaderEpoch).toBe(0);
  });

  it('refuses a negative epoch and one past int32, changing nothing', () => {
    const batch = encodeRecordBatch(three, { partitionLeaderEpoch: 5 });
    expect(refusal(() => stampPartitionLeaderEpoch(batch, -1))).toEqual(
      outOfRange('partitionLeaderEpoch', 0, INT32_MAX, -1),
    );
    expect(refusal(() => stampPartitionLeaderEpoch(batch, INT32_MAX + 1))).toEqual(
      outOfRange('partitionLeaderEpoch', 0, INT32_MAX, INT32_MAX + 1),
    );
    expect(readBatchHeader(batch).partitionLeaderEpoch).toBe(5);
  });

  it('refuses a buffer that is not exactly one batch', () => {
    const batch = encodeRecordBatch([rec()]);
    const cut = batch.subarray(0, batch.length - 1);
    expect(refusal(() => stampPartitionLeaderEpoch(cut, 1))).toEqual({
      code: 'CORRUPT_MESSAGE',
      message: `batch at byte 0 declares ${batch.length - 12} bytes, ${batch.length - 13} present`,
    });
  });
});

describe('withLogAppendTime', () => {
  it('sets the timestamp type bit and maxTimestamp, keeps codec and flags, and reseals the CRC', () => {
    const batch = encodeRecordBatch(three, { compression: 'gzip', isTransactional: true });
    const stamped = withLogAppendTime(batch, T + 500);
    const { header, records } = decodeRecordBatch(stamped);
    expect(new DataView(stamped.buffer).getInt16(21)).toBe(0x01 | 0x08 | 0x10);
    expect(header).toMatchObject({
      timestampType: 'LogAppendTime',
      compression: 'gzip',
      isTransactional: true,
      maxTimestamp: T + 500,
      baseTimestamp: T,
      crc: crc32c(stamped, 21),
    });
    expect(records.map((r) => r.timestamp)).toEqual([T + 500, T + 500, T + 500]);
    expect(readBatchHeader(batch).timestampType).toBe('CreateTime');
  });

  it('refuses to re-seal a batch whose CRC is wrong', () => {
    const batch = encodeRecordBatch(three);
    const stored = new DataView(batch.buffer).getUint32(17);
    batch[batch.length - 1] = batch.at(-1)! ^ 1;
    expect(refusal(() => withLogAppendTime(batch, T))).toEqual({
      code: 'CORRUPT_MESSAGE',
      message: `batch at byte 0 is corrupt: stored CRC ${stored}, computed ${crc32c(batch, 21)}`,
    });
  });

  it('refuses a time beyond ±(2^53-1) and a buffer of two batches', () => {
    const batch = encodeRecordBatch([rec()]);
    expect(refusal(() => withLogAppendTime(batch, -MAX - 1))).toEqual(
      outOfRange('logAppendTime', -MAX, MAX, -MAX - 1),
    );
    const two = new Uint8Array([...batch, ...batch]);
    expect(refusal(() => withLogAppendTime(two, T))).toEqual({
      code: 'CORRUPT_MESSAGE',
      message: `expected one batch of ${batch.length} bytes, got ${two.length}`,
    });
  });
});
