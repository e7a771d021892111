/**
 * The partition item's codec (lib/core/log/partition-codec.ts): every field of a state and of a tail
 * entry survives encode then decode, optional ones absent or present; and what it stores is exactly
 * the shape the short-named state was stored as before the fields got Kafka's names (the fixtures
 * below are written out by hand in that stored form), so no stored item changes.
 */
import { describe, expect, it } from 'vitest';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import {
  decodePartitionState,
  decodeTailEntry,
  encodePartitionItem,
  encodePartitionState,
  encodeProducerState,
  encodeTailEntry,
  producerAttr,
  stateAttr,
} from '../../../../lib/core/log/partition-codec.js';
import type { PartitionState, TailEntry } from '../../../../lib/core/log/partition-state.js';

const topicId = 'T1';
const plain: TailEntry = {
  objectKey: dataObjectKey(topicId, 'abc'),
  position: 10,
  sizeInBytes: 200,
  offsetCount: 5,
  recordCount: 4,
  maxTimestamp: 1_000,
  firstTimestamp: 990,
};
const everyField: TailEntry = {
  ...plain,
  producerId: 42,
  producerEpoch: 3,
  baseSequence: 7,
  lastSequence: 11,
  idempotencyMark: 'hash.fp.t',
};
const commitMarker: TailEntry = {
  ...plain,
  producerId: 42,
  producerEpoch: 3,
  baseSequence: 0,
  lastSequence: 0,
  controlType: 'COMMIT',
};
const abortMarker: TailEntry = { ...commitMarker, controlType: 'ABORT', transactionFirstOffset: 77 };

/** A state with every field, optional ones included. */
const full: PartitionState = {
  topic: 'orders',
  partition: 2,
  leader: 's1',
  leaderEpoch: 4,
  replicas: ['s1', 's0'],
  isr: ['s1'],
  nextOffset: 20,
  logStartOffset: 3,
  tailBase: 15,
  tail: [plain, everyField],
  producers: { '42': { producerEpoch: 3, lastSequence: 11, lastTimestamp: 5_000 } },
  idempotencyKeys: ['h1', 'h2'],
  idempotencyKeysGeneration: 6,
  idempotencyKeysMoved: 1,
  maxTimestampSoFar: 900,
  highWatermark: 18,
  logEndOffsets: { s1: 20, s0: 18 },
  lastCaughtUpTimeMs: { s1: 5_000, s0: 4_000 },
  ongoingTransactions: { '42': 16 },
  lastMarkedTransactions: { '42': 2 },
  deleted: true,
};
/** The optional fields are absent until a materialization pass moves keys or the topic is deleted. */
const { idempotencyKeysMoved: _m, deleted: _d, ...required } = full;

