/**
 * The decoder's checks one at a time, each on a batch built byte by byte: the same batch with the value
 * just inside the bound decodes to exact records, and just outside it is refused with Kafka's error code
 * and a message that says where. A test that only asks "decodes or throws" cannot tell the two apart.
 */
import { describe, expect, it } from 'vitest';
import {
  crc32c,
  decodeRecordBatch,
  encodeRecordBatch,
  readBatchHeader,
  splitBatches,
} from '../../../protocol/record-batch/index.js';
import { checkBatchFrame } from '../../../protocol/record-batch/header.js';
import { writeVarint, writeVarlong } from '../../../protocol/record-batch/varint.js';
import { errorOf } from '../../support/sluice-error.js';

const MAX = Number.MAX_SAFE_INTEGER; // 2^53 - 1
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const flip = (b: Uint8Array, at: number): void => void b.set([b[at]! ^ 1], at);

const varint = (n: number): number[] => {
  const buf = new Uint8Array(5);
  return [...buf.subarray(0, writeVarint(buf, 0, n))];
};
const varlong = (n: number): number[] => {
  const buf = new Uint8Array(10);
  return [...buf.subarray(0, writeVarlong(buf, 0, n))];
};
const field = (bytes: Uint8Array | null): number[] =>
  bytes ? [...varint(bytes.length), ...bytes] : varint(-1);

interface RawRecord {
  timestampDelta?: number;
  offsetDelta?: number;
  key?: number[];
  value?: number[];
  headers?: number[];
  /** Bytes after the fields, inside the record's declared length. */
  extra?: number[];
  /** Declared length, when it should not be the body's. */
  size?: number;
}

/** A record as Kafka lays it out: length, attributes, timestamp and offset deltas, key, value, headers. */
const record = (r: RawRecord, index: number): number[] => {
  const body = [
    0,
    ...varlong(r.timestampDelta ?? 0),
    ...varint(r.offsetDelta ?? index),
    ...(r.key ?? field(null)),
    ...(r.value ?? field(utf8(`v${index}`))),
    ...(r.headers ?? varint(0)),
    ...(r.extra ?? []),
  ];
  return [...varint(r.size ?? body.length), ...body];
};

interface RawHeader {
  baseOffset?: bigint;
  lastOffsetDelta?: number;
  baseTimestamp?: bigint;
  maxTimestamp?: bigint;
  attributes?: number;
  producerId?: bigint;
  recordCount?: number;
}

/** An uncompressed RecordBatch v2 with a correct batchLength and CRC. */
const batch = (records: RawRecord[], h: RawHeader = {}, trailer: number[] = []): Uint8Array => {
  const body = [...records.flatMap(record), ...trailer];
  const bytes = new Uint8Array(61 + body.length);
  const v = new DataView(bytes.buffer);
  v.setBigInt64(0, h.baseOffset ?? 0n);
  v.setInt32(8, bytes.length - 12);
  v.setInt32(12, 3);
  v.setInt8(16, 2);
  v.setInt16(21, h.attributes ?? 0);
  v.setInt32(23, h.lastOffsetDelta ?? Math.max(0, records.length - 1));
  v.setBigInt64(27, h.baseTimestamp ?? 1_000n);
  v.setBigInt64(35, h.maxTimestamp ?? 1_000n);
  v.setBigInt64(43, h.producerId ?? -1n);
  v.setInt16(51, -1);
  v.setInt32(53, -1);
  v.setInt32(57, h.recordCount ?? records.length);
  bytes.set(body, 61);
  v.setUint32(17, crc32c(bytes, 21));
  return bytes;
};

const refusal = (fn: () => unknown) => {
  const { code, message } = errorOf(fn);
  return { code, message };
};
const invalid = (message: string) => ({ code: 'INVALID_RECORD', message });
const corrupt = (message: string) => ({ code: 'CORRUPT_MESSAGE', message });
const offsets = (b: Uint8Array) => decodeRecordBatch(b).records.map((r) => r.offset);
const timestamps = (b: Uint8Array) => decodeRecordBatch(b).records.map((r) => r.timestamp);

