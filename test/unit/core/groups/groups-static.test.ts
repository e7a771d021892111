/**
 * Static membership (KIP-345 with KIP-848's heartbeat) through the coordinator, with exact errors: an
 * instance id names one member, a temporary leave (epoch -2) keeps its place, a rejoin under the same
 * id starts over, and a member leaves for good with epoch -1.
 */
import { describe, expect, it } from 'vitest';
import { newGroupMeta } from '../../../../lib/core/groups/group.js';
import { applyHeartbeat } from '../../../../lib/core/groups/heartbeat.js';
import { coordinatorSetup as setup, refusal } from './group-coordinator-support.js';

describe('static membership', () => {
  it('refuses a member id used with another instance id, on join and on heartbeat', async () => {
    const s = setup();
    const a = await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] });
    expect(a).toMatchObject({ memberId: 'ma', memberEpoch: 1 });
    expect(await refusal(s.beat({ memberId: 'ma', instanceId: 'ib', subscribedTopics: ['t'] }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'member ma is not the member of instance ib',
    });
    expect(await refusal(s.beat({ memberId: 'ma', memberEpoch: 1, instanceId: 'ib' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'member ma is not the member of instance ib',
    });
    expect(await s.members()).toEqual([{ id: 'ma', epoch: 1 }]);
  });

  it('refuses a second member for a held instance id until the holder leaves with epoch -2', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] });
    expect(await refusal(s.beat({ memberId: 'mb', instanceId: 'ia', subscribedTopics: ['t'] }))).toEqual({
      code: 'UNRELEASED_INSTANCE_ID',
      message: 'instance ia is still held by member ma; it must leave (epoch -2) or time out first',
    });
    expect(await s.beat({ memberId: 'ma', memberEpoch: -2, instanceId: 'ia' })).toEqual({
      memberId: 'ma',
      memberEpoch: -2,
      heartbeatIntervalMs: expect.any(Number),
      assignment: null,
    });
    const b = await s.beat({ memberId: 'mb', instanceId: 'ia', subscribedTopics: ['t'] });
    // The new incarnation takes the old one's place and epoch: no rebalance.
    expect(b).toMatchObject({ memberId: 'mb', memberEpoch: 1 });
    expect(await s.members()).toEqual([{ id: 'mb', epoch: 1 }]);
  });

  it('refuses -2 from a dynamic member, and a leave without its member id', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] });
    await s.beat({ memberId: 'md', subscribedTopics: ['t'] });
    expect(await refusal(s.beat({ memberId: 'md', memberEpoch: -2, instanceId: null }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'memberEpoch -2 (temporary leave) requires the static member instanceId',
    });
    expect(await refusal(s.beat({ memberId: 'md', memberEpoch: -2, instanceId: 'ix' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'only a static member (with an instanceId) leaves with epoch -2',
    });
    // A leave needs its member id (validateHeartbeat), so the lookup by instance id is never reached.
    expect(await refusal(s.beat({ memberId: null, memberEpoch: -1, instanceId: 'ia' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'memberId is required with memberEpoch -1',
    });
    expect(await s.beat({ memberId: 'ma', memberEpoch: -1, instanceId: 'ia' })).toMatchObject({
      memberId: 'ma',
      memberEpoch: -1,
    });
    expect((await s.members()).map((m) => m.id)).toEqual(['md']);
  });

  it('starts a member that rejoins under its id over with nothing assigned', async () => {
    const s = setup();
    const first = await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    expect(first.assignment).toEqual({ topicPartitions: [{ topic: 't', partitions: [0, 1, 2, 3] }] });
    const again = await s.beat({ memberId: 'ma', memberEpoch: 0, subscribedTopics: ['t'] });
    expect(again).toMatchObject({ memberId: 'ma', memberEpoch: 1 });
    expect(again.assignment).toEqual({ topicPartitions: [{ topic: 't', partitions: [0, 1, 2, 3] }] });
    expect(await refusal(s.beat({ memberId: 'zz', memberEpoch: 3 }))).toEqual({
      code: 'UNKNOWN_MEMBER_ID',
      message: 'member zz is not in the group; rejoin with epoch 0',
    });
  });
});

describe('a static member’s instance id', () => {
  it('is accepted with its own member id on heartbeat and rejoin, and kept when a heartbeat omits it', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] });
    const steady = { memberId: 'ma', memberEpoch: 1, heartbeatIntervalMs: 5_000, assignment: null };
    expect(await s.beat({ memberId: 'ma', memberEpoch: 1, instanceId: 'ia' })).toEqual(steady);
    expect(await s.beat({ memberId: 'ma', memberEpoch: 1, instanceId: null })).toEqual(steady);
    const all = { topicPartitions: [{ topic: 't', partitions: [0, 1, 2, 3] }] };
    expect(await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] })).toMatchObject({
      memberEpoch: 1,
      assignment: all,
    });
    expect(await s.beat({ memberId: 'ma', instanceId: null, subscribedTopics: ['t'] })).toMatchObject({
      memberEpoch: 1,
      assignment: all,
    });
    const described = (await s.coordinator.describeGroup('g')).members;
    expect(described.map((m) => [m.memberId, m.instanceId])).toEqual([['ma', 'ia']]);
    // Still the static member: it may leave temporarily.
    expect(await s.beat({ memberId: 'ma', memberEpoch: -2, instanceId: 'ia' })).toMatchObject({
      memberEpoch: -2,
    });
  });

  it('of another member does not hold a new one back: two static members share the group', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] });
    expect(await s.beat({ memberId: 'mb', instanceId: 'ib', subscribedTopics: ['t'] })).toMatchObject({
      memberId: 'mb',
      memberEpoch: 2,
    });
    const described = (await s.coordinator.describeGroup('g')).members;
    expect(described.map((m) => [m.memberId, m.instanceId])).toEqual([
      ['ma', 'ia'],
      ['mb', 'ib'],
    ]);
  });
});

