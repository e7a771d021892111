/**
 * The producer. `send` posts JSON records (the server partitions them); when idempotent, each send
 * carries one Idempotency-Key for all its retries, so a retry after a lost answer writes nothing twice.
 * `sendBatch` posts binary RecordBatches to one partition with Kafka's idempotent-producer fields:
 * producer id and epoch from InitProducerId, and a per-partition sequence that a retry repeats.
 */
import { RoundRobinPartitioner, partitionForKey } from '../protocol/partitioner.js';
import type { Compression, RecordInput } from '../protocol/record-batch/index.js';
import {
  BATCH_SIZE_OVERHEAD,
  encodeRecordBatch,
  estimateRecordSize,
} from '../protocol/record-batch/index.js';
import { SluiceError } from './errors.js';
import type { Retrier } from './retry.js';
import type { ConsumerGroupMetadata, TransactionOffset, TransactionState } from './transaction-manager.js';
import { TransactionManager } from './transaction-manager.js';
import type { Transport } from './transport.js';
import { path } from './transport.js';
import type {
  Acks,
  BatchResult,
  Bytes,
  Message,
  ProducerIdentity,
  RecordResult,
  TopicDescription,
} from './types.js';

export const RECORD_BATCH_MEDIA_TYPE = 'application/vnd.kafka.record-batch';

export interface ProducerOptions {
  /** Exactly-once delivery of retried sends (default true). Without it a retry may write twice. */
  idempotent?: boolean;
  /** Default `all`: acknowledged once every in-sync store holds the data. */
  acks?: Acks;
  /** Codec of binary batches (default none). */
  compression?: Compression;
  /** Largest RecordBatch `sendBatch` builds before starting another in the same request (default 1 MiB). */
  maxBatchBytes?: number;
  /**
   * `sendBatch` requests in flight per partition, Kafka's max.in.flight.requests.per.connection:
   * default 5 when idempotent (Kafka's default and its limit with idempotence: sequences keep the
   * order), else 1 (without sequences, only one at a time keeps the call order).
   */
  maxInFlightRequests?: number;
  /**
   * Kafka's transactional.id: makes the producer transactional (idempotent, acks all). Call
   * `initTransactions()` once, then send inside `beginTransaction()` … `commitTransaction()`.
   */
  transactionalId?: string;
  /** Kafka's transaction.timeout.ms (default 60000): the coordinator aborts a transaction open longer. */
  transactionTimeoutMs?: number;
}

interface Sequence {
  producerId: number;
  producerEpoch: number;
  next: number;
}

/** One partition's pipeline of `sendBatch` calls. */
interface Lane {
  /** Resolves once the latest call has taken its sequence: calls take them in call order. */
  sequenced: Promise<void>;
  /** Settles true once the latest call succeeded, false if it failed. */
  settled: Promise<boolean>;
  inFlight: number;
  /** Calls waiting for a request slot, in order. */
  waiting: (() => void)[];
  /** Calls not settled yet; the lane is dropped at 0. */
  pending: number;
}

/** A call's request: its batches, and the sequence range they carry when idempotent. */
interface Taken {
  body: Uint8Array;
  records: number;
  sequence: { producerId: number; producerEpoch: number; base: number } | undefined;
}

/** Per-record overhead of a RecordBatch v2 record beyond its key, value and headers (upper bound). */
const UTF8 = new TextEncoder();

export class Producer {
  private readonly idempotent: boolean;
  private readonly acks: Acks;
  private readonly compression: Compression;
  private readonly maxBatchBytes: number;
  private producerId: Promise<{ producerId: number; producerEpoch: number }> | undefined;
  private readonly sequences = new Map<string, Sequence>();
  private readonly maxInFlight: number;
  private readonly lanes = new Map<string, Lane>();
  private readonly transaction: TransactionManager | undefined;
  /** The sends of the open transaction, which commit and abort wait for. */
  private readonly transactionSends = new Set<Promise<BatchResult>>();
  private readonly partitionCounts = new Map<string, Promise<number>>();
  private readonly roundRobin = new RoundRobinPartitioner();

