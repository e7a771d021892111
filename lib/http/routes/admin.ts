/** Health, cluster and topic administration routes (API.md "Health and cluster", "Topics"). */
import type { TopicCatalog } from '../../core/topics/catalog.js';
import { configStrings, effectiveConfig } from '../../core/topics/configs.js';
import type { Topic } from '../../core/topics/model.js';
import { readJsonObject, rejectUnknownFields } from '../body.js';
import type { Route } from '../types.js';
import { json } from '../types.js';
import type { ClusterDescription, TopicDescription, TopicSummary } from '../../wire/types.js';

export interface AdminRoutesOptions {
  catalog: TopicCatalog;
  clusterId: string;
  version: string;
  /** Called after a topic is deleted, to purge its data (maintenance also does it). */
  onTopicDeleted?: (topic: Topic) => Promise<void>;
}

export const adminRoutes = ({ catalog, clusterId, version, onTopicDeleted }: AdminRoutesOptions): Route[] => {
  const describe = async (topic: Topic): Promise<TopicDescription> => ({
    name: topic.name,
    topicId: topic.topicId,
    replicationFactor: topic.replicationFactor,
    configs: configStrings(effectiveConfig(topic.configs)),
    partitions: await catalog.partitionInfo(topic),
  });

  return [
    { method: 'GET', pattern: '/v1/health', handler: async () => json(200, { status: 'ok' }) },
    {
      method: 'GET',
      pattern: '/v1/cluster',
      handler: async () =>
        json(200, {
          clusterId,
          version,
          stores: catalog.stores.map((s) => ({ ...s })),
        } satisfies ClusterDescription),
    },
    {
      method: 'POST',
      pattern: '/v1/topics',
      handler: async (request) => {
        const body = readJsonObject(request);
        rejectUnknownFields(body, ['name', 'partitions', 'replicationFactor', 'configs']);
        const topic = await catalog.create({
          name: body['name'] as string,
          partitions: body['partitions'] as number | undefined,
          replicationFactor: body['replicationFactor'] as number | undefined,
          configs: body['configs'],
        });
        return json(201, await describe(topic));
      },
    },
    {
      method: 'GET',
      pattern: '/v1/topics',
      handler: async () => {
        const topics = await catalog.list();
        return json(200, {
          topics: topics.map(({ name, partitions, replicationFactor }) => ({
            name,
            partitions,
            replicationFactor,
          })) satisfies TopicSummary[],
        });
      },
    },
    {
      method: 'GET',
      pattern: '/v1/topics/{topic}',
      handler: async ({ params }) =>
        json(200, await describe(await catalog.get(params['topic']!, { fresh: true }))),
    },
    {
      method: 'PATCH',
      pattern: '/v1/topics/{topic}',
      handler: async (request) => {
        const body = readJsonObject(request);
        rejectUnknownFields(body, ['partitions', 'configs']);
        const topic = await catalog.update(request.params['topic']!, {
          partitions: body['partitions'],
          configs: body['configs'],
        });
        return json(200, await describe(topic));
      },
    },
    {
      method: 'DELETE',
      pattern: '/v1/topics/{topic}',
      handler: async ({ params }) => {
        const topic = await catalog.delete(params['topic']!);
        await onTopicDeleted?.(topic);
        return { status: 204 };
      },
    },
  ];
};