describe('per-record checks', () => {
  it('decodes a hand-built batch exactly', () => {
    const b = batch([
      { timestampDelta: 5, key: field(utf8('k')) },
      { headers: [...varint(1), ...field(utf8('h')), ...field(null)] },
    ]);
    expect(decodeRecordBatch(b).records).toEqual([
      { offset: 0, timestamp: 1_005, key: utf8('k'), value: utf8('v0'), headers: [] },
      { offset: 1, timestamp: 1_000, key: null, value: utf8('v1'), headers: [{ key: 'h', value: null }] },
    ]);
  });

  it('refuses bytes left in a record beyond its fields, and says which record', () => {
    expect(refusal(() => decodeRecordBatch(batch([{}, { extra: [0, 0] }])))).toEqual(
      invalid('record 1 has 2 bytes beyond its fields'),
    );
  });

  it('refuses bytes left after the declared records', () => {
    expect(offsets(batch([{}, {}]))).toEqual([0, 1]);
    expect(refusal(() => decodeRecordBatch(batch([{}], {}, [0, 0, 0])))).toEqual(
      invalid('incorrect declared batch size: 3 bytes remain after 1 records'),
    );
  });

  it('refuses a record length that is negative or runs past the batch; one that ends it exactly is fine', () => {
    expect(refusal(() => decodeRecordBatch(batch([{ size: -1 }])))).toEqual(
      invalid('record 0 declares -1 bytes, 8 remain'),
    );
    // Length 0 passes the bound and runs into the record's missing attributes byte.
    expect(refusal(() => decodeRecordBatch(batch([{ size: 0 }], {}, [])))).toEqual(
      invalid('record truncated'),
    );
    const tooLong = batch([{ size: 9, extra: [] }]);
    expect(refusal(() => decodeRecordBatch(tooLong))).toEqual(invalid('record 0 declares 9 bytes, 8 remain'));
  });

  it('takes a negative offset delta down to the batch’s base offset, and refuses one below offset 0', () => {
    expect(offsets(batch([{ offsetDelta: -5 }], { baseOffset: 5n, lastOffsetDelta: 0 }))).toEqual([0]);
    expect(
      refusal(() => decodeRecordBatch(batch([{ offsetDelta: -6 }], { baseOffset: 5n, lastOffsetDelta: 0 }))),
    ).toEqual(invalid('record 0 has offset -1'));
  });

  it('refuses an offset past 2^53-1 that the header’s last offset did not announce', () => {
    const base = BigInt(MAX) - 2n;
    expect(offsets(batch([{ offsetDelta: 2 }], { baseOffset: base, lastOffsetDelta: 0 }))).toEqual([MAX]);
    expect(
      refusal(() => decodeRecordBatch(batch([{ offsetDelta: 3 }], { baseOffset: base, lastOffsetDelta: 0 }))),
    ).toEqual(invalid(`record 0 has offset ${MAX - 2 + 3}`));
  });

  it('refuses a timestamp past +2^53 and past -2^53; at the bound it is exact', () => {
    const high = { baseTimestamp: BigInt(MAX) - 10n };
    expect(timestamps(batch([{ timestampDelta: 10 }], high))).toEqual([MAX]);
    expect(refusal(() => decodeRecordBatch(batch([{ timestampDelta: 11 }], high)))).toEqual(
      invalid('record 0 has a timestamp beyond ±2^53'),
    );
    const low = { baseTimestamp: -BigInt(MAX) + 10n };
    expect(timestamps(batch([{ timestampDelta: -10 }], low))).toEqual([-MAX]);
    expect(refusal(() => decodeRecordBatch(batch([{}, { timestampDelta: -11 }], low)))).toEqual(
      invalid('record 1 has a timestamp beyond ±2^53'),
    );
  });

  it('gives every record the maxTimestamp under LogAppendTime, whatever its delta', () => {
    const b = batch([{ timestampDelta: 7 }, { timestampDelta: MAX }], {
      attributes: 0x08,
      maxTimestamp: 42n,
    });
    expect(timestamps(b)).toEqual([42, 42]);
    expect(readBatchHeader(b).timestampType).toBe('LogAppendTime');
  });

  it('reads any negative field length as null and a zero length as empty', () => {
    const b = batch([{ key: varint(-2), value: varint(0) }]);
    expect(decodeRecordBatch(b).records[0]).toMatchObject({ key: null, value: new Uint8Array(0) });
  });

  it('refuses a negative header count and a null header key', () => {
    expect(refusal(() => decodeRecordBatch(batch([{}, { headers: varint(-1) }])))).toEqual(
      invalid('record 1 has -1 headers'),
    );
    expect(
      refusal(() => decodeRecordBatch(batch([{ headers: [...varint(1), ...varint(-1), ...field(null)] }]))),
    ).toEqual(invalid('record 0 has a header with a null key'));
  });
});

