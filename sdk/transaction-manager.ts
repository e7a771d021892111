/**
 * The transactional producer's state machine (Kafka's TransactionManager, KIP-98/447/890): the
 * coordinator calls of a `transactional.id` and the client states that decide which call may come next.
 *
 * Errors as Kafka's producer sorts them: fatal ones (the producer was fenced by a newer instance, its
 * id mapping or authorization is gone) leave the producer unusable, so every later call throws the same
 * error and the application closes it; abortable ones (a send or an offset commit failed) leave the
 * transaction only abortable, and `commitTransaction` throws the error until `abortTransaction` is
 * called. A commit or abort whose answer did not come back can be called again: the coordinator answers
 * a repeated EndTxn as the first (the SIGKILLed instance's successor aborts what it left open).
 */
import { SluiceError } from './errors.js';
import type { Retrier } from './retry.js';
import type { Transport } from './transport.js';
import { path } from './transport.js';
import type {
  AddOffsetsToTxnRequest,
  AddPartitionsToTxnRequest,
  EndTxnRequest,
  InitTransactionalProducerIdRequest,
  ProducerIdentity,
  TxnOffsetCommitRequest,
} from './types.js';

export type TransactionState =
  | 'UNINITIALIZED'
  | 'READY'
  | 'IN_TRANSACTION'
  | 'COMMITTING_TRANSACTION'
  | 'ABORTING_TRANSACTION'
  | 'ABORTABLE_ERROR'
  | 'FATAL_ERROR';

/** Kafka's ConsumerGroupMetadata (KIP-447): what `sendOffsetsToTransaction` fences the commit with. */
export interface ConsumerGroupMetadata {
  groupId: string;
  /** The member's epoch (Kafka's generationId); -1 outside the group protocol. */
  generationId: number;
  /** Null for a consumer outside the group protocol. */
  memberId: string | null;
}

export interface TransactionOffset {
  topic: string;
  partition: number;
  /** The next offset to read (the last processed + 1), as Kafka commits. */
  offset: number;
  metadata?: string;
}

/** Errors after which the producer can do nothing more (Kafka's fatal errors). */
const FATAL_CODES = new Set([
  'PRODUCER_FENCED',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'INVALID_TXN_STATE',
  'INVALID_TRANSACTION_TIMEOUT',
]);

/** After the calls of this turn of the event loop (setImmediate where there is one, as in Node). */
const nextTurn = (f: () => void): void => {
  if (typeof setImmediate === 'function') setImmediate(f);
  else setTimeout(f, 0);
};

export const isFatalTransactionError = (error: unknown): boolean =>
  error instanceof SluiceError && FATAL_CODES.has(error.code);

const stateError = (message: string): SluiceError =>
  new SluiceError('INVALID_TXN_STATE', message, { retriable: false });

/** What the manager needs of its producer. */
export interface TransactionalProducer {
  /** The producer id and epoch its batches carry from now on (sequences restart at 0). */
  useIdentity(identity: ProducerIdentity): void;
  /** Settles once every send of the transaction has; resolves to the first failure, if any. */
  flush(): Promise<unknown>;
}

export class TransactionManager {
  private state: TransactionState = 'UNINITIALIZED';
  private identity: ProducerIdentity | undefined;
  /** Why the producer is fatal, or the transaction only abortable. */
  private failure: SluiceError | undefined;
  /** AddPartitionsToTxn of the open transaction, one per partition, shared by concurrent sends. */
  private readonly added = new Map<string, Promise<void>>();
  private readonly groups = new Set<string>();
  /** Whether the coordinator may have opened the transaction (a call was made, answered or not). */
  private opened = false;
  /** The EndTxn under way (a commit or abort called again while it is waits for it). */
  private ending: Promise<void> | undefined;

  constructor(
    private readonly transport: Transport,
    private readonly retry: Retrier,
    private readonly producer: TransactionalProducer,
    readonly transactionalId: string,
    private readonly transactionTimeoutMs: number,
  ) {}

  get currentState(): TransactionState {
    return this.state;
  }

  get producerIdentity(): ProducerIdentity | undefined {
    return this.identity;
  }

  /**
   * InitProducerId: a new epoch for this transactional.id, which fences every earlier instance and
   * aborts the transaction one of them left open.
   */
  async initTransactions(): Promise<void> {
    this.throwIfFatal();
    if (this.state !== 'UNINITIALIZED')
      throw stateError(`initTransactions was already called (state ${this.state})`);
    const identity = await this.call(() =>
      this.transport.json<ProducerIdentity>({
        method: 'POST',
        path: path`/v1/transactions/${this.transactionalId}/producer`,
        json: {
          transactionTimeoutMs: this.transactionTimeoutMs,
        } satisfies InitTransactionalProducerIdRequest,
      }),
    );
    this.use(identity);
    this.state = 'READY';
  }