  constructor(
    private readonly transport: Transport,
    private readonly retry: Retrier,
    {
      idempotent = true,
      acks = 'all',
      compression = 'none',
      maxBatchBytes = 1024 * 1024,
      maxInFlightRequests = idempotent ? 5 : 1,
      transactionalId,
      transactionTimeoutMs = 60_000,
    }: ProducerOptions = {},
  ) {
    if (transactionalId !== undefined && (!idempotent || acks !== 'all')) {
      throw new SluiceError(
        'INVALID_CONFIG',
        'a transactional producer is idempotent with acks=all (Kafka requires both with transactional.id)',
        { retriable: false },
      );
    }
    if (transactionalId !== undefined && (typeof transactionalId !== 'string' || transactionalId === '')) {
      throw new SluiceError('INVALID_CONFIG', 'transactionalId must be a non-empty string', {
        retriable: false,
      });
    }
    if (
      !Number.isInteger(maxInFlightRequests) ||
      maxInFlightRequests < 1 ||
      (idempotent && maxInFlightRequests > 5)
    ) {
      throw new SluiceError(
        'INVALID_CONFIG',
        `maxInFlightRequests must be an integer from 1 to ${idempotent ? '5 with idempotence' : 'any'}, not ${maxInFlightRequests}`,
        { retriable: false },
      );
    }
    this.maxInFlight = maxInFlightRequests;
    this.idempotent = idempotent;
    this.acks = acks;
    this.compression = compression;
    this.maxBatchBytes = maxBatchBytes;
    this.transaction =
      transactionalId === undefined
        ? undefined
        : new TransactionManager(
            transport,
            retry,
            {
              useIdentity: (identity) => this.useIdentity(identity),
              flush: () => this.flushTransaction(),
            },
            transactionalId,
            transactionTimeoutMs,
          );
  }

  /** Kafka's initTransactions: fences earlier instances of the transactional.id and aborts what they left open. */
  initTransactions(): Promise<void> {
    return this.transactional().initTransactions();
  }

  beginTransaction(): void {
    this.transactional().beginTransaction();
  }

  /**
   * Commits the consumer's positions with the transaction (Kafka's sendOffsetsToTransaction): pass the
   * consumer's `groupMetadata()` so a zombie member's commit is fenced, or a group id.
   */
  sendOffsetsToTransaction(
    offsets: readonly TransactionOffset[],
    group: ConsumerGroupMetadata | string,
  ): Promise<void> {
    return this.transactional().sendOffsetsToTransaction(offsets, group);
  }

  /** Waits for the transaction's sends, then commits it: all its records and offsets become visible. */
  commitTransaction(): Promise<void> {
    return this.transactional().commitTransaction();
  }

  /** Aborts the open transaction: read_committed consumers never see its records. */
  abortTransaction(): Promise<void> {
    return this.transactional().abortTransaction();
  }

  /** The transactional state (Kafka's TransactionManager states); undefined without a transactionalId. */
  get transactionState(): TransactionState | undefined {
    return this.transaction?.currentState;
  }

  /** The producer id and epoch of a transactional producer after initTransactions. */
  get producerIdentity(): ProducerIdentity | undefined {
    return this.transaction?.producerIdentity;
  }

  private transactional(): TransactionManager {
    if (!this.transaction)
      throw new SluiceError('INVALID_TXN_STATE', 'transactional methods need a transactionalId', {
        retriable: false,
      });
    return this.transaction;
  }

  /** A new producer id or epoch from the coordinator: batches restart at sequence 0. */
  private useIdentity(identity: ProducerIdentity): void {
    this.producerId = Promise.resolve(identity);
    this.sequences.clear();
    this.transactionSends.clear();
  }

  /** Waits for every send of the transaction; answers the first failure, if any. */
  private async flushTransaction(): Promise<unknown> {
    const settled = await Promise.allSettled([...this.transactionSends]);
    return settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason;
  }