describe('one batch, whole', () => {
  it('refuses a byte after the batch and names both lengths', () => {
    const b = batch([{}]);
    const longer = new Uint8Array([...b, 0]);
    expect(refusal(() => decodeRecordBatch(longer))).toEqual(
      corrupt(`expected one batch of ${b.length} bytes, got ${b.length + 1}`),
    );
  });

  it('decodes a header-only batch of zero records', () => {
    const empty = batch([], { lastOffsetDelta: 0 });
    expect(empty.length).toBe(61);
    expect(decodeRecordBatch(empty).records).toEqual([]);
  });

  it('checks the decompressed size against maxDecompressedBytes', () => {
    const gz = encodeRecordBatch([{ key: null, value: new Uint8Array(1000), timestamp: 0 }], {
      compression: 'gzip',
    });
    expect(decodeRecordBatch(gz).records[0]!.value).toEqual(new Uint8Array(1000));
    expect(errorOf(() => decodeRecordBatch(gz, { maxDecompressedBytes: 100 })).code).toBe('CORRUPT_MESSAGE');
  });

  it('reports a bad CRC with both values', () => {
    const b = batch([{}]);
    const stored = new DataView(b.buffer).getUint32(17);
    flip(b, b.length - 1);
    expect(refusal(() => decodeRecordBatch(b))).toEqual(
      corrupt(`batch at byte 0 is corrupt: stored CRC ${stored}, computed ${crc32c(b, 21)}`),
    );
  });
});

describe('splitBatches', () => {
  const a = batch([{}, {}]);
  const b = batch([{}], { baseOffset: 2n });

  it('refuses a second batch whose header is cut short, naming where it starts', () => {
    const cut = new Uint8Array([...a, ...b.subarray(0, 30)]);
    expect(refusal(() => splitBatches(cut))).toEqual(
      corrupt(`truncated batch header at byte ${a.length}: 30 of 61 bytes`),
    );
  });

  it('refuses a second batch that declares more bytes than follow', () => {
    const cut = new Uint8Array([...a, ...b.subarray(0, b.length - 1)]);
    expect(refusal(() => splitBatches(cut))).toEqual(
      corrupt(`batch at byte ${a.length} declares ${b.length - 12} bytes, ${b.length - 13} present`),
    );
  });

  it('checks each batch’s CRC over that batch only', () => {
    const both = new Uint8Array([...a, ...b]);
    expect(splitBatches(both).map((x) => [x.start, x.end, x.header.baseOffset])).toEqual([
      [0, a.length, 0],
      [a.length, both.length, 2],
    ]);
    flip(both, a.length + 61);
    expect(errorOf(() => splitBatches(both)).message).toMatch(
      new RegExp(`^batch at byte ${a.length} is corrupt`),
    );
  });
});

