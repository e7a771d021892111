import { describe, expect, it } from 'vitest';
import { dataObjectKey } from '../../../../lib/core/keys.js';
import type { TailEntry } from '../../../../lib/core/log/partition-state.js';
import {
  asPartitionState,
  decodeTailEntry,
  encodeTailEntry,
  initialPartitionState,
} from '../../../../lib/core/log/partition-state.js';

const topicId = 'Tq3xVb7uQeS0a1b2c3d4eA';
const id = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const plain: TailEntry = {
  o: dataObjectKey(topicId, id),
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
      const encoded = encodeTailEntry(entry, topicId);
      expect(decodeTailEntry(encoded, topicId)).toEqual(entry);
    }
  });

  it('round-trip the edge values: zero, negative timestamps, sequences near the int32 limit', () => {
    const edges: TailEntry = { ...plain, l: 0, t: -1, f: -1, p: 0, e: 0, q: 2 ** 31 - 2, z: 2 ** 31 - 1 };
    expect(decodeTailEntry(encodeTailEntry(edges, topicId), topicId)).toEqual(edges);
  });

  it('name the usual data object by its id only, and keep any other key whole', () => {
    const encoded = encodeTailEntry(idempotent, topicId);
    expect(encoded.endsWith(`|@${id}`)).toBe(true);
    expect(encoded.length).toBeLessThan(80);
    const odd = { ...plain, o: 'd/x|y/ab/a|b|c' };
    expect(decodeTailEntry(encodeTailEntry(odd, topicId), topicId)).toEqual(odd);
    // Another topic's key is not shortened against this one.
    const foreign = { ...plain, o: dataObjectKey('another', id) };
    expect(decodeTailEntry(encodeTailEntry(foreign, topicId), topicId)).toEqual(foreign);
  });

  it('refuse a malformed string, or a short key without the item naming its topic', () => {
    expect(() => decodeTailEntry('1|2|3', topicId)).toThrow(/malformed tail entry/);
    expect(() => decodeTailEntry(encodeTailEntry(plain, topicId), undefined)).toThrow(/needs the item's key/);
  });

  it('are decoded by asPartitionState from the item key, which still reads entries stored as maps', () => {
    const item = initialPartitionState(topicId, 'orders', 3, ['s0']);
    expect(asPartitionState(item).tail).toEqual([]);
    const stored = { ...item, tail: [encodeTailEntry(plain, topicId), idempotent as unknown as string] };
    expect(asPartitionState(stored).tail).toEqual([plain, idempotent]);
  });
});
