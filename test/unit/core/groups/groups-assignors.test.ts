import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AssignorMember } from '../../../../lib/core/groups/assignors.js';
import { preferredAssignor, rangeAssignor, uniformAssignor } from '../../../../lib/core/groups/assignors.js';
import type { PartitionMap } from '../../../../lib/core/groups/partition-map.js';
import {
  count,
  decodeRanges,
  encodeRanges,
  has,
  intersect,
  pairs,
} from '../../../../lib/core/groups/partition-map.js';

const member = (
  memberId: string,
  subscribedTopics: string[],
  current: PartitionMap = {},
): AssignorMember => ({
  memberId,
  subscribedTopics,
  current,
});

/** Every partition of every topic, mapped to the members that got it. */
const owners = (assignment: Record<string, PartitionMap>): Map<string, string[]> => {
  const out = new Map<string, string[]>();
  for (const [id, map] of Object.entries(assignment)) {
    for (const [topic, p] of pairs(map)) out.set(`${topic}/${p}`, [...(out.get(`${topic}/${p}`) ?? []), id]);
  }
  return out;
};

const loads = (assignment: Record<string, PartitionMap>): number[] =>
  Object.keys(assignment)
    .sort()
    .map((id) => count(assignment[id] ?? {}));

/** Partitions that were someone's and are now someone else's. */
const moved = (before: Record<string, PartitionMap>, after: Record<string, PartitionMap>): number =>
  Object.entries(before).reduce((n, [id, map]) => n + count(map) - count(intersect(map, after[id] ?? {})), 0);

/** The fewest moves that reach a balanced assignment from `kept` partitions per member. */
const minimumMoves = (kept: number[], total: number): number => {
  const q = Math.floor(total / kept.length);
  const r = total % kept.length;
  return [...kept].sort((a, b) => b - a).reduce((n, c, i) => n + Math.max(0, c - (i < r ? q + 1 : q)), 0);
};

