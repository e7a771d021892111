import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BatchHeader,
  type Compression,
  crc32c,
  decodeRecordBatch,
  encodeRecordBatch,
  readBatchHeader,
  splitBatches,
} from '../../../protocol/record-batch/index.js';

// Golden batches written by independent encoders (kafkajs; the reference lz4 and zstd tools): see
// test/fixtures/generate-record-batches.ts.
interface FixtureRecord {
  key: string | null;
  value: string | null;
  headers: { key: string; value: string }[];
  timestamp: number;
}
interface FixtureCase {
  name: string;
  compression: Compression;
  baseOffset: number;
  partitionLeaderEpoch: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  isTransactional: boolean;
  records: string;
  expectedHeader: BatchHeader;
  batch: string;
}
const fixture = JSON.parse(
  readFileSync(new URL('../../fixtures/record-batch/kafkajs-golden.json', import.meta.url), 'utf8'),
) as { recordSets: { [name: string]: FixtureRecord[] }; cases: FixtureCase[] };

const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
const hexOrNull = (s: string | null): Uint8Array | null => (s === null ? null : hex(s));
const inputsOf = (c: FixtureCase) =>
  fixture.recordSets[c.records]!.map((r) => ({
    key: hexOrNull(r.key),
    value: hexOrNull(r.value),
    headers: r.headers.map((h) => ({ key: h.key, value: hex(h.value) })),
    timestamp: r.timestamp,
  }));

describe('RecordBatch golden vectors from independent encoders', () => {
  it('covers every codec Sluice decodes except snappy (no independent encoder here)', () => {
    expect(new Set(fixture.cases.map((c) => c.compression))).toEqual(
      new Set(['none', 'gzip', 'lz4', 'zstd']),
    );
  });

  describe.each(fixture.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const bytes = hex(c.batch);
    const inputs = inputsOf(c);

    it('reads every header field', () => {
      expect(readBatchHeader(bytes)).toEqual(c.expectedHeader);
      expect(crc32c(bytes, 21)).toBe(c.expectedHeader.crc);
      expect(splitBatches(bytes)).toEqual([{ start: 0, end: bytes.length, header: c.expectedHeader }]);
    });

    it('decodes every record: absolute offset, timestamp, key, value, headers in order', () => {
      const { header, records } = decodeRecordBatch(bytes);
      expect(header).toEqual(c.expectedHeader);
      expect(records).toHaveLength(inputs.length);
      // As hex strings: vitest compares those far faster than Uint8Arrays element by element.
      const hexOf = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('hex'));
      expect(
        records.map((r) => [
          r.offset,
          r.timestamp,
          hexOf(r.key),
          hexOf(r.value),
          r.headers.map((h) => [h.key, hexOf(h.value)]),
        ]),
      ).toEqual(
        fixture.recordSets[c.records]!.map((r, i) => [
          c.baseOffset + i,
          r.timestamp,
          r.key,
          r.value,
          r.headers.map((h) => [h.key, h.value]),
        ]),
      );
    });

    if (c.compression === 'none') {
      it('is what our encoder writes, byte for byte', () => {
        const ours = encodeRecordBatch(inputs, {
          baseOffset: c.baseOffset,
          partitionLeaderEpoch: c.partitionLeaderEpoch,
          producerId: c.producerId,
          producerEpoch: c.producerEpoch,
          baseSequence: c.baseSequence,
          isTransactional: c.isTransactional,
        });
        expect(Buffer.from(ours).toString('hex')).toBe(c.batch);
      });
    }
  });
});

// kafkajs's decoder as a second, independent reader of what we write (it reads none and gzip).
const requireCjs = createRequire(import.meta.url);
const KafkajsDecoder = requireCjs('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => unknown;
const decodeWithKafkajs = requireCjs('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (
  decoder: unknown,
) => Promise<{
  firstOffset: string;
  records: {
    offset: string;
    timestamp: string;
    key: Buffer | null;
    value: Buffer | null;
    headers: { [key: string]: Buffer };
  }[];
}>;

describe('kafkajs decodes what we encode', { timeout: 60_000 }, () => {
  const bytes = fc.uint8Array({ maxLength: 64 });
  const record = fc.record({
    key: fc.option(bytes, { nil: null }),
    value: fc.option(bytes, { nil: null }),
    // kafkajs returns headers as an object, so keys are unique and never integer-like (those would be
    // reordered); header order is checked against the golden vectors above.
    headers: fc.uniqueArray(
      fc.record({ key: fc.string({ maxLength: 8 }).map((k) => `h-${k}`), value: bytes }),
      {
        selector: (h) => h.key,
        maxLength: 3,
      },
    ),
    timestamp: fc.integer({ min: 0, max: 2 ** 45 }),
  });

  it.each(['none', 'gzip'] as const)('%s', async (compression) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        async (records, baseOffset) => {
          const batch = encodeRecordBatch(records, { baseOffset, compression });
          const decoded = await decodeWithKafkajs(new KafkajsDecoder(Buffer.from(batch)));
          expect(decoded.firstOffset).toBe(String(baseOffset));
          expect(decoded.records).toHaveLength(records.length);
          decoded.records.forEach((r, i) => {
            const input = records[i]!;
            expect(r.offset).toBe(String(baseOffset + i));
            expect(r.timestamp).toBe(String(input.timestamp));
            expect(r.key === null ? null : new Uint8Array(r.key)).toEqual(input.key);
            expect(r.value === null ? null : new Uint8Array(r.value)).toEqual(input.value);
            expect(Object.entries(r.headers).map(([k, v]) => [k, new Uint8Array(v)])).toEqual(
              input.headers.map((h) => [h.key, h.value]),
            );
          });
        },
      ),
      { numRuns: 60 },
    );
  });
});