describe('a temporary leave', () => {
  it('lets the successor resume the epoch left from, even after a retried leave, revoking what a new target drops', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] });
    for (let i = 0; i < 2; i++)
      expect(await s.beat({ memberId: 'ma', memberEpoch: -2, instanceId: 'ia' })).toMatchObject({
        memberEpoch: -2,
      });
    // A dynamic member joins meanwhile: epoch 2 splits the partitions, which ma still holds.
    expect(await s.beat({ memberId: 'mb', subscribedTopics: ['t'] })).toMatchObject({
      memberEpoch: 2,
      assignment: { topicPartitions: [] },
    });
    // The successor is back at epoch 1 with all four partitions, and must first give up two of them.
    expect(await s.beat({ memberId: 'ma2', instanceId: 'ia', subscribedTopics: ['t'] })).toEqual({
      memberId: 'ma2',
      memberEpoch: 1,
      heartbeatIntervalMs: 5_000,
      assignment: { topicPartitions: [{ topic: 't', partitions: [0, 1] }] },
    });
    expect(await s.members()).toEqual([
      { id: 'ma2', epoch: 1 },
      { id: 'mb', epoch: 2 },
    ]);
  });

  it('and the successor’s return leave the group STABLE: no rebalance', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', instanceId: 'ia', subscribedTopics: ['t'] });
    await s.beat({ memberId: 'ma', memberEpoch: -2, instanceId: 'ia' });
    expect((await s.coordinator.describeGroup('g')).state).toBe('STABLE');
    await s.beat({ memberId: 'mb', instanceId: 'ia', subscribedTopics: ['t'] });
    expect(await s.coordinator.describeGroup('g')).toMatchObject({ state: 'STABLE', groupEpoch: 1 });
  });
});

describe('a leave', () => {
  it('of a member the group does not know is refused as UNKNOWN_MEMBER_ID, changing nothing', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    for (const memberEpoch of [-1, -2])
      expect(await refusal(s.beat({ memberId: 'zz', memberEpoch, instanceId: 'iz' }))).toEqual({
        code: 'UNKNOWN_MEMBER_ID',
        message: 'member zz is not in the group; rejoin with epoch 0',
      });
    expect(await s.coordinator.describeGroup('g')).toMatchObject({ groupEpoch: 1, state: 'STABLE' });
    expect(await s.members()).toEqual([{ id: 'ma', epoch: 1 }]);
  });
});

describe('applyHeartbeat on a request that skipped validateHeartbeat', () => {
  it('refuses a heartbeat or leave without a member id as UNKNOWN_MEMBER_ID for member (none)', async () => {
    const view = { groupId: 'g', meta: newGroupMeta(0), members: new Map() };
    const ctx = {
      now: 0,
      sessionTimeoutMs: 45_000,
      heartbeatIntervalMs: 5_000,
      topics: new Map(),
      newMemberId: () => 'm',
    };
    for (const memberEpoch of [3, -1]) {
      const request = {
        memberId: null,
        memberEpoch,
        instanceId: 'ia',
        subscribedTopics: null,
        ownedPartitions: null,
        rebalanceTimeoutMs: null,
        serverAssignor: null,
      };
      expect(await refusal(Promise.resolve().then(() => applyHeartbeat(view, request, ctx)))).toEqual({
        code: 'UNKNOWN_MEMBER_ID',
        message: 'member (none) is not in the group; rejoin with epoch 0',
      });
    }
  });
});
