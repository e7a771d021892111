/**
 * validateProducerBatch, Kafka's LogValidator for a producer's batch, called directly: each check with
 * the value just inside its bound accepted (exact records back) and just outside refused with Kafka's
 * error code and a message that names the batch and the field.
 */
import { describe, expect, it } from 'vitest';
import {
  type RecordInput,
  encodeRecordBatch,
  readBatchHeader,
  validateProducerBatch,
} from '../../../protocol/record-batch/index.js';
import { editHeader } from '../../support/batch-surgery.js';
import { errorOf } from '../../support/sluice-error.js';

const T = 1_700_000_000_000;
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const rec = (value: string, timestamp = T): RecordInput => ({ key: null, value: utf8(value), timestamp });
const LIMITS = { maxMessageBytes: 1_000_000 };

const validate = (bytes: Uint8Array, limits = LIMITS, index?: number) =>
  validateProducerBatch(bytes, readBatchHeader(bytes), limits, index);
const refusal = (bytes: Uint8Array, limits = LIMITS, index?: number) => {
  const { code, message } = errorOf(() => validate(bytes, limits, index));
  return { code, message };
};
const invalid = (message: string) => ({ code: 'INVALID_RECORD', message });
const summary = (bytes: Uint8Array, limits = LIMITS) =>
  validate(bytes, limits).map((r) => [r.offset, r.timestamp, r.value && Buffer.from(r.value).toString()]);

