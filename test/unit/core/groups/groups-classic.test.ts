/**
 * Classic members (JoinGroup/SyncGroup/Heartbeat) in server-assigned groups, through the coordinator:
 * the server's assignment in every answer, rebalances signalled by rebalanceInProgress, revocations
 * completed only by a rejoin that reports them done, generation = member epoch fencing heartbeats and
 * commits, and never two owners of a partition, with classic and KIP-848 members in one group.
 */
import { describe, expect, it } from 'vitest';
import type { ClassicMemberRequest, TopicPartitions } from '../../../../lib/core/groups/types.js';
import { fromTopicPartitions } from '../../../../lib/core/groups/partition-map.js';
import type { PartitionMap } from '../../../../lib/core/groups/partition-map.js';
import { mustRejoin } from '../../../../lib/core/groups/classic.js';
import type { GroupView } from '../../../../lib/core/groups/group.js';
import { newGroupMeta } from '../../../../lib/core/groups/group.js';
import type { Member } from '../../../../lib/core/groups/member.js';
import { newMember } from '../../../../lib/core/groups/member.js';
import { coordinatorSetup, refusal } from './group-coordinator-support.js';

const setup = (partitions: Record<string, number> = { t: 4 }) => {
  const s = coordinatorSetup(partitions);
  const classic = (request: Partial<ClassicMemberRequest> & { memberId: string }) =>
    s.coordinator.classicMember('g', {
      memberEpoch: null,
      instanceId: null,
      subscribedTopics: null,
      ownedPartitions: null,
      rebalanceTimeoutMs: null,
      serverAssignor: null,
      ...request,
    });
  const join = (memberId: string, owned: TopicPartitions[] = [], extra: Partial<ClassicMemberRequest> = {}) =>
    classic({ memberId, subscribedTopics: ['t'], ownedPartitions: fromTopicPartitions(owned), ...extra });
  const beat = (memberId: string, memberEpoch: number) => classic({ memberId, memberEpoch });
  /** Every partition's holders (assigned as described): never more than one each. */
  const owners = async () => {
    const byPartition = new Map<string, string[]>();
    for (const m of (await s.coordinator.describeGroup('g')).members) {
      for (const { topic, partitions } of m.assignment.topicPartitions) {
        for (const p of partitions)
          byPartition.set(`${topic}/${p}`, [...(byPartition.get(`${topic}/${p}`) ?? []), m.memberId]);
      }
    }
    return byPartition;
  };
  const expectOneOwnerEach = async () => {
    for (const [partition, holders] of await owners())
      expect({ partition, holders: holders.length }).toEqual({ partition, holders: 1 });
  };
  return { ...s, beat848: s.beat, classic, join, beat, owners, expectOneOwnerEach };
};

const parts = (r: { assignment: { topicPartitions: TopicPartitions[] } }): number[] =>
  r.assignment.topicPartitions.flatMap((tp) => tp.partitions);