describe('the batch header', () => {
  const one = () => batch([{}]);
  const edited = (edit: (v: DataView) => void, reseal = true) => {
    const b = one();
    const v = new DataView(b.buffer);
    edit(v);
    if (reseal) v.setUint32(17, crc32c(b, 21));
    return b;
  };

  it('reads every field', () => {
    const b = batch([{}, {}], {
      baseOffset: 7n,
      attributes: 0x08 | 0x10 | 0x20,
      baseTimestamp: 10n,
      maxTimestamp: 20n,
      producerId: 99n,
    });
    expect(readBatchHeader(b)).toEqual({
      baseOffset: 7,
      batchLength: b.length - 12,
      partitionLeaderEpoch: 3,
      magic: 2,
      crc: new DataView(b.buffer).getUint32(17),
      compression: 'none',
      timestampType: 'LogAppendTime',
      isTransactional: true,
      isControl: true,
      lastOffsetDelta: 1,
      baseTimestamp: 10,
      maxTimestamp: 20,
      producerId: 99,
      producerEpoch: -1,
      baseSequence: -1,
      recordCount: 2,
    });
    expect(readBatchHeader(one())).toMatchObject({
      timestampType: 'CreateTime',
      isTransactional: false,
      isControl: false,
    });
  });

  it('refuses a position outside the buffer', () => {
    const b = one();
    for (const at of [-1, 0.5, b.length + 1])
      expect(refusal(() => checkBatchFrame(b, at))).toEqual(
        corrupt(`batch position ${at} is outside the ${b.length}-byte buffer`),
      );
    expect(refusal(() => checkBatchFrame(b, b.length))).toEqual(
      corrupt(`truncated batch header at byte ${b.length}: 0 of 61 bytes`),
    );
  });

  it('refuses magic 1, naming it', () => {
    expect(refusal(() => readBatchHeader(edited((v) => v.setInt8(16, 1), false)))).toEqual(
      corrupt('unsupported magic 1 at byte 0: only RecordBatch v2'),
    );
  });

  it('takes a batchLength of exactly the header, and refuses one byte less', () => {
    const empty = batch([], { lastOffsetDelta: 0 });
    expect(checkBatchFrame(empty, 0)).toBe(49);
    const short = new Uint8Array(empty);
    new DataView(short.buffer).setInt32(8, 48);
    expect(refusal(() => checkBatchFrame(short, 0))).toEqual(
      corrupt('batchLength 48 at byte 0 is shorter than a batch header'),
    );
  });

  it('refuses codecs 5 to 7', () => {
    for (const codec of [5, 6, 7])
      expect(refusal(() => readBatchHeader(edited((v) => v.setInt16(21, codec))))).toEqual({
        code: 'UNSUPPORTED_COMPRESSION_TYPE',
        message: `unknown compression codec ${codec} at byte 0`,
      });
  });

  it('refuses a negative record count', () => {
    expect(refusal(() => readBatchHeader(edited((v) => v.setInt32(57, -1))))).toEqual(
      corrupt('negative record count -1 at byte 0'),
    );
  });

  it('holds 64-bit fields to [min, 2^53-1], positive and negative', () => {
    const header = (edit: (v: DataView) => void) => () => readBatchHeader(edited(edit));
    expect(
      readBatchHeader(edited((v) => (v.setBigInt64(0, BigInt(MAX)), v.setInt32(23, 0)))).baseOffset,
    ).toBe(MAX);
    expect(refusal(header((v) => v.setBigInt64(0, -1n)))).toEqual(
      corrupt('baseOffset -1 is outside [0, 2^53-1]'),
    );
    expect(refusal(header((v) => v.setBigInt64(0, 2n ** 53n)))).toEqual(
      corrupt('baseOffset 9007199254740992 is outside [0, 2^53-1]'),
    );
    expect(readBatchHeader(edited((v) => v.setBigInt64(35, BigInt(MAX)))).maxTimestamp).toBe(MAX);
    expect(refusal(header((v) => v.setBigInt64(35, 2n ** 53n)))).toEqual(
      corrupt('maxTimestamp 9007199254740992 is outside [-9007199254740991, 2^53-1]'),
    );
    expect(readBatchHeader(edited((v) => v.setBigInt64(27, -BigInt(MAX)))).baseTimestamp).toBe(-MAX);
    expect(refusal(header((v) => v.setBigInt64(27, -(2n ** 53n))))).toEqual(
      corrupt('baseTimestamp -9007199254740992 is outside [-9007199254740991, 2^53-1]'),
    );
    expect(refusal(header((v) => v.setBigInt64(43, 2n ** 60n)))).toEqual(
      corrupt(`producerId ${2n ** 60n} is outside [-9007199254740991, 2^53-1]`),
    );
  });

  it('takes a last offset of 2^53-1 and refuses one past it', () => {
    const at = (delta: number) => edited((v) => (v.setBigInt64(0, BigInt(MAX) - 2n), v.setInt32(23, delta)));
    expect(readBatchHeader(at(2)).lastOffsetDelta).toBe(2);
    expect(refusal(() => readBatchHeader(at(3)))).toEqual(
      corrupt(`last offset ${MAX - 2} + 3 is beyond 2^53-1`),
    );
  });
});
