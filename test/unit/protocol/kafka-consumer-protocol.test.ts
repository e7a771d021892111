/**
 * The consumer protocol's subscription and assignment bytes (inside JoinGroup and SyncGroup), and the
 * codec's writer growing its buffer in the middle of a field.
 */
import { describe, expect, it } from 'vitest';
import { Writer } from '../../../protocol/kafka/codec.js';
import {
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  encodeSubscription,
} from '../../../protocol/kafka/consumer-protocol.js';

const bytes = (...parts: number[][]): Uint8Array => new Uint8Array(parts.flat());
const int16 = (n: number) => [(n >> 8) & 0xff, n & 0xff];
const int32 = (n: number) => [(n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
const str = (s: string) => [...int16(s.length), ...Buffer.from(s)];

describe('consumer protocol', () => {
  it('reads kafkajs-style v1 metadata that stops after userData, and v1 owned partitions', () => {
    // kafkajs: version, topics, userData, nothing more.
    const kafkajs = bytes(int16(1), int32(2), str('a'), str('b'), int32(0));
    expect(decodeSubscription(kafkajs)).toEqual({
      version: 1,
      topics: ['a', 'b'],
      ownedPartitions: [],
      generationId: -1,
    });
    // Java/librdkafka cooperative: owned partitions after userData (null), and a generation (v2).
    const cooperative = bytes(
      int16(2),
      int32(1),
      str('a'),
      int32(-1),
      int32(1),
      str('a'),
      int32(2),
      int32(0),
      int32(3),
      int32(7),
    );
    expect(decodeSubscription(cooperative)).toEqual({
      version: 2,
      topics: ['a'],
      ownedPartitions: [{ topic: 'a', partitions: [0, 3] }],
      generationId: 7,
    });
    // A version newer than known is read as far as known.
    expect(decodeSubscription(bytes(int16(9), int32(1), str('z'), int32(-1))).topics).toEqual(['z']);
  });

  it('refuses metadata whose topics cannot be read', () => {
    expect(() => decodeSubscription(bytes(int16(0), int32(5), str('a')))).toThrow(/exceeds the 3 bytes left/);
    expect(() => decodeSubscription(bytes(int16(-1)))).toThrow(/version -1/);
    expect(() => decodeSubscription(bytes([0]))).toThrow(/truncated/);
  });

  it('round-trips assignments and subscriptions, as Kafka lays them out', () => {
    const assigned = [
      { topic: 'orders', partitions: [0, 2] },
      { topic: 'x', partitions: [] },
    ];
    const encoded = encodeAssignment(assigned);
    expect([...encoded.subarray(0, 6)]).toEqual([0, 0, 0, 0, 0, 2]);
    expect(decodeAssignment(encoded)).toEqual(assigned);
    expect(decodeSubscription(encodeSubscription(['t1', 't2']))).toEqual({
      version: 0,
      topics: ['t1', 't2'],
      ownedPartitions: [],
      generationId: -1,
    });
  });

  it('writes every primitive correctly when the buffer grows inside it', () => {
    for (let fill = 0; fill < 12; fill++) {
      const w = new Writer(8);
      w.raw(new Uint8Array(fill));
      w.int8(-2);
      w.int16(-3);
      w.int32(-4);
      w.int64(2 ** 40 + 5);
      w.bool(true);
      w.unsignedVarint(300);
      w.raw(new Uint8Array([9, 9, 9]));
      const out = Buffer.from(w.finish());
      expect(out.length).toBe(fill + 1 + 2 + 4 + 8 + 1 + 2 + 3);
      expect(out.readInt8(fill)).toBe(-2);
      expect(out.readInt16BE(fill + 1)).toBe(-3);
      expect(out.readInt32BE(fill + 3)).toBe(-4);
      expect(out.readBigInt64BE(fill + 7)).toBe(BigInt(2 ** 40 + 5));
      expect([...out.subarray(fill + 15)]).toEqual([1, 0xac, 0x02, 9, 9, 9]);
    }
  });
});
