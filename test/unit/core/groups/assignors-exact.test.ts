/**
 * The assignors' exact owners: mixed subscriptions that reach the uniform assignor's balancing loop,
 * and inputs in any order (members, topics, partitions) giving the same assignment.
 */
import { describe, expect, it } from 'vitest';
import type { AssignmentSpec, AssignorMember } from '../../../../lib/core/groups/assignors.js';
import { preferredAssignor, rangeAssignor, uniformAssignor } from '../../../../lib/core/groups/assignors.js';
import type { PartitionMap } from '../../../../lib/core/groups/partition-map.js';

const member = (
  memberId: string,
  subscribedTopics: string[],
  current: PartitionMap = {},
): AssignorMember => ({
  memberId,
  subscribedTopics,
  current,
});

/** The spec with members, topics and each member's partitions in reverse order. */
const reversed = (spec: AssignmentSpec): AssignmentSpec => ({
  members: [...spec.members].reverse().map((m) => ({
    ...m,
    subscribedTopics: [...m.subscribedTopics].reverse(),
    current: Object.fromEntries(
      Object.entries(m.current)
        .reverse()
        .map(([t, ps]) => [t, [...ps].reverse()]),
    ),
  })),
  topics: Object.fromEntries(Object.entries(spec.topics).reverse()),
});

describe('uniform assignor, exactly', () => {
  it('balances mixed subscriptions, moving partitions only to members subscribed to their topic', () => {
    // a holds everything; b may take only t1, c only t2.
    const spec = {
      members: [
        member('a', ['t1', 't2'], { t1: [0, 1, 2, 3], t2: [0, 1] }),
        member('b', ['t1']),
        member('c', ['t2']),
      ],
      topics: { t1: 4, t2: 2 },
    };
    const expected = { a: { t1: [0, 1] }, b: { t1: [2, 3] }, c: { t2: [0, 1] } };
    expect(uniformAssignor(spec)).toEqual(expected);
    expect(uniformAssignor(reversed(spec))).toEqual(expected);
  });

  it('stops balancing where the only lighter member cannot take the heavy member’s topic', () => {
    const spec = {
      members: [member('a', ['t1'], { t1: [0, 1, 2, 3] }), member('b', ['t2'], { t2: [0] })],
      topics: { t1: 4, t2: 1 },
    };
    expect(uniformAssignor(spec)).toEqual({ a: { t1: [0, 1, 2, 3] }, b: { t2: [0] } });
  });

  it('moves the partitions it placed itself before any kept one', () => {
    // a keeps t/2 and is given t/1 (a tie with b) and all of z (b may not take z): a has 4, b 1.
    // Balancing moves the fresh t/1 to b, not the kept t/2 that is a's highest.
    const spec = {
      members: [member('a', ['t', 'z'], { t: [2] }), member('b', ['t'])],
      topics: { t: 3, z: 2 },
    };
    const expected = { a: { t: [2], z: [0, 1] }, b: { t: [0, 1] } };
    expect(uniformAssignor(spec)).toEqual(expected);
    expect(uniformAssignor(reversed(spec))).toEqual(expected);
  });

  it('breaks ties by member id whatever the input order', () => {
    const spec = {
      members: [member('c', ['x']), member('a', ['x']), member('b', ['x'])],
      topics: { x: 4 },
    };
    const expected = { a: { x: [0, 3] }, b: { x: [1] }, c: { x: [2] } };
    expect(uniformAssignor(spec)).toEqual(expected);
    expect(uniformAssignor(reversed(spec))).toEqual(expected);
  });

  it('places free partitions topic by topic in name order', () => {
    const spec = {
      members: [member('a', ['t1', 't2']), member('b', ['t1', 't2']), member('c', ['t1', 't2'])],
      topics: { t2: 1, t1: 2 },
    };
    const expected = { a: { t1: [0] }, b: { t1: [1] }, c: { t2: [0] } };
    expect(uniformAssignor(spec)).toEqual(expected);
    expect(uniformAssignor(reversed(spec))).toEqual(expected);
  });

  it('keeps a partition claimed by two members for the first by member id', () => {
    const spec = {
      members: [member('b', ['t'], { t: [0, 1] }), member('a', ['t'], { t: [1, 2] })],
      topics: { t: 4 },
    };
    expect(uniformAssignor(spec)).toEqual({ a: { t: [1, 2] }, b: { t: [0, 3] } });
  });

  it('gives members of no existing topic an empty assignment', () => {
    const spec = { members: [member('a', ['t']), member('b', ['gone'])], topics: { t: 2, empty: 0 } };
    expect(uniformAssignor(spec)).toEqual({ a: { t: [0, 1] }, b: {} });
  });
});

