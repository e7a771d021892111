/**
 * The classic group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) mapped onto Sluice's
 * server-assigned groups (POST /v1/groups/{group}/classic, lib/core/groups/classic.ts), as Kafka 4 lets
 * classic members join a consumer group:
 * - JoinGroup without a member id (v4+) is answered MEMBER_ID_REQUIRED with a fresh id (KIP-394), so
 *   the gateway keeps no state; the join itself reports the subscription and, for cooperative clients,
 *   the partitions still owned. The answer names no leader (no member computes assignments) and
 *   selects the member's first protocol, whose name the client uses to read its assignment.
 * - SyncGroup ignores any assignments sent and returns the server's assignment for the member.
 * - Heartbeat answers REBALANCE_IN_PROGRESS while the member is not reconciled to the group's target;
 *   the member rejoins, which is when revocations complete and new partitions arrive.
 * - generationId is the member epoch; stale ones get ILLEGAL_GENERATION.
 */
import { randomUUID } from 'node:crypto';
import type { Message } from '../../protocol/kafka/codec.js';
import { KafkaProtocolError } from '../../protocol/kafka/codec.js';
import { decodeSubscription, encodeAssignment } from '../../protocol/kafka/consumer-protocol.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { Heartbeat, JoinGroup, LeaveGroup, SyncGroup } from '../../protocol/kafka/messages/groups-classic.js';
import type { ClassicMemberRequest } from '../../lib/wire/types.js';
import type { ApiHandler, RequestContext } from '../api.js';
import { classicErrorCode, isGroupId } from './groups-errors.js';

export const CONSUMER_PROTOCOL_TYPE = 'consumer';

interface JoinRequest {
  groupId: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string;
  protocols: { name: string; metadata: Uint8Array }[];
}

const joinError = (errorCode: number, memberId = ''): Message => ({
  throttleTimeMs: 0,
  errorCode,
  generationId: -1,
  protocolType: null,
  // Nullable only from v7; an empty name reads the same to every client.
  protocolName: '',
  leader: '',
  memberId,
  members: [],
});

/** A member id as a broker makes one: the client id, a dash, a UUID. */
const newMemberId = (ctx: RequestContext): string =>
  `${(ctx.header.clientId ?? '').slice(0, 200) || 'member'}-${randomUUID()}`;

export const joinGroup: ApiHandler = {
  schema: JoinGroup,
  minVersion: 0,
  maxVersion: 9,
  errorResponse: (_request, errorCode) => joinError(errorCode),
  async handle(request, ctx) {
    const join = request as unknown as JoinRequest;
    if (!isGroupId(join.groupId)) return joinError(ERROR.INVALID_GROUP_ID);
    const first = join.protocols[0];
    if (join.protocolType !== CONSUMER_PROTOCOL_TYPE || first === undefined) {
      return joinError(ERROR.INCONSISTENT_GROUP_PROTOCOL, join.memberId);
    }
    if (join.sessionTimeoutMs <= 0) return joinError(ERROR.INVALID_SESSION_TIMEOUT, join.memberId);
    let memberId = join.memberId;
    if (memberId === '') {
      memberId = newMemberId(ctx);
      // KIP-394: the member joins again with this id, so a lost answer never leaves a ghost member.
      if (ctx.version >= 4) return joinError(ERROR.MEMBER_ID_REQUIRED, memberId);
    }
    let subscription;
    try {
      subscription = decodeSubscription(first.metadata);
    } catch (error) {
      if (error instanceof KafkaProtocolError) return joinError(ERROR.INCONSISTENT_GROUP_PROTOCOL, memberId);
      throw error;
    }
    const body: ClassicMemberRequest = {
      memberId,
      memberEpoch: null,
      instanceId: join.groupInstanceId,
      subscribedTopics: subscription.topics,
      ownedPartitions: subscription.ownedPartitions,
      rebalanceTimeoutMs: join.rebalanceTimeoutMs > 0 ? join.rebalanceTimeoutMs : join.sessionTimeoutMs,
      serverAssignor: null,
    };
    try {
      const answer = await ctx.gateway.sluice.groups.classic(join.groupId, body);
      return {
        throttleTimeMs: 0,
        errorCode: ERROR.NONE,
        generationId: answer.memberEpoch,
        protocolType: CONSUMER_PROTOCOL_TYPE,
        protocolName: first.name,
        leader: '',
        skipAssignment: false,
        memberId,
        members: [],
      };
    } catch (error) {
      return joinError(classicErrorCode(error), memberId);
    }
  },
};

interface SyncRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
}

