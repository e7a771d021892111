import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../protocol/errors.js';
import {
  type Compression,
  type EncodeOptions,
  type RecordInput,
  crc32c,
  decodeRecordBatch,
  encodeRecordBatch,
  readBatchHeader,
  splitBatches,
} from '../../../protocol/record-batch/index.js';
import { decompressRecords } from '../../../protocol/record-batch/compression.js';

const WRITABLE: Compression[] = ['none', 'gzip', 'snappy', 'lz4'];
const ALL: Compression[] = [...WRITABLE, 'zstd'];
const T0 = 1_700_000_000_000;

const bytes = fc.uint8Array({ maxLength: 200 });
const record: fc.Arbitrary<RecordInput> = fc.record({
  key: fc.option(bytes, { nil: null }),
  value: fc.option(fc.oneof(bytes, fc.uint8Array({ minLength: 1000, maxLength: 5000 })), {
    nil: null,
    freq: 4,
  }),
  headers: fc.array(
    // 'binary' strings cover all of Unicode (no lone surrogates, which UTF-8 cannot carry).
    fc.record({ key: fc.string({ unit: 'binary', maxLength: 12 }), value: fc.option(bytes, { nil: null }) }),
    { maxLength: 4 },
  ),
  timestamp: fc.oneof(
    fc.integer({ min: T0 - 10_000_000, max: T0 + 10_000_000 }),
    fc.integer({ min: -(2 ** 51), max: 2 ** 51 }),
  ),
});
const options: fc.Arbitrary<EncodeOptions> = fc.record(
  {
    baseOffset: fc.integer({ min: 0, max: 2 ** 52 }),
    partitionLeaderEpoch: fc.integer({ min: -1, max: 0x7fffffff }),
    producerId: fc.integer({ min: -1, max: 2 ** 52 }),
    producerEpoch: fc.integer({ min: -1, max: 0x7fff }),
    baseSequence: fc.integer({ min: -1, max: 0x7fffffff }),
    compression: fc.constantFrom(...WRITABLE),
    timestampType: fc.constantFrom('CreateTime' as const, 'LogAppendTime' as const),
    logAppendTime: fc.integer({ min: 0, max: 2 ** 50 }),
    isTransactional: fc.boolean(),
    isControl: fc.boolean(),
  },
  { requiredKeys: ['compression', 'logAppendTime'] },
);

/** Runs `fn`; anything it throws must be a SluiceError with one of the decode codes. */
function returnsOrThrowsSluiceError(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof SluiceError)) throw e;
    expect(['CORRUPT_MESSAGE', 'INVALID_RECORD', 'UNSUPPORTED_COMPRESSION_TYPE']).toContain(e.code);
  }
}

/** Byte arrays as hex strings: vitest compares those far faster than Uint8Arrays element by element. */
function plain(x: unknown): unknown {
  if (x instanceof Uint8Array) return Buffer.from(x.buffer, x.byteOffset, x.byteLength).toString('hex');
  if (Array.isArray(x)) return x.map(plain);
  if (x !== null && typeof x === 'object')
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(v)]));
  return x;
}

function reseal(batch: Uint8Array): Uint8Array {
  new DataView(batch.buffer, batch.byteOffset).setUint32(17, crc32c(batch, 21));
  return batch;
}

describe('encode → decode', { timeout: 60_000 }, () => {
  it('gives back every record, and the header the options asked for', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 25 }), options, (records, opts) => {
        const batch = encodeRecordBatch(records, opts);
        const { header, records: decoded } = decodeRecordBatch(batch);
        const logAppend = opts.timestampType === 'LogAppendTime';
        const timestamps = records.map((r) => r.timestamp);
        expect(header).toEqual({
          baseOffset: opts.baseOffset ?? 0,
          batchLength: batch.length - 12,
          partitionLeaderEpoch: opts.partitionLeaderEpoch ?? -1,
          magic: 2,
          crc: crc32c(batch, 21),
          compression: opts.compression,
          timestampType: opts.timestampType ?? 'CreateTime',
          isTransactional: opts.isTransactional ?? false,
          isControl: opts.isControl ?? false,
          lastOffsetDelta: records.length - 1,
          baseTimestamp: timestamps[0],
          maxTimestamp: logAppend ? opts.logAppendTime : Math.max(...timestamps),
          producerId: opts.producerId ?? -1,
          producerEpoch: opts.producerEpoch ?? -1,
          baseSequence: opts.baseSequence ?? -1,
          recordCount: records.length,
        });
        expect(plain(decoded)).toEqual(
          plain(
            records.map((r, i) => ({
              offset: (opts.baseOffset ?? 0) + i,
              timestamp: logAppend ? opts.logAppendTime : r.timestamp,
              key: r.key,
              value: r.value,
              headers: r.headers ?? [],
            })),
          ),
        );
        expect(splitBatches(batch)).toEqual([{ start: 0, end: batch.length, header }]);
      }),
      { numRuns: 200 },
    );
  });

  it('splits any concatenation of batches back into the same batches', () => {
    const batchArb = fc
      .tuple(fc.array(record, { minLength: 1, maxLength: 4 }), fc.constantFrom(...WRITABLE))
      .map(([records, compression]) => encodeRecordBatch(records, { compression }));
    fc.assert(
      fc.property(fc.array(batchArb, { maxLength: 6 }), (batches) => {
        const all = Buffer.concat(batches);
        const split = splitBatches(all);
        expect(split.map(({ start, end }) => plain(all.subarray(start, end)))).toEqual(batches.map(plain));
      }),
      { numRuns: 50 },
    );
  });
});

