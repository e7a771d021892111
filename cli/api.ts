/**
 * The endpoints the command line uses, one method each, over the SDK: its transport (fetch, timeouts,
 * the error envelope), its retrier and its admin client. The CLI keeps only what is its own: which
 * calls are safe to repeat (reads, commits, produce with an Idempotency-Key), a shorter backoff for a
 * person waiting, and no retry when nothing listens at the URL.
 */
import { Admin } from '../sdk/admin.js';
import { ConnectAdmin } from '../sdk/connect.js';
import { SluiceClient } from '../sdk/client.js';
import { StreamsQueries } from '../sdk/streams.js';
import type { ConsumerOptions } from '../sdk/consumer.js';
import { Consumer } from '../sdk/consumer.js';
import type { ConsumedRecord } from '../sdk/types.js';
import type { PartitionReadOptions } from '../sdk/partition-reader.js';
import { readPartition } from '../sdk/partition-reader.js';
import { SluiceError } from '../sdk/errors.js';
import type { Bail, Retrier } from '../sdk/retry.js';
import { createRetrier } from '../sdk/retry.js';
import type { FetchLike } from '../sdk/transport.js';
import type { ProducerOptions } from '../sdk/producer.js';
import { Producer } from '../sdk/producer.js';
import { encodeBytes, encodeValue } from '../lib/wire/encoding.js';
import { Transport, path } from '../sdk/transport.js';
import type {
  AlterClientQuotasRequest,
  ClientQuotaEntry,
  ClusterDescription,
  CommittedOffset,
  Encoding,
  FetchedRecord,
  GroupDescription,
  GroupSummary,
  OffsetCommitResult,
  OffsetSpec,
  ResetTarget,
  TopicDescription,
  TopicSummary,
} from '../lib/wire/types.js';
export { ENCODINGS } from '../lib/wire/types.js';
export type * from '../lib/wire/types.js';

export interface SluiceApiOptions {
  /** Base URL, e.g. `http://127.0.0.1:8787`; the `/v1/...` paths are appended. */
  url: string;
  fetch?: FetchLike;
  /** Retries of a retriable failure after the first attempt (default 3). */
  retries?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** The error's `attempts`: how many times the request was sent. */
export const attemptsOf = (error: SluiceError): number =>
  typeof error.details['attempts'] === 'number' ? error.details['attempts'] : 1;

export const isAborted = (error: unknown): boolean =>
  error instanceof SluiceError && error.code === 'ABORTED';

/** Fetched records as the JSON fetch renders them in `encoding`. */
export const renderRecords = (records: readonly ConsumedRecord[], encoding: Encoding): FetchedRecord[] => {
  // Keys and header values are text (or base64) under every encoding; only values parse as JSON.
  const bytes = encoding === 'base64' ? 'base64' : 'utf8';
  return records.map((r) => ({
    offset: r.offset,
    timestamp: r.timestamp,
    key: encodeBytes(r.key, bytes),
    value: encodeValue(r.value, encoding),
    headers: r.headers.map((h) => ({ key: h.key, value: encodeBytes(h.value, bytes) })),
  }));
};

export class SluiceApi {
  readonly url: string;
  private readonly transport: Transport;
  private readonly retrier: Retrier;
  /** The SDK's admin, for the calls whose retry policy is the SDK's. */
  private readonly admin: Admin;
  /** The SDK's consumer, for its binary fetch. */
  private readonly consumer: Consumer;

  /** The fetch requests go through (signing, or a test's router), for clients built on it. */
  private readonly fetch: FetchLike | undefined;

  constructor({ url, fetch, retries = 3, sleep, random }: SluiceApiOptions) {
    this.url = url.replace(/\/+$/, '');
    this.fetch = fetch;
    this.transport = new Transport({ url, ...(fetch ? { fetch } : {}) });
    // A person is waiting: back off from 200 ms, ±25 %, never more than 5 s at a time.
    this.retrier = createRetrier(
      { retries, initialRetryTimeMs: 200, maxRetryTimeMs: 5_000, jitter: 0.25 },
      { ...(sleep ? { sleep } : {}), ...(random ? { random } : {}) },
    );
    this.admin = new Admin(this.transport, this.repeatable);
    // Only its fetch is used: the command line runs its own loops (stop at the high watermark, one
    // partition after another, its own out-of-range policy). Fetches are reads: safe to repeat.
    this.consumer = new Consumer(this.transport, this.repeatable);
  }

  /** The CLI's retrier, as the SDK's clients take it, for calls that are safe to repeat. */
  private readonly repeatable: Retrier = (operation) => this.retry(true, (bail) => operation(bail, 0));

  /** Runs `call` once, or (when it is safe to repeat) under the retrier; stamps `attempts` on failure. */
  private async retry<T>(repeatable: boolean, call: (bail: Bail) => Promise<T>): Promise<T> {
    let attempts = 0;
    try {
      return await this.retrier(async (bail) => {
        attempts += 1;
        try {
          return await call(bail);
        } catch (error) {
          // Nothing listens at the URL: trying again at once will not help.
          if (!repeatable || (error instanceof SluiceError && error.details['refused'] === true)) bail(error);
          throw error;
        }
      });
    } catch (error) {
      if (error instanceof SluiceError) error.details['attempts'] = attempts;
      throw error;
    }
  }

  /** DescribeClientQuotas (kafka-configs.sh --describe): a read, retried. */
  describeClientQuotas(filter: {
    user?: string | null;
    clientId?: string | null;
    strict?: boolean;
  }): Promise<ClientQuotaEntry[]> {
    return this.admin.describeClientQuotas(filter);
  }