describe('uniform assignor, balancing order', () => {
  it('drops a kept partition at exactly the partition count, and ignores a topic nobody subscribes to', () => {
    const spec = {
      members: [member('a', ['t'], { t: [0, 4] }), member('b', ['t'])],
      topics: { t: 4, unsubscribed: 2 },
    };
    expect(uniformAssignor(spec)).toEqual({ a: { t: [0, 2] }, b: { t: [1, 3] } });
  });

  it('gives to the lighter members from the last by member id, re-ranking after every move', () => {
    const spec = {
      members: [member('a', ['t'], { t: [0, 1, 2, 3] }), member('b', ['t']), member('c', ['t'])],
      topics: { t: 4 },
    };
    expect(uniformAssignor(spec)).toEqual({ a: { t: [0, 1] }, b: { t: [2] }, c: { t: [3] } });
  });

  it('moves one partition per round, then takes the most loaded member again', () => {
    const spec = {
      members: [
        member('a', ['t'], { t: [0, 1, 2, 3, 4] }),
        member('b', ['t'], { t: [5, 6, 7, 8, 9] }),
        member('c', ['t']),
        member('d', ['t']),
      ],
      topics: { t: 10 },
    };
    const expected = { a: { t: [0, 1, 2] }, b: { t: [5, 6, 7] }, c: { t: [8, 9] }, d: { t: [3, 4] } };
    expect(uniformAssignor(spec)).toEqual(expected);
    expect(uniformAssignor(reversed(spec))).toEqual(expected);
  });

  it('takes from the next most loaded member when the most loaded one cannot give', () => {
    const spec = {
      members: [
        member('a', ['t1'], { t1: [0, 1, 2, 3] }),
        member('b', ['t2'], { t2: [0, 1, 2] }),
        member('c', ['t2']),
      ],
      topics: { t1: 4, t2: 3 },
    };
    expect(uniformAssignor(spec)).toEqual({ a: { t1: [0, 1, 2, 3] }, b: { t2: [0, 1] }, c: { t2: [2] } });
  });

  it('takes a kept partition from the donor’s largest topic the receiver may have, first on a tie', () => {
    const largest = {
      members: [member('a', ['t1', 't2'], { t1: [0, 1, 2], t2: [0] }), member('b', ['t1', 't2'])],
      topics: { t1: 3, t2: 1 },
    };
    expect(uniformAssignor(largest)).toEqual({ a: { t1: [0], t2: [0] }, b: { t1: [1, 2] } });
    const tie = {
      members: [
        member('a', ['t1', 't2'], { t1: [0, 1], t2: [0, 1] }),
        member('b', ['t1', 't2', 't3'], { t3: [0, 1] }),
      ],
      topics: { t1: 2, t2: 2, t3: 2 },
    };
    expect(uniformAssignor(tie)).toEqual({ a: { t1: [0], t2: [0, 1] }, b: { t1: [1], t3: [0, 1] } });
  });
});

describe('range assignor, exactly', () => {
  it('gives each topic’s partitions in ranges to its subscribers sorted by member id', () => {
    const spec = {
      members: [member('c', ['t', 'u']), member('a', ['t']), member('b', ['t', 'u']), member('d', ['v'])],
      topics: { u: 3, t: 7, w: 2 },
    };
    const expected = {
      a: { t: [0, 1, 2] },
      b: { t: [3, 4], u: [0, 1] },
      c: { t: [5, 6], u: [2] },
      d: {},
    };
    expect(rangeAssignor(spec)).toEqual(expected);
    expect(rangeAssignor(reversed(spec))).toEqual(expected);
  });

  it('leaves the members past the partition count empty', () => {
    const spec = { members: ['a', 'b', 'c'].map((id) => member(id, ['t'])), topics: { t: 2 } };
    expect(rangeAssignor(spec)).toEqual({ a: { t: [0] }, b: { t: [1] }, c: {} });
  });
});

describe('preferred assignor', () => {
  it('takes the most asked-for assignor, the default on a tie with it or when none is asked for', () => {
    expect(preferredAssignor([])).toBe('uniform');
    expect(preferredAssignor([null, null])).toBe('uniform');
    expect(preferredAssignor(['range', null])).toBe('range');
    expect(preferredAssignor(['range', 'uniform'])).toBe('uniform');
    expect(preferredAssignor(['uniform', 'range'])).toBe('uniform');
    expect(preferredAssignor(['uniform', 'range', 'range'])).toBe('range');
  });
});
