/**
 * ListGroups, DescribeGroups and DeleteGroups over Sluice's groups. Every Sluice group is a consumer
 * group (protocol type `consumer`, Kafka 4's group type `consumer`); DescribeGroups shows its members
 * in the classic shape (subscription and assignment in the consumer protocol's bytes), with the
 * server assignor as the protocol.
 */
import { encodeAssignment, encodeSubscription } from '../../protocol/kafka/consumer-protocol.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { DeleteGroups, DescribeGroups, ListGroups } from '../../protocol/kafka/messages/groups-admin.js';
import type { GroupDescription } from '../../lib/wire/types.js';
import type { ApiHandler } from '../api.js';
import { errorCodeOf, errorMessageOf } from '../api.js';
import { CONSUMER_PROTOCOL_TYPE } from './groups-classic.js';
import { isGroupId } from './groups-errors.js';

/** KIP-848's consumer-group state names. */
export const CONSUMER_GROUP_STATE: Record<GroupDescription['state'], string> = {
  EMPTY: 'Empty',
  ASSIGNING: 'Assigning',
  RECONCILING: 'Reconciling',
  STABLE: 'Stable',
  DEAD: 'Dead',
};

/** The classic names DescribeGroups uses (Kafka 4 maps a consumer group's states onto them). */
const CLASSIC_STATE: Record<GroupDescription['state'], string> = {
  EMPTY: 'Empty',
  ASSIGNING: 'PreparingRebalance',
  RECONCILING: 'CompletingRebalance',
  STABLE: 'Stable',
  DEAD: 'Dead',
};

export const listGroups: ApiHandler = {
  schema: ListGroups,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, ctx) {
    const { statesFilter, typesFilter } = request as unknown as {
      statesFilter: string[];
      typesFilter: string[];
    };
    const states = new Set(statesFilter.map((s) => s.toLowerCase()));
    const types = new Set(typesFilter.map((t) => t.toLowerCase()));
    if (types.size > 0 && !types.has('consumer'))
      return { throttleTimeMs: 0, errorCode: ERROR.NONE, groups: [] };
    const groups = (await ctx.gateway.sluice.groups.list())
      .map((g) => ({ groupId: g.groupId, state: CONSUMER_GROUP_STATE[g.state] }))
      .filter((g) => states.size === 0 || states.has(g.state.toLowerCase()));
    return {
      throttleTimeMs: 0,
      errorCode: ERROR.NONE,
      groups: groups.map((g) => ({
        groupId: g.groupId,
        protocolType: CONSUMER_PROTOCOL_TYPE,
        groupState: g.state,
        groupType: 'consumer',
      })),
    };
  },
  errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, groups: [] }),
};

const deadGroup = (groupId: string, errorCode: number, errorMessage: string | null = null) => ({
  errorCode,
  errorMessage,
  groupId,
  groupState: 'Dead',
  protocolType: '',
  protocolData: '',
  members: [],
});

export const describeGroups: ApiHandler = {
  schema: DescribeGroups,
  minVersion: 0,
  maxVersion: 6,
  errorResponse: (request, errorCode) => ({
    throttleTimeMs: 0,
    groups: (request as unknown as { groups: string[] }).groups.map((g) => deadGroup(g, errorCode)),
  }),
  async handle(request, ctx) {
    const { groups } = request as unknown as { groups: string[] };
    const described = await Promise.all(
      groups.map(async (groupId) => {
        if (!isGroupId(groupId)) return deadGroup(groupId, ERROR.INVALID_GROUP_ID);
        try {
          const g = await ctx.gateway.sluice.groups.describe(groupId);
          return {
            errorCode: ERROR.NONE,
            errorMessage: null,
            groupId,
            groupState: CLASSIC_STATE[g.state],
            protocolType: CONSUMER_PROTOCOL_TYPE,
            protocolData: g.assignor,
            members: g.members.map((m) => ({
              memberId: m.memberId,
              groupInstanceId: m.instanceId,
              clientId: '',
              clientHost: '',
              memberMetadata: encodeSubscription(m.subscribedTopics),
              memberAssignment: encodeAssignment(m.assignment.topicPartitions),
            })),
          };
        } catch (error) {
          const errorCode = errorCodeOf(error);
          // Before v6 Kafka describes a group it does not know as Dead with no error.
          if (errorCode === ERROR.GROUP_ID_NOT_FOUND && ctx.version < 6)
            return deadGroup(groupId, ERROR.NONE);
          return deadGroup(groupId, errorCode, errorMessageOf(error));
        }
      }),
    );
    return { throttleTimeMs: 0, groups: described };
  },
};

export const deleteGroups: ApiHandler = {
  schema: DeleteGroups,
  minVersion: 0,
  maxVersion: 2,
  errorResponse: (request, errorCode) => ({
    throttleTimeMs: 0,
    results: (request as unknown as { groupsNames: string[] }).groupsNames.map((groupId) => ({
      groupId,
      errorCode,
    })),
  }),
  async handle(request, ctx) {
    const { groupsNames } = request as unknown as { groupsNames: string[] };
    const results = [];
    for (const groupId of groupsNames) {
      let errorCode: number = ERROR.NONE;
      if (!isGroupId(groupId)) errorCode = ERROR.INVALID_GROUP_ID;
      else {
        try {
          await ctx.gateway.sluice.groups.delete(groupId);
        } catch (error) {
          errorCode = errorCodeOf(error);
        }
      }
      results.push({ groupId, errorCode });
    }
    return { throttleTimeMs: 0, results };
  },
};