  /**
   * JSON produce: one result per message, in order. Throws if any message could not be written
   * (the error's `details.results` holds every result).
   */
  async send({
    topic,
    messages,
    acks = this.acks,
    idempotencyKey,
  }: {
    topic: string;
    messages: Message[];
    acks?: Acks;
    /**
     * The request's Idempotency-Key (default: a fresh one per send). A caller that may send the same
     * records again after a crash passes a key derived from them (Connect's sources, Streams' exactly-once outbox), so the resend
     * writes nothing twice.
     */
    idempotencyKey?: string;
  }): Promise<RecordResult[]> {
    if (this.transaction) return this.sendTransactional(topic, messages);
    const binary = messages.some(hasBinary);
    const encode = (b: Bytes | null | undefined): string | null =>
      b === null || b === undefined
        ? null
        : typeof b === 'string'
          ? binary
            ? base64(UTF8.encode(b))
            : b
          : base64(b);
    const records = messages.map((m) => ({
      key: encode(m.key),
      value: encode(m.value),
      headers: headerList(m.headers).map((h) => ({ key: h.key, value: encode(h.value) })),
      ...(m.partition === undefined ? {} : { partition: m.partition }),
      ...(m.timestamp === undefined ? {} : { timestamp: m.timestamp }),
    }));
    const body = { records, encoding: binary ? 'base64' : 'utf8', acks };
    const headers: Record<string, string> =
      this.idempotent || idempotencyKey !== undefined
        ? { 'idempotency-key': idempotencyKey ?? globalThis.crypto.randomUUID() }
        : {};
    return this.retry(async (bail) => {
      const { results } = await this.transport.json<{ results: RecordResult[] }>({
        method: 'POST',
        path: path`/v1/topics/${topic}/records`,
        json: body,
        headers,
      });
      const failed = results.find((r): r is Extract<RecordResult, { error: unknown }> => 'error' in r);
      if (!failed) return results;
      const error = new SluiceError(
        failed.error.code,
        `partition ${failed.partition}: ${failed.error.message}`,
        {
          retriable: failed.error.retriable,
          status: 200,
          details: { results },
        },
      );
      // With an Idempotency-Key the whole request can be retried: partitions already written answer
      // with their original offsets. Without one, a retry would write those partitions again.
      if (!this.idempotent) bail(error);
      throw error;
    });
  }

  /**
   * `send` inside a transaction: the records are partitioned here, as Kafka's producer does (murmur2 of
   * the key, in turn without one), and go as transactional batches, one call per partition.
   */
  private async sendTransactional(topic: string, messages: Message[]): Promise<RecordResult[]> {
    this.transaction!.checkSendable();
    const byPartition = new Map<number, number[]>();
    let count: number | undefined;
    for (const [i, m] of messages.entries()) {
      let partition = m.partition;
      if (partition === undefined) {
        count ??= await this.partitionCount(topic);
        const key = toBytes(m.key);
        partition = key === null ? this.roundRobin.next(count) : partitionForKey(key, count);
      }
      byPartition.set(partition, [...(byPartition.get(partition) ?? []), i]);
    }
    const results: RecordResult[] = new Array<RecordResult>(messages.length);
    // CreateTime stamped here, so each result can say it (as Kafka's RecordMetadata does).
    const now = Date.now();
    const stamped = messages.map((m) => ({ ...m, timestamp: m.timestamp ?? now }));
    await Promise.all(
      [...byPartition].map(async ([partition, indexes]) => {
        const batch = await this.sendBatch(
          topic,
          partition,
          indexes.map((i) => ({ ...stamped[i]!, partition })),
        );
        indexes.forEach((i, n) => {
          results[i] = {
            partition,
            offset: batch.baseOffset + n,
            timestamp: batch.logAppendTime >= 0 ? batch.logAppendTime : stamped[i]!.timestamp,
          };
        });
      }),
    );
    return results;
  }

  private partitionCount(topic: string): Promise<number> {
    let count = this.partitionCounts.get(topic);
    if (!count) {
      count = this.retry(() =>
        this.transport.json<TopicDescription>({ method: 'GET', path: path`/v1/topics/${topic}` }),
      ).then((d) => d.partitions.length);
      count.catch(() => this.partitionCounts.delete(topic));
      this.partitionCounts.set(topic, count);
    }
    return count;
  }

