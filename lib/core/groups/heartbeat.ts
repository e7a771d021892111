/**
 * One consumer-group heartbeat as a pure step: the group before, the request, the catalog's view of the
 * subscribed topics → the group after and the answer. Persisting the result is the caller's job.
 */
import { SluiceError, invalidRequest } from '../../../protocol/errors.js';
import type { GroupView } from './group.js';
import { GroupDraft } from './group.js';
import type { Member } from './member.js';
import { checkMemberEpoch, newMember, reconcile } from './member.js';
import { EMPTY_PARTITIONS, samePartitions, toTopicPartitions } from './partition-map.js';
import type { HeartbeatRequest, HeartbeatResponse, TopicInfo } from './types.js';
import { JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH } from './types.js';

export interface HeartbeatContext {
  now: number;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** The catalog's answer for every topic any member (or this request) subscribes to. */
  topics: ReadonlyMap<string, TopicInfo | undefined>;
  newMemberId: () => string;
}

export interface HeartbeatOutcome {
  next: GroupView;
  response: HeartbeatResponse;
}

export const applyHeartbeat = (
  view: GroupView,
  request: HeartbeatRequest,
  ctx: HeartbeatContext,
): HeartbeatOutcome => {
  const draft = new GroupDraft(view);
  draft.expire(ctx.now, ctx.sessionTimeoutMs);
  if (request.memberEpoch === LEAVE_EPOCH || request.memberEpoch === STATIC_LEAVE_EPOCH) {
    return leave(draft, request, ctx);
  }

  const before = request.memberEpoch === JOIN_EPOCH ? join(draft, request, ctx) : knownMember(draft, request);
  const subscribedTopics =
    request.subscribedTopics === null
      ? before.subscribedTopics
      : [...new Set(request.subscribedTopics)].sort();
  const serverAssignor = request.serverAssignor ?? before.serverAssignor;
  if (!sameList(subscribedTopics, before.subscribedTopics) || serverAssignor !== before.serverAssignor) {
    draft.bumpGroupEpoch();
  }
  const updated: Member = {
    ...before,
    instanceId: request.instanceId ?? before.instanceId,
    subscribedTopics,
    serverAssignor,
    rebalanceTimeoutMs: request.rebalanceTimeoutMs ?? before.rebalanceTimeoutMs,
    lastSeen: ctx.now,
  };
  draft.putMember(updated);
  draft.refreshTopics(ctx.topics);
  draft.refreshTarget();

  // A joining member is never revoking (it starts from nothing, or as a static member's successor with
  // nothing pending), and reconcile reads what a member owns only while it revokes.
  const reconciled = reconcile(updated, {
    targetEpoch: draft.meta.assignmentEpoch,
    target: draft.meta.target[updated.memberId] ?? EMPTY_PARTITIONS,
    owned: request.ownedPartitions,
    heldByOther: draft.heldByOther(updated.memberId),
    now: ctx.now,
  });
  // Null means "unchanged since your last answer"; a member never answered (every join) gets one. A
  // member that evidently missed that answer gets it again: one back on its previous epoch (accepted
  // only when the answer moving it on was lost), or one whose report of what it owns differs from what
  // it was given (e.g. a lost revocation).
  const lostAnswer = request.memberEpoch < before.memberEpoch;
  const outOfStep =
    request.ownedPartitions !== null && !samePartitions(request.ownedPartitions, reconciled.assigned);
  const answer =
    lostAnswer ||
    outOfStep ||
    reconciled.answered === null ||
    !samePartitions(reconciled.answered, reconciled.assigned);
  const member: Member = answer ? { ...reconciled, answered: reconciled.assigned } : reconciled;
  draft.putMember(member);

  return {
    next: draft.view(),
    response: {
      memberId: member.memberId,
      memberEpoch: member.memberEpoch,
      heartbeatIntervalMs: ctx.heartbeatIntervalMs,
      assignment: answer ? { topicPartitions: toTopicPartitions(member.assigned) } : null,
    },
  };
};