describe('classic members in a server-assigned group', () => {
  it('joins, is given the whole assignment in every answer, and heartbeats without a rebalance', async () => {
    const s = setup();
    const joined = await s.join('a');
    expect(joined).toEqual({
      memberId: 'a',
      memberEpoch: 1,
      heartbeatIntervalMs: 5_000,
      assignment: { topicPartitions: [{ topic: 't', partitions: [0, 1, 2, 3] }] },
      rebalanceInProgress: false,
    });
    // SyncGroup and Heartbeat carry the generation; the assignment is repeated, never null.
    expect(await s.beat('a', 1)).toEqual(joined);
    expect(await s.beat('a', 1)).toEqual(joined);
  });

  it('hands partitions over between eager members only after the old owner rejoined without them', async () => {
    const s = setup();
    await s.join('a');
    const b = await s.join('b');
    // b's share is still held by a: b gets nothing yet, and is not told to rejoin while a holds it.
    expect(b).toMatchObject({ memberEpoch: 2, rebalanceInProgress: false });
    expect(await s.beat('b', 2)).toMatchObject({ rebalanceInProgress: false });
    expect(parts(b)).toEqual([]);
    await s.expectOneOwnerEach();
    // a is at the old generation: its heartbeat (still accepted) signals the rebalance.
    const aBeat = await s.beat('a', 1);
    expect(aBeat).toMatchObject({ memberEpoch: 1, rebalanceInProgress: true });
    expect(parts(aBeat)).toEqual([0, 1, 2, 3]);
    // b's rejoin cannot take what a still holds.
    expect(parts(await s.join('b'))).toEqual([]);
    // a rejoins eagerly (owning nothing): it gets its share at the new epoch; the rest is released.
    const aJoin = await s.join('a');
    expect(aJoin).toMatchObject({ memberEpoch: 2, rebalanceInProgress: false });
    expect(parts(aJoin)).toHaveLength(2);
    expect(await s.beat('b', 2)).toMatchObject({ rebalanceInProgress: true });
    const bJoin = await s.join('b');
    expect(bJoin).toMatchObject({ memberEpoch: 2, rebalanceInProgress: false });
    expect([...parts(aJoin), ...parts(bJoin)].sort()).toEqual([0, 1, 2, 3]);
    expect(await s.beat('a', 2)).toMatchObject({ rebalanceInProgress: false });
    await s.expectOneOwnerEach();
  });

  it('lets a cooperative member keep what it owns and revoke only what moves, in two joins', async () => {
    const s = setup();
    await s.join('a');
    await s.join('b');
    // a rejoins still owning everything: it keeps its share, the rest is pending revocation.
    const first = await s.join('a', [{ topic: 't', partitions: [0, 1, 2, 3] }]);
    expect(first).toMatchObject({ memberEpoch: 1, rebalanceInProgress: true });
    const kept = parts(first);
    expect(kept).toHaveLength(2);
    // Nobody else gets the revoking partitions meanwhile.
    expect(parts(await s.join('b'))).toEqual([]);
    await s.expectOneOwnerEach();
    // a rejoins owning only what it kept: the revocation is done and a moves to the new epoch.
    const second = await s.join('a', [{ topic: 't', partitions: kept }]);
    expect(second).toMatchObject({ memberEpoch: 2, rebalanceInProgress: false });
    expect(parts(second)).toEqual(kept);
    const b = await s.join('b');
    expect(parts(b)).toEqual([0, 1, 2, 3].filter((p) => !kept.includes(p)));
    expect(b.rebalanceInProgress).toBe(false);
    await s.expectOneOwnerEach();
  });

  it('shares a group with KIP-848 members: each side releases before the other receives', async () => {
    const s = setup();
    const m = await s.beat848({ memberId: 'm', subscribedTopics: ['t'] });
    expect(m.assignment?.topicPartitions).toEqual([{ topic: 't', partitions: [0, 1, 2, 3] }]);
    const c = await s.join('c');
    expect(parts(c)).toEqual([]);
    expect(c.rebalanceInProgress).toBe(false);
    // The KIP-848 member is told to revoke two partitions, then reports them gone.
    const revoke = await s.beat848({
      memberId: 'm',
      memberEpoch: 1,
      ownedPartitions: fromTopicPartitions([{ topic: 't', partitions: [0, 1, 2, 3] }]),
    });
    const keep = revoke.assignment?.topicPartitions[0]?.partitions ?? [];
    expect(keep).toHaveLength(2);
    await s.expectOneOwnerEach();
    await s.beat848({
      memberId: 'm',
      memberEpoch: 1,
      ownedPartitions: fromTopicPartitions([{ topic: 't', partitions: keep }]),
    });
    // Released: now the classic member is told to rejoin, and its rejoin takes them.
    expect(await s.beat('c', 2)).toMatchObject({ rebalanceInProgress: true });
    const rejoined = await s.join('c');
    expect(rejoined).toMatchObject({ memberEpoch: 2, rebalanceInProgress: false });
    expect(parts(rejoined)).toEqual([0, 1, 2, 3].filter((p) => !keep.includes(p)));
    await s.expectOneOwnerEach();
    // The KIP-848 member leaving opens a new epoch; the classic member is told to rejoin and takes all.
    await s.beat848({ memberId: 'm', memberEpoch: -1 });
    expect(await s.beat('c', 2)).toMatchObject({ rebalanceInProgress: true });
    expect(parts(await s.join('c', [{ topic: 't', partitions: parts(rejoined) }]))).toEqual([0, 1, 2, 3]);
  });

  it('fences a stale generation and an unknown member, and commits only at the current generation', async () => {
    const s = setup();
    await s.join('a');
    await s.join('b');
    await s.join('a');
    expect(await refusal(s.beat('a', 1))).toEqual({
      code: 'FENCED_MEMBER_EPOCH',
      message: 'member a sent generation 1 but its epoch is 2; rejoin',
    });
    expect(await refusal(s.beat('zz', 1))).toEqual({
      code: 'UNKNOWN_MEMBER_ID',
      message: 'member zz is not in the group; rejoin',
    });
    const offsets = [{ topic: 't', partition: 0, offset: 7, metadata: '' }];
    expect(
      await refusal(s.coordinator.commitOffsets('g', { memberId: 'a', memberEpoch: 1, offsets })),
    ).toMatchObject({ code: 'STALE_MEMBER_EPOCH' });
    expect(await s.coordinator.commitOffsets('g', { memberId: 'a', memberEpoch: 2, offsets })).toEqual({
      results: [{ topic: 't', partition: 0 }],
    });
    expect((await s.coordinator.fetchOffsets('g')).offsets).toEqual(offsets);
  });

  it('expires a silent member; it rejoins from nothing under the same id', async () => {
    const s = setup();
    await s.join('a');
    await s.join('b');
    s.clock.advance(30_000);
    await s.join('a'); // a keeps its session alive; b does not
    s.clock.advance(20_000);
    expect(await refusal(s.beat('b', 2))).toMatchObject({ code: 'UNKNOWN_MEMBER_ID' });
    const a = await s.join('a');
    expect(parts(a)).toEqual([0, 1, 2, 3]);
    const b = await s.join('b', [{ topic: 't', partitions: [0, 1] }]);
    // b was gone, so what it claims to own counts for nothing: it waits for a to release.
    expect(parts(b)).toEqual([]);
    await s.expectOneOwnerEach();
  });

  it('replaces a static member that restarts under a new member id, keeping its place', async () => {
    const s = setup();
    const first = await s.join('a1', [], { instanceId: 'i' });
    expect(first).toMatchObject({ memberEpoch: 1 });
    const second = await s.join('a2', [], { instanceId: 'i' });
    expect(second).toMatchObject({ memberId: 'a2', memberEpoch: 1, rebalanceInProgress: false });
    expect(parts(second)).toEqual([0, 1, 2, 3]);
    expect(await s.members()).toEqual([{ id: 'a2', epoch: 1 }]);
    expect(await refusal(s.beat('a1', 1))).toMatchObject({ code: 'UNKNOWN_MEMBER_ID' });
  });

  it('lets a silent member that has expired but is still stored rejoin from nothing', async () => {
    const s = setup();
    await s.join('a');
    await s.join('b');
    // Nobody writes to the group while b's session runs out, so b is still stored when it rejoins.
    s.clock.advance(45_000);
    const b = await s.join('b', [{ topic: 't', partitions: [0, 1] }]);
    // a expired too: b is the only member, a new one (epoch 0 first, so it does not carry b's old
    // generation), and gets everything.
    expect(b).toEqual({
      memberId: 'b',
      memberEpoch: 3,
      heartbeatIntervalMs: 5_000,
      assignment: { topicPartitions: [{ topic: 't', partitions: [0, 1, 2, 3] }] },
      rebalanceInProgress: false,
    });
  });

  it('checks the instanceId of a SyncGroup/Heartbeat against the member, when one is sent', async () => {
    const s = setup();
    await s.join('a', [], { instanceId: 'i' });
    await s.join('b');
    expect(await s.classic({ memberId: 'a', memberEpoch: 1, instanceId: 'i' })).toMatchObject({
      memberId: 'a',
      memberEpoch: 1,
    });
    // A heartbeat without an instanceId is taken from a static member.
    expect(await s.classic({ memberId: 'a', memberEpoch: 1, instanceId: null })).toMatchObject({
      memberId: 'a',
      memberEpoch: 1,
    });
    expect(await refusal(s.classic({ memberId: 'a', memberEpoch: 1, instanceId: 'j' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'member a is not the member of instance j',
    });
    expect(await refusal(s.classic({ memberId: 'b', memberEpoch: 2, instanceId: 'i' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'member b is not the member of instance i',
    });
  });

  it('rejoins a static member that left temporarily (epoch -2) at its previous epoch', async () => {
    const s = setup();
    await s.join('a', [], { instanceId: 'i' });
    await s.beat848({ memberId: 'a', memberEpoch: -2, instanceId: 'i' });
    expect(await s.members()).toEqual([{ id: 'a', epoch: -2 }]);
    expect(await s.join('a', [{ topic: 't', partitions: [0, 1, 2, 3] }], { instanceId: 'i' })).toEqual({
      memberId: 'a',
      memberEpoch: 1,
      heartbeatIntervalMs: 5_000,
      assignment: { topicPartitions: [{ topic: 't', partitions: [0, 1, 2, 3] }] },
      rebalanceInProgress: false,
    });
    expect(await s.members()).toEqual([{ id: 'a', epoch: 1 }]);
  });

  it('replaces a static member that left before the group moved on: its restart revokes at the old epoch', async () => {
    const s = setup();
    await s.join('a1', [], { instanceId: 'i' });
    await s.beat848({ memberId: 'a1', memberEpoch: -2, instanceId: 'i' });
    // x joins while a1 is away: epoch 2 gives x half of what a1 still holds, so x waits.
    expect(parts(await s.join('x'))).toEqual([]);
    const restarted = await s.join('a2', [], { instanceId: 'i' });
    // a2 takes over a1's partitions and its epoch 1, and must revoke x's half before it moves to 2.
    expect(restarted).toMatchObject({ memberId: 'a2', memberEpoch: 1, rebalanceInProgress: true });
    expect(parts(restarted)).toHaveLength(2);
    expect(await s.members()).toEqual([
      { id: 'a2', epoch: 1 },
      { id: 'x', epoch: 2 },
    ]);
    await s.expectOneOwnerEach();
  });

  it('replaces only the member of the same instance: a new static member leaves the others alone', async () => {
    const s = setup();
    await s.join('x');
    await s.join('y', [], { instanceId: 'other' });
    expect(await s.join('a', [], { instanceId: 'i' })).toMatchObject({ memberId: 'a', memberEpoch: 3 });
    expect(await s.members()).toEqual([
      { id: 'a', epoch: 3 },
      { id: 'x', epoch: 1 },
      { id: 'y', epoch: 2 },
    ]);
  });

  it('refuses malformed requests before reading the group', async () => {
    const s = setup();
    expect(await refusal(s.classic({ memberId: 'a' }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'subscribedTopics is required when joining (memberEpoch null)',
    });
    expect(await refusal(s.classic({ memberId: 'a', memberEpoch: 1, subscribedTopics: ['t'] }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'subscribedTopics and ownedPartitions are sent only when joining (memberEpoch null)',
    });
    expect(await refusal(s.classic({ memberId: '', subscribedTopics: ['t'] }))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'memberId must be 1-255 printable characters',
    });
    expect(await refusal(s.classic({ memberId: 'a', memberEpoch: -1 }))).toMatchObject({
      code: 'INVALID_REQUEST',
    });
    await expect(s.coordinator.describeGroup('g')).rejects.toMatchObject({ code: 'GROUP_ID_NOT_FOUND' });
  });
});

describe('whether a classic member must rejoin', () => {
  /** Member m at epoch 2 in a group whose target (of assignment epoch 2) gives m `target`. */
  const group = (member: Partial<Member>, target: PartitionMap, groupEpoch = 2) => {
    const m: Member = { ...newMember('m', 0), memberEpoch: 2, previousMemberEpoch: 1, ...member };
    const view: GroupView = {
      groupId: 'g',
      meta: { ...newGroupMeta(0), groupEpoch, assignmentEpoch: 2, target: { m: target } },
      members: new Map([['m', m]]),
    };
    return mustRejoin(view, m);
  };

  it('is told to when the group has moved past the target it computed, even if it holds all of it', () => {
    expect(group({ state: 'STABLE', assigned: { t: [0] } }, { t: [0] }, 3)).toBe(true);
    expect(group({ state: 'STABLE', assigned: { t: [0] } }, { t: [0] })).toBe(false);
  });

  it('is told to while it has partitions to revoke, even with nothing left to wait for', () => {
    expect(
      group({ state: 'UNREVOKED_PARTITIONS', assigned: { t: [0] }, revoking: { t: [1] } }, { t: [0] }),
    ).toBe(true);
  });

  it('is not told to once stable at the target epoch: the state is trusted, not recomputed', () => {
    // A member is made stable only once it holds its whole target, so mustRejoin does not work out
    // what a stable one waits for; the same view does tell an unreleased member to rejoin.
    expect(group({ state: 'STABLE', assigned: { t: [0] } }, { t: [0, 1] })).toBe(false);
    expect(group({ state: 'UNRELEASED_PARTITIONS', assigned: { t: [0] } }, { t: [0, 1] })).toBe(true);
  });
});