describe('the partition codec', () => {
  it('round-trips every field of a state, optional ones present or absent', () => {
    for (const state of [full, required]) {
      const item = encodePartitionItem(topicId, state);
      expect(decodePartitionState(item)).toEqual({ ...keys.partitionState(topicId, 2), ...state });
    }
  });

  it('round-trips every field of a tail entry, optional ones present or absent', () => {
    for (const entry of [
      plain,
      everyField,
      commitMarker,
      abortMarker,
      { ...commitMarker, controlType: 'ABORT' as const },
    ]) {
      expect(decodeTailEntry(encodeTailEntry(entry, topicId), topicId)).toEqual(entry);
    }
  });

  it('stores a state in exactly the short-named shape (fixture written out by hand)', () => {
    expect(encodePartitionItem(topicId, full)).toEqual({
      pk: 'P#T1#2',
      sk: 'STATE',
      topic: 'orders',
      partition: 2,
      leader: 's1',
      leaderEpoch: 4,
      replicas: ['s1', 's0'],
      isr: ['s1'],
      nextOffset: 20,
      logStartOffset: 3,
      tailBase: 15,
      tail: ['a|5k|5|4|rs|a||||||@abc', 'a|5k|5|4|rs|a|16|3|7|4|hash.fp.t|@abc'],
      pr: { '42': { e: 3, s: 11, t: 5_000 } },
      ik: ['h1', 'h2'],
      ikGen: 6,
      ikDone: 1,
      tsMax: 900,
      hw: 18,
      leo: { s1: 20, s0: 18 },
      lc: { s1: 5_000, s0: 4_000 },
      tx: { '42': 16 },
      mk: { '42': 2 },
      deleted: true,
    });
    // Absent optional fields are not stored at all (not as null or undefined).
    const stored = encodePartitionState(required, topicId);
    expect(Object.keys(stored).sort()).toEqual(
      [
        'topic',
        'partition',
        'leader',
        'leaderEpoch',
        'replicas',
        'isr',
        'nextOffset',
        'logStartOffset',
        'tailBase',
        'tail',
        'pr',
        'ik',
        'ikGen',
        'tsMax',
        'hw',
        'leo',
        'lc',
        'tx',
        'mk',
      ].sort(),
    );
  });

  it('reads an item stored in the short-named shape', () => {
    const stored = {
      ...keys.partitionState(topicId, 2),
      topic: 'orders',
      partition: 2,
      leader: 's1',
      leaderEpoch: 4,
      replicas: ['s1', 's0'],
      isr: ['s1'],
      nextOffset: 20,
      logStartOffset: 3,
      tailBase: 15,
      tail: [
        'a|5k|5|4|rs|a||||||@abc',
        'a|5k|5|4|rs|a|16|3|7|4|hash.fp.t|@abc',
        'a|5k|5|4|rs|a|16|3|0|0|!a25|@abc',
      ],
      pr: { '42': { e: 3, s: 11, t: 5_000 } },
      ik: ['h1'],
      ikGen: 6,
      tsMax: 900,
      hw: 18,
      leo: { s1: 20 },
      lc: { s1: 5_000 },
      tx: { '42': 16 },
      mk: {},
      // Attributes other modules keep on the item come through under their own names.
      segEnd: 10,
    };
    expect(decodePartitionState(stored)).toEqual({
      ...keys.partitionState(topicId, 2),
      topic: 'orders',
      partition: 2,
      leader: 's1',
      leaderEpoch: 4,
      replicas: ['s1', 's0'],
      isr: ['s1'],
      nextOffset: 20,
      logStartOffset: 3,
      tailBase: 15,
      tail: [plain, everyField, abortMarker],
      producers: { '42': { producerEpoch: 3, lastSequence: 11, lastTimestamp: 5_000 } },
      idempotencyKeys: ['h1'],
      idempotencyKeysGeneration: 6,
      maxTimestampSoFar: 900,
      highWatermark: 18,
      logEndOffsets: { s1: 20 },
      lastCaughtUpTimeMs: { s1: 5_000 },
      ongoingTransactions: { '42': 16 },
      lastMarkedTransactions: {},
      segEnd: 10,
    });
  });

  it('names the stored attributes that update expressions and conditions use', () => {
    expect(stateAttr).toEqual({
      producers: 'pr',
      idempotencyKeys: 'ik',
      idempotencyKeysGeneration: 'ikGen',
      idempotencyKeysMoved: 'ikDone',
      maxTimestampSoFar: 'tsMax',
      highWatermark: 'hw',
      logEndOffsets: 'leo',
      lastCaughtUpTimeMs: 'lc',
      ongoingTransactions: 'tx',
      lastMarkedTransactions: 'mk',
    });
    expect(producerAttr).toEqual({ producerEpoch: 'e', lastSequence: 's', lastTimestamp: 't' });
    expect(encodeProducerState({ producerEpoch: 1, lastSequence: 2, lastTimestamp: 3 })).toEqual({
      e: 1,
      s: 2,
      t: 3,
    });
  });
  it('leaves absent attributes absent, and reads an item without a tail or producers', () => {
    // No `ikDone`: no idempotencyKeysMoved key at all, not one holding undefined.
    expect(Object.keys(decodePartitionState(encodePartitionItem(topicId, required)))).not.toContain(
      'idempotencyKeysMoved',
    );
    expect(decodePartitionState({ ...keys.partitionState(topicId, 0), hw: 4 })).toStrictEqual({
      ...keys.partitionState(topicId, 0),
      highWatermark: 4,
      logSizeBytes: undefined,
      tail: [],
    });
  });

  it('stores a sequence range only with both of its ends', () => {
    const bare = encodeTailEntry(plain, topicId);
    expect(encodeTailEntry({ ...plain, baseSequence: 7 }, topicId)).toBe(bare.replace('||||||@', '|||7|||@'));
    expect(encodeTailEntry({ ...plain, lastSequence: 7 }, topicId)).toBe(bare);
    expect(bare).toBe('a|5k|5|4|rs|a||||||@abc');
  });

  it('reads an entry with a full object key without the item key, and names a short one it cannot', () => {
    const other = { ...plain, objectKey: 'segments/x/1' };
    expect(decodeTailEntry(encodeTailEntry(other, topicId), undefined)).toEqual(other);
    const long = encodeTailEntry({ ...plain, idempotencyMark: 'm'.repeat(100) }, topicId);
    expect(() => decodeTailEntry(long, undefined)).toThrow(
      new Error(`tail entry ${long.slice(0, 80)} needs the item's key to name its object`),
    );
  });
});
