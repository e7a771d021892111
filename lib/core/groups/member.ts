/**
 * A group member and how its current assignment converges on its target (KIP-848's reconciliation):
 * partitions leave a member before they reach another, so no partition ever has two owners.
 *
 * - A member whose target drops partitions it holds first only *revokes*: its assignment shrinks to
 *   what it keeps, the dropped partitions are pending revocation, and its epoch stays put.
 * - Once a heartbeat's ownedPartitions no longer lists them, the member moves to the target epoch and
 *   gets the target partitions that no other member holds (assigned or pending revocation). The rest
 *   are unreleased: the member picks them up on a later heartbeat, after their old owner let go.
 */
import { SluiceError } from '../../../protocol/errors.js';
import type { PartitionMap } from './partition-map.js';
import {
  EMPTY_PARTITIONS,
  filterPartitions,
  intersect,
  intersects,
  isEmpty,
  isSubset,
  minus,
  samePartitions,
  union,
} from './partition-map.js';
import type { AssignorName } from './types.js';

export type MemberState = 'STABLE' | 'UNREVOKED_PARTITIONS' | 'UNRELEASED_PARTITIONS';

export interface Member {
  memberId: string;
  instanceId: string | null;
  memberEpoch: number;
  previousMemberEpoch: number;
  state: MemberState;
  /** The partitions the member may consume (what it was last told, or will be told next). */
  assigned: PartitionMap;
  /** Partitions the member must give up before anyone else gets them. */
  revoking: PartitionMap;
  subscribedTopics: readonly string[];
  serverAssignor: AssignorName | null;
  rebalanceTimeoutMs: number;
  /** When the member last heartbeated (or left temporarily): the session runs from here. */
  lastSeen: number;
  /** While revoking: the member is fenced if it has not revoked by then (rebalance timeout). */
  revokeDeadline: number | null;
  /** The assignment the member was last told, so an unchanged one is answered with null. */
  answered: PartitionMap | null;
  /** Compare-and-set version of the stored member item; 0 before it is first written. */
  version: number;
}

export const DEFAULT_REBALANCE_TIMEOUT_MS = 300_000;

export const newMember = (memberId: string, now: number): Member => ({
  memberId,
  instanceId: null,
  memberEpoch: 0,
  previousMemberEpoch: 0,
  state: 'STABLE',
  assigned: EMPTY_PARTITIONS,
  revoking: EMPTY_PARTITIONS,
  subscribedTopics: [],
  serverAssignor: null,
  rebalanceTimeoutMs: DEFAULT_REBALANCE_TIMEOUT_MS,
  lastSeen: now,
  revokeDeadline: null,
  answered: null,
  version: 0,
});

/** Everything the member holds from the group's point of view. */
export const heldPartitions = (m: Member): PartitionMap => union(m.assigned, m.revoking);

export const isExpired = (m: Member, now: number, sessionTimeoutMs: number): boolean =>
  now >= m.lastSeen + sessionTimeoutMs || (m.revokeDeadline !== null && now >= m.revokeDeadline);

/**
 * Kafka's epoch check: a member may heartbeat with its current epoch, or with the previous one when the
 * answer that moved it on was lost (then it can only own a subset of what it was given).
 */
export const checkMemberEpoch = (m: Member, received: number, owned: PartitionMap | null): void => {
  if (received === m.memberEpoch) return;
  const lostAnswer =
    received < m.memberEpoch &&
    received === m.previousMemberEpoch &&
    owned !== null &&
    isSubset(owned, m.assigned);
  if (lostAnswer) return;
  throw new SluiceError(
    'FENCED_MEMBER_EPOCH',
    `member ${m.memberId} sent epoch ${received} but its epoch is ${m.memberEpoch}; abandon all partitions and rejoin with epoch 0`,
  );
};

export interface ReconcileInput {
  targetEpoch: number;
  /** The member's share of the target assignment. */
  target: PartitionMap;
  /** What the heartbeat says the member owns; null when not reported. */
  owned: PartitionMap | null;
  /** Whether another member holds the partition (assigned or pending revocation). */
  heldByOther: (topic: string, partition: number) => boolean;
  now: number;
}

/** The member after one reconciliation step; the same object when nothing changes. */
export const reconcile = (m: Member, input: ReconcileInput): Member => {
  switch (m.state) {
    case 'STABLE':
      return m.memberEpoch === input.targetEpoch ? m : nextAssignment(m, input);
    case 'UNREVOKED_PARTITIONS':
      if (input.owned === null || intersects(input.owned, m.revoking)) return m;
      return nextAssignment({ ...m, revoking: EMPTY_PARTITIONS, revokeDeadline: null }, input);
    case 'UNRELEASED_PARTITIONS':
      return nextAssignment(m, input);
  }
};

const nextAssignment = (m: Member, input: ReconcileInput): Member => {
  const keep = intersect(m.assigned, input.target);
  const revoke = minus(m.assigned, input.target);
  const wanted = minus(input.target, m.assigned);
  const free = filterPartitions(wanted, (topic, p) => !input.heldByOther(topic, p));
  let next: Member;
  if (!isEmpty(revoke)) {
    next = {
      ...m,
      state: 'UNREVOKED_PARTITIONS',
      assigned: keep,
      revoking: revoke,
      revokeDeadline: input.now + m.rebalanceTimeoutMs,
    };
  } else {
    const unreleased = !samePartitions(free, wanted);
    next = {
      ...m,
      state: unreleased ? 'UNRELEASED_PARTITIONS' : 'STABLE',
      memberEpoch: input.targetEpoch,
      previousMemberEpoch: input.targetEpoch === m.memberEpoch ? m.previousMemberEpoch : m.memberEpoch,
      assigned: union(keep, free),
      revoking: EMPTY_PARTITIONS,
      revokeDeadline: null,
    };
  }
  return sameReconciliation(m, next) ? m : next;
};

const sameReconciliation = (a: Member, b: Member): boolean =>
  a.state === b.state &&
  a.memberEpoch === b.memberEpoch &&
  a.previousMemberEpoch === b.previousMemberEpoch &&
  samePartitions(a.assigned, b.assigned) &&
  samePartitions(a.revoking, b.revoking);