const unknownMember = (memberId: string | null): SluiceError =>
  new SluiceError(
    'UNKNOWN_MEMBER_ID',
    `member ${memberId ?? '(none)'} is not in the group; rejoin with epoch 0`,
  );

/** The member the request names; validateHeartbeat requires the id on everything but a join. */
const namedMember = (draft: GroupDraft, request: HeartbeatRequest): Member | undefined =>
  request.memberId === null ? undefined : draft.members.get(request.memberId);

const join = (draft: GroupDraft, request: HeartbeatRequest, ctx: HeartbeatContext): Member => {
  const existing = namedMember(draft, request);
  if (existing) {
    if (request.instanceId !== null && existing.instanceId !== request.instanceId) {
      throw invalidRequest(`member ${existing.memberId} is not the member of instance ${request.instanceId}`);
    }
    // A member rejoining under its id has dropped its partitions: it starts over towards the same target.
    return {
      ...existing,
      memberEpoch: JOIN_EPOCH,
      previousMemberEpoch: JOIN_EPOCH,
      state: 'STABLE',
      assigned: EMPTY_PARTITIONS,
      revoking: EMPTY_PARTITIONS,
      revokeDeadline: null,
      answered: null,
    };
  }
  // A client-chosen id (KIP-1082) makes a retried join land on the same member.
  const memberId = request.memberId ?? ctx.newMemberId();
  const holder =
    request.instanceId === null
      ? undefined
      : [...draft.members.values()].find((m) => m.instanceId === request.instanceId);
  if (holder) {
    if (holder.memberEpoch !== STATIC_LEAVE_EPOCH) {
      throw new SluiceError(
        'UNRELEASED_INSTANCE_ID',
        `instance ${request.instanceId} is still held by member ${holder.memberId}; it must leave (epoch -2) or time out first`,
      );
    }
    // The new incarnation owns nothing yet, so the old one's pending revocations are complete.
    const successor: Member = {
      ...holder,
      memberId,
      memberEpoch: holder.previousMemberEpoch,
      state: 'UNRELEASED_PARTITIONS',
      revoking: EMPTY_PARTITIONS,
      revokeDeadline: null,
      answered: null,
      version: 0,
    };
    draft.replaceMember(holder.memberId, successor);
    return successor;
  }
  const member: Member = { ...newMember(memberId, ctx.now), instanceId: request.instanceId };
  draft.addMember(member);
  return member;
};

const knownMember = (draft: GroupDraft, request: HeartbeatRequest): Member => {
  const member = namedMember(draft, request);
  if (!member) throw unknownMember(request.memberId);
  if (request.instanceId !== null && member.instanceId !== request.instanceId) {
    throw invalidRequest(`member ${member.memberId} is not the member of instance ${request.instanceId}`);
  }
  checkMemberEpoch(member, request.memberEpoch, request.ownedPartitions);
  return member;
};

const leave = (draft: GroupDraft, request: HeartbeatRequest, ctx: HeartbeatContext): HeartbeatOutcome => {
  const member = namedMember(draft, request);
  if (!member) throw unknownMember(request.memberId);
  if (request.memberEpoch === STATIC_LEAVE_EPOCH) {
    if (member.instanceId === null)
      throw invalidRequest('only a static member (with an instanceId) leaves with epoch -2');
    // It keeps its assignment for one session timeout, so a restart does not rebalance the group.
    draft.putMember({
      ...member,
      memberEpoch: STATIC_LEAVE_EPOCH,
      previousMemberEpoch:
        member.memberEpoch === STATIC_LEAVE_EPOCH ? member.previousMemberEpoch : member.memberEpoch,
      lastSeen: ctx.now,
    });
  } else {
    draft.removeMember(member.memberId);
  }
  draft.refreshTopics(ctx.topics);
  draft.refreshTarget();
  return {
    next: draft.view(),
    response: {
      memberId: member.memberId,
      memberEpoch: request.memberEpoch,
      heartbeatIntervalMs: ctx.heartbeatIntervalMs,
      assignment: null,
    },
  };
};

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);
