/**
 * Classic members (JoinGroup/SyncGroup/Heartbeat, KIP-848's "classic protocol members") in the same
 * server-assigned groups as KIP-848 members, as pure steps over the group value; the way Kafka 4 lets a
 * classic consumer join a consumer group:
 *
 * - The server assigns: a classic member is never the leader that computes an assignment; SyncGroup
 *   hands it its share of the server's target assignment.
 * - A classic member reconciles only when it joins. A JoinGroup reports what the member still owns
 *   (nothing for the eager protocols, which revoke everything before they rejoin; the subscription's
 *   ownedPartitions for cooperative-sticky), which completes its pending revocations; it then steps
 *   towards its target exactly as a KIP-848 member does (partitions another member holds come later).
 * - Between joins its epoch (the classic generationId) stays put, so its commits and heartbeats are
 *   fenced by it; a heartbeat answers "rebalance in progress" whenever a rejoin would change something
 *   (the group moved to a new target, the member has partitions to revoke, or partitions it waits for
 *   were released), and the member rejoins.
 * So a partition still has one owner at a time: what a classic member holds stays held (assigned or
 * revoking) until its JoinGroup says it let go, or it leaves or times out.
 */
import { SluiceError, invalidRequest } from '../../../protocol/errors.js';
import type { GroupView } from './group.js';
import { GroupDraft } from './group.js';
import type { HeartbeatContext } from './heartbeat.js';
import { applyHeartbeat } from './heartbeat.js';
import type { Member } from './member.js';
import { heldPartitions, isExpired } from './member.js';
import {
  EMPTY_PARTITIONS,
  filterPartitions,
  intersect,
  isEmpty,
  minus,
  toTopicPartitions,
} from './partition-map.js';
import type { ClassicMemberRequest, ClassicMemberResponse } from './types.js';
import { JOIN_EPOCH, STATIC_LEAVE_EPOCH } from './types.js';

export interface ClassicOutcome {
  next: GroupView;
  response: ClassicMemberResponse;
}

/** A JoinGroup (memberEpoch null), or a SyncGroup/Heartbeat carrying the member's generation. */
export const applyClassic = (
  view: GroupView,
  request: ClassicMemberRequest,
  ctx: HeartbeatContext,
): ClassicOutcome =>
  request.memberEpoch === null ? classicJoin(view, request, ctx) : classicHeartbeat(view, request, ctx);

const withMember = (view: GroupView, member: Member): GroupView => ({
  ...view,
  members: new Map(view.members).set(member.memberId, member),
});

const classicJoin = (
  view: GroupView,
  request: ClassicMemberRequest,
  ctx: HeartbeatContext,
): ClassicOutcome => {
  const owned = request.ownedPartitions ?? EMPTY_PARTITIONS;
  let base = view;
  let memberEpoch = JOIN_EPOCH;
  const found = view.members.get(request.memberId);
  // A member whose session ran out is gone: it joins again from nothing under the same id.
  const existing = found && !isExpired(found, ctx.now, ctx.sessionTimeoutMs) ? found : undefined;
  if (existing) {
    // Start a fresh step towards the target from what the member really still holds: a revocation it
    // reports done is done, and partitions it dropped (an eager rejoin drops all) are free for whoever
    // the target gives them to, this member included.
    const epoch =
      existing.memberEpoch === STATIC_LEAVE_EPOCH ? existing.previousMemberEpoch : existing.memberEpoch;
    base = withMember(view, {
      ...existing,
      memberEpoch: epoch,
      state: 'UNRELEASED_PARTITIONS',
      assigned: intersect(heldPartitions(existing), owned),
      revoking: EMPTY_PARTITIONS,
      revokeDeadline: null,
    });
    memberEpoch = epoch;
  } else if (request.instanceId !== null) {
    // A classic static member that restarts joins under a new member id and replaces its old
    // incarnation (Kafka fences the old one): as if the old one had left temporarily.
    const holder = [...view.members.values()].find((m) => m.instanceId === request.instanceId);
    if (holder && holder.memberEpoch !== STATIC_LEAVE_EPOCH) {
      base = withMember(view, {
        ...holder,
        memberEpoch: STATIC_LEAVE_EPOCH,
        previousMemberEpoch: holder.memberEpoch,
        lastSeen: ctx.now,
      });
    }
  }
  const { next } = applyHeartbeat(
    base,
    {
      memberId: request.memberId,
      memberEpoch,
      instanceId: request.instanceId,
      subscribedTopics: request.subscribedTopics,
      ownedPartitions: existing ? intersect(heldPartitions(existing), owned) : null,
      rebalanceTimeoutMs: request.rebalanceTimeoutMs,
      serverAssignor: request.serverAssignor,
    },
    ctx,
  );
  return answer(next, request.memberId, ctx);
};

