/**
 * The partition-set algebra of consumer groups, value by value: normalized maps (sorted topics,
 * ascending distinct partitions, no empty topics), the set operations, and the range encoding the
 * group item stores.
 */
import { describe, expect, it } from 'vitest';
import {
  count,
  decodePartitionMap,
  decodeRanges,
  EMPTY_PARTITIONS,
  encodePartitionMap,
  encodeRanges,
  filterPartitions,
  fromTopicPartitions,
  has,
  intersect,
  intersects,
  isEmpty,
  isSubset,
  minus,
  pairs,
  partitionMap,
  samePartitions,
  toTopicPartitions,
  union,
} from '../../../../lib/core/groups/partition-map.js';

const a = partitionMap([
  ['b', [3, 1]],
  ['a', [2, 0, 2]],
]);
const b = partitionMap([
  ['a', [2, 5]],
  ['c', [0]],
]);

describe('a partition map', () => {
  it('sorts topics and partitions numerically, merges repeats and drops empty topics', () => {
    const map = partitionMap([
      ['z', [10, 9, 100]],
      ['a', []],
      ['m', [1]],
      ['z', [9, 2]],
    ]);
    expect(map).toEqual({ m: [1], z: [2, 9, 10, 100] });
    expect(Object.keys(map)).toEqual(['m', 'z']);
    expect(a).toEqual({ a: [0, 2], b: [1, 3] });
    expect(Object.keys(a)).toEqual(['a', 'b']);
    expect(partitionMap([])).toEqual({});
  });

  it('converts from and to the wire list, topics sorted', () => {
    expect(
      fromTopicPartitions([
        { topic: 'y', partitions: [1, 0] },
        { topic: 'x', partitions: [] },
      ]),
    ).toEqual({ y: [0, 1] });
    expect(toTopicPartitions(a)).toEqual([
      { topic: 'a', partitions: [0, 2] },
      { topic: 'b', partitions: [1, 3] },
    ]);
    expect(toTopicPartitions({ z: [1], a: [0] }).map((t) => t.topic)).toEqual(['a', 'z']);
    expect(toTopicPartitions(EMPTY_PARTITIONS)).toEqual([]);
  });
});

describe('the set operations', () => {
  it('union, minus, intersect and filter give exactly the expected sets', () => {
    expect(union(a, b)).toEqual({ a: [0, 2, 5], b: [1, 3], c: [0] });
    expect(minus(a, b)).toEqual({ a: [0], b: [1, 3] });
    expect(minus(b, a)).toEqual({ a: [5], c: [0] });
    expect(minus(a, a)).toEqual({});
    expect(intersect(a, b)).toEqual({ a: [2] });
    expect(intersect(b, a)).toEqual({ a: [2] });
    expect(intersect(a, EMPTY_PARTITIONS)).toEqual({});
    expect(filterPartitions(a, (topic, p) => topic === 'b' || p > 0)).toEqual({ a: [2], b: [1, 3] });
    expect(filterPartitions(a, () => false)).toEqual({});
  });

  it('answers membership, emptiness, size, overlap, inclusion and equality exactly', () => {
    expect([has(a, 'a', 2), has(a, 'a', 1), has(a, 'c', 0), has(EMPTY_PARTITIONS, 'a', 0)]).toEqual([
      true,
      false,
      false,
      false,
    ]);
    expect([isEmpty(EMPTY_PARTITIONS), isEmpty(a), isEmpty(minus(a, a))]).toEqual([true, false, true]);
    expect([count(a), count(b), count(EMPTY_PARTITIONS)]).toEqual([4, 3, 0]);
    expect([intersects(a, b), intersects(a, { c: [0] }), intersects(EMPTY_PARTITIONS, a)]).toEqual([
      true,
      false,
      false,
    ]);
    expect([isSubset({ a: [2] }, a), isSubset({ a: [2, 5] }, a), isSubset(EMPTY_PARTITIONS, a)]).toEqual([
      true,
      false,
      true,
    ]);
    expect(isSubset(a, { a: [0, 2] })).toBe(false);
  });

  it('compares partition sets by value: topics, lengths and every partition', () => {
    expect(samePartitions(a, { b: [1, 3], a: [0, 2] })).toBe(true);
    expect(samePartitions(EMPTY_PARTITIONS, {})).toBe(true);
    expect(samePartitions(a, { a: [0, 2] })).toBe(false);
    expect(samePartitions({ a: [0, 2] }, a)).toBe(false);
    expect(samePartitions(a, { a: [0, 2], c: [1, 3] })).toBe(false);
    expect(samePartitions(a, { a: [0, 2], b: [1] })).toBe(false);
    expect(samePartitions(a, { a: [0, 2], b: [1, 4] })).toBe(false);
    expect(samePartitions({ a: [0] }, { a: [0, 1] })).toBe(false);
  });

  it('lists every pair topic-major', () => {
    expect(pairs({ b: [1], a: [0, 2] })).toEqual([
      ['a', 0],
      ['a', 2],
      ['b', 1],
    ]);
    expect(pairs(EMPTY_PARTITIONS)).toEqual([]);
  });
});

describe('the range encoding', () => {
  it.each([
    [[], ''],
    [[0], '0'],
    [[0, 1], '0-1'],
    [[0, 1, 2, 3, 5], '0-3,5'],
    [[1, 3, 5], '1,3,5'],
    [[2, 3, 4, 7, 8, 10], '2-4,7-8,10'],
    [[0, 2, 3], '0,2-3'],
  ])('encodes %j as %j and back', (partitions, text) => {
    expect(encodeRanges(partitions)).toBe(text);
    expect(decodeRanges(text)).toEqual(partitions);
  });

  it('encodes and decodes a whole map; anything else decodes to no partitions', () => {
    const map = { t: [0, 1, 2, 9], u: [4] };
    expect(encodePartitionMap(map)).toEqual({ t: '0-2,9', u: '4' });
    expect(decodePartitionMap({ u: '4', t: '0-2,9' })).toEqual(map);
    expect(Object.keys(decodePartitionMap({ u: '4', t: '0-2,9' }))).toEqual(['t', 'u']);
    expect(decodePartitionMap({ t: '', u: 7, v: '1' })).toEqual({ v: [1] });
    expect(decodePartitionMap(null)).toEqual({});
    expect(decodePartitionMap('0-2')).toEqual({});
    expect(decodePartitionMap(undefined)).toEqual({});
  });
});