describe('corruption', { timeout: 60_000 }, () => {
  it('flipping any bits of any byte from the CRC field to the end is detected as CORRUPT_MESSAGE', () => {
    const batchArb = fc
      .tuple(fc.array(record, { minLength: 1, maxLength: 5 }), fc.constantFrom(...WRITABLE))
      .map(([records, compression]) => encodeRecordBatch(records, { compression }));
    fc.assert(
      fc.property(batchArb, fc.nat(), fc.integer({ min: 1, max: 255 }), (batch, at, mask) => {
        const corrupted = new Uint8Array(batch);
        const i = 17 + (at % (batch.length - 17));
        corrupted[i] = corrupted[i]! ^ mask;
        for (const read of [() => splitBatches(corrupted), () => decodeRecordBatch(corrupted)]) {
          expect(read).toThrow(SluiceError);
          expect(read).toThrow(/CRC/);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('random bytes only ever decode or throw SluiceError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (data) => {
        returnsOrThrowsSluiceError(() => splitBatches(data));
        returnsOrThrowsSluiceError(() => readBatchHeader(data));
        returnsOrThrowsSluiceError(() => decodeRecordBatch(data));
        returnsOrThrowsSluiceError(() => decodeRecordBatch(data, { verifyCrc: false }));
      }),
      { numRuns: 1000 },
    );
  });

  it('random payloads behind a valid header (CRC and all) only ever decode or throw SluiceError', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 61, maxLength: 400 }),
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 0, max: 20 }),
        (data, codec, count) => {
          const view = new DataView(data.buffer);
          view.setInt32(8, data.length - 12);
          view.setInt8(16, 2);
          view.setInt16(21, codec);
          view.setBigInt64(0, BigInt(count));
          view.setInt32(57, count);
          returnsOrThrowsSluiceError(() => decodeRecordBatch(reseal(data)));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('mutated records and compressed payloads, re-sealed with a valid CRC, only ever decode or throw SluiceError', () => {
    const batchArb = fc
      .tuple(fc.array(record, { minLength: 1, maxLength: 8 }), fc.constantFrom(...WRITABLE))
      .map(([records, compression]) => encodeRecordBatch(records, { compression }));
    const edit = fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }));
    fc.assert(
      fc.property(batchArb, fc.array(edit, { minLength: 1, maxLength: 6 }), fc.nat(), (batch, edits, cut) => {
        let mutated = new Uint8Array(batch);
        for (const [at, value] of edits) mutated[61 + (at % (mutated.length - 61))] = value;
        if (cut % 4 === 0) {
          // also truncate the records section, keeping the frame consistent
          mutated = mutated.slice(0, 61 + (cut % (mutated.length - 61)));
          new DataView(mutated.buffer).setInt32(8, mutated.length - 12);
        }
        returnsOrThrowsSluiceError(() => decodeRecordBatch(reseal(mutated)));
      }),
      { numRuns: 1500 },
    );
  });

  it('mutated zstd and lz4 frames from the reference tools only ever decode or throw SluiceError', () => {
    const fixture = JSON.parse(
      readFileSync(new URL('../../fixtures/record-batch/kafkajs-golden.json', import.meta.url), 'utf8'),
    ) as { cases: { compression: Compression; batch: string }[] };
    const seeds = fixture.cases
      .filter((c) => c.compression === 'zstd' || c.compression === 'lz4')
      .map((c) => Uint8Array.from(Buffer.from(c.batch, 'hex')));
    expect(seeds).toHaveLength(2);
    const edit = fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }));
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(edit, { minLength: 1, maxLength: 4 }),
        (batch, edits) => {
          const mutated = new Uint8Array(batch);
          for (const [at, value] of edits) mutated[61 + (at % (mutated.length - 61))] = value;
          returnsOrThrowsSluiceError(() => decodeRecordBatch(reseal(mutated)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it.each(ALL)(
    'every %s decompressor only ever returns or throws CORRUPT_MESSAGE on garbage',
    (compression) => {
      // Garbage behind each codec's real magic bytes, so the decoders get past their first check.
      const prefixes: { [c in Compression]: number[] } = {
        none: [],
        gzip: [0x1f, 0x8b, 0x08, 0x00],
        snappy: [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1],
        lz4: [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82],
        zstd: [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50],
      };
      fc.assert(
        fc.property(fc.boolean(), fc.uint8Array({ maxLength: 300 }), (prefixed, tail) => {
          const data = Uint8Array.from([...(prefixed ? prefixes[compression] : []), ...tail]);
          try {
            decompressRecords(compression, data);
          } catch (e) {
            expect(e).toBeInstanceOf(SluiceError);
            expect((e as SluiceError).code).toBe('CORRUPT_MESSAGE');
          }
        }),
        { numRuns: 1500 },
      );
    },
  );
});
