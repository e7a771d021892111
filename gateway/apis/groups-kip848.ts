/**
 * KIP-848's ConsumerGroupHeartbeat and ConsumerGroupDescribe: the HTTP heartbeat route is this API
 * already, so the handler only translates topic ids (Kafka's wire) to the topic names Sluice's
 * routes take, and error names to codes.
 */
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { ConsumerGroupDescribe, ConsumerGroupHeartbeat } from '../../protocol/kafka/messages/groups-admin.js';
import type { TopicPartitions } from '../../lib/wire/types.js';
import type { ApiHandler, RequestContext } from '../api.js';
import { errorCodeOf, errorMessageOf } from '../api.js';
import { kafkaTopicId } from './metadata.js';
import { CONSUMER_GROUP_STATE } from './groups-admin.js';
import { isGroupId } from './groups-errors.js';

/**
 * Topic id ↔ name. A topic's id never changes while the name lives, so remembering pairs is safe; a
 * recreated topic gets a new id, and an id not known is looked up again across the topic list.
 */
class TopicIds {
  private readonly idToName = new Map<string, string>();
  private readonly nameToId = new Map<string, string>();
  private static readonly LIMIT = 10_000;

  private remember(name: string, id: string): void {
    if (this.idToName.size >= TopicIds.LIMIT) {
      this.idToName.clear();
      this.nameToId.clear();
    }
    this.idToName.set(id, name);
    this.nameToId.set(name, id);
  }

  async idOf(ctx: RequestContext, name: string): Promise<string> {
    const hit = this.nameToId.get(name);
    if (hit !== undefined) return hit;
    const id = kafkaTopicId((await ctx.gateway.sluice.describeTopic(name)).topicId);
    this.remember(name, id);
    return id;
  }

  async namesOf(ctx: RequestContext, ids: string[]): Promise<Map<string, string>> {
    if (ids.some((id) => !this.idToName.has(id))) {
      for (const t of await ctx.gateway.sluice.listTopics()) {
        if (this.nameToId.has(t.name)) continue;
        try {
          this.remember(t.name, kafkaTopicId((await ctx.gateway.sluice.describeTopic(t.name)).topicId));
        } catch {
          // Deleted meanwhile: it has no id to match.
        }
      }
    }
    return new Map(
      ids.flatMap((id) => (this.idToName.has(id) ? [[id, this.idToName.get(id)!] as const] : [])),
    );
  }
}

const topicIds = new TopicIds();

interface CgHeartbeatRequest {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  instanceId: string | null;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: string[] | null;
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  topicPartitions: { topicId: string; partitions: number[] }[] | null;
}

const withIds = async (ctx: RequestContext, list: TopicPartitions[]) =>
  Promise.all(
    list.map(async (tp) => ({ topicId: await topicIds.idOf(ctx, tp.topic), partitions: tp.partitions })),
  );

