import kafkajs from 'kafkajs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../protocol/errors.js';
import { RoundRobinPartitioner, murmur2, partitionForKey } from '../../../protocol/partitioner.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('murmur2', () => {
  // The vectors of Apache Kafka's UtilsTest.testMurmur2.
  it.each([
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ])('hashes %j to %i as Java does', (input, expected) => {
    expect(murmur2(utf8(input))).toBe(expected);
  });
});

describe('partitionForKey', { timeout: 30_000 }, () => {
  it('masks the sign bit (Kafka’s toPositive) rather than taking the absolute value', () => {
    // murmur2("foobar") = -790332482: & 0x7fffffff gives 1357151166 (→ 6), Math.abs would give 790332482 (→ 2).
    expect(partitionForKey(utf8('foobar'), 10)).toBe(6);
    expect(partitionForKey(utf8('abc'), 10)).toBe(479470107 % 10);
  });

  it('agrees with kafkajs’s Java-compatible default partitioner for any key and partition count', () => {
    const kafkajsPartition = kafkajs.Partitioners.DefaultPartitioner();
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.integer({ min: 1, max: 1000 }),
        (key, numPartitions) => {
          const partitionMetadata = Array.from({ length: numPartitions }, (_, partitionId) => ({
            partitionId,
            leader: 0,
            replicas: [0],
            isr: [0],
            partitionErrorCode: 0,
          }));
          const expected = kafkajsPartition({
            topic: 't',
            partitionMetadata,
            message: { key: Buffer.from(key), value: null },
          });
          expect(partitionForKey(key, numPartitions)).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects %d partitions with INVALID_PARTITIONS', (n) => {
    const thrown = (() => {
      try {
        partitionForKey(utf8('k'), n);
      } catch (e) {
        return e;
      }
    })();
    expect(thrown).toBeInstanceOf(SluiceError);
    expect((thrown as SluiceError).code).toBe('INVALID_PARTITIONS');
  });
});

describe('RoundRobinPartitioner', () => {
  it('takes partitions in turn from its start', () => {
    const rr = new RoundRobinPartitioner({ start: 5 });
    expect(Array.from({ length: 7 }, () => rr.next(3))).toEqual([2, 0, 1, 2, 0, 1, 2]);
  });

  it('spreads records evenly, even when the partition count changes between calls', () => {
    const rr = new RoundRobinPartitioner();
    const counts = new Array<number>(7).fill(0);
    for (let i = 0; i < 7000; i++) counts[rr.next(7)]!++;
    expect(counts).toEqual(new Array<number>(7).fill(1000));
    const seen = new Set(Array.from({ length: 12 }, () => rr.next(12)));
    expect(seen.size).toBe(12);
  });

  it('starts at a random partition by default, so fresh instances do not all begin at 0', () => {
    const firsts = new Set(Array.from({ length: 50 }, () => new RoundRobinPartitioner().next(1000)));
    expect(firsts.size).toBeGreaterThan(10);
  });

  it('rejects a bad partition count or start', () => {
    expect(() => new RoundRobinPartitioner({ start: 0 }).next(0)).toThrow(SluiceError);
    expect(() => new RoundRobinPartitioner({ start: -1 })).toThrow(RangeError);
  });
});

describe('partition count and start bounds', () => {
  it('takes 1 to 2^31-1 partitions and refuses anything else with INVALID_PARTITIONS, naming the count', () => {
    const key = utf8('foobar');
    expect(partitionForKey(key, 1)).toBe(0);
    expect(partitionForKey(key, 0x7fffffff)).toBe(1357151166);
    for (const n of [0, -1, 1.5, 0x80000000, Number.NaN]) {
      const refusal = (() => {
        try {
          partitionForKey(key, n);
        } catch (error) {
          return error;
        }
      })();
      expect(refusal).toBeInstanceOf(SluiceError);
      expect(refusal).toMatchObject({
        code: 'INVALID_PARTITIONS',
        message: `numPartitions must be a positive integer, got ${n}`,
      });
    }
  });

  it('takes any non-negative safe integer as the round-robin start', () => {
    expect(new RoundRobinPartitioner({ start: Number.MAX_SAFE_INTEGER }).next(10)).toBe(1);
    for (const start of [-1, 0.5, Number.MAX_SAFE_INTEGER + 1])
      expect(() => new RoundRobinPartitioner({ start })).toThrow(
        new RangeError('start must be a non-negative integer'),
      );
  });
});
