/**
 * The endpoints the command line uses, one method each, over the one SDK client (sdk/client.ts): its
 * admin, producer, consumer, Connect and Streams clients, with the SDK's own choice of which calls are
 * safe to repeat. The CLI keeps only what is its own: a shorter backoff for a person waiting, no
 * retry when nothing listens at the URL, and records rendered as the JSON fetch renders them.
 */
import type { Admin } from '../sdk/admin.js';
import type { ConnectAdmin } from '../sdk/connect.js';
import { SluiceClient } from '../sdk/client.js';
import type { StreamsQueries } from '../sdk/streams.js';
import type { Consumer, ConsumerOptions } from '../sdk/consumer.js';
import type { ConsumedRecord } from '../sdk/types.js';
import type { PartitionsReadOptions } from '../sdk/partition-reader.js';
import { readPartitions } from '../sdk/partition-reader.js';
import { SluiceError } from '../sdk/errors.js';
import type { FetchLike } from '../sdk/transport.js';
import type { Producer, ProducerOptions } from '../sdk/producer.js';
import { encodeBytes, encodeValue } from '../lib/wire/encoding.js';
import type {
  AlterClientQuotasRequest,
  ClientQuotaEntry,
  ClusterDescription,
  CommittedOffset,
  Encoding,
  FetchedRecord,
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
  TopicSummary,
  TransactionDescription,
} from '../lib/wire/types.js';
export { ENCODINGS } from '../lib/wire/types.js';
export type * from '../lib/wire/types.js';

export interface SluiceApiOptions {
  /** Base URL, e.g. `http://127.0.0.1:8787`; the `/v1/...` paths are appended. */
  url: string;
  fetch?: FetchLike;
  /** Sign requests with SigV4 for API Gateway in this region (credentials from `profile` or the default chain). */
  signing?: { region: string; profile?: string };
  /** Retries of a retriable failure after the first attempt (default 3). */
  retries?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** The error's `attempts`: how many times the request was sent. */
export const attemptsOf = (error: SluiceError): number => error.attempts;

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
  /** The one SDK client every command goes through. */
  private readonly sdk: SluiceClient;
  private readonly admin: Admin;
  /** The SDK's consumers by isolation level, for their fetch of many partitions. */
  private readonly consumers = new Map<IsolationLevel, Consumer>();
  /** The fetch and signing requests go through, for clients built beside this one (a Streams app's). */
  private readonly fetch: FetchLike | undefined;
  private readonly signing: SluiceApiOptions['signing'];

  constructor({ url, fetch, signing, retries = 3, sleep, random }: SluiceApiOptions) {
    this.url = url.replace(/\/+$/, '');
    this.fetch = fetch;
    this.signing = signing;
    this.sdk = new SluiceClient({
      url,
      ...(fetch ? { fetch } : {}),
      ...signing,
      // A person is waiting: back off from 200 ms, ±25 %, never more than 5 s at a time; a refused
      // connection means nothing runs at the URL, and trying again at once will not help.
      retry: {
        retries,
        initialRetryTimeMs: 200,
        maxRetryTimeMs: 5_000,
        jitter: 0.25,
        retryRefused: false,
        ...(sleep ? { sleep } : {}),
        ...(random ? { random } : {}),
      },
    });
    this.admin = this.sdk.admin();
  }

  /**
   * The consumer whose fetch reads at `isolationLevel`. Only its fetch is used: the command line runs
   * its own loop (stop at the end of the log, its own out-of-range policy).
   */
  private consumer(isolationLevel: IsolationLevel): Consumer {
    let consumer = this.consumers.get(isolationLevel);
    if (!consumer) {
      consumer = this.sdk.consumer({ isolationLevel });
      this.consumers.set(isolationLevel, consumer);
    }
    return consumer;
  }

  /** DescribeClientQuotas (kafka-configs.sh --describe). */
  describeClientQuotas(filter: {
    user?: string | null;
    clientId?: string | null;
    strict?: boolean;
  }): Promise<ClientQuotaEntry[]> {
    return this.admin.describeClientQuotas(filter);
  }

