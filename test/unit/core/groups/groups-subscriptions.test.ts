/**
 * What opens a new group epoch from a member's heartbeat (KIP-848): a subscription that differs as a
 * set of topics, or another server assignor. The same topics in another order, or listed twice, change
 * nothing: no new epoch, no answer.
 */
import { describe, expect, it } from 'vitest';
import { coordinatorSetup } from './group-coordinator-support.js';

describe('a heartbeat’s subscription', () => {
  it('is a set: the same topics in another order or twice open no epoch and get no answer', async () => {
    const s = coordinatorSetup({ a: 2, b: 2 });
    const first = await s.beat({ memberId: 'ma', subscribedTopics: ['b', 'a'] });
    expect(first).toMatchObject({ memberId: 'ma', memberEpoch: 1 });
    const again = await s.beat({ memberId: 'ma', memberEpoch: 1, subscribedTopics: ['a', 'b', 'a'] });
    expect(again).toEqual({ memberId: 'ma', memberEpoch: 1, heartbeatIntervalMs: 5_000, assignment: null });
    const group = await s.coordinator.describeGroup('g');
    expect([group.groupEpoch, group.members.map((m) => m.subscribedTopics)]).toEqual([1, [['a', 'b']]]);
  });

  it('opens a new epoch whenever its set of topics changes, even among topics the group already has', async () => {
    const s = coordinatorSetup({ a: 2, b: 2, c: 2 });
    await s.beat({ memberId: 'ma', subscribedTopics: ['a', 'b', 'c'] });
    let epoch = (await s.beat({ memberId: 'mb', subscribedTopics: ['a', 'b'] })).memberEpoch;
    expect([epoch, (await s.coordinator.describeGroup('g')).groupEpoch]).toEqual([2, 2]);
    const seen: [string[], number][] = [];
    for (const topics of [['a', 'c'], ['a'], ['a', 'b', 'c'], ['c', 'b', 'a']]) {
      epoch = (await s.beat({ memberId: 'mb', memberEpoch: epoch, subscribedTopics: topics })).memberEpoch;
      const group = await s.coordinator.describeGroup('g');
      seen.push([group.members[1]!.subscribedTopics, group.groupEpoch]);
    }
    expect(seen).toEqual([
      [['a', 'c'], 3],
      [['a'], 4],
      [['a', 'b', 'c'], 5],
      [['a', 'b', 'c'], 5],
    ]);
  });

  it('opens a new epoch for another server assignor, which the group then uses', async () => {
    const s = coordinatorSetup({ a: 4 });
    await s.beat({ memberId: 'ma', subscribedTopics: ['a'] });
    expect(await s.coordinator.describeGroup('g')).toMatchObject({ groupEpoch: 1, assignor: 'uniform' });
    await s.beat({ memberId: 'ma', memberEpoch: 1, serverAssignor: 'range' });
    expect(await s.coordinator.describeGroup('g')).toMatchObject({ groupEpoch: 2, assignor: 'range' });
    await s.beat({ memberId: 'ma', memberEpoch: 2, serverAssignor: 'range' });
    expect((await s.coordinator.describeGroup('g')).groupEpoch).toBe(2);
  });
});
