/**
 * The gateway's one way to Sluice: its HTTP API through the SDK's transport, so that the Kafka
 * protocol passes the same authorization, validation and code as every other client, whether Sluice
 * runs under `npm start`, in Lambda behind API Gateway, or anywhere else. No retries here: Kafka
 * clients retry retriable errors themselves, and an answer must reach them within their timeout.
 */
import { ON_BEHALF_OF_HEADER } from '../lib/auth/delegation.js';
import { nodeHttpFetch } from '../sdk/node-http.js';
import { RECORD_BATCH_MEDIA_TYPE } from '../sdk/producer.js';
import { SluiceError } from '../sdk/errors.js';
import { sigV4Fetch } from '../sdk/sigv4.js';
import { GroupsBackend } from './groups-backend.js';
import { clientQuotaFetch } from './quota-context.js';
import type { FetchLike } from '../sdk/transport.js';
import { Transport, path } from '../sdk/transport.js';
import type {
  AbortedTransaction,
  AlterClientQuotasRequest,
  BatchResult,
  ClientQuotaEntry,
  ClusterDescription,
  IsolationLevel,
  ListOffsetsResult,
  MultiFetchResult,
  PartitionFetchAnswer,
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

export type { AbortedTransaction } from '../lib/wire/types.js';

/** One partition of a Fetch: Kafka's FetchPartition. */
export interface PartitionFetchRequest {
  topic: string;
  partition: number;
  offset: number;
  /** Kafka's partition_max_bytes. */
  maxBytes: number;
}

/** Kafka's Fetch over many partitions: the answer's byte budget, the wait and the isolation level. */
export interface MultiFetchRequest {
  partitions: readonly PartitionFetchRequest[];
  maxBytes: number;
  maxWaitMs: number;
  isolationLevel: IsolationLevel;
}

export interface FetchedPartition {
  /** Whole stored RecordBatches, with their true base offsets. */
  records: Uint8Array;
  highWatermark: number;
  logStartOffset: number;
  nextOffset: number;
  /** Under read_committed: where the read stopped, and the aborted transactions in what it returned. */
  lastStableOffset?: number;
  abortedTransactions?: AbortedTransaction[];
}

/** A partition's answer: its batches, or its own error (with the log's bounds when out of range). */
export type PartitionFetchOutcome =
  | ({ topic: string; partition: number } & FetchedPartition)
  | { topic: string; partition: number; error: SluiceError };

/** The transactional producer a transaction call comes from. */
export interface TransactionalProducer {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
}

export interface TxnOffsets {
  groupId: string;
  /** The consumer's group metadata (KIP-447); null outside the group protocol. */
  memberId: string | null;
  generationId: number;
  offsets: { topic: string; partition: number; offset: number; metadata: string }[];
}

export class SluiceBackend {
  private readonly transport: Transport;
  /** The consumer-group routes (gateway/groups-backend.ts). */
  readonly groups: GroupsBackend;

  constructor(private readonly options: SluiceBackendOptions) {
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

  /**
   * The same Sluice, every request of which is authorized as `principal` (a SASL-authenticated
   * client): signed with this gateway's credentials and naming the principal in
   * `Sluice-On-Behalf-Of`, which Sluice honours only for a signer allowed to delegate
   * (lib/auth/delegation.ts). The header is signed with the rest of the request.
   */
  onBehalfOf(principal: string): SluiceBackend {
    return new SluiceBackend({
      ...this.options,
      headers: { ...this.options.headers, [ON_BEHALF_OF_HEADER]: principal },
    });
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

  /**
   * Kafka's Fetch in one request (POST /v1/fetch): every partition's stored batches from its offset,
   * one long poll over all of them of up to `maxWaitMs`. Each partition answers in request order with
   * its batches or its own error; an answer that does not is a broken server, never a partial read.
   */
  async fetchMany(request: MultiFetchRequest, signal?: AbortSignal): Promise<PartitionFetchOutcome[]> {
    const answer = await this.transport.json<MultiFetchResult>({
      method: 'POST',
      path: '/v1/fetch',
      json: {
        maxBytes: request.maxBytes,
        maxWaitMs: request.maxWaitMs,
        ...(request.isolationLevel === 'read_committed' ? { isolationLevel: 'read_committed' } : {}),
        partitions: request.partitions.map(({ topic, partition, offset, maxBytes }) => ({
          topic,
          partition,
          offset,
          maxBytes,
        })),
      },
      extraTimeoutMs: request.maxWaitMs,
      ...(signal ? { signal } : {}),
    });
    const answered = answer?.partitions;
    if (!Array.isArray(answered) || answered.length !== request.partitions.length)
      throw brokenAnswer('does not answer every partition asked');
    return answered.map((p, i) => partitionOutcome(request.partitions[i]!, p));
  }

  listOffsets(
    topic: string,
    partition: number,
    at: 'earliest' | 'latest' | number,
    isolationLevel: IsolationLevel = 'read_uncommitted',
  ): Promise<ListOffsetsResult> {
    return this.transport.json({
      method: 'GET',
      path: path`/v1/topics/${topic}/partitions/${partition}/offsets`,
      query: { at, isolationLevel: isolationLevel === 'read_committed' ? isolationLevel : undefined },
    });
  }

  initProducerId(): Promise<ProducerIdentity> {
    return this.transport.json({ method: 'POST', path: '/v1/producers', json: {} });
  }

  /** InitProducerId with a transactional.id: a new epoch, the previous instance fenced. */
  initTransactionalProducerId(
    transactionalId: string,
    transactionTimeoutMs: number,
  ): Promise<ProducerIdentity> {
    return this.transport.json({
      method: 'POST',
      path: path`/v1/transactions/${transactionalId}/producer`,
      json: { transactionTimeoutMs },
    });
  }

  async addPartitionsToTxn(
    producer: TransactionalProducer,
    topics: { topic: string; partitions: number[] }[],
  ): Promise<void> {
    const { transactionalId, producerId, producerEpoch } = producer;
    await this.transport.send({
      method: 'POST',
      path: path`/v1/transactions/${transactionalId}/partitions`,
      json: { producerId, producerEpoch, topics },
    });
  }

  async addOffsetsToTxn(producer: TransactionalProducer, groupId: string): Promise<void> {
    const { transactionalId, producerId, producerEpoch } = producer;
    await this.transport.send({
      method: 'POST',
      path: path`/v1/transactions/${transactionalId}/groups`,
      json: { producerId, producerEpoch, groupId },
    });
  }

  async txnOffsetCommit(producer: TransactionalProducer, offsets: TxnOffsets): Promise<void> {
    const { transactionalId, producerId, producerEpoch } = producer;
    await this.transport.send({
      method: 'POST',
      path: path`/v1/transactions/${transactionalId}/offsets`,
      json: { producerId, producerEpoch, ...offsets },
    });
  }

  /** EndTxn; transaction version 1 keeps the epoch (clients whose EndTxn cannot learn a new one). */
  endTxn(
    producer: TransactionalProducer,
    committed: boolean,
    transactionVersion: 1 | 2,
  ): Promise<ProducerIdentity> {
    const { transactionalId, producerId, producerEpoch } = producer;
    return this.transport.json({
      method: 'POST',
      path: path`/v1/transactions/${transactionalId}/end`,
      json: { producerId, producerEpoch, committed, transactionVersion },
    });
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

const brokenAnswer = (what: string): SluiceError =>
  new SluiceError('UNKNOWN_SERVER_ERROR', `the fetch answer ${what}`, { retriable: false });

const isOffset = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/** One partition of POST /v1/fetch's answer, checked against what was asked. */
const partitionOutcome = (asked: PartitionFetchRequest, p: PartitionFetchAnswer): PartitionFetchOutcome => {
  if (p?.topic !== asked.topic || p.partition !== asked.partition)
    throw brokenAnswer('is not in the order asked');
  const id = { topic: asked.topic, partition: asked.partition };
  if (p.error !== undefined) {
    const { code, message, retriable } = p.error;
    if (typeof code !== 'string') throw brokenAnswer(`has an error without a code for ${asked.topic}`);
    const details: Record<string, unknown> = {};
    if (isOffset(p.highWatermark)) details['highWatermark'] = p.highWatermark;
    if (isOffset(p.logStartOffset)) details['logStartOffset'] = p.logStartOffset;
    return {
      ...id,
      error: new SluiceError(code, String(message), { retriable: retriable === true, details }),
    };
  }
  if (
    !isOffset(p.highWatermark) ||
    !isOffset(p.logStartOffset) ||
    !isOffset(p.nextOffset) ||
    (p.lastStableOffset !== undefined && !isOffset(p.lastStableOffset)) ||
    typeof p.recordBatches !== 'string'
  )
    throw brokenAnswer(`has a partition without its numbers: ${asked.topic}-${asked.partition}`);
  return {
    ...id,
    records: new Uint8Array(Buffer.from(p.recordBatches, 'base64')),
    highWatermark: p.highWatermark,
    logStartOffset: p.logStartOffset,
    nextOffset: p.nextOffset,
    ...(p.lastStableOffset === undefined
      ? {}
      : {
          lastStableOffset: p.lastStableOffset,
          abortedTransactions: parseAborted(p.abortedTransactions),
        }),
  };
};

/** A read_committed partition's aborted transactions: a list of (producer id, first offset) pairs. */
const parseAborted = (list: unknown): AbortedTransaction[] => {
  if (!Array.isArray(list)) throw brokenAnswer('lists no aborted transactions for a read_committed read');
  return list.map((e: unknown) => {
    const { producerId, firstOffset } = (e ?? {}) as AbortedTransaction;
    if (!Number.isSafeInteger(producerId) || !Number.isSafeInteger(firstOffset))
      throw brokenAnswer('holds a malformed aborted transaction');
    return { producerId, firstOffset };
  });
};
