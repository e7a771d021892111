/** Topic and group administration (API.md "Health and cluster", "Topics", "Consumer groups"). */
import type { Retrier } from './retry.js';
import type { Transport } from './transport.js';
import { path } from './transport.js';
import type {
  ClusterDescription,
  CommittedOffset,
  OffsetCommitResult,
  TopicDescription,
  StreamsApplicationList,
  TopicSegments,
  TopicSummary,
} from './types.js';

export interface CreateTopicOptions {
  name: string;
  /** Default 1. */
  partitions?: number;
  /** Default 1. */
  replicationFactor?: number;
  /** Kafka topic configs by name, e.g. `{"retention.ms": "3600000"}`. */
  configs?: Record<string, string>;
}

export interface PartitionOffsets {
  partition: number;
  /** logStartOffset */
  low: number;
  /** highWatermark */
  high: number;
}

export class Admin {
  constructor(
    private readonly transport: Transport,
    private readonly retry: Retrier,
  ) {}

  cluster(): Promise<ClusterDescription> {
    return this.retry(() => this.transport.json({ method: 'GET', path: '/v1/cluster' }));
  }

  createTopic({
    name,
    partitions = 1,
    replicationFactor = 1,
    configs = {},
  }: CreateTopicOptions): Promise<TopicDescription> {
    return this.retry(() =>
      this.transport.json({
        method: 'POST',
        path: '/v1/topics',
        json: { name, partitions, replicationFactor, configs },
      }),
    );
  }

  async listTopics(): Promise<TopicSummary[]> {
    const { topics } = await this.retry(() =>
      this.transport.json<{ topics: TopicSummary[] }>({ method: 'GET', path: '/v1/topics' }),
    );
    return topics;
  }

  describeTopic(name: string): Promise<TopicDescription> {
    return this.retry(() => this.transport.json({ method: 'GET', path: path`/v1/topics/${name}` }));
  }

  /** Grows partitions and/or changes configs. */
  updateTopic(
    name: string,
    change: { partitions?: number; configs?: Record<string, string> },
  ): Promise<TopicDescription> {
    return this.retry(() =>
      this.transport.json({ method: 'PATCH', path: path`/v1/topics/${name}`, json: change }),
    );
  }

  async deleteTopic(name: string): Promise<void> {
    await this.retry(() => this.transport.send({ method: 'DELETE', path: path`/v1/topics/${name}` }));
  }

  /** Each partition's log start and high watermark (kafkajs's fetchTopicOffsets). */
  async fetchTopicOffsets(name: string): Promise<PartitionOffsets[]> {
    const topic = await this.describeTopic(name);
    return topic.partitions.map((p) => ({
      partition: p.partition,
      low: p.logStartOffset,
      high: p.highWatermark,
    }));
  }

  /**
   * Each partition's log segments and size in bytes (Kafka's DescribeLogDirs), or only `partition`'s.
   * Sizes count stored RecordBatch bytes; `tier` says whether a segment is rolled (remote) or active.
   */
  describeSegments(name: string, partition?: number): Promise<TopicSegments> {
    return this.retry(() =>
      this.transport.json({ method: 'GET', path: path`/v1/topics/${name}/segments`, query: { partition } }),
    );
  }

  /** The Streams applications: groups whose application has registered its state stores. */
  async listStreamsApplications(): Promise<StreamsApplicationList['applications']> {
    const { applications } = await this.retry(() =>
      this.transport.json<StreamsApplicationList>({ method: 'GET', path: '/v1/streams' }),
    );
    return applications;
  }

  async listGroups(): Promise<{ groupId: string; state: string; members: number }[]> {
    const { groups } = await this.retry(() =>
      this.transport.json<{ groups: { groupId: string; state: string; members: number }[] }>({
        method: 'GET',
        path: '/v1/groups',
      }),
    );
    return groups;
  }

  describeGroup(groupId: string): Promise<Record<string, unknown>> {
    return this.retry(() => this.transport.json({ method: 'GET', path: path`/v1/groups/${groupId}` }));
  }

  async fetchOffsets(groupId: string, topic?: string): Promise<CommittedOffset[]> {
    const { offsets } = await this.retry(() =>
      this.transport.json<{ offsets: CommittedOffset[] }>({
        method: 'GET',
        path: path`/v1/groups/${groupId}/offsets`,
        query: { topic },
      }),
    );
    return offsets;
  }

  /** kafka-consumer-groups --reset-offsets; only while the group has no members. */
  resetOffsets(
    groupId: string,
    topic: string,
    to: 'earliest' | 'latest' | number | { offset: number },
  ): Promise<unknown> {
    return this.retry(() =>
      this.transport.json({
        method: 'POST',
        path: path`/v1/groups/${groupId}/offsets/reset`,
        json: { topic, to },
      }),
    );
  }

  /**
   * OffsetDelete (kafka-consumer-groups --delete-offsets): the group's committed offsets for `topic`
   * (only `partitions` when given). Answers every asked partition, as Kafka does: no error once its
   * offset is gone, else UNKNOWN_TOPIC_OR_PARTITION or (while a member subscribes to the topic, and
   * then nothing is deleted) GROUP_SUBSCRIBED_TO_TOPIC.
   */
  async deleteOffsets(
    groupId: string,
    topic: string,
    partitions?: readonly number[],
  ): Promise<OffsetCommitResult[]> {
    const { results } = await this.retry(() =>
      this.transport.json<{ results: OffsetCommitResult[] }>({
        method: 'DELETE',
        path: path`/v1/groups/${groupId}/offsets`,
        query: { topic, partitions: partitions === undefined ? undefined : partitions.join(',') },
      }),
    );
    return results;
  }

  async deleteGroup(groupId: string): Promise<void> {
    await this.retry(() => this.transport.send({ method: 'DELETE', path: path`/v1/groups/${groupId}` }));
  }
}