export const consumerGroupHeartbeat: ApiHandler = {
  schema: ConsumerGroupHeartbeat,
  minVersion: 0,
  maxVersion: 1,
  errorResponse: (_request, errorCode) => ({
    throttleTimeMs: 0,
    errorCode,
    errorMessage: null,
    memberId: null,
    memberEpoch: -1,
    heartbeatIntervalMs: 0,
    assignment: null,
  }),
  async handle(request, ctx) {
    const hb = request as unknown as CgHeartbeatRequest;
    const refuse = (errorCode: number, errorMessage: string) => ({
      throttleTimeMs: 0,
      errorCode,
      errorMessage,
      memberId: null,
      memberEpoch: -1,
      heartbeatIntervalMs: 0,
      assignment: null,
    });
    if (!isGroupId(hb.groupId)) return refuse(ERROR.INVALID_GROUP_ID, 'invalid group id');
    if (hb.subscribedTopicRegex !== null) {
      return refuse(ERROR.INVALID_REQUEST, 'subscribedTopicRegex is not supported: subscribe by topic names');
    }
    if (hb.serverAssignor !== null && hb.serverAssignor !== 'uniform' && hb.serverAssignor !== 'range') {
      return refuse(
        ERROR.UNSUPPORTED_ASSIGNOR,
        `server assignor ${hb.serverAssignor} is not one of uniform, range`,
      );
    }
    try {
      let owned: TopicPartitions[] | null = null;
      if (hb.topicPartitions !== null) {
        const names = await topicIds.namesOf(
          ctx,
          hb.topicPartitions.map((tp) => tp.topicId),
        );
        // Partitions of a topic that no longer exists are owned by nobody.
        owned = hb.topicPartitions.flatMap((tp) => {
          const topic = names.get(tp.topicId);
          return topic === undefined ? [] : [{ topic, partitions: tp.partitions }];
        });
      }
      const answer = await ctx.gateway.sluice.groups.heartbeat(hb.groupId, {
        memberId: hb.memberId === '' ? null : hb.memberId,
        memberEpoch: hb.memberEpoch,
        instanceId: hb.instanceId,
        subscribedTopics: hb.subscribedTopicNames,
        ownedPartitions: owned,
        rebalanceTimeoutMs: hb.rebalanceTimeoutMs > 0 ? hb.rebalanceTimeoutMs : null,
        serverAssignor: hb.serverAssignor as 'uniform' | 'range' | null,
      });
      return {
        throttleTimeMs: 0,
        errorCode: ERROR.NONE,
        errorMessage: null,
        memberId: answer.memberId,
        memberEpoch: answer.memberEpoch,
        heartbeatIntervalMs: answer.heartbeatIntervalMs,
        assignment:
          answer.assignment === null
            ? null
            : { topicPartitions: await withIds(ctx, answer.assignment.topicPartitions) },
      };
    } catch (error) {
      return refuse(errorCodeOf(error), errorMessageOf(error) ?? '');
    }
  },
};

export const consumerGroupDescribe: ApiHandler = {
  schema: ConsumerGroupDescribe,
  minVersion: 0,
  maxVersion: 1,
  errorResponse: (request, errorCode) => ({
    throttleTimeMs: 0,
    groups: (request as unknown as { groupIds: string[] }).groupIds.map((groupId) => ({
      errorCode,
      errorMessage: null,
      groupId,
      groupState: 'Dead',
      groupEpoch: -1,
      assignmentEpoch: -1,
      assignorName: '',
      members: [],
    })),
  }),
  async handle(request, ctx) {
    const { groupIds } = request as unknown as { groupIds: string[] };
    const groups = await Promise.all(
      groupIds.map(async (groupId) => {
        try {
          if (!isGroupId(groupId))
            throw Object.assign(new Error('invalid group id'), { code: 'INVALID_GROUP_ID' });
          const g = await ctx.gateway.sluice.groups.describe(groupId);
          const described = async (list: TopicPartitions[]) => ({
            topicPartitions: await Promise.all(
              list.map(async (tp) => ({
                topicId: await topicIds.idOf(ctx, tp.topic),
                topicName: tp.topic,
                partitions: tp.partitions,
              })),
            ),
          });
          return {
            errorCode: ERROR.NONE,
            errorMessage: null,
            groupId,
            groupState: CONSUMER_GROUP_STATE[g.state],
            groupEpoch: g.groupEpoch,
            assignmentEpoch: g.groupEpoch,
            assignorName: g.assignor,
            members: await Promise.all(
              g.members.map(async (m) => ({
                memberId: m.memberId,
                instanceId: m.instanceId,
                rackId: null,
                memberEpoch: m.memberEpoch,
                clientId: '',
                clientHost: '',
                subscribedTopicNames: m.subscribedTopics,
                subscribedTopicRegex: null,
                assignment: await described(m.assignment.topicPartitions),
                targetAssignment: await described(m.assignment.topicPartitions),
                memberType: -1,
              })),
            ),
          };
        } catch (error) {
          return {
            errorCode: errorCodeOf(error),
            errorMessage: errorMessageOf(error),
            groupId,
            groupState: 'Dead',
            groupEpoch: -1,
            assignmentEpoch: -1,
            assignorName: '',
            members: [],
          };
        }
      }),
    );
    return { throttleTimeMs: 0, groups };
  },
};