  /** AlterClientQuotas (kafka-configs.sh --alter). */
  alterClientQuotas(entries: AlterClientQuotasRequest['entries']): Promise<ClientQuotaEntry[]> {
    return this.admin.alterClientQuotas(entries);
  }

  /** Interactive queries of a Streams application's stores. */
  streams(applicationId: string): StreamsQueries {
    return this.sdk.streams(applicationId);
  }

  /**
   * An SDK client of its own for what runs on the SDK for long (a Streams application): the same
   * fetch and signing, the SDK's default retries.
   */
  client(defaultFetch: () => FetchLike, url: string = this.url): SluiceClient {
    return new SluiceClient({ url, fetch: this.fetch ?? defaultFetch(), ...this.signing });
  }

  /** Kafka Connect's REST API. */
  connect(): ConnectAdmin {
    return this.sdk.connect();
  }

  health(): Promise<HealthStatus> {
    return this.admin.health();
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

  createTopic(options: {
    name: string;
    partitions?: number;
    replicationFactor?: number;
    configs?: Record<string, string>;
  }): Promise<TopicDescription> {
    return this.admin.createTopic(options);
  }

  alterTopic(
    topic: string,
    change: { partitions?: number; configs?: Record<string, string> },
  ): Promise<TopicDescription> {
    return this.admin.updateTopic(topic, change);
  }

  deleteTopic(topic: string): Promise<void> {
    return this.admin.deleteTopic(topic);
  }

  /**
   * The SDK's producer. Its sends are safe to repeat: binary batches carry the idempotent producer's
   * sequence numbers and JSON sends an Idempotency-Key, so a retry writes nothing twice.
   */
  producer(options: ProducerOptions = {}): Producer {
    return this.sdk.producer(options);
  }

  /**
   * A member of `groupId` through the SDK's consumer (KIP-848 heartbeats, reconciliation, commits
   * under the member epoch).
   */
  groupConsumer(options: ConsumerOptions & { groupId: string }): Consumer {
    return this.sdk.consumer(options);
  }

  /**
   * Reads partitions with the SDK's partition reader, one fetch per poll over all of them (POST
   * /v1/fetch), each record rendered in `encoding` exactly as the JSON fetch renders it.
   */
  readPartitions(
    options: Omit<PartitionsReadOptions, 'deliver'> & {
      encoding: Encoding;
      isolationLevel: IsolationLevel;
      deliver(partition: number, records: FetchedRecord[], nextOffset: number): Promise<boolean>;
    },
  ): Promise<'caught-up' | 'stopped'> {
    const { encoding, isolationLevel, deliver, ...read } = options;
    return readPartitions(this.consumer(isolationLevel), {
      ...read,
      deliver: (batch) => deliver(batch.partition, renderRecords(batch.records, encoding), batch.nextOffset),
    });
  }

  listOffsets(topic: string, partition: number, at: OffsetSpec): Promise<ListOffsetsResult> {
    return this.admin.listOffsets(topic, partition, at);
  }

  /** Commits `offsets` for a group with no members (a reset's --shift-by). */
  commitOffsets(group: string, offsets: readonly OffsetToCommit[]): Promise<OffsetCommitResult[]> {
    return this.admin.setOffsets(group, offsets);
  }

  committedOffsets(group: string, topic?: string): Promise<CommittedOffset[]> {
    return this.admin.fetchOffsets(group, topic);
  }

  listGroups(): Promise<GroupSummary[]> {
    return this.admin.listGroups();
  }

  describeGroup(group: string): Promise<GroupDescription> {
    return this.admin.describeGroup(group);
  }

  deleteGroup(group: string): Promise<void> {
    return this.admin.deleteGroup(group);
  }

  deleteOffsets(group: string, topic: string, partitions?: readonly number[]): Promise<OffsetCommitResult[]> {
    return this.admin.deleteOffsets(group, topic, partitions);
  }

  resetOffsets(group: string, topic: string, to: ResetTarget): Promise<CommittedOffset[]> {
    return this.admin.resetOffsets(group, topic, to);
  }

  listTransactions(): Promise<TransactionDescription[]> {
    return this.admin.listTransactions();
  }

  describeTransaction(transactionalId: string): Promise<TransactionDescription> {
    return this.admin.describeTransaction(transactionalId);
  }
}
