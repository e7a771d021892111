/**
 * One member's KIP-848 state machine, transition by transition: session and revocation expiry to the
 * millisecond, the epoch check (current, previous after a lost answer, anything else fenced), and
 * reconciliation towards a target — revoke first, then move to the target epoch with only the
 * partitions nobody else holds.
 */
import { describe, expect, it } from 'vitest';
import type { Member } from '../../../../lib/core/groups/member.js';
import {
  checkMemberEpoch,
  DEFAULT_REBALANCE_TIMEOUT_MS,
  heldPartitions,
  isExpired,
  newMember,
  reconcile,
} from '../../../../lib/core/groups/member.js';
import type { PartitionMap } from '../../../../lib/core/groups/partition-map.js';

const NOW = 1_000_000;
const member = (extra: Partial<Member> = {}): Member => ({ ...newMember('m1', NOW), ...extra });
const step = (
  m: Member,
  target: PartitionMap,
  owned: PartitionMap | null,
  heldByOther: (topic: string, partition: number) => boolean = () => false,
) => reconcile(m, { targetEpoch: 5, target, owned, heldByOther, now: NOW + 10 });

describe('a new member', () => {
  it('starts stable at epoch 0 with nothing, the default rebalance timeout, and version 0', () => {
    expect(newMember('m9', 42)).toEqual({
      memberId: 'm9',
      instanceId: null,
      memberEpoch: 0,
      previousMemberEpoch: 0,
      state: 'STABLE',
      assigned: {},
      revoking: {},
      subscribedTopics: [],
      serverAssignor: null,
      rebalanceTimeoutMs: 300_000,
      lastSeen: 42,
      revokeDeadline: null,
      answered: null,
      version: 0,
    });
    expect(DEFAULT_REBALANCE_TIMEOUT_MS).toBe(300_000);
    expect(heldPartitions(member({ assigned: { t: [0] }, revoking: { t: [2], u: [1] } }))).toEqual({
      t: [0, 2],
      u: [1],
    });
  });
});

describe('expiry', () => {
  it('comes exactly at lastSeen + session timeout, or at the revoke deadline', () => {
    const m = member({ lastSeen: 100 });
    expect([isExpired(m, 144, 45), isExpired(m, 145, 45)]).toEqual([false, true]);
    const revoking = member({ lastSeen: 100, revokeDeadline: 120 });
    expect([isExpired(revoking, 119, 45), isExpired(revoking, 120, 45)]).toEqual([false, true]);
  });
});

describe('the epoch check', () => {
  const m = member({ memberEpoch: 4, previousMemberEpoch: 2, assigned: { t: [0, 1] } });
  const fenced = (received: number) =>
    `member m1 sent epoch ${received} but its epoch is 4; abandon all partitions and rejoin with epoch 0`;
  const check = (received: number, owned: PartitionMap | null) => () => checkMemberEpoch(m, received, owned);

  it('takes the current epoch whatever the member owns', () => {
    expect(check(4, null)).not.toThrow();
    expect(check(4, { u: [9] })).not.toThrow();
  });

  it('takes the previous epoch only with owned partitions inside the assignment (a lost answer)', () => {
    expect(check(2, { t: [1] })).not.toThrow();
    expect(check(2, {})).not.toThrow();
    expect(check(2, { t: [1, 2] })).toThrow(
      expect.objectContaining({ code: 'FENCED_MEMBER_EPOCH', message: fenced(2) }),
    );
    expect(check(2, null)).toThrow(
      expect.objectContaining({ code: 'FENCED_MEMBER_EPOCH', message: fenced(2) }),
    );
  });

  it('fences any other epoch, older or newer', () => {
    for (const received of [3, 1, 5])
      expect(check(received, {})).toThrow(expect.objectContaining({ message: fenced(received) }));
    // An epoch equal to the previous one but above the current is not a lost answer.
    const odd = member({ memberEpoch: 1, previousMemberEpoch: 3 });
    expect(() => checkMemberEpoch(odd, 3, {})).toThrow(
      expect.objectContaining({ code: 'FENCED_MEMBER_EPOCH' }),
    );
  });
});

describe('reconciliation', () => {
  it('leaves a stable member at the target epoch as the same object', () => {
    const m = member({ memberEpoch: 5, assigned: { t: [0] } });
    expect(step(m, { t: [1] }, null)).toBe(m);
  });

  it('moves a stable member with nothing to revoke to the target epoch and every free partition', () => {
    const m = member({ memberEpoch: 3, previousMemberEpoch: 1, assigned: { t: [0] } });
    expect(step(m, { t: [0, 1], u: [0] }, { t: [0] })).toMatchObject({
      state: 'STABLE',
      memberEpoch: 5,
      previousMemberEpoch: 3,
      assigned: { t: [0, 1], u: [0] },
      revoking: {},
      revokeDeadline: null,
    });
  });

  it('moves a member to the target epoch even when its share is empty and nothing else changes', () => {
    // A new member (epoch 0, previous 0) in a group with more members than partitions: only its epoch
    // moves, and that move alone is a change (the member must not stay at epoch 0).
    const joined = step(member(), {}, null);
    expect(joined).toEqual({ ...member(), memberEpoch: 5, previousMemberEpoch: 0 });
  });

  it('revokes first: keeps the epoch, shrinks to what it keeps, and sets the deadline', () => {
    const m = member({ memberEpoch: 3, assigned: { t: [0, 1, 2] }, rebalanceTimeoutMs: 500 });
    expect(step(m, { t: [1, 3] }, { t: [0, 1, 2] })).toMatchObject({
      state: 'UNREVOKED_PARTITIONS',
      memberEpoch: 3,
      assigned: { t: [1] },
      revoking: { t: [0, 2] },
      revokeDeadline: NOW + 10 + 500,
    });
  });

  it('waits while the member still owns, or does not report, what it revokes', () => {
    const m = member({
      memberEpoch: 3,
      state: 'UNREVOKED_PARTITIONS',
      assigned: { t: [1] },
      revoking: { t: [0, 2] },
      revokeDeadline: 99,
    });
    expect(step(m, { t: [1, 3] }, null)).toBe(m);
    expect(step(m, { t: [1, 3] }, { t: [1, 2] })).toBe(m);
    expect(step(m, { t: [1, 3] }, { t: [1] })).toMatchObject({
      state: 'STABLE',
      memberEpoch: 5,
      previousMemberEpoch: 3,
      assigned: { t: [1, 3] },
      revoking: {},
      revokeDeadline: null,
    });
  });

  it('takes only the partitions nobody else holds, and picks up the rest once they are released', () => {
    const m = member({ memberEpoch: 3, assigned: { t: [0] } });
    let busy = true;
    const heldByOther = (topic: string, p: number) => busy && topic === 't' && p === 1;
    const first = step(m, { t: [0, 1, 2] }, { t: [0] }, heldByOther);
    expect(first).toMatchObject({ state: 'UNRELEASED_PARTITIONS', memberEpoch: 5, assigned: { t: [0, 2] } });
    // Still held: nothing changes, so the same object comes back.
    expect(step(first, { t: [0, 1, 2] }, { t: [0, 2] }, heldByOther)).toBe(first);
    busy = false;
    expect(step(first, { t: [0, 1, 2] }, { t: [0, 2] }, heldByOther)).toMatchObject({
      state: 'STABLE',
      memberEpoch: 5,
      previousMemberEpoch: 3,
      assigned: { t: [0, 1, 2] },
    });
  });
});
