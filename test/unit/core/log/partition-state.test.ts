import { describe, expect, it } from 'vitest';
import { dataObjectKey } from '../../../../lib/core/keys.js';
import type { TailEntry } from '../../../../lib/core/log/partition-state.js';
import {
  decodePartitionState,
  decodeTailEntry,
  encodeTailEntry,
  initialPartitionState,
} from '../../../../lib/core/log/partition-codec.js';

const topicId = 'Tq3xVb7uQeS0a1b2c3d4eA';
const id = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const plain: TailEntry = {
  objectKey: dataObjectKey(topicId, id),
  position: 0,
  sizeInBytes: 1037099,
  offsetCount: 1000,
  recordCount: 1000,
  maxTimestamp: 1764424800123,
  firstTimestamp: 1764424800001,
};
const idempotent: TailEntry = {
  ...plain,
  position: 17,
  producerId: 42,
  producerEpoch: 3,
  baseSequence: 1000,
  lastSequence: 1999,
};
const keyed: TailEntry = { ...plain, idempotencyMark: 'Zm9vYmFyYmF6cXV4MTIzNA' };

describe('tail entries in the partition item', () => {
  it('round-trip through their compact string form, optional fields included', () => {
    for (const entry of [
      plain,
      idempotent,
      keyed,
      { ...idempotent, idempotencyMark: keyed.idempotencyMark! },
    ]) {
      const encoded = encodeTailEntry(entry, topicId);
      expect(decodeTailEntry(encoded, topicId)).toEqual(entry);
    }
  });

  it('round-trip the edge values: zero, negative timestamps, sequences near the int32 limit', () => {
    const edges: TailEntry = {
      ...plain,
      sizeInBytes: 0,
      maxTimestamp: -1,
      firstTimestamp: -1,
      producerId: 0,
      producerEpoch: 0,
      baseSequence: 2 ** 31 - 2,
      lastSequence: 2 ** 31 - 1,
    };
    expect(decodeTailEntry(encodeTailEntry(edges, topicId), topicId)).toEqual(edges);
  });

  it('name the usual data object by its id only, and keep any other key whole', () => {
    const encoded = encodeTailEntry(idempotent, topicId);
    expect(encoded.endsWith(`|@${id}`)).toBe(true);
    expect(encoded.length).toBeLessThan(80);
    const odd = { ...plain, objectKey: 'd/x|y/ab/a|b|c' };
    expect(decodeTailEntry(encodeTailEntry(odd, topicId), topicId)).toEqual(odd);
    // Another topic's key is not shortened against this one.
    const foreign = { ...plain, objectKey: dataObjectKey('another', id) };
    expect(decodeTailEntry(encodeTailEntry(foreign, topicId), topicId)).toEqual(foreign);
  });

  it('refuse a malformed string, or a short key without the item naming its topic', () => {
    expect(() => decodeTailEntry('1|2|3', topicId)).toThrow(/malformed tail entry/);
    expect(() => decodeTailEntry(encodeTailEntry(plain, topicId), undefined)).toThrow(/needs the item's key/);
  });

  it('are decoded by decodePartitionState from the item key', () => {
    const item = initialPartitionState(topicId, 'orders', 3, ['s0']);
    expect(decodePartitionState(item).tail).toEqual([]);
    const stored = { ...item, tail: [encodeTailEntry(plain, topicId), encodeTailEntry(idempotent, topicId)] };
    expect(decodePartitionState(stored).tail).toEqual([plain, idempotent]);
  });
});
