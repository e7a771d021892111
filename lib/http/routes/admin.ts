/** Health, cluster and topic administration routes (API.md "Health and cluster", "Topics"). */
import type { TopicCatalog } from '../../core/topics/catalog.js';
import { configStrings, effectiveConfig } from '../../core/topics/configs.js';
import type { Topic } from '../../core/topics/model.js';
import { isSluiceError } from '../../../protocol/errors.js';
import { defineRoute } from '../define-route.js';
import { json } from '../types.js';
import type {
  ClusterDescription,
  HealthStatus,
  PrincipalDescription,
  TopicDescription,
  TopicSummary,
} from '../../wire/types.js';
import { SluiceError } from '../../../protocol/errors.js';
import { TOPIC_ERRORS } from './errors.js';
import '../validators/admin.js';

export interface AdminRoutesOptions {
  catalog: TopicCatalog;
  clusterId: string;
  /** The wait socket's URL, when the deployment has one. */
  waitUrl?: string;
  version: string;
  /** Called after a topic is deleted, to purge its data (maintenance also does it). */
  onTopicDeleted?: (topic: Topic) => Promise<void>;
}

const describeTopic = async (catalog: TopicCatalog, topic: Topic): Promise<TopicDescription> => ({
  name: topic.name,
  topicId: topic.topicId,
  replicationFactor: topic.replicationFactor,
  configs: configStrings(effectiveConfig(topic.configs)),
  partitions: await catalog.partitionInfo(topic),
});

/** A topic's partition count for the mutation quota; an unknown topic mutates none (the handler answers 404). */
const existingPartitions = async (catalog: TopicCatalog, name: string): Promise<number> => {
  try {
    return (await catalog.get(name, { fresh: true })).partitions;
  } catch (error) {
    if (isSluiceError(error) && error.code === 'UNKNOWN_TOPIC_OR_PARTITION') return 0;
    throw error;
  }
};

