/**
 * CreateTopics, DeleteTopics and CreatePartitions onto Sluice's topic routes. Kafka's −1 partitions
 * or replication factor means the cluster default (1 here, Sluice's default for both). Replica
 * assignments name brokers, which Sluice does not have: only their count (partitions) is used.
 */
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { CreatePartitions } from '../../protocol/kafka/messages/create-partitions.js';
import { CreateTopics } from '../../protocol/kafka/messages/create-topics.js';
import { DeleteTopics } from '../../protocol/kafka/messages/delete-topics.js';
import type { ApiHandler } from '../api.js';
import { errorCodeOf, errorMessageOf } from '../api.js';
import { describedConfigs } from './configs.js';
import { kafkaTopicId } from './metadata.js';

interface CreateTopicsRequest {
  topics: {
    name: string;
    numPartitions: number;
    replicationFactor: number;
    assignments: { partitionIndex: number; brokerIds: number[] }[];
    configs: { name: string; value: string | null }[];
  }[];
  validateOnly: boolean;
}

export const createTopics: ApiHandler = {
  schema: CreateTopics,
  minVersion: 2,
  maxVersion: 7,
  errorResponse(request, errorCode) {
    return {
      topics: (request as unknown as CreateTopicsRequest).topics.map((t) => ({ name: t.name, errorCode })),
    };
  },
  async handle(request, ctx) {
    const { topics, validateOnly } = request as unknown as CreateTopicsRequest;
    const seen = new Map<string, number>();
    for (const t of topics) seen.set(t.name, (seen.get(t.name) ?? 0) + 1);
    const answers = await Promise.all(
      topics.map(async (t): Promise<Message> => {
        const fail = (code: number, message: string | null): Message => ({
          name: t.name,
          errorCode: code,
          errorMessage: message,
        });
        if (seen.get(t.name)! > 1)
          return fail(ERROR.INVALID_REQUEST, 'the topic is named more than once in the request');
        if (t.assignments.length > 0 && (t.numPartitions !== -1 || t.replicationFactor !== -1))
          return fail(ERROR.INVALID_REQUEST, 'give either assignments or partitions and replication factor');
        const partitions =
          t.assignments.length > 0 ? t.assignments.length : t.numPartitions === -1 ? 1 : t.numPartitions;
        const replicationFactor =
          t.assignments.length > 0
            ? (t.assignments[0]?.brokerIds.length ?? 1)
            : t.replicationFactor === -1
              ? 1
              : t.replicationFactor;
        const configs: Record<string, string> = {};
        for (const c of t.configs) {
          if (c.value === null) return fail(ERROR.INVALID_CONFIG, `config ${c.name} has a null value`);
          configs[c.name] = c.value;
        }
        try {
          if (validateOnly) {
            const exists = await ctx.gateway.sluice.describeTopic(t.name).then(
              () => true,
              (error: unknown) => {
                if (errorCodeOf(error) === ERROR.UNKNOWN_TOPIC_OR_PARTITION) return false;
                throw error;
              },
            );
            if (exists) return fail(ERROR.TOPIC_ALREADY_EXISTS, `topic ${t.name} already exists`);
            if (partitions < 1) return fail(ERROR.INVALID_PARTITIONS, 'partitions must be at least 1');
            return {
              name: t.name,
              errorCode: ERROR.NONE,
              errorMessage: null,
              numPartitions: partitions,
              replicationFactor,
              configs: null,
            };
          }
          const created = await ctx.gateway.sluice.createTopic({
            name: t.name,
            partitions,
            replicationFactor,
            configs,
          });
          return {
            name: t.name,
            topicId: kafkaTopicId(created.topicId),
            errorCode: ERROR.NONE,
            errorMessage: null,
            numPartitions: created.partitions.length,
            replicationFactor: created.replicationFactor,
            configs: describedConfigs(created.configs, null).map((c) => ({
              name: c.name,
              value: c.value,
              readOnly: false,
              configSource: c.configSource,
              isSensitive: false,
            })),
          };
        } catch (error) {
          return fail(errorCodeOf(error), errorMessageOf(error));
        }
      }),
    );
    return { throttleTimeMs: 0, topics: answers };
  },
};

interface DeleteTopicsRequest {
  topics: { name: string | null; topicId: string }[];
  topicNames: string[];
}

export const deleteTopics: ApiHandler = {
  schema: DeleteTopics,
  minVersion: 1,
  maxVersion: 6,
  errorResponse(request, errorCode, version) {
    const r = request as unknown as DeleteTopicsRequest;
    const names = version >= 6 ? r.topics.map((t) => t.name) : r.topicNames;
    return { responses: names.map((name) => ({ name, errorCode })) };
  },
  async handle(request, ctx) {
    const r = request as unknown as DeleteTopicsRequest;
    const wanted = ctx.version >= 6 ? r.topics : r.topicNames.map((name) => ({ name, topicId: undefined }));
    const responses = await Promise.all(
      wanted.map(async (t): Promise<Message> => {
        if (t.name === null)
          return {
            name: null,
            topicId: t.topicId,
            errorCode: ERROR.UNKNOWN_TOPIC_ID,
            errorMessage: 'topics are deleted by name here',
          };
        try {
          await ctx.gateway.sluice.deleteTopic(t.name);
          return {
            name: t.name,
            ...(t.topicId ? { topicId: t.topicId } : {}),
            errorCode: ERROR.NONE,
            errorMessage: null,
          };
        } catch (error) {
          return { name: t.name, errorCode: errorCodeOf(error), errorMessage: errorMessageOf(error) };
        }
      }),
    );
    return { throttleTimeMs: 0, responses };
  },
};

interface CreatePartitionsRequest {
  topics: { name: string; count: number; assignments: unknown[] | null }[];
  validateOnly: boolean;
}

export const createPartitions: ApiHandler = {
  schema: CreatePartitions,
  minVersion: 0,
  maxVersion: 3,
  errorResponse(request, errorCode) {
    return {
      results: (request as unknown as CreatePartitionsRequest).topics.map((t) => ({
        name: t.name,
        errorCode,
        errorMessage: null,
      })),
    };
  },
  async handle(request, ctx) {
    const { topics, validateOnly } = request as unknown as CreatePartitionsRequest;
    const results = await Promise.all(
      topics.map(async (t): Promise<Message> => {
        try {
          if (validateOnly) {
            const current = await ctx.gateway.sluice.describeTopic(t.name);
            if (t.count <= current.partitions.length)
              return {
                name: t.name,
                errorCode: ERROR.INVALID_PARTITIONS,
                errorMessage: `topic ${t.name} has ${current.partitions.length} partitions; the count must grow`,
              };
            return { name: t.name, errorCode: ERROR.NONE, errorMessage: null };
          }
          await ctx.gateway.sluice.updateTopic(t.name, { partitions: t.count });
          return { name: t.name, errorCode: ERROR.NONE, errorMessage: null };
        } catch (error) {
          return { name: t.name, errorCode: errorCodeOf(error), errorMessage: errorMessageOf(error) };
        }
      }),
    );
    return { throttleTimeMs: 0, results };
  },
};
