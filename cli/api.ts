/** The endpoints of API.md the command line uses, typed, one method each. */
import type { HttpClient } from './http.js';
import { path } from './http.js';

import type {
  ClusterDescription,
  CommittedOffset,
  Encoding,
  FetchResult,
  GroupDescription,
  GroupSummary,
  HeartbeatRequest,
  HeartbeatResponse,
  OffsetCommitResult,
  OffsetSpec,
  ProduceRecord,
  RecordResult,
  ResetTarget,
  TopicDescription,
  TopicSummary,
} from '../lib/wire/types.js';
export { ENCODINGS } from '../lib/wire/types.js';
export type * from '../lib/wire/types.js';
export type ProduceResult = RecordResult;

export class SluiceApi {
  constructor(readonly http: HttpClient) {}

  get url(): string {
    return this.http.url;
  }

  health(): Promise<{ status: string }> {
    return this.http.request('GET', '/v1/health', { retry: true });
  }

  cluster(): Promise<ClusterDescription> {
    return this.http.request('GET', '/v1/cluster', { retry: true });
  }

  async listTopics(): Promise<TopicSummary[]> {
    const { topics } = await this.http.request<{ topics: TopicSummary[] }>('GET', '/v1/topics', {
      retry: true,
    });
    return topics;
  }

  describeTopic(topic: string): Promise<TopicDescription> {
    return this.http.request('GET', path`/v1/topics/${topic}`, { retry: true });
  }

  createTopic(body: {
    name: string;
    partitions?: number;
    replicationFactor?: number;
    configs?: Record<string, string>;
  }): Promise<TopicDescription> {
    return this.http.request('POST', '/v1/topics', { body });
  }

  alterTopic(
    topic: string,
    body: { partitions?: number; configs?: Record<string, string> },
  ): Promise<TopicDescription> {
    return this.http.request('PATCH', path`/v1/topics/${topic}`, { body });
  }

  async deleteTopic(topic: string): Promise<void> {
    await this.http.request('DELETE', path`/v1/topics/${topic}`);
  }

  /** Produces one request's records; with an idempotency key a retry cannot write twice, so it retries. */
  async produce(
    topic: string,
    body: { records: ProduceRecord[]; encoding: Encoding; acks?: 'all' | '1' },
    idempotencyKey?: string,
  ): Promise<ProduceResult[]> {
    const { results } = await this.http.request<{ results: ProduceResult[] }>(
      'POST',
      path`/v1/topics/${topic}/records`,
      {
        body,
        ...(idempotencyKey === undefined
          ? {}
          : { headers: { 'idempotency-key': idempotencyKey }, retry: true }),
      },
    );
    return results;
  }

  fetch(
    topic: string,
    partition: number,
    options: {
      offset: number;
      maxWaitMs?: number;
      maxBytes?: number;
      encoding?: Encoding;
      signal?: AbortSignal;
    },
  ): Promise<FetchResult> {
    const maxWaitMs = options.maxWaitMs ?? 0;
    return this.http.request('GET', path`/v1/topics/${topic}/partitions/${partition}/records`, {
      query: {
        offset: options.offset,
        maxWaitMs: maxWaitMs > 0 ? maxWaitMs : undefined,
        maxBytes: options.maxBytes,
        encoding: options.encoding,
      },
      retry: true,
      extraTimeoutMs: maxWaitMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  listOffsets(
    topic: string,
    partition: number,
    at: OffsetSpec,
  ): Promise<{ offset: number | null; timestamp?: number }> {
    return this.http.request('GET', path`/v1/topics/${topic}/partitions/${partition}/offsets`, {
      query: { at },
      retry: true,
    });
  }

  heartbeat(group: string, body: HeartbeatRequest): Promise<HeartbeatResponse> {
    return this.http.request('POST', path`/v1/groups/${group}/heartbeat`, { body });
  }

  async commitOffsets(
    group: string,
    body: {
      memberId?: string;
      memberEpoch?: number;
      offsets: { topic: string; partition: number; offset: number; metadata?: string }[];
    },
  ): Promise<OffsetCommitResult[]> {
    // Committing the same offsets twice leaves the same state: safe to retry.
    const { results } = await this.http.request<{ results: OffsetCommitResult[] }>(
      'POST',
      path`/v1/groups/${group}/offsets`,
      { body, retry: true },
    );
    return results;
  }

  async committedOffsets(group: string, topic?: string): Promise<CommittedOffset[]> {
    const { offsets } = await this.http.request<{ offsets: CommittedOffset[] }>(
      'GET',
      path`/v1/groups/${group}/offsets`,
      { query: { topic }, retry: true },
    );
    return offsets;
  }

  async listGroups(): Promise<GroupSummary[]> {
    const { groups } = await this.http.request<{ groups: GroupSummary[] }>('GET', '/v1/groups', {
      retry: true,
    });
    return groups;
  }

  describeGroup(group: string): Promise<GroupDescription> {
    return this.http.request('GET', path`/v1/groups/${group}`, { retry: true });
  }

  async deleteGroup(group: string): Promise<void> {
    await this.http.request('DELETE', path`/v1/groups/${group}`);
  }

  async resetOffsets(group: string, topic: string, to: ResetTarget): Promise<CommittedOffset[]> {
    const { offsets } = await this.http.request<{ offsets: CommittedOffset[] }>(
      'POST',
      path`/v1/groups/${group}/offsets/reset`,
      { body: { topic, to }, retry: true },
    );
    return offsets;
  }
}
