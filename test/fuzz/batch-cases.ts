/**
 * Structure-aware mutations of valid RecordBatches: every header field, the records section's bytes and
 * varints, the codec bits, truncation and concatenation. Each case says what it did, for the report.
 */
import fc from 'fast-check';
import type { Compression, RecordInput } from '../../protocol/record-batch/index.js';
import { encodeRecordBatch } from '../../protocol/record-batch/index.js';
import { RECORDS } from '../../protocol/record-batch/header.js';
import { writeVarint } from '../../protocol/record-batch/varint.js';
import { reseal } from '../support/batch-surgery.js';

export interface BatchCase {
  topic: string;
  partition: number;
  body: Uint8Array;
  mutation: string;
}

/** Header fields by byte position and width (Kafka's DefaultRecordBatch layout). */
const FIELDS: [name: string, at: number, width: 1 | 2 | 4 | 8][] = [
  ['baseOffset', 0, 8],
  ['batchLength', 8, 4],
  ['partitionLeaderEpoch', 12, 4],
  ['magic', 16, 1],
  ['crc', 17, 4],
  ['attributes', 21, 2],
  ['lastOffsetDelta', 23, 4],
  ['baseTimestamp', 27, 8],
  ['maxTimestamp', 35, 8],
  ['producerId', 43, 8],
  ['producerEpoch', 51, 2],
  ['baseSequence', 53, 4],
  ['recordCount', 57, 4],
];

const INTERESTING = [
  0n,
  1n,
  -1n,
  2n,
  7n,
  0x7fn,
  0x80n,
  0x7fffn,
  0x7fffffffn,
  -0x80000000n,
  2n ** 53n,
  2n ** 63n - 1n,
  -(2n ** 63n),
];

const T0 = 1_700_000_000_000;
const bytes = (max: number) => fc.uint8Array({ maxLength: max });
const record: fc.Arbitrary<RecordInput> = fc.record({
  key: fc.option(bytes(16), { nil: null, freq: 3 }),
  value: fc.option(bytes(48), { nil: null, freq: 6 }),
  headers: fc.array(
    fc.record({
      key: fc.string({ unit: 'binary', maxLength: 6 }),
      value: fc.option(bytes(8), { nil: null }),
    }),
    {
      maxLength: 2,
    },
  ),
  timestamp: fc.integer({ min: T0 - 1_000_000, max: T0 + 1_000_000 }),
});
const codec = fc.constantFrom<Compression>('none', 'none', 'gzip', 'snappy', 'lz4');

const setField = (batch: Uint8Array, at: number, width: 1 | 2 | 4 | 8, value: bigint): void => {
  const view = new DataView(batch.buffer, batch.byteOffset, batch.byteLength);
  if (width === 8) view.setBigInt64(at, BigInt.asIntN(64, value));
  else if (width === 4) view.setInt32(at, Number(BigInt.asIntN(32, value)));
  else if (width === 2) view.setInt16(at, Number(BigInt.asIntN(16, value)));
  else view.setInt8(at, Number(BigInt.asIntN(8, value)));
};

