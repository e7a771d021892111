/**
 * The partition item as created and as read (lib/core/log/partition-state.ts): every field of a new
 * partition, the topic id in its key, the tail's base offsets, and the tail strings it refuses.
 */
import { describe, expect, it } from 'vitest';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import type { Item } from '../../../../lib/ports/metadata-store.js';
import type { TailEntry } from '../../../../lib/core/log/partition-state.js';
import { tailOffsets } from '../../../../lib/core/log/partition-state.js';
import {
  decodePartitionState,
  decodeTailEntry,
  encodePartitionItem,
  encodeTailEntry,
  initialPartitionState,
  topicIdOf,
} from '../../../../lib/core/log/partition-codec.js';
import { LOG_SIZE_ATTR } from '../../../../lib/core/log/log-size.js';

const entry = (n: number): TailEntry => ({
  objectKey: 'd/x',
  position: 0,
  sizeInBytes: 1,
  offsetCount: n,
  recordCount: n,
  maxTimestamp: 1,
  firstTimestamp: 1,
});

describe('a new partition item', () => {
  it('starts empty at offset 0 with the first replica leading, every replica in sync and caught up now', () => {
    expect(initialPartitionState('T1', 'orders', 2, ['s1', 's0', 's2'], 1234)).toEqual({
      ...keys.partitionState('T1', 2),
      topic: 'orders',
      partition: 2,
      leader: 's1',
      leaderEpoch: 0,
      replicas: ['s1', 's0', 's2'],
      isr: ['s1', 's0', 's2'],
      nextOffset: 0,
      logStartOffset: 0,
      tailBase: 0,
      tail: [],
      pr: {},
      ik: [],
      ikGen: 0,
      tsMax: -1,
      hw: 0,
      leo: { s1: 0, s0: 0, s2: 0 },
      lc: { s1: 1234, s0: 1234, s2: 1234 },
      tx: {},
      mk: {},
      // The log's byte total (lib/core/log/log-size.ts): nothing yet.
      sz: 0,
    });
    const item = initialPartitionState('T1', 'orders', 0, ['s0']);
    expect([item['lc'], item['leader']]).toEqual([{ s0: 0 }, 's0']);
    // The ISR is its own list, not the replicas' (an ISR change must not move the replica set).
    const replicas = ['s0', 's1'];
    const own = initialPartitionState('T1', 'orders', 0, replicas);
    (own['isr'] as string[]).pop();
    expect([replicas, own['replicas']]).toEqual([
      ['s0', 's1'],
      ['s0', 's1'],
    ]);
    expect(initialPartitionState('T1', 'orders', 0, [])['leader']).toBe('s0');
  });
});

describe('the partition item as read', () => {
  it('names its topic id by its key, whatever the id holds', () => {
    expect(topicIdOf({ pk: 'P#T1#3', sk: 'STATE' })).toBe('T1');
    expect(topicIdOf({ pk: 'P#a#b#12', sk: 'STATE' })).toBe('a#b');
    expect(topicIdOf({ pk: 'TOPIC#orders', sk: 'META' })).toBeUndefined();
    expect(topicIdOf({ pk: 'XP#T1#3', sk: 'STATE' })).toBeUndefined();
  });

  it('gives each tail entry its base offset from tailBase', () => {
    expect(tailOffsets({ tailBase: 40, tail: [entry(3), entry(1), entry(5)] })).toEqual([40, 43, 44]);
    expect(tailOffsets({ tailBase: 7, tail: [] })).toEqual([]);
  });

  it('carries the log size under its long name, undefined when the item does not know it', () => {
    const item = initialPartitionState('T1', 'orders', 0, ['s0']);
    expect(decodePartitionState(item).logSizeBytes).toBe(0);
    expect(decodePartitionState({ ...item, [LOG_SIZE_ATTR]: 42 }).logSizeBytes).toBe(42);
    // Encoding stores the long name under the short attribute, never under its own name.
    const encoded = encodePartitionItem('T1', decodePartitionState({ ...item, [LOG_SIZE_ATTR]: 42 }));
    expect([encoded[LOG_SIZE_ATTR], encoded['logSizeBytes']]).toEqual([42, undefined]);
    // Unknown: absent (an item from before the total was kept), or a difference added to nothing.
    const unknown: Item = { ...item };
    delete unknown[LOG_SIZE_ATTR];
    expect(decodePartitionState(unknown).logSizeBytes).toBeUndefined();
    expect(
      decodePartitionState({ ...unknown, [LOG_SIZE_ATTR]: -(2 ** 52) + 300 }).logSizeBytes,
    ).toBeUndefined();
  });
});

describe('a tail entry string', () => {
  const topicId = 'T1';
  const plain: TailEntry = {
    objectKey: dataObjectKey(topicId, 'abcdef'),
    position: 1,
    sizeInBytes: 2,
    offsetCount: 3,
    recordCount: 4,
    maxTimestamp: 50,
    firstTimestamp: 45,
  };

  it('has twelve fields, the object last', () => {
    expect(encodeTailEntry(plain, topicId)).toBe('1|2|3|4|1e|5||||||@abcdef');
    expect(
      encodeTailEntry(
        {
          ...plain,
          producerId: 36,
          producerEpoch: 1,
          baseSequence: 10,
          lastSequence: 12,
          idempotencyMark: 'K',
        },
        topicId,
      ),
    ).toBe('1|2|3|4|1e|5|10|1|a|2|K|@abcdef');
    expect(decodeTailEntry('1|2|3|4|1e|5||||||@abcdef', topicId)).toEqual(plain);
    expect(decodeTailEntry('1|2|3|4|1e|5||||||', topicId)).toEqual({ ...plain, objectKey: '' });
  });

  it('refuses fewer than twelve fields, and an object key that would read as shortened', () => {
    expect(() => decodeTailEntry('1|2|3|4|1e|5|||||', topicId)).toThrow(
      new Error('malformed tail entry: 1|2|3|4|1e|5|||||'),
    );
    expect(() => decodeTailEntry(`${'9'.repeat(100)}|1`, topicId)).toThrow(
      new Error(`malformed tail entry: ${'9'.repeat(80)}`),
    );
    expect(() => encodeTailEntry({ ...plain, objectKey: '@abcdef' }, topicId)).toThrow(
      new Error('object key @abcdef cannot be stored in a tail'),
    );
    expect(() => decodeTailEntry('1|2|3|4|1e|5||||||@abcdef', undefined)).toThrow(
      new Error("tail entry 1|2|3|4|1e|5||||||@abcdef needs the item's key to name its object"),
    );
  });
});