describe('validateProducerBatch', () => {
  it('returns the records of a batch as a producer sends it', () => {
    const batch = encodeRecordBatch([rec('a', T + 10), rec('b', T + 30), rec('c', T)], { baseOffset: 100 });
    expect(summary(batch)).toEqual([
      [100, T + 10, 'a'],
      [101, T + 30, 'b'],
      [102, T, 'c'],
    ]);
  });

  it('takes a batch of exactly max.message.bytes and refuses one byte more, naming the batch', () => {
    const batch = encodeRecordBatch([rec('a')]);
    expect(summary(batch, { maxMessageBytes: batch.length })).toEqual([[0, T, 'a']]);
    expect(refusal(batch, { maxMessageBytes: batch.length - 1 }, 2)).toEqual({
      code: 'MESSAGE_TOO_LARGE',
      message: `batch 2 is ${batch.length} bytes; the topic allows max.message.bytes=${batch.length - 1}`,
    });
  });

  it('does not checksum the batch again: splitBatches has verified its CRC, one pass per produce', () => {
    const batch = encodeRecordBatch([rec('a')]);
    const header = readBatchHeader(batch);
    const stale = new Uint8Array(batch);
    new DataView(stale.buffer).setUint32(17, header.crc ^ 1); // only the stored CRC differs
    expect(validateProducerBatch(stale, header, LIMITS).map((r) => r.offset)).toEqual([0]);
  });

  it('caps what a compressed batch inflates to at max.message.bytes', () => {
    const zeros = [{ key: null, value: new Uint8Array(5_000), timestamp: T }];
    const batch = encodeRecordBatch(zeros, { compression: 'gzip' });
    const inflated = encodeRecordBatch(zeros).length - 61;
    expect(batch.length).toBeLessThan(200);
    expect(Buffer.from(validate(batch, { maxMessageBytes: inflated })[0]!.value!).toString('hex')).toBe(
      '00'.repeat(5_000),
    );
    expect(refusal(batch, { maxMessageBytes: inflated - 1 })).toEqual({
      code: 'CORRUPT_MESSAGE',
      message: `gzip: inflates past the ${inflated - 1}-byte limit`,
    });
  });

  it('refuses control batches, and transactional batches without producer fields', () => {
    expect(refusal(encodeRecordBatch([rec('a')], { isControl: true }))).toEqual(
      invalid('batch 0 is a control batch; only the transaction coordinator writes those'),
    );
    expect(refusal(encodeRecordBatch([rec('a')], { isTransactional: true }))).toEqual(
      invalid('batch 0 is transactional without a producer id, epoch and sequence'),
    );
    const fields = { producerId: 3, producerEpoch: 0, baseSequence: 0, isTransactional: true };
    expect(validate(encodeRecordBatch([rec('a')], fields)).length).toBe(1);
  });

  it('refuses a transactional batch with any one of producer id, epoch and sequence negative', () => {
    const fields = { producerId: 3, producerEpoch: 0, baseSequence: 0, isTransactional: true };
    for (const missing of [{ producerId: -1 }, { producerEpoch: -1 }, { baseSequence: -1 }]) {
      expect(refusal(encodeRecordBatch([rec('a')], { ...fields, ...missing }), LIMITS, 4)).toEqual(
        invalid('batch 4 is transactional without a producer id, epoch and sequence'),
      );
    }
  });

  it('refuses a batch of no records as CORRUPT_MESSAGE', () => {
    const empty = encodeRecordBatch([], { lastOffsetDelta: 0 });
    expect(refusal(empty, LIMITS, 1)).toEqual({ code: 'CORRUPT_MESSAGE', message: 'batch 1 has 0 records' });
  });

  it('refuses a lastOffsetDelta other than recordCount - 1, either way', () => {
    const two = encodeRecordBatch([rec('a'), rec('b')]);
    expect(refusal(editHeader(two, { lastOffsetDelta: 2 }))).toEqual(
      invalid('batch 0 declares 2 records but lastOffsetDelta 2; expected 1'),
    );
    expect(refusal(editHeader(two, { lastOffsetDelta: 0 }), LIMITS, 3)).toEqual(
      invalid('batch 3 declares 2 records but lastOffsetDelta 0; expected 1'),
    );
  });

  it('refuses LogAppendTime, which only the broker stamps', () => {
    const stamped = encodeRecordBatch([rec('a')], { timestampType: 'LogAppendTime', logAppendTime: T });
    expect(refusal(stamped)).toEqual(
      invalid('batch 0 has timestampType LogAppendTime; producers send CreateTime'),
    );
  });

  it('takes producerId -1 (not idempotent) and 0, refuses -2', () => {
    expect(summary(encodeRecordBatch([rec('a')], { producerId: -1 }))).toEqual([[0, T, 'a']]);
    expect(summary(encodeRecordBatch([rec('a')], { producerId: 0 }))).toEqual([[0, T, 'a']]);
    expect(refusal(encodeRecordBatch([rec('a')], { producerId: -2 }))).toEqual(
      invalid('batch 0 has producerId -2'),
    );
  });

  it('refuses a record whose offset delta is not its index, counting from the base offset', () => {
    const gap = encodeRecordBatch([rec('a'), { ...rec('b'), offsetDelta: 2 }], { baseOffset: 50 });
    const lying = editHeader(gap, { lastOffsetDelta: 1 });
    expect(refusal(lying)).toEqual(invalid('batch 0 record 1 has offset delta 2; expected 1'));
  });

  it('takes timestamp -1 (Kafka’s NO_TIMESTAMP) and refuses -2', () => {
    expect(summary(encodeRecordBatch([rec('a', -1), rec('b', -1)]))).toEqual([
      [0, -1, 'a'],
      [1, -1, 'b'],
    ]);
    expect(refusal(encodeRecordBatch([rec('a', 5), rec('b', -2)]))).toEqual(
      invalid('batch 0 record 1 has timestamp -2'),
    );
  });

  it('wants maxTimestamp to be the largest record timestamp, not the last nor any other', () => {
    const batch = encodeRecordBatch([rec('a', T + 10), rec('b', T + 30), rec('c', T + 20)]);
    expect(readBatchHeader(batch).maxTimestamp).toBe(T + 30);
    expect(summary(batch).map(([offset]) => offset)).toEqual([0, 1, 2]);
    for (const declared of [T + 20, T + 31, -1]) {
      expect(refusal(editHeader(batch, { maxTimestamp: declared }))).toEqual(
        invalid(`batch 0 declares maxTimestamp ${declared}; its records' largest timestamp is ${T + 30}`),
      );
    }
    const noTimestamps = encodeRecordBatch([rec('a', -1)]);
    expect(refusal(editHeader(noTimestamps, { maxTimestamp: 1 }))).toEqual(
      invalid("batch 0 declares maxTimestamp 1; its records' largest timestamp is -1"),
    );
  });
});