const syncError = (errorCode: number): Message => ({
  throttleTimeMs: 0,
  errorCode,
  protocolType: null,
  protocolName: null,
  assignment: new Uint8Array(),
});

/** A SyncGroup or Heartbeat at the member's generation. */
const classicBeat = (ctx: RequestContext, r: SyncRequest) =>
  ctx.gateway.sluice.groups.classic(r.groupId, {
    memberId: r.memberId,
    memberEpoch: r.generationId,
    instanceId: r.groupInstanceId,
  });

const checkMember = (r: SyncRequest): number | null => {
  if (!isGroupId(r.groupId)) return ERROR.INVALID_GROUP_ID;
  if (r.memberId === '') return ERROR.UNKNOWN_MEMBER_ID;
  if (r.generationId < 0) return ERROR.ILLEGAL_GENERATION;
  return null;
};

export const syncGroup: ApiHandler = {
  schema: SyncGroup,
  minVersion: 0,
  maxVersion: 5,
  errorResponse: (_request, errorCode) => syncError(errorCode),
  async handle(request, ctx) {
    const sync = request as unknown as SyncRequest;
    const refused = checkMember(sync);
    if (refused !== null) return syncError(refused);
    if (sync.protocolType !== null && sync.protocolType !== CONSUMER_PROTOCOL_TYPE) {
      return syncError(ERROR.INCONSISTENT_GROUP_PROTOCOL);
    }
    try {
      const answer = await classicBeat(ctx, sync);
      return {
        throttleTimeMs: 0,
        errorCode: ERROR.NONE,
        protocolType: CONSUMER_PROTOCOL_TYPE,
        protocolName: sync.protocolName,
        assignment: encodeAssignment(answer.assignment.topicPartitions),
      };
    } catch (error) {
      return syncError(classicErrorCode(error));
    }
  },
};

export const heartbeat: ApiHandler = {
  schema: Heartbeat,
  minVersion: 0,
  maxVersion: 4,
  async handle(request, ctx) {
    const beat = request as unknown as SyncRequest;
    const refused = checkMember(beat);
    if (refused !== null) return { throttleTimeMs: 0, errorCode: refused };
    try {
      const answer = await classicBeat(ctx, beat);
      return {
        throttleTimeMs: 0,
        errorCode: answer.rebalanceInProgress ? ERROR.REBALANCE_IN_PROGRESS : ERROR.NONE,
      };
    } catch (error) {
      return { throttleTimeMs: 0, errorCode: classicErrorCode(error) };
    }
  },
};

interface LeaveRequest {
  groupId: string;
  memberId: string;
  members: { memberId: string; groupInstanceId: string | null }[];
}

export const leaveGroup: ApiHandler = {
  schema: LeaveGroup,
  minVersion: 0,
  maxVersion: 5,
  errorResponse: (request, errorCode) => ({
    throttleTimeMs: 0,
    errorCode,
    members: (request as unknown as LeaveRequest).members.map((m) => ({ ...m, errorCode })),
  }),
  async handle(request, ctx) {
    const leave = request as unknown as LeaveRequest;
    if (!isGroupId(leave.groupId))
      return { throttleTimeMs: 0, errorCode: ERROR.INVALID_GROUP_ID, members: [] };
    const members = ctx.version >= 3 ? leave.members : [{ memberId: leave.memberId, groupInstanceId: null }];
    const groups = ctx.gateway.sluice.groups;
    // A static member may leave by its instance id alone: find the member that holds it.
    let byInstance: Map<string, string> | undefined;
    const results = [];
    for (const m of members) {
      let memberId = m.memberId;
      let errorCode: number = ERROR.NONE;
      try {
        if (memberId === '' && m.groupInstanceId !== null) {
          byInstance ??= new Map(
            (await groups.describe(leave.groupId)).members.flatMap((d) =>
              d.instanceId === null ? [] : [[d.instanceId, d.memberId] as const],
            ),
          );
          memberId = byInstance.get(m.groupInstanceId) ?? '';
        }
        if (memberId === '') errorCode = ERROR.UNKNOWN_MEMBER_ID;
        else
          await groups.heartbeat(leave.groupId, { memberId, memberEpoch: -1, instanceId: m.groupInstanceId });
      } catch (error) {
        errorCode = classicErrorCode(error);
        if (errorCode === ERROR.GROUP_ID_NOT_FOUND) errorCode = ERROR.UNKNOWN_MEMBER_ID;
      }
      results.push({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode });
    }
    if (ctx.version < 3) return { throttleTimeMs: 0, errorCode: results[0]?.errorCode ?? ERROR.NONE };
    return { throttleTimeMs: 0, errorCode: ERROR.NONE, members: results };
  },
};
