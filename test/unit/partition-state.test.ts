import { describe, expect, it } from 'vitest';
import type { TailEntry } from '../../lib/core/log/partition-state.js';
import {
  asPartitionState,
  decodeTailEntry,
  encodeTailEntry,
  initialPartitionState,
} from '../../lib/core/log/partition-state.js';

const plain: TailEntry = {
  o: 'd/abc/0f/0f1e',
  b: 0,
  l: 1037099,
  n: 1000,
  c: 1000,
  t: 1764424800123,
  f: 1764424800001,
};
const idempotent: TailEntry = { ...plain, b: 17, p: 42, e: 3, q: 1000, z: 1999 };
const keyed: TailEntry = { ...plain, k: 'Zm9vYmFyYmF6cXV4MTIzNA' };

describe('tail entries in the partition item', () => {
  it('round-trip through their compact string form, optional fields included', () => {
    for (const entry of [plain, idempotent, keyed, { ...idempotent, k: keyed.k! }]) {
      const encoded = encodeTailEntry(entry);
      expect(typeof encoded).toBe('string');
      expect(decodeTailEntry(encoded)).toEqual(entry);
    }
  });

  it('keep an object key that holds the separator', () => {
    const odd = { ...plain, o: 'd/x|y/ab/a|b|c' };
    expect(decodeTailEntry(encodeTailEntry(odd))).toEqual(odd);
  });

  it('refuse a malformed string rather than inventing offsets', () => {
    expect(() => decodeTailEntry('1|2|3')).toThrow(/malformed tail entry/);
  });

  it('are decoded by asPartitionState, which still reads entries stored as maps', () => {
    const item = initialPartitionState('abc', 'orders', 0, ['s0']);
    expect(asPartitionState(item).tail).toEqual([]);
    const stored = { ...item, tail: [encodeTailEntry(plain), idempotent as unknown as string] };
    expect(asPartitionState(stored).tail).toEqual([plain, idempotent]);
  });
});