export const ADMIN_ROUTES = [
  defineRoute<AdminRoutesOptions>({
    method: 'GET',
    path: '/v1/health',
    job: 'admin',
    public: true,
    id: 'health',
    summary: 'Liveness (no signature needed).',
    ok: { 200: 'Health' },
    errors: [],
    handler: () => async () => json(200, { status: 'ok' } satisfies HealthStatus),
  }),
  defineRoute<AdminRoutesOptions>({
    method: 'GET',
    path: '/v1/cluster',
    job: 'admin',
    acl: { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
    id: 'describeCluster',
    summary: 'Cluster id, version and stores.',
    ok: { 200: 'Cluster' },
    errors: [],
    handler:
      ({ catalog, clusterId, version, waitUrl }) =>
      async () =>
        json(200, {
          clusterId,
          version,
          stores: catalog.stores.map((s) => ({ ...s })),
          ...(waitUrl ? { waitUrl } : {}),
        } satisfies ClusterDescription),
  }),
  defineRoute<AdminRoutesOptions>({
    method: 'GET',
    path: '/v1/whoami',
    job: 'admin',
    acl: { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
    id: 'whoami',
    summary:
      "The caller's IAM principal. Presigned, it is the Kafka gateway's SASL/OAUTHBEARER token (docs/kafka-groups-and-auth.md).",
    ok: { 200: 'Principal' },
    errors: ['SASL_AUTHENTICATION_FAILED'],
    handler: () => async (request) => {
      if (!request.caller)
        throw new SluiceError(
          'SASL_AUTHENTICATION_FAILED',
          'this Sluice authenticates no one (SLUICE_AUTH is not iam), so there is no principal to name',
        );
      return json(200, { principal: request.caller.principalArn } satisfies PrincipalDescription);
    },
  }),
  defineRoute<AdminRoutesOptions>({
    method: 'POST',
    path: '/v1/topics',
    job: 'admin',
    acl: { operation: 'CREATE', resourceType: 'CLUSTER' },
    id: 'createTopic',
    // KIP-599: the partitions a request creates (Kafka's default, 1, when the body names none).
    quota: () => ({
      type: 'controller_mutation_rate',
      partitions: async (_request, body) =>
        typeof body?.['partitions'] === 'number' ? body['partitions'] : 1,
    }),
    summary: 'CreateTopics.',
    body: 'CreateTopic',
    ok: { 201: 'TopicDescription' },
    errors: [
      'CLUSTER_AUTHORIZATION_FAILED',
      'INVALID_TOPIC_EXCEPTION',
      'INVALID_PARTITIONS',
      'INVALID_REPLICATION_FACTOR',
      'INVALID_CONFIG',
      'TOPIC_ALREADY_EXISTS',
      'TOPIC_AUTHORIZATION_FAILED',
    ],
    handler:
      ({ catalog }) =>
      async (_request, body = {}) => {
        const topic = await catalog.create({
          name: body['name'] as string,
          partitions: body['partitions'] as number | undefined,
          replicationFactor: body['replicationFactor'] as number | undefined,
          configs: body['configs'],
        });
        return json(201, await describeTopic(catalog, topic));
      },
  }),
  defineRoute<AdminRoutesOptions>({
    method: 'GET',
    path: '/v1/topics',
    job: 'admin',
    acl: { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
    id: 'listTopics',
    summary: 'The topics.',
    ok: { 200: 'TopicList' },
    errors: ['CLUSTER_AUTHORIZATION_FAILED'],
    handler:
      ({ catalog }) =>
      async () => {
        const topics = await catalog.list();
        return json(200, {
          topics: topics.map(({ name, partitions, replicationFactor }) => ({
            name,
            partitions,
            replicationFactor,
          })) satisfies TopicSummary[],
        });
      },
  }),
  defineRoute<AdminRoutesOptions>({
    method: 'GET',
    path: '/v1/topics/{topic}',
    job: 'admin',
    acl: { operation: 'DESCRIBE', resourceType: 'TOPIC', param: 'topic' },
    id: 'describeTopic',
    summary: 'A topic: configs, partitions, offsets.',
    ok: { 200: 'TopicDescription' },
    errors: TOPIC_ERRORS,
    handler:
      ({ catalog }) =>
      async ({ params }) =>
        json(200, await describeTopic(catalog, await catalog.get(params['topic']!, { fresh: true }))),
  }),
  defineRoute<AdminRoutesOptions>({
    method: 'PATCH',
    path: '/v1/topics/{topic}',
    job: 'admin',
    acl: { operation: 'ALTER', resourceType: 'TOPIC', param: 'topic' },
    id: 'alterTopic',
    // CreatePartitions counts the partitions it adds; a config change alone mutates none.
    quota: ({ catalog }) => ({
      type: 'controller_mutation_rate',
      partitions: async (request, body) =>
        typeof body?.['partitions'] === 'number'
          ? Math.max(0, body['partitions'] - (await existingPartitions(catalog, request.params['topic']!)))
          : 0,
    }),
    summary: 'CreatePartitions / IncrementalAlterConfigs.',
    body: 'AlterTopic',
    ok: { 200: 'TopicDescription' },
    errors: [...TOPIC_ERRORS, 'INVALID_PARTITIONS', 'INVALID_CONFIG'],
    handler:
      ({ catalog }) =>
      async (request, body = {}) => {
        const topic = await catalog.update(request.params['topic']!, {
          partitions: body['partitions'],
          configs: body['configs'],
        });
        return json(200, await describeTopic(catalog, topic));
      },
  }),
  defineRoute<AdminRoutesOptions>({
    method: 'DELETE',
    path: '/v1/topics/{topic}',
    job: 'admin',
    acl: { operation: 'DELETE', resourceType: 'TOPIC', param: 'topic' },
    id: 'deleteTopic',
    // DeleteTopics counts the partitions it deletes.
    quota: ({ catalog }) => ({
      type: 'controller_mutation_rate',
      partitions: (request) => existingPartitions(catalog, request.params['topic']!),
    }),
    summary: 'DeleteTopics: data and index go.',
    ok: { 204: 'empty' },
    errors: TOPIC_ERRORS,
    handler:
      ({ catalog, onTopicDeleted }) =>
      async ({ params }) => {
        const topic = await catalog.delete(params['topic']!);
        await onTopicDeleted?.(topic);
        return { status: 204 };
      },
  }),
];