  /**
   * Binary produce of `messages` to one partition as RecordBatch v2 (split at maxBatchBytes), in one
   * request. Calls for the same partition take their sequences in call order and keep up to
   * maxInFlightRequests requests in flight; the server commits them in sequence order only, so the
   * records land in call order.
   */
  sendBatch(
    topic: string,
    partition: number,
    messages: Message[],
    options: { acks?: Acks } = {},
  ): Promise<BatchResult> {
    if (messages.length === 0)
      return Promise.reject(
        new SluiceError('INVALID_REQUEST', 'sendBatch needs at least one message', { retriable: false }),
      );
    const transaction = this.transaction;
    if (transaction) {
      try {
        transaction.checkSendable();
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const id = `${topic}\u0000${partition}`;
    const lane = this.lane(id);
    const { sequenced: previousSequenced, settled: previousSettled } = lane;
    let markSequenced!: () => void;
    lane.sequenced = new Promise((resolve) => (markSequenced = resolve));
    lane.pending++;
    const acks = options.acks ?? this.acks;
    const sent = (async () => {
      await previousSequenced;
      await this.slot(lane);
      try {
        let taken: Taken;
        try {
          // KIP-890: the partition is in the transaction before its first batch arrives.
          await transaction?.addPartition(topic, partition);
          taken = await this.take(id, messages);
        } finally {
          markSequenced();
        }
        return await this.deliver(id, topic, partition, taken, acks, previousSettled);
      } finally {
        this.release(lane);
      }
    })();
    if (transaction) {
      this.transactionSends.add(sent);
      sent.catch((error: unknown) => transaction.sendFailed(error));
    }
    lane.settled = sent.then(
      () => true,
      () => false,
    );
    void lane.settled.then(() => {
      if (--lane.pending === 0 && this.lanes.get(id) === lane) this.lanes.delete(id);
    });
    return sent;
  }

  private lane(id: string): Lane {
    let lane = this.lanes.get(id);
    if (!lane) {
      lane = {
        sequenced: Promise.resolve(),
        settled: Promise.resolve(true),
        inFlight: 0,
        waiting: [],
        pending: 0,
      };
      this.lanes.set(id, lane);
    }
    return lane;
  }

  private async slot(lane: Lane): Promise<void> {
    if (lane.inFlight < this.maxInFlight) {
      lane.inFlight++;
      return;
    }
    // release() hands its slot straight to the first waiter, so the count stays right.
    await new Promise<void>((resolve) => lane.waiting.push(resolve));
  }

  private release(lane: Lane): void {
    const next = lane.waiting.shift();
    if (next) next();
    else lane.inFlight--;
  }

  /** Encodes the call's batches and reserves their sequence range: the next call continues after it. */
  private async take(id: string, messages: Message[]): Promise<Taken> {
    const now = Date.now();
    const records: RecordInput[] = messages.map((m) => ({
      key: toBytes(m.key),
      value: toBytes(m.value),
      headers: headerList(m.headers).map((h) => ({ key: h.key, value: toBytes(h.value) })),
      timestamp: m.timestamp ?? now,
    }));
    const sequence = this.idempotent ? await this.sequenceFor(id) : undefined;
    const body = this.encode(records, sequence);
    if (!sequence) return { body, records: records.length, sequence: undefined };
    const base = sequence.next;
    sequence.next += records.length;
    return {
      body,
      records: records.length,
      sequence: { producerId: sequence.producerId, producerEpoch: sequence.producerEpoch, base },
    };
  }

  private async deliver(
    id: string,
    topic: string,
    partition: number,
    taken: Taken,
    acks: Acks,
    previousSettled: Promise<boolean>,
  ): Promise<BatchResult> {
    const send = () =>
      this.retry(() =>
        this.transport.json<BatchResult>({
          method: 'POST',
          path: path`/v1/topics/${topic}/partitions/${partition}/batches`,
          query: { acks: acks === 'all' ? undefined : acks },
          body: taken.body,
          contentType: RECORD_BATCH_MEDIA_TYPE,
        }),
      );
    try {
      try {
        return await send();
      } catch (error) {
        // The batch before this one, in flight beside it, had not committed when this one arrived
        // (the server waits a moment for it first). Once it has, this sequence is next: send again,
        // byte-identical. If it failed, this sequence can never commit.
        if (
          !taken.sequence ||
          !(error instanceof SluiceError) ||
          error.code !== 'OUT_OF_ORDER_SEQUENCE_NUMBER'
        )
          throw error;
        if (!(await previousSettled)) throw error;
        return await send();
      }
    } catch (error) {
      if (taken.sequence) this.afterFailure(id, taken, error);
      throw error;
    }
  }

  /**
   * A failed idempotent call leaves its sequence range unused, or unknown. A definite rejection of the
   * latest call gives its range back; anything else (an unknown outcome, a sequence the server refuses,
   * later calls already holding later sequences) starts a fresh producer id instead of guessing, as
   * Kafka bumps the epoch: the later calls of the old id then fail, never land out of order.
   */
  private afterFailure(id: string, taken: Taken, error: unknown): void {
    // A transactional producer's failed send fails its transaction; the abort bumps the epoch.
    if (this.transaction) return;
    const seq = taken.sequence!;
    const sequence = this.sequences.get(id);
    if (!sequence || sequence.producerId !== seq.producerId) return;
    const definite = error instanceof SluiceError && !error.ambiguous && !isSequenceError(error);
    if (definite && sequence.next === seq.base + taken.records) sequence.next = seq.base;
    else this.resetProducerId(seq.producerId);
  }

  private encode(records: RecordInput[], sequence: Sequence | undefined): Uint8Array {
    const chunks: RecordInput[][] = [];
    let chunk: RecordInput[] = [];
    let size = BATCH_SIZE_OVERHEAD;
    for (const r of records) {
      const bytes = estimateRecordSize(r.key, r.value, r.headers);
      if (chunk.length > 0 && size + bytes > this.maxBatchBytes) {
        chunks.push(chunk);
        chunk = [];
        size = BATCH_SIZE_OVERHEAD;
      }
      chunk.push(r);
      size += bytes;
    }
    chunks.push(chunk);
    let baseSequence = sequence?.next ?? -1;
    const batches = chunks.map((c) => {
      const batch = encodeRecordBatch(c, {
        compression: this.compression,
        isTransactional: this.transaction !== undefined,
        ...(sequence
          ? { producerId: sequence.producerId, producerEpoch: sequence.producerEpoch, baseSequence }
          : {}),
      });
      if (sequence) baseSequence += c.length;
      return batch;
    });
    return batches.length === 1 ? batches[0]! : new Uint8Array(Buffer.concat(batches));
  }

  private async sequenceFor(id: string): Promise<Sequence> {
    const { producerId, producerEpoch } = await (this.producerId ??= this.initProducerId());
    let sequence = this.sequences.get(id);
    if (!sequence || sequence.producerId !== producerId) {
      sequence = { producerId, producerEpoch, next: 0 };
      this.sequences.set(id, sequence);
    }
    return sequence;
  }

  private initProducerId(): Promise<{ producerId: number; producerEpoch: number }> {
    const init = this.retry(() =>
      this.transport.json<{ producerId: number; producerEpoch: number }>({
        method: 'POST',
        path: '/v1/producers',
      }),
    );
    init.catch(() => {
      if (this.producerId === init) this.producerId = undefined;
    });
    return init;
  }

  /** Starts a fresh producer id, unless `failed` was already replaced. */
  private resetProducerId(failed: number): void {
    if (![...this.sequences.values()].some((s) => s.producerId === failed)) return;
    this.producerId = undefined;
    this.sequences.clear();
  }
}

const isSequenceError = (e: SluiceError): boolean =>
  e.code === 'OUT_OF_ORDER_SEQUENCE_NUMBER' || e.code === 'INVALID_PRODUCER_EPOCH';

const hasBinary = (m: Message): boolean =>
  m.key instanceof Uint8Array ||
  m.value instanceof Uint8Array ||
  headerList(m.headers).some((h) => h.value instanceof Uint8Array);

const headerList = (headers: Message['headers']): { key: string; value: Bytes | null }[] =>
  headers === undefined
    ? []
    : Array.isArray(headers)
      ? headers
      : Object.entries(headers).map(([key, value]) => ({ key, value }));

const toBytes = (b: Bytes | null | undefined): Uint8Array | null =>
  b === null || b === undefined ? null : typeof b === 'string' ? UTF8.encode(b) : b;

const base64 = (b: Uint8Array): string =>
  Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