describe('uniform assignor', () => {
  it('spreads partitions evenly and gives each exactly once', () => {
    const result = uniformAssignor({
      members: [member('a', ['orders']), member('b', ['orders']), member('c', ['orders'])],
      topics: { orders: 10 },
    });
    expect(loads(result)).toEqual([4, 3, 3]);
    const o = owners(result);
    expect(o.size).toBe(10);
    expect([...o.values()].every((ids) => ids.length === 1)).toBe(true);
  });

  it('moves the minimum number of partitions when a member joins, and only from over-quota members', () => {
    const first = uniformAssignor({
      members: ['a', 'b', 'c'].map((id) => member(id, ['orders', 'payments'])),
      topics: { orders: 12, payments: 6 },
    });
    expect(loads(first)).toEqual([6, 6, 6]);
    const second = uniformAssignor({
      members: [
        ...['a', 'b', 'c'].map((id) => member(id, ['orders', 'payments'], first[id])),
        member('d', ['orders', 'payments']),
      ],
      topics: { orders: 12, payments: 6 },
    });
    // 18 partitions over 4 members: two keep 5, two get 4; each old member gives up exactly what it must.
    expect(loads(second).sort()).toEqual([4, 4, 5, 5]);
    expect(moved(first, second)).toBe(minimumMoves([6, 6, 6, 0], 18));
    expect(moved(first, second)).toBe(4);
    for (const id of ['a', 'b', 'c']) {
      expect(count(intersect(first[id] ?? {}, second[id] ?? {}))).toBe(count(second[id] ?? {}));
    }
  });

  it('hands a leaving member’s partitions to the others without moving anything else', () => {
    const first = uniformAssignor({
      members: ['a', 'b', 'c', 'd'].map((id) => member(id, ['orders'])),
      topics: { orders: 8 },
    });
    const second = uniformAssignor({
      members: ['a', 'b', 'c'].map((id) => member(id, ['orders'], first[id])),
      topics: { orders: 8 },
    });
    expect(loads(second).sort()).toEqual([2, 3, 3]);
    for (const id of ['a', 'b', 'c']) expect(count(intersect(first[id] ?? {}, second[id] ?? {}))).toBe(2);
  });

  it('gives new partitions of a topic to the least loaded members', () => {
    const first = uniformAssignor({
      members: ['a', 'b'].map((id) => member(id, ['orders'])),
      topics: { orders: 4 },
    });
    const second = uniformAssignor({
      members: ['a', 'b'].map((id) => member(id, ['orders'], first[id])),
      topics: { orders: 6 },
    });
    expect(moved(first, second)).toBe(0);
    expect(loads(second)).toEqual([3, 3]);
  });

  it('respects heterogeneous subscriptions and balances what it can', () => {
    const result = uniformAssignor({
      members: [member('a', ['t1']), member('b', ['t1', 't2']), member('c', ['t2'])],
      topics: { t1: 4, t2: 4 },
    });
    expect(Object.keys(result.a ?? {})).toEqual(['t1']);
    expect(Object.keys(result.c ?? {})).toEqual(['t2']);
    expect(loads(result).sort()).toEqual([2, 3, 3]);
    expect(owners(result).size).toBe(8);
  });

  it('drops partitions of topics that no longer exist or are no longer subscribed', () => {
    const result = uniformAssignor({
      members: [
        member('a', ['orders'], { orders: [0, 1, 7], gone: [0] }),
        member('b', ['orders'], { orders: [2] }),
      ],
      topics: { orders: 4 },
    });
    expect(result).toEqual({ a: { orders: [0, 1] }, b: { orders: [2, 3] } });
  });

  it('keeps every partition exactly once, balanced and minimally moved (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 40 }),
        (members, partitions, extra, previousOwners) => {
          const ids = Array.from({ length: members }, (_, i) => `m${i}`);
          // A valid previous assignment over a topic that may have grown since.
          const previous: Record<string, [string, number][]> = Object.fromEntries(ids.map((id) => [id, []]));
          previousOwners
            .slice(0, partitions)
            .forEach((o, p) => previous[ids[o % members] as string]?.push(['t', p]));
          const current = Object.fromEntries(
            ids.map((id) => [id, { t: (previous[id] ?? []).map(([, p]) => p) } as PartitionMap]),
          );
          const result = uniformAssignor({
            members: ids.map((id) => member(id, ['t'], current[id])),
            topics: { t: partitions + extra },
          });
          const o = owners(result);
          expect(o.size).toBe(partitions + extra);
          expect([...o.values()].every((x) => x.length === 1)).toBe(true);
          const l = loads(result);
          expect(Math.max(...l) - Math.min(...l)).toBeLessThanOrEqual(1);
          const kept = ids.map((id) => count(current[id] ?? {}));
          expect(moved(current, result)).toBe(minimumMoves(kept, partitions + extra));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('range assignor', () => {
  it('matches Kafka’s RangeAssignor example: two consumers, two topics of three partitions', () => {
    const result = rangeAssignor({
      members: [member('C1', ['t0', 't1']), member('C0', ['t0', 't1'])],
      topics: { t0: 3, t1: 3 },
    });
    expect(result).toEqual({ C0: { t0: [0, 1], t1: [0, 1] }, C1: { t0: [2], t1: [2] } });
  });

  it('gives the first members one extra partition when the count does not divide', () => {
    const result = rangeAssignor({
      members: ['c', 'a', 'b'].map((id) => member(id, ['t'])),
      topics: { t: 7 },
    });
    expect(result).toEqual({ a: { t: [0, 1, 2] }, b: { t: [3, 4] }, c: { t: [5, 6] } });
  });

  it('assigns each topic only over its subscribers', () => {
    const result = rangeAssignor({
      members: [member('a', ['t0']), member('b', ['t0', 't1']), member('c', ['t1'])],
      topics: { t0: 2, t1: 4 },
    });
    expect(result).toEqual({ a: { t0: [0] }, b: { t0: [1], t1: [0, 1] }, c: { t1: [2, 3] } });
  });

  it('leaves members with nothing when there are more members than partitions', () => {
    const result = rangeAssignor({
      members: ['a', 'b', 'c'].map((id) => member(id, ['t'])),
      topics: { t: 2 },
    });
    expect(result).toEqual({ a: { t: [0] }, b: { t: [1] }, c: {} });
  });
});

describe('assignor choice and encoding', () => {
  it('picks the assignor most members prefer, uniform by default', () => {
    expect(preferredAssignor([null, null])).toBe('uniform');
    expect(preferredAssignor(['range', null])).toBe('range');
    expect(preferredAssignor(['range', 'uniform'])).toBe('uniform');
    expect(preferredAssignor(['range', 'uniform', 'range'])).toBe('range');
  });

  it('encodes partition lists as ranges and back', () => {
    expect(encodeRanges([0, 1, 2, 3, 5, 7, 8])).toBe('0-3,5,7-8');
    expect(decodeRanges('0-3,5,7-8')).toEqual([0, 1, 2, 3, 5, 7, 8]);
    expect(decodeRanges('')).toEqual([]);
    expect(has({ t: [1, 2] }, 't', 2)).toBe(true);
  });
});