const classicHeartbeat = (
  view: GroupView,
  request: ClassicMemberRequest,
  ctx: HeartbeatContext,
): ClassicOutcome => {
  const draft = new GroupDraft(view);
  draft.expire(ctx.now, ctx.sessionTimeoutMs);
  const member = draft.members.get(request.memberId);
  if (!member) {
    throw new SluiceError('UNKNOWN_MEMBER_ID', `member ${request.memberId} is not in the group; rejoin`);
  }
  if (request.instanceId !== null && member.instanceId !== request.instanceId) {
    throw invalidRequest(`member ${member.memberId} is not the member of instance ${request.instanceId}`);
  }
  if (member.memberEpoch !== request.memberEpoch) {
    throw new SluiceError(
      'FENCED_MEMBER_EPOCH',
      `member ${member.memberId} sent generation ${request.memberEpoch} but its epoch is ${member.memberEpoch}; rejoin`,
    );
  }
  draft.putMember({ ...member, lastSeen: ctx.now, answered: member.assigned });
  draft.refreshTopics(ctx.topics);
  draft.refreshTarget();
  return answer(draft.view(), member.memberId, ctx);
};

const answer = (next: GroupView, memberId: string, ctx: HeartbeatContext): ClassicOutcome => {
  const member = next.members.get(memberId);
  if (!member) throw new SluiceError('UNKNOWN_MEMBER_ID', `member ${memberId} is not in the group; rejoin`);
  // A classic member is told its whole assignment on every answer (SyncGroup needs it).
  const told: Member = { ...member, answered: member.assigned };
  const members = new Map(next.members).set(memberId, told);
  return {
    next: { ...next, members },
    response: {
      memberId,
      memberEpoch: member.memberEpoch,
      heartbeatIntervalMs: ctx.heartbeatIntervalMs,
      assignment: { topicPartitions: toTopicPartitions(member.assigned) },
      rebalanceInProgress: mustRejoin(next, member),
    },
  };
};

/**
 * Whether a rejoin would change anything for the member: the group moved to a new target, it has
 * partitions to give up, or partitions it waits for have been let go by their old owner. A member
 * waiting on partitions still held elsewhere is not told to rejoin yet: an eager client gives up its
 * whole assignment on every rejoin, so rejoining in a loop would only stall it.
 */
export const mustRejoin = (view: GroupView, member: Member): boolean => {
  if (
    member.memberEpoch !== view.meta.assignmentEpoch ||
    view.meta.assignmentEpoch !== view.meta.groupEpoch
  ) {
    return true;
  }
  if (member.state === 'UNREVOKED_PARTITIONS') return true;
  if (member.state === 'STABLE') return false;
  const waiting = minus(view.meta.target[member.memberId] ?? EMPTY_PARTITIONS, member.assigned);
  const heldByOther = new GroupDraft(view).heldByOther(member.memberId);
  return !isEmpty(filterPartitions(waiting, (topic, p) => !heldByOther(topic, p)));
};
