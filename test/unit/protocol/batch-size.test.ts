/**
 * The one batch size estimate (protocol/record-batch/batch-size.ts) that the SDK's producer, its
 * record accumulator and the server's JSON produce path all split batches by: exact bounds, and a
 * bound that an encoded batch never exceeds.
 */
import { describe, expect, it } from 'vitest';
import {
  BATCH_SIZE_OVERHEAD,
  encodeRecordBatch,
  estimateRecordSize,
} from '../../../protocol/record-batch/index.js';

const bytes = (n: number) => new Uint8Array(n).fill(7);

describe('the batch size estimate', () => {
  it('charges the 61-byte v2 header once per batch', () => {
    expect(BATCH_SIZE_OVERHEAD).toBe(61);
  });

  it('bounds a record by 21 bytes of framing plus its key and value', () => {
    expect(estimateRecordSize(null, null)).toBe(21);
    expect(estimateRecordSize(undefined, bytes(5))).toBe(26);
    expect(estimateRecordSize(bytes(3), bytes(5))).toBe(29);
  });

  it('counts text as UTF-8, four bytes for a surrogate pair and three for a lone surrogate', () => {
    expect(estimateRecordSize('ab', 'é')).toBe(21 + 2 + 2);
    expect(estimateRecordSize('😀', '\uD800')).toBe(21 + 4 + 3);
  });

  it('adds 10 bytes of framing per header, its UTF-8 key and its value', () => {
    expect(estimateRecordSize(null, null, [{ key: 'h', value: null }])).toBe(21 + 10 + 1);
    expect(
      estimateRecordSize(bytes(1), bytes(2), [
        { key: 'ü', value: bytes(4) },
        { key: 'k', value: 'vv' },
      ]),
    ).toBe(21 + 1 + 2 + (10 + 2 + 4) + (10 + 1 + 2));
  });

  it('is never below the encoded size of an uncompressed batch', () => {
    for (const n of [1, 2, 10, 100]) {
      const records = Array.from({ length: n }, (_, i) => ({
        key: i % 2 === 0 ? bytes(i) : null,
        value: bytes(3 * i + 1),
        headers: i % 3 === 0 ? [{ key: `h${i}`, value: bytes(i) }] : [],
        timestamp: 1_700_000_000_000 + i * 1_000_000,
      }));
      const estimate = records.reduce(
        (sum, r) => sum + estimateRecordSize(r.key, r.value, r.headers),
        BATCH_SIZE_OVERHEAD,
      );
      const encoded = encodeRecordBatch(records).length;
      expect(encoded).toBeLessThanOrEqual(estimate);
      expect(encoded).toBeGreaterThan(
        estimate - 21 * n - 10 * records.filter((r) => r.headers.length).length,
      );
    }
  });
});