const fieldMutation: fc.Arbitrary<(b: Uint8Array) => [Uint8Array, string]> = fc
  .tuple(
    fc.constantFrom(...FIELDS),
    fc.oneof(fc.constantFrom(...INTERESTING), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
    fc.boolean(),
    fc.integer({ min: -3, max: 3 }),
  )
  .map(([[name, at, width], value, sealed, nudge]) => (b: Uint8Array) => {
    if (b.length < at + width) return [b, `${name} not present`];
    const copy = new Uint8Array(b);
    // Half the time a small step from the true value: off-by-one lies are the subtle ones.
    const view = new DataView(copy.buffer);
    const current =
      width === 8
        ? view.getBigInt64(at)
        : BigInt(width === 4 ? view.getInt32(at) : width === 2 ? view.getInt16(at) : view.getInt8(at));
    const next = nudge !== 0 ? current + BigInt(nudge) : value;
    setField(copy, at, width, next);
    // batchLength and crc are what reseal recomputes: edit them unsealed so the edit survives.
    const reseals = sealed && name !== 'batchLength' && name !== 'crc';
    return [reseals ? reseal(copy) : copy, `${name}=${next}${reseals ? ' (resealed)' : ''}`];
  });

const bytesMutation: fc.Arbitrary<(b: Uint8Array) => [Uint8Array, string]> = fc
  .tuple(
    fc.constantFrom('set', 'insert', 'delete', 'varint', 'truncate', 'extend'),
    fc.nat(),
    fc.integer({ min: 0, max: 255 }),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  )
  .map(([kind, where, byte, varint]) => (b: Uint8Array) => {
    const section = b.length - RECORDS;
    const at = RECORDS + (section > 0 ? where % section : 0);
    if (kind === 'truncate') return [b.subarray(0, where % b.length), `truncated to ${where % b.length}`];
    if (kind === 'extend')
      return [reseal(Buffer.concat([b, Buffer.from([byte])])), `1 byte appended, resealed`];
    if (kind === 'set') {
      const copy = new Uint8Array(b);
      if (section > 0) copy[at] = byte;
      return [reseal(copy), `records[${at - RECORDS}]=${byte}, resealed`];
    }
    if (kind === 'insert') {
      return [
        reseal(Buffer.concat([b.subarray(0, at), Buffer.from([byte]), b.subarray(at)])),
        `byte inserted at ${at - RECORDS}, resealed`,
      ];
    }
    if (kind === 'delete') {
      return [
        reseal(Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1))])),
        `byte deleted at ${at - RECORDS}, resealed`,
      ];
    }
    // A varint written over the records section's start: the first record's length, or whatever is there.
    const v = Buffer.alloc(5);
    const end = writeVarint(v, 0, varint);
    return [
      reseal(
        Buffer.concat([b.subarray(0, at), v.subarray(0, end), b.subarray(Math.min(b.length, at + end))]),
      ),
      `varint ${varint} at ${at - RECORDS}, resealed`,
    ];
  });

const codecMutation: fc.Arbitrary<(b: Uint8Array) => [Uint8Array, string]> = fc
  .integer({ min: 0, max: 7 })
  .map((c) => (b: Uint8Array) => {
    if (b.length < RECORDS) return [b, 'codec not present'];
    const copy = new Uint8Array(b);
    const view = new DataView(copy.buffer);
    view.setInt16(21, (view.getInt16(21) & ~0x07) | c);
    return [reseal(copy), `codec bits=${c}, resealed`];
  });

/** A valid batch, then nothing, or one or two structure-aware mutations; sometimes after a valid neighbour. */
export const batchCase = (
  topics: readonly string[],
  producerIds: readonly number[],
): fc.Arbitrary<BatchCase> =>
  fc
    .record({
      topic: fc.constantFrom(...topics),
      partition: fc.constantFrom(0, 0, 0, 1, 7),
      records: fc.array(record, { minLength: 1, maxLength: 6 }),
      compression: codec,
      producer: fc.option(
        fc.record({ id: fc.constantFrom(...producerIds, 999_999), seq: fc.nat({ max: 40 }) }),
        { nil: undefined, freq: 4 },
      ),
      mutations: fc.array(
        fc.oneof(
          { arbitrary: fieldMutation, weight: 4 },
          { arbitrary: bytesMutation, weight: 4 },
          { arbitrary: codecMutation, weight: 1 },
        ),
        { maxLength: 2 },
      ),
      neighbour: fc.boolean(),
    })
    .map(({ topic, partition, records, compression, producer, mutations, neighbour }) => {
      let batch: Uint8Array = encodeRecordBatch(records, {
        compression,
        ...(producer ? { producerId: producer.id, producerEpoch: 0, baseSequence: producer.seq } : {}),
      });
      const notes: string[] = [
        `${records.length} records, ${compression}${producer ? `, producer ${producer.id} seq ${producer.seq}` : ''}`,
      ];
      for (const mutate of mutations) {
        const [next, note] = mutate(batch);
        batch = next;
        notes.push(note);
      }
      const body =
        neighbour && mutations.length > 0 ? Buffer.concat([encodeRecordBatch(records), batch]) : batch;
      if (neighbour && mutations.length > 0) notes.push('after a valid batch');
      return { topic, partition, body: new Uint8Array(body), mutation: notes.join('; ') };
    });