  /** AlterClientQuotas: setting the same values again is harmless, so it is retried too. */
  alterClientQuotas(entries: AlterClientQuotasRequest['entries']): Promise<ClientQuotaEntry[]> {
    return this.admin.alterClientQuotas(entries);
  }

  /** Interactive queries of a Streams application's stores; reads, so they are retried. */
  streams(applicationId: string): StreamsQueries {
    return new StreamsQueries(this.transport, this.repeatable, applicationId);
  }

  /** An SDK client on the same URL and fetch, for what runs on the SDK (a Streams application). */
  client(defaultFetch: () => FetchLike, url: string = this.url): SluiceClient {
    return new SluiceClient({ url, fetch: this.fetch ?? defaultFetch() });
  }

  /** Kafka Connect's REST API through this API's transport and retrier. */
  connect(): ConnectAdmin {
    return new ConnectAdmin(this.transport, this.repeatable);
  }

  private request<T>(
    repeatable: boolean,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    where: string,
    options: {
      query?: Record<string, string | number | undefined>;
      body?: unknown;
      headers?: Record<string, string>;
      signal?: AbortSignal;
      extraTimeoutMs?: number;
    } = {},
  ): Promise<T> {
    return this.retry(repeatable, () =>
      this.transport.json<T>({
        method,
        path: where,
        ...(options.query ? { query: options.query } : {}),
        ...(options.body === undefined ? {} : { json: options.body }),
        headers: { accept: 'application/json', ...options.headers },
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.extraTimeoutMs ? { extraTimeoutMs: options.extraTimeoutMs } : {}),
      }),
    );
  }

  health(): Promise<{ status: string }> {
    return this.request(true, 'GET', '/v1/health');
  }

  cluster(): Promise<ClusterDescription> {
    return this.admin.cluster();
  }

  listTopics(): Promise<TopicSummary[]> {
    return this.admin.listTopics();
  }

  describeTopic(topic: string): Promise<TopicDescription> {
    return this.admin.describeTopic(topic);
  }

  createTopic(body: {
    name: string;
    partitions?: number;
    replicationFactor?: number;
    configs?: Record<string, string>;
  }): Promise<TopicDescription> {
    return this.request(false, 'POST', '/v1/topics', { body });
  }

  alterTopic(
    topic: string,
    body: { partitions?: number; configs?: Record<string, string> },
  ): Promise<TopicDescription> {
    return this.request(false, 'PATCH', path`/v1/topics/${topic}`, { body });
  }

  async deleteTopic(topic: string): Promise<void> {
    await this.request(false, 'DELETE', path`/v1/topics/${topic}`);
  }

  /**
   * The SDK's producer. Its sends are safe to repeat: binary batches carry the idempotent producer's
   * sequence numbers and JSON sends an Idempotency-Key, so a retry writes nothing twice.
   */
  producer(options: ProducerOptions = {}): Producer {
    return new Producer(this.transport, this.repeatable, options);
  }

  /**
   * A member of `groupId` through the SDK's consumer (KIP-848 heartbeats, reconciliation, commits
   * under the member epoch); its calls are safe to repeat.
   */
  groupConsumer(options: ConsumerOptions & { groupId: string }): Consumer {
    return new Consumer(this.transport, this.repeatable, options);
  }

  /**
   * Reads one partition with the SDK's partition reader over its consumer's binary fetch, each
   * record rendered in `encoding` exactly as the JSON fetch renders it.
   */
  readPartition(
    options: Omit<PartitionReadOptions, 'deliver'> & {
      encoding: Encoding;
      deliver(records: FetchedRecord[], nextOffset: number): Promise<boolean>;
    },
  ): Promise<'caught-up' | 'stopped'> {
    const { encoding, deliver, ...read } = options;
    return readPartition(this.consumer, {
      ...read,
      deliver: (batch) => deliver(renderRecords(batch.records, encoding), batch.nextOffset),
    });
  }

  listOffsets(
    topic: string,
    partition: number,
    at: OffsetSpec,
  ): Promise<{ offset: number | null; timestamp?: number }> {
    return this.request(true, 'GET', path`/v1/topics/${topic}/partitions/${partition}/offsets`, {
      query: { at },
    });
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
    const { results } = await this.request<{ results: OffsetCommitResult[] }>(
      true,
      'POST',
      path`/v1/groups/${group}/offsets`,
      { body },
    );
    return results;
  }

  committedOffsets(group: string, topic?: string): Promise<CommittedOffset[]> {
    return this.admin.fetchOffsets(group, topic);
  }

  async listGroups(): Promise<GroupSummary[]> {
    return (await this.admin.listGroups()) as GroupSummary[];
  }

  async describeGroup(group: string): Promise<GroupDescription> {
    return (await this.admin.describeGroup(group)) as unknown as GroupDescription;
  }

  async deleteGroup(group: string): Promise<void> {
    await this.request(false, 'DELETE', path`/v1/groups/${group}`);
  }

  deleteOffsets(group: string, topic: string, partitions?: readonly number[]): Promise<OffsetCommitResult[]> {
    return this.admin.deleteOffsets(group, topic, partitions);
  }

  async resetOffsets(group: string, topic: string, to: ResetTarget): Promise<CommittedOffset[]> {
    return ((await this.admin.resetOffsets(group, topic, to)) as { offsets: CommittedOffset[] }).offsets;
  }
}
