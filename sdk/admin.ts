/**
 * Topic and group administration (API.md "Health and cluster", "Topics", "Consumer groups"). Every
 * call answers the API's own body types (lib/wire/types.ts, which the HTTP edge answers with).
 *
 * Retries: reads, and writes that leave the same state however often they run (an offset commit, a
 * reset, an offset delete, a config change), are idempotent and run under the client's retrier.
 * Creates and deletes are not (the second attempt of one that took effect answers
 * TOPIC_ALREADY_EXISTS or UNKNOWN_TOPIC_OR_PARTITION): they are retried only after an answer that
 * says nothing changed, never after a timeout or a 5xx (retry.ts `nonIdempotent`).
 */
import type { Retrier } from './retry.js';
import { nonIdempotent } from './retry.js';
import type { Transport } from './transport.js';
import { path } from './transport.js';
import type {
  AlterClientQuotasRequest,
  ClientQuotaEntry,
  ClusterDescription,
  CommittedOffset,
  GroupDescription,
  GroupSummary,
  HealthStatus,
  IsolationLevel,
  ListOffsetsResult,
  OffsetCommitResult,
  OffsetSpec,
  OffsetToCommit,
  ResetTarget,
  TopicDescription,
  StreamsApplicationList,
  TopicSegments,
  TopicSummary,
  TransactionDescription,
  TransactionListing,
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

  /** Whether the API answers (no signature needed). Idempotent. */
  health(): Promise<HealthStatus> {
    return this.retry(() => this.transport.json<HealthStatus>({ method: 'GET', path: '/v1/health' }));
  }

  /** DescribeCluster: id, version and replica stores. Idempotent. */
  cluster(): Promise<ClusterDescription> {
    return this.retry(() => this.transport.json<ClusterDescription>({ method: 'GET', path: '/v1/cluster' }));
  }

  /** CreateTopics. Not idempotent: retried only after an answer that says nothing was created. */
  createTopic({
    name,
    partitions = 1,
    replicationFactor = 1,
    configs = {},
  }: CreateTopicOptions): Promise<TopicDescription> {
    return this.retry(
      nonIdempotent(() =>
        this.transport.json<TopicDescription>({
          method: 'POST',
          path: '/v1/topics',
          json: { name, partitions, replicationFactor, configs },
        }),
      ),
    );
  }

  /** ListTopics. Idempotent. */
  async listTopics(): Promise<TopicSummary[]> {
    const { topics } = await this.retry(() =>
      this.transport.json<{ topics: TopicSummary[] }>({ method: 'GET', path: '/v1/topics' }),
    );
    return topics;
  }

  /** DescribeTopics with each partition's replicas, ISR, log start and high watermark. Idempotent. */
  describeTopic(name: string): Promise<TopicDescription> {
    return this.retry(() =>
      this.transport.json<TopicDescription>({ method: 'GET', path: path`/v1/topics/${name}` }),
    );
  }

  /**
   * Grows partitions (CreatePartitions) and/or changes configs (IncrementalAlterConfigs). Not
   * idempotent as a whole (growing to a count the topic already has answers INVALID_PARTITIONS), so
   * retried only after an answer that says nothing changed.
   */
  updateTopic(
    name: string,
    change: { partitions?: number; configs?: Record<string, string> },
  ): Promise<TopicDescription> {
    return this.retry(
      nonIdempotent(() =>
        this.transport.json<TopicDescription>({
          method: 'PATCH',
          path: path`/v1/topics/${name}`,
          json: change,
        }),
      ),
    );
  }

  /** DeleteTopics. Not idempotent: retried only after an answer that says nothing was deleted. */
  async deleteTopic(name: string): Promise<void> {
    await this.retry(
      nonIdempotent(() => this.transport.send({ method: 'DELETE', path: path`/v1/topics/${name}` })),
    );
  }

  /** Each partition's log start and high watermark (kafkajs's fetchTopicOffsets). Idempotent. */
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
   * Idempotent.
   */
  describeSegments(name: string, partition?: number): Promise<TopicSegments> {
    return this.retry(() =>
      this.transport.json<TopicSegments>({
        method: 'GET',
        path: path`/v1/topics/${name}/segments`,
        query: { partition },
      }),
    );
  }

  /** The Streams applications: groups whose application has registered its state stores. Idempotent. */
  async listStreamsApplications(): Promise<StreamsApplicationList['applications']> {
    const { applications } = await this.retry(() =>
      this.transport.json<StreamsApplicationList>({ method: 'GET', path: '/v1/streams' }),
    );
    return applications;
  }

  /**
   * ListOffsets of one partition: the log start (`earliest`), the end (`latest`, under read_committed
   * the last stable offset), or the first offset whose timestamp is at or after `at` (null when there
   * is none). Idempotent.
   */
  listOffsets(
    topic: string,
    partition: number,
    at: OffsetSpec,
    isolationLevel?: IsolationLevel,
  ): Promise<ListOffsetsResult> {
    return this.retry(() =>
      this.transport.json<ListOffsetsResult>({
        method: 'GET',
        path: path`/v1/topics/${topic}/partitions/${partition}/offsets`,
        query: { at, isolationLevel },
      }),
    );
  }

  /** ListGroups. Idempotent. */
  async listGroups(): Promise<GroupSummary[]> {
    const { groups } = await this.retry(() =>
      this.transport.json<{ groups: GroupSummary[] }>({ method: 'GET', path: '/v1/groups' }),
    );
    return groups;
  }

  /** ConsumerGroupDescribe: state, assignor, members and their assignments, per-partition lag. Idempotent. */
  describeGroup(groupId: string): Promise<GroupDescription> {
    return this.retry(() =>
      this.transport.json<GroupDescription>({ method: 'GET', path: path`/v1/groups/${groupId}` }),
    );
  }

  /** OffsetFetch: the group's committed offsets (of `topic` only, when given). Idempotent. */
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

  /**
   * OffsetCommit by no member (kafkajs's setOffsets, Kafka's alterConsumerGroupOffsets): accepted only
   * while the group has no members. One result per offset, with its error if it was refused.
   * Idempotent: committing the same offsets again leaves the same state.
   */
  async setOffsets(groupId: string, offsets: readonly OffsetToCommit[]): Promise<OffsetCommitResult[]> {
    const { results } = await this.retry(() =>
      this.transport.json<{ results: OffsetCommitResult[] }>({
        method: 'POST',
        path: path`/v1/groups/${groupId}/offsets`,
        json: { offsets },
      }),
    );
    return results;
  }

  /**
   * kafka-consumer-groups --reset-offsets of one topic, only while the group has no members; answers
   * the offsets now committed. Idempotent: running it again moves the group to the same target.
   */
  async resetOffsets(groupId: string, topic: string, to: ResetTarget): Promise<CommittedOffset[]> {
    const { offsets } = await this.retry(() =>
      this.transport.json<{ offsets: CommittedOffset[] }>({
        method: 'POST',
        path: path`/v1/groups/${groupId}/offsets/reset`,
        json: { topic, to },
      }),
    );
    return offsets;
  }

  /**
   * OffsetDelete (kafka-consumer-groups --delete-offsets): the group's committed offsets for `topic`
   * (only `partitions` when given). Answers every asked partition, as Kafka does: no error once its
   * offset is gone, else UNKNOWN_TOPIC_OR_PARTITION or (while a member subscribes to the topic, and
   * then nothing is deleted) GROUP_SUBSCRIBED_TO_TOPIC. Idempotent: a partition whose offset is gone
   * answers no error again.
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

  /** DeleteGroups, only without members. Not idempotent: retried only after an answer that says nothing was deleted. */
  async deleteGroup(groupId: string): Promise<void> {
    await this.retry(
      nonIdempotent(() => this.transport.send({ method: 'DELETE', path: path`/v1/groups/${groupId}` })),
    );
  }

  /** ListTransactions (kafka-transactions.sh list): every transactional.id the coordinator knows. */
  async listTransactions(): Promise<TransactionDescription[]> {
    const { transactions } = await this.retry(() =>
      this.transport.json<TransactionListing>({ method: 'GET', path: '/v1/transactions' }),
    );
    return transactions;
  }

  /** DescribeTransactions (kafka-transactions.sh describe). */
  describeTransaction(transactionalId: string): Promise<TransactionDescription> {
    return this.retry(() =>
      this.transport.json({ method: 'GET', path: path`/v1/transactions/${transactionalId}` }),
    );
  }

  /**
   * DescribeClientQuotas (kafka-configs.sh --describe --entity-type users|clients): each entity type
   * filtered by a name, `null` for the default, or left out for any; `strict` keeps only entities of
   * exactly the filtered types.
   */
  async describeClientQuotas(
    filter: { user?: string | null; clientId?: string | null; strict?: boolean } = {},
  ): Promise<ClientQuotaEntry[]> {
    const { entries } = await this.retry(() =>
      this.transport.json<{ entries: ClientQuotaEntry[] }>({
        method: 'GET',
        path: '/v1/client-quotas',
        query: {
          user: filter.user ?? undefined,
          userDefault: filter.user === null ? 'true' : undefined,
          clientId: filter.clientId ?? undefined,
          clientIdDefault: filter.clientId === null ? 'true' : undefined,
          strict: filter.strict ? 'true' : undefined,
        },
      }),
    );
    return entries;
  }

  /** AlterClientQuotas (kafka-configs.sh --alter): a null value removes a quota. */
  async alterClientQuotas(
    entries: AlterClientQuotasRequest['entries'],
    options: { validateOnly?: boolean } = {},
  ): Promise<ClientQuotaEntry[]> {
    const answer = await this.retry(() =>
      this.transport.json<{ entries: ClientQuotaEntry[] }>({
        method: 'POST',
        path: '/v1/client-quotas',
        json: { entries, ...(options.validateOnly ? { validateOnly: true } : {}) },
      }),
    );
    return answer.entries;
  }
}
