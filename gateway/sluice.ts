/**
 * The gateway's one way to Sluice: its HTTP API through the SDK's transport, so that the Kafka
 * protocol passes the same authorization, validation and code as every other client, whether Sluice
 * runs under `npm start`, in Lambda behind API Gateway, or anywhere else. No retries here: Kafka
 * clients retry retriable errors themselves, and an answer must reach them within their timeout.
 */
import { nodeHttpFetch } from '../sdk/node-http.js';
import { RECORD_BATCH_MEDIA_TYPE } from '../sdk/producer.js';
import { sigV4Fetch } from '../sdk/sigv4.js';
import { GroupsBackend } from './groups-backend.js';
import { clientQuotaFetch } from './quota-context.js';
import type { FetchLike } from '../sdk/transport.js';
import { Transport, path } from '../sdk/transport.js';
import type {
  AlterClientQuotasRequest,
  BatchResult,
  ClientQuotaEntry,
  ClusterDescription,
  ListOffsetsResult,
  ProducerIdentity,
  TopicDescription,
  TopicSummary,
} from '../lib/wire/types.js';

export interface SluiceBackendOptions {
  url: string;
  /** Sign with SigV4 for API Gateway in this region (a deployed Sluice); unsigned without it. */
  region?: string;
  fetch?: FetchLike;
  /** Sent with every request (for example Kafka-Client-Id). */
  headers?: Record<string, string>;
}

export interface FetchedPartition {
  /** Whole stored RecordBatches, with their true base offsets. */
  records: Uint8Array;
  highWatermark: number;
  logStartOffset: number;
  nextOffset: number;
}

export class SluiceBackend {
  private readonly transport: Transport;
  /** The consumer-group routes (gateway/groups-backend.ts). */
  readonly groups: GroupsBackend;

  constructor(options: SluiceBackendOptions) {
    const base = options.fetch ?? nodeHttpFetch({ maxSockets: 256 });
    const signed = options.region === undefined ? base : sigV4Fetch({ region: options.region, fetch: base });
    // Each Kafka client's id and throttle travel with its own requests (gateway/quota-context.ts).
    const fetch = clientQuotaFetch(signed);
    this.transport = new Transport({
      url: options.url,
      fetch,
      // Shared by every client: one client's throttle must not hold the others back.
      honourThrottle: false,
      ...(options.headers ? { headers: options.headers } : {}),
    });
    this.groups = new GroupsBackend(this.transport);
  }

  cluster(): Promise<ClusterDescription> {
    return this.transport.json({ method: 'GET', path: '/v1/cluster' });
  }

  async listTopics(): Promise<TopicSummary[]> {
    const { topics } = await this.transport.json<{ topics: TopicSummary[] }>({
      method: 'GET',
      path: '/v1/topics',
    });
    return topics;
  }

  describeTopic(name: string): Promise<TopicDescription> {
    return this.transport.json({ method: 'GET', path: path`/v1/topics/${name}` });
  }

  createTopic(body: {
    name: string;
    partitions: number;
    replicationFactor: number;
    configs: Record<string, string>;
  }): Promise<TopicDescription> {
    return this.transport.json({ method: 'POST', path: '/v1/topics', json: body });
  }

  updateTopic(
    name: string,
    change: { partitions?: number; configs?: Record<string, string> },
  ): Promise<TopicDescription> {
    return this.transport.json({ method: 'PATCH', path: path`/v1/topics/${name}`, json: change });
  }

  async deleteTopic(name: string): Promise<void> {
    await this.transport.send({ method: 'DELETE', path: path`/v1/topics/${name}` });
  }

  /** The binary produce route: RecordBatch v2 bytes, validated and idempotent as over HTTP. */
  produce(
    topic: string,
    partition: number,
    batches: Uint8Array,
    acks: 'all' | '1',
    signal?: AbortSignal,
  ): Promise<BatchResult> {
    return this.transport.json({
      method: 'POST',
      path: path`/v1/topics/${topic}/partitions/${partition}/batches`,
      query: { acks: acks === 'all' ? undefined : acks },
      body: batches,
      contentType: RECORD_BATCH_MEDIA_TYPE,
      ...(signal ? { signal } : {}),
    });
  }

  /** The binary fetch: stored batches from `offset`, long-polling up to `maxWaitMs`. */
  async fetch(
    topic: string,
    partition: number,
    offset: number,
    maxBytes: number,
    maxWaitMs: number,
    signal?: AbortSignal,
  ): Promise<FetchedPartition> {
    const answer = await this.transport.send({
      method: 'GET',
      path: path`/v1/topics/${topic}/partitions/${partition}/records`,
      query: { offset, maxBytes, maxWaitMs },
      accept: RECORD_BATCH_MEDIA_TYPE,
      extraTimeoutMs: maxWaitMs,
      ...(signal ? { signal } : {}),
    });
    const header = (name: string): number => Number(answer.headers.get(name) ?? NaN);
    return {
      records: answer.body,
      highWatermark: header('sluice-high-watermark'),
      logStartOffset: header('sluice-log-start-offset'),
      nextOffset: header('sluice-next-offset'),
    };
  }

  listOffsets(
    topic: string,
    partition: number,
    at: 'earliest' | 'latest' | number,
  ): Promise<ListOffsetsResult> {
    return this.transport.json({
      method: 'GET',
      path: path`/v1/topics/${topic}/partitions/${partition}/offsets`,
      query: { at },
    });
  }

  initProducerId(): Promise<ProducerIdentity> {
    return this.transport.json({ method: 'POST', path: '/v1/producers', json: {} });
  }

  /** DescribeClientQuotas (GET /v1/client-quotas). */
  async describeClientQuotas(query: Record<string, string | undefined>): Promise<ClientQuotaEntry[]> {
    const { entries } = await this.transport.json<{ entries: ClientQuotaEntry[] }>({
      method: 'GET',
      path: '/v1/client-quotas',
      query,
    });
    return entries;
  }

  /** AlterClientQuotas (POST /v1/client-quotas): all entries are checked before any is written. */
  async alterClientQuotas(body: AlterClientQuotasRequest): Promise<void> {
    await this.transport.send({ method: 'POST', path: '/v1/client-quotas', json: body });
  }
}
