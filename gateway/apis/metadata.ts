/**
 * Metadata: the gateway is the only broker, the leader and sole replica of every partition (Sluice
 * replicates underneath, invisible to Kafka clients). Topics come from Sluice; Sluice creates topics
 * only when asked, so allow_auto_topic_creation is answered with UNKNOWN_TOPIC_OR_PARTITION as a
 * broker with auto.create.topics.enable=false does.
 */
import type { Message } from '../../protocol/kafka/codec.js';
import { ZERO_UUID } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { Metadata } from '../../protocol/kafka/messages/metadata.js';
import type { TopicDescription } from '../../lib/wire/types.js';
import type { ApiHandler, RequestContext } from '../api.js';
import { errorCodeOf } from '../api.js';

interface MetadataRequest {
  topics: { topicId: string; name: string | null }[] | null;
}

/** Sluice's topic id (a UUID) as Kafka's 16 bytes in hex. */
export const kafkaTopicId = (topicId: string): string => {
  const hex = topicId.replace(/-/g, '').toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) ? hex : ZERO_UUID;
};

export function topicMetadata(topic: TopicDescription, nodeId: number): Message {
  return {
    errorCode: 0,
    name: topic.name,
    topicId: kafkaTopicId(topic.topicId),
    isInternal: false,
    partitions: topic.partitions.map((p) => ({
      errorCode: 0,
      partitionIndex: p.partition,
      leaderId: nodeId,
      leaderEpoch: p.leaderEpoch,
      replicaNodes: [nodeId],
      isrNodes: [nodeId],
      offlineReplicas: [],
    })),
  };
}

async function describeAll(ctx: RequestContext, names: string[]): Promise<Message[]> {
  const { nodeId } = ctx.gateway.broker();
  return Promise.all(
    names.map(async (name) => {
      try {
        return topicMetadata(await ctx.gateway.sluice.describeTopic(name), nodeId);
      } catch (error) {
        const code = errorCodeOf(error);
        return {
          errorCode: code === ERROR.NONE ? ERROR.UNKNOWN_SERVER_ERROR : code,
          name,
          isInternal: false,
          partitions: [],
        };
      }
    }),
  );
}

/** Every topic's name, or none when the caller (a SASL principal) may not list topics. */
async function listable(ctx: RequestContext): Promise<string[]> {
  try {
    return (await ctx.gateway.sluice.listTopics()).map((t) => t.name);
  } catch (error) {
    if (errorCodeOf(error) === ERROR.CLUSTER_AUTHORIZATION_FAILED) return [];
    throw error;
  }
}

export const metadata: ApiHandler = {
  schema: Metadata,
  minVersion: 0,
  maxVersion: 12,
  async handle(request, ctx) {
    const { topics } = request as unknown as MetadataRequest;
    const broker = ctx.gateway.broker();
    const all = topics === null || (ctx.version === 0 && topics.length === 0);
    let names: string[];
    if (all) names = await listable(ctx);
    else names = topics.map((t) => t.name).filter((n): n is string => n !== null);
    // All topics means all the caller may describe, as Kafka answers it: the others are left out.
    const described = (await describeAll(ctx, names)).filter(
      (t) => !all || t['errorCode'] !== ERROR.TOPIC_AUTHORIZATION_FAILED,
    );
    const unknownIds = all
      ? []
      : topics
          .filter((t) => t.name === null)
          .map((t) => ({
            errorCode: ERROR.UNKNOWN_TOPIC_ID,
            name: null,
            topicId: t.topicId,
            isInternal: false,
            partitions: [],
          }));
    return {
      throttleTimeMs: 0,
      brokers: [{ nodeId: broker.nodeId, host: broker.host, port: broker.port, rack: broker.rack }],
      clusterId: await ctx.gateway.clusterId(),
      controllerId: broker.nodeId,
      topics: [...described, ...unknownIds],
    };
  },
};