  beginTransaction(): void {
    this.throwIfFatal();
    if (this.state !== 'READY')
      throw stateError(
        this.state === 'UNINITIALIZED'
          ? 'call initTransactions before beginTransaction'
          : `a transaction is already open (state ${this.state})`,
      );
    this.added.clear();
    this.groups.clear();
    this.opened = false;
    this.state = 'IN_TRANSACTION';
  }

  /** The state a send needs: an open transaction that has not failed. */
  checkSendable(): void {
    this.throwIfFatal();
    if (this.state === 'ABORTABLE_ERROR') throw this.failure!;
    if (this.state !== 'IN_TRANSACTION')
      throw stateError(`a transactional producer sends only inside a transaction (state ${this.state})`);
  }

  /**
   * AddPartitionsToTxn before the transaction's first batch to the partition (KIP-890 checks it). The
   * partitions asked for in one turn of the event loop go in one request, as Kafka's producer batches
   * them: one conditional write of the coordinator's item instead of one per partition.
   */
  addPartition(topic: string, partition: number): Promise<void> {
    const id = `${topic}\u0000${partition}`;
    let adding = this.added.get(id);
    if (!adding) {
      this.opened = true;
      const pending = (this.pendingAdds ??= this.scheduleAdds());
      pending.partitions.push({ topic, partition });
      adding = pending.done.catch((error: unknown) => {
        this.added.delete(id);
        throw this.fail(error);
      });
      this.added.set(id, adding);
    }
    return adding;
  }

  private pendingAdds:
    { partitions: { topic: string; partition: number }[]; done: Promise<void> } | undefined;

  private scheduleAdds(): { partitions: { topic: string; partition: number }[]; done: Promise<void> } {
    const identity = this.identity!;
    const partitions: { topic: string; partition: number }[] = [];
    const done = new Promise<void>((resolve) => nextTurn(resolve)).then(() => {
      this.pendingAdds = undefined;
      const topics = new Map<string, number[]>();
      for (const p of partitions) topics.set(p.topic, [...(topics.get(p.topic) ?? []), p.partition]);
      return this.call(() =>
        this.transport.json<void>({
          method: 'POST',
          path: path`/v1/transactions/${this.transactionalId}/partitions`,
          json: {
            ...identity,
            topics: [...topics].map(([topic, list]) => ({ topic, partitions: list })),
          } satisfies AddPartitionsToTxnRequest,
        }),
      );
    });
    return { partitions, done };
  }

  /** A send of the transaction failed: the transaction can only be aborted now (or the producer is fatal). */
  sendFailed(error: unknown): void {
    this.fail(error);
  }

  /**
   * AddOffsetsToTxn and TxnOffsetCommit: the consumer's positions become its group's committed offsets
   * if and only if this transaction commits. The group metadata (Kafka's `consumer.groupMetadata()`)
   * fences a zombie consumer's commit; a bare group id commits as a consumer outside the group protocol.
   */
  async sendOffsetsToTransaction(
    offsets: readonly TransactionOffset[],
    group: ConsumerGroupMetadata | string,
  ): Promise<void> {
    this.checkSendable();
    const metadata: ConsumerGroupMetadata =
      typeof group === 'string' ? { groupId: group, generationId: -1, memberId: null } : group;
    if (typeof metadata.groupId !== 'string' || metadata.groupId.length === 0)
      throw new SluiceError('INVALID_REQUEST', 'sendOffsetsToTransaction needs a group id', {
        retriable: false,
      });
    if (offsets.length === 0) return;
    const identity = this.identity!;
    this.opened = true;
    try {
      if (!this.groups.has(metadata.groupId)) {
        await this.call(() =>
          this.transport.json<void>({
            method: 'POST',
            path: path`/v1/transactions/${this.transactionalId}/groups`,
            json: { ...identity, groupId: metadata.groupId } satisfies AddOffsetsToTxnRequest,
          }),
        );
        this.groups.add(metadata.groupId);
      }
      await this.call(() =>
        this.transport.json<void>({
          method: 'POST',
          path: path`/v1/transactions/${this.transactionalId}/offsets`,
          json: {
            ...identity,
            groupId: metadata.groupId,
            memberId: metadata.memberId,
            generationId: metadata.generationId,
            offsets: offsets.map((o) => ({
              topic: o.topic,
              partition: o.partition,
              offset: o.offset,
              metadata: o.metadata ?? '',
            })),
          } satisfies TxnOffsetCommitRequest,
        }),
      );
    } catch (error) {
      throw this.fail(error);
    }
  }

  /**
   * Waits for the transaction's sends, then EndTxn(commit). A send that failed makes the transaction
   * abortable and the commit throws its error; so does an earlier abortable error.
   */
  async commitTransaction(): Promise<void> {
    this.throwIfFatal();
    if (this.state === 'ABORTING_TRANSACTION')
      throw stateError('the transaction is being aborted; call abortTransaction');
    if (this.state === 'ABORTABLE_ERROR') throw this.failure!;
    if (this.state !== 'IN_TRANSACTION' && this.state !== 'COMMITTING_TRANSACTION')
      throw stateError(`no transaction to commit (state ${this.state})`);
    if (this.state === 'IN_TRANSACTION') {
      const failed = await this.producer.flush();
      if (failed !== undefined) {
        this.fail(failed);
        this.throwIfFatal();
        throw this.failure!;
      }
      this.state = 'COMMITTING_TRANSACTION';
    }
    await this.end(true);
  }

  /** Waits for the transaction's sends to settle (failures ignored), then EndTxn(abort). */
  async abortTransaction(): Promise<void> {
    this.throwIfFatal();
    if (this.state === 'COMMITTING_TRANSACTION')
      throw stateError('the transaction is being committed; call commitTransaction again');
    if (
      this.state !== 'IN_TRANSACTION' &&
      this.state !== 'ABORTABLE_ERROR' &&
      this.state !== 'ABORTING_TRANSACTION'
    )
      throw stateError(`no transaction to abort (state ${this.state})`);
    if (this.state !== 'ABORTING_TRANSACTION') {
      await this.producer.flush();
      this.state = 'ABORTING_TRANSACTION';
    }
    await this.end(false);
  }

  private end(committed: boolean): Promise<void> {
    this.ending ??= (async () => {
      try {
        // A transaction that never wrote or committed anything has nothing for the coordinator to end.
        if (!this.opened) {
          this.state = 'READY';
          return;
        }
        const identity = this.identity!;
        let next = identity;
        try {
          next = await this.retry(() =>
            this.transport.json<ProducerIdentity>({
              method: 'POST',
              path: path`/v1/transactions/${this.transactionalId}/end`,
              json: { ...identity, committed } satisfies EndTxnRequest,
            }),
          );
        } catch (error) {
          // An abort of a transaction the coordinator never opened (its first call was refused or
          // never arrived) has nothing to end: the epoch was not fenced, so it stays.
          const neverOpened =
            !committed && error instanceof SluiceError && error.code === 'INVALID_TXN_STATE';
          if (!neverOpened) throw error;
        }
        this.use(next);
        this.failure = undefined;
        this.state = 'READY';
      } catch (error) {
        // Fatal: the producer is done. Otherwise (no answer): the same call may be made again.
        if (isFatalTransactionError(error)) this.fail(error);
        throw error;
      } finally {
        this.ending = undefined;
      }
    })();
    return this.ending;
  }

  private use(identity: ProducerIdentity): void {
    if (!Number.isSafeInteger(identity?.producerId) || !Number.isSafeInteger(identity?.producerEpoch))
      throw new SluiceError('UNKNOWN_SERVER_ERROR', 'the coordinator answered no producer id and epoch', {
        retriable: false,
      });
    this.identity = { producerId: identity.producerId, producerEpoch: identity.producerEpoch };
    this.added.clear();
    this.groups.clear();
    this.opened = false;
    this.producer.useIdentity(this.identity);
  }

  /** Records a failure: fatal ones end the producer, others make the open transaction abortable. */
  private fail(error: unknown): unknown {
    if (isFatalTransactionError(error)) {
      this.state = 'FATAL_ERROR';
      this.failure = error as SluiceError;
    } else if (this.state === 'IN_TRANSACTION') {
      this.state = 'ABORTABLE_ERROR';
      this.failure =
        error instanceof SluiceError
          ? error
          : new SluiceError('UNKNOWN_SERVER_ERROR', String(error), { retriable: false, cause: error });
    }
    return error;
  }

  private throwIfFatal(): void {
    if (this.state === 'FATAL_ERROR') throw this.failure!;
  }

  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await this.retry(request);
    } catch (error) {
      if (isFatalTransactionError(error)) {
        this.state = 'FATAL_ERROR';
        this.failure = error as SluiceError;
      }
      throw error;
    }
  }
}
