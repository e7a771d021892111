/**
 * The transaction coordinator (Kafka's TransactionCoordinator, KIP-98/447/890) with no process holding
 * state: each transactional.id's metadata is one item (state.ts, transaction-log.ts), and every transition is a conditional
 * write through the one compare-and-set retry helper. Ending a transaction is two-phase: the item moves
 * to PrepareCommit/PrepareAbort (the decision, durable), then markers go into every partition and the
 * offsets into their groups, then the item moves to CompleteCommit/CompleteAbort. A coordinator that
 * crashes in between leaves the decision behind; whoever touches the id next (the producer's retry, a
 * new instance, maintenance) rolls it forward, and markers are idempotent (markers.ts).
 *
 * Epochs: InitProducerId bumps the epoch, fencing the previous instance. Ending a transaction bumps it
 * too (KIP-890 part 2): the markers carry the new epoch, so a late batch of the ended transaction is
 * refused by the partition, and EndTxn answers the new epoch for the next transaction.
 */
import {
  MAX_GROUPS_PER_TRANSACTION,
  MAX_OFFSETS_PER_TRANSACTION,
  MAX_PARTITIONS_PER_TRANSACTION,
} from '../../../protocol/transaction-limits.js';
import { SluiceError } from '../../../protocol/errors.js';
import { retryOnConflict } from '../groups/cas-retry.js';
import type { LogContext } from '../log/context.js';
import { checkPartition } from '../log/context.js';
import type { TopicPartition } from './markers.js';
import { writeMarkers } from './markers.js';
import type { EndedBy, PendingOffset, TransactionMetadata, TransactionVersion } from './state.js';
import { isPrepare } from './state.js';
import { TransactionLog } from './transaction-log.js';
import { verifyPartition } from './verify.js';

/** What the coordinator needs of consumer groups (lib/core/groups). */
export interface TransactionGroups {
  checkTransactionalMember(groupId: string, memberId: string | null, memberEpoch: number): Promise<void>;
  writeTransactionalOffsets(groupId: string, offsets: readonly PendingOffset[]): Promise<void>;
}

export interface TransactionCoordinatorOptions {
  /** Kafka's transaction.max.timeout.ms (default 15 minutes). */
  maxTimeoutMs?: number;
}

export interface ProducerIdAndEpoch {
  producerId: number;
  producerEpoch: number;
}

export interface TxnOffsetCommitRequest {
  groupId: string;
  /** The consumer's group metadata (KIP-447); null member id: a consumer outside the group protocol. */
  memberId: string | null;
  generationId: number;
  offsets: readonly PendingOffset[];
}

export const DEFAULT_MAX_TIMEOUT_MS = 15 * 60_000;
const MAX_EPOCH = 32_767;
const MAX_ID_LENGTH = 249;

export class TransactionCoordinator {
  private readonly maxTimeoutMs: number;
  private readonly log: TransactionLog;

  constructor(
    private readonly ctx: LogContext,
    private readonly groups: TransactionGroups,
    options: TransactionCoordinatorOptions = {},
  ) {
    this.maxTimeoutMs = options.maxTimeoutMs ?? DEFAULT_MAX_TIMEOUT_MS;
    this.log = new TransactionLog(ctx.store);
  }

  /** InitProducerId with a transactional.id: a new epoch, the previous instance fenced, its transaction aborted. */
  async initProducerId(transactionalId: string, transactionTimeoutMs: number): Promise<ProducerIdAndEpoch> {
    validateId(transactionalId);
    if (
      !Number.isInteger(transactionTimeoutMs) ||
      transactionTimeoutMs < 1 ||
      transactionTimeoutMs > this.maxTimeoutMs
    ) {
      throw new SluiceError(
        'INVALID_TRANSACTION_TIMEOUT',
        `transaction.timeout.ms must be an integer from 1 to transaction.max.timeout.ms=${this.maxTimeoutMs}, not ${transactionTimeoutMs}`,
      );
    }
    return this.retry('InitProducerId', async () => {
      const now = this.ctx.clock.now();
      const current = await this.log.read(transactionalId);
      if (!current) {
        const producerId = await this.log.allocateProducerId(transactionalId);
        const fresh: TransactionMetadata = {
          transactionalId,
          producerId,
          producerEpoch: 0,
          lastProducerEpoch: -1,
          transactionNumber: 0,
          state: 'Empty',
          partitions: [],
          groups: [],
          pendingOffsets: {},
          transactionTimeoutMs,
          transactionStartTimeMs: -1,
          lastUpdateTimeMs: now,
          version: 0,
        };
        await this.log.save(undefined, fresh);
        return { producerId, producerEpoch: 0 };
      }
      let meta = current;
      if (isPrepare(meta.state)) meta = await this.complete(meta);
      if (meta.state === 'Ongoing')
        meta = await this.complete(await this.prepare(meta, 'PrepareAbort', 'fence'));
      // Complete or Empty: a new epoch for the new instance (a new id once the epochs run out).
      const exhausted = meta.producerEpoch + 1 >= MAX_EPOCH;
      const next: TransactionMetadata = {
        ...meta,
        producerId: exhausted ? await this.log.allocateProducerId(transactionalId) : meta.producerId,
        producerEpoch: exhausted ? 0 : meta.producerEpoch + 1,
        lastProducerEpoch: meta.producerEpoch,
        state: 'Empty',
        partitions: [],
        groups: [],
        pendingOffsets: {},
        transactionTimeoutMs,
        transactionStartTimeMs: -1,
        lastUpdateTimeMs: now,
      };
      delete next.endedBy;
      await this.log.save(meta, next);
      return { producerId: next.producerId, producerEpoch: next.producerEpoch };
    });
  }

  /** AddPartitionsToTxn: the partitions the transaction writes to (begins the transaction if none is open). */
  async addPartitions(
    transactionalId: string,
    producer: ProducerIdAndEpoch,
    partitions: readonly TopicPartition[],
  ): Promise<void> {
    for (const tp of partitions) checkPartition(await this.ctx.catalog.get(tp.topic), tp.partition);
    await this.retry('AddPartitionsToTxn', async () => {
      const meta = await this.openable(transactionalId, producer);
      const merged = [...meta.partitions];
      for (const tp of partitions)
        if (!merged.some((p) => p.topic === tp.topic && p.partition === tp.partition))
          merged.push({ topic: tp.topic, partition: tp.partition });
      if (merged.length > MAX_PARTITIONS_PER_TRANSACTION)
        throw new SluiceError(
          'INVALID_REQUEST',
          `a transaction may span at most ${MAX_PARTITIONS_PER_TRANSACTION} partitions`,
        );
      if (merged.length === meta.partitions.length && meta.state === 'Ongoing') return;
      await this.log.save(meta, { ...this.begin(meta), partitions: merged });
    });
  }

  /** AddOffsetsToTxn: the consumer group whose offsets the transaction will commit. */
  async addOffsets(transactionalId: string, producer: ProducerIdAndEpoch, groupId: string): Promise<void> {
    if (typeof groupId !== 'string' || groupId.length === 0)
      throw new SluiceError('INVALID_REQUEST', 'groupId must be a non-empty string');
    await this.retry('AddOffsetsToTxn', async () => {
      const meta = await this.openable(transactionalId, producer);
      if (meta.groups.includes(groupId) && meta.state === 'Ongoing') return;
      const groups = meta.groups.includes(groupId) ? meta.groups : [...meta.groups, groupId];
      if (groups.length > MAX_GROUPS_PER_TRANSACTION)
        throw new SluiceError(
          'INVALID_REQUEST',
          `a transaction may commit offsets of at most ${MAX_GROUPS_PER_TRANSACTION} groups`,
        );
      await this.log.save(meta, { ...this.begin(meta), groups });
    });
  }

  /** TxnOffsetCommit: offsets that become the group's committed offsets only if the transaction commits. */
  async txnOffsetCommit(
    transactionalId: string,
    producer: ProducerIdAndEpoch,
    request: TxnOffsetCommitRequest,
  ): Promise<void> {
    for (const o of request.offsets) {
      checkPartition(await this.ctx.catalog.get(o.topic), o.partition);
      if (!Number.isSafeInteger(o.offset) || o.offset < 0)
        throw new SluiceError(
          'INVALID_REQUEST',
          `offset ${o.offset} for ${o.topic}-${o.partition} is not an offset`,
        );
    }
    await this.groups.checkTransactionalMember(request.groupId, request.memberId, request.generationId);
    await this.retry('TxnOffsetCommit', async () => {
      const meta = await this.current(transactionalId, producer);
      if (meta.state !== 'Ongoing' || !meta.groups.includes(request.groupId)) {
        throw new SluiceError(
          'INVALID_TXN_STATE',
          `group ${request.groupId} is not in ${transactionalId}'s transaction; call AddOffsetsToTxn first`,
        );
      }
      const pending = [...(meta.pendingOffsets[request.groupId] ?? [])];
      for (const o of request.offsets) {
        const i = pending.findIndex((p) => p.topic === o.topic && p.partition === o.partition);
        const entry = { topic: o.topic, partition: o.partition, offset: o.offset, metadata: o.metadata };
        if (i >= 0) pending[i] = entry;
        else pending.push(entry);
      }
      const total = Object.values({ ...meta.pendingOffsets, [request.groupId]: pending }).reduce(
        (n, l) => n + l.length,
        0,
      );
      if (total > MAX_OFFSETS_PER_TRANSACTION)
        throw new SluiceError(
          'INVALID_REQUEST',
          `a transaction may commit at most ${MAX_OFFSETS_PER_TRANSACTION} offsets`,
        );
      await this.log.save(meta, {
        ...meta,
        pendingOffsets: { ...meta.pendingOffsets, [request.groupId]: pending },
        lastUpdateTimeMs: this.ctx.clock.now(),
      });
    });
  }

  /**
   * EndTxn: commit or abort; answers the epoch for the next transaction. Under transaction version 1
   * (clients whose EndTxn is v0-v4 and cannot learn a new epoch) the epoch stays, as Kafka's coordinator
   * keeps it for them; its markers are told apart by the transaction's number instead.
   */
  async endTxn(
    transactionalId: string,
    producer: ProducerIdAndEpoch,
    commit: boolean,
    transactionVersion: TransactionVersion = 2,
  ): Promise<ProducerIdAndEpoch> {
    const wanted = commit ? 'Commit' : 'Abort';
    return this.retry('EndTxn', async () => {
      const meta = await this.log.read(transactionalId);
      if (!meta || meta.producerId !== producer.producerId) throw mappingError(transactionalId, producer);
      const endedAtEpoch =
        meta.transactionVersion === 1
          ? meta.producerEpoch === producer.producerEpoch
          : meta.producerEpoch === producer.producerEpoch + 1;
      // A retry of an EndTxn whose answer was lost: the transaction is already being or was ended.
      if (
        meta.lastProducerEpoch === producer.producerEpoch &&
        endedAtEpoch &&
        meta.endedBy === 'client' &&
        (isPrepare(meta.state) || meta.state === 'CompleteCommit' || meta.state === 'CompleteAbort')
      ) {
        if (!meta.state.endsWith(wanted))
          throw new SluiceError(
            'INVALID_TXN_STATE',
            `${transactionalId}'s transaction was already ${meta.state}`,
          );
        const done = isPrepare(meta.state) ? await this.complete(meta) : meta;
        return { producerId: done.producerId, producerEpoch: done.producerEpoch };
      }
      checkEpoch(meta, producer);
      if (isPrepare(meta.state)) {
        await this.complete(meta);
        throw new SluiceError(
          'CONCURRENT_TRANSACTIONS',
          `${transactionalId}'s previous transaction was still ending; retry`,
        );
      }
      if (meta.state !== 'Ongoing')
        throw new SluiceError(
          'INVALID_TXN_STATE',
          `${transactionalId} has no open transaction to ${wanted.toLowerCase()}`,
        );
      if (this.expired(meta)) {
        await this.complete(await this.prepare(meta, 'PrepareAbort', 'timeout'));
        throw fenced(transactionalId, 'its transaction ran past transaction.timeout.ms and was aborted');
      }
      const done = await this.complete(
        await this.prepare(meta, commit ? 'PrepareCommit' : 'PrepareAbort', 'client', transactionVersion),
      );
      return { producerId: done.producerId, producerEpoch: done.producerEpoch };
    });
  }

  /**
   * KIP-890's check before a producer's first transactional batch in a partition: the partition is in
   * its open transaction at this epoch (verify.ts). Answers the transaction's number (the batch's guard).
   */
  verifyPartition(
    producerId: number,
    producerEpoch: number,
    topic: string,
    partition: number,
  ): Promise<number> {
    return verifyPartition(this.log, producerId, producerEpoch, topic, partition);
  }

  /**
   * The maintenance sweep: aborts transactions open past their timeout (bumping the epoch, so the
   * producer is fenced) and rolls forward those whose coordinator stopped half way.
   */
  async expire(): Promise<{ aborted: number; completed: number }> {
    const result = { aborted: 0, completed: 0 };
    for (const meta of await this.list()) {
      await this.retry('transaction expiry', async () => {
        const now = await this.log.read(meta.transactionalId);
        if (!now) return;
        if (isPrepare(now.state)) {
          await this.complete(now);
          result.completed++;
        } else if (now.state === 'Ongoing' && this.expired(now)) {
          await this.complete(await this.prepare(now, 'PrepareAbort', 'timeout'));
          result.aborted++;
        }
      }).catch(() => {
        // One id that keeps failing must not stop the sweep; the next run tries again.
      });
    }
    return result;
  }

  /** kafka-transactions.sh list. */
  list(): Promise<TransactionMetadata[]> {
    return this.log.list();
  }

  /** kafka-transactions.sh describe. */
  async describe(transactionalId: string): Promise<TransactionMetadata> {
    validateId(transactionalId);
    const meta = await this.log.read(transactionalId);
    if (!meta) throw new SluiceError('NOT_FOUND', `transactional.id ${transactionalId} does not exist`);
    return meta;
  }

  private expired(meta: TransactionMetadata): boolean {
    return (
      meta.state === 'Ongoing' &&
      this.ctx.clock.now() > meta.transactionStartTimeMs + meta.transactionTimeoutMs
    );
  }

  /** The item for a call of the producer's: the id maps to its producer id and the epoch is current. */
  private async current(transactionalId: string, producer: ProducerIdAndEpoch): Promise<TransactionMetadata> {
    const meta = await this.log.read(transactionalId);
    if (!meta || meta.producerId !== producer.producerId) throw mappingError(transactionalId, producer);
    checkEpoch(meta, producer);
    return meta;
  }

  /** As `current`, for calls that open a transaction: one still ending is finished first. */
  private async openable(
    transactionalId: string,
    producer: ProducerIdAndEpoch,
  ): Promise<TransactionMetadata> {
    const meta = await this.current(transactionalId, producer);
    if (isPrepare(meta.state)) {
      await this.complete(meta);
      throw new SluiceError(
        'CONCURRENT_TRANSACTIONS',
        `${transactionalId}'s previous transaction was still ending; retry`,
      );
    }
    if (this.expired(meta)) {
      await this.complete(await this.prepare(meta, 'PrepareAbort', 'timeout'));
      throw fenced(transactionalId, 'its transaction ran past transaction.timeout.ms and was aborted');
    }
    return meta;
  }

  private begin(meta: TransactionMetadata): TransactionMetadata {
    const now = this.ctx.clock.now();
    if (meta.state === 'Ongoing') return { ...meta, lastUpdateTimeMs: now };
    const next: TransactionMetadata = {
      ...meta,
      state: 'Ongoing',
      transactionNumber: meta.transactionNumber + 1,
      partitions: [],
      groups: [],
      pendingOffsets: {},
      transactionStartTimeMs: now,
      lastUpdateTimeMs: now,
    };
    delete next.endedBy;
    delete next.transactionVersion;
    return next;
  }

  /** The decision: durable before any marker is written. */
  private async prepare(
    meta: TransactionMetadata,
    state: 'PrepareCommit' | 'PrepareAbort',
    endedBy: EndedBy,
    transactionVersion: TransactionVersion = 2,
  ): Promise<TransactionMetadata> {
    // Fencing and timeouts always bump the epoch: the producer they end must not write again.
    const version: TransactionVersion = endedBy === 'client' ? transactionVersion : 2;
    const next: TransactionMetadata = {
      ...meta,
      state,
      endedBy,
      transactionVersion: version,
      lastProducerEpoch: meta.producerEpoch,
      producerEpoch: version === 1 ? meta.producerEpoch : meta.producerEpoch + 1,
      pendingOffsets: state === 'PrepareCommit' ? meta.pendingOffsets : {},
      lastUpdateTimeMs: this.ctx.clock.now(),
    };
    await this.log.save(meta, next);
    return { ...next, version: meta.version + 1 };
  }

  /** Markers, then offsets, then Complete*: safe to run again, by anyone, at any point. */
  private async complete(meta: TransactionMetadata): Promise<TransactionMetadata> {
    const commit = meta.state === 'PrepareCommit';
    await writeMarkers(this.ctx, meta.partitions, {
      type: commit ? 'COMMIT' : 'ABORT',
      producerId: meta.producerId,
      producerEpoch: meta.producerEpoch,
      ...(meta.transactionVersion === 1 ? { transactionNumber: meta.transactionNumber } : {}),
    });
    if (commit) {
      for (const [groupId, offsets] of Object.entries(meta.pendingOffsets))
        await this.groups.writeTransactionalOffsets(groupId, offsets);
    }
    const next: TransactionMetadata = {
      ...meta,
      state: commit ? 'CompleteCommit' : 'CompleteAbort',
      partitions: [],
      groups: [],
      pendingOffsets: {},
      transactionStartTimeMs: -1,
      lastUpdateTimeMs: this.ctx.clock.now(),
    };
    await this.log.save(meta, next);
    return { ...next, version: meta.version + 1 };
  }

  private retry<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    return retryOnConflict(what, { clock: this.ctx.clock, random: this.ctx.random }, attempt);
  }
}

const validateId = (transactionalId: string): void => {
  if (
    typeof transactionalId !== 'string' ||
    transactionalId.length === 0 ||
    transactionalId.length > MAX_ID_LENGTH ||
    [...transactionalId].some((c) => c.charCodeAt(0) < 0x20)
  ) {
    throw new SluiceError(
      'INVALID_REQUEST',
      `transactional.id must be 1 to ${MAX_ID_LENGTH} characters without control characters`,
    );
  }
};

const checkEpoch = (meta: TransactionMetadata, producer: ProducerIdAndEpoch): void => {
  if (producer.producerEpoch < meta.producerEpoch)
    throw fenced(
      meta.transactionalId,
      `epoch ${producer.producerEpoch} is fenced by epoch ${meta.producerEpoch}`,
    );
  if (producer.producerEpoch > meta.producerEpoch) {
    throw new SluiceError(
      'INVALID_PRODUCER_EPOCH',
      `epoch ${producer.producerEpoch} is ahead of ${meta.transactionalId}'s epoch ${meta.producerEpoch}`,
    );
  }
};

const fenced = (transactionalId: string, why: string): SluiceError =>
  new SluiceError('PRODUCER_FENCED', `the producer of ${transactionalId} is fenced: ${why}`);

const mappingError = (transactionalId: string, producer: ProducerIdAndEpoch): SluiceError =>
  new SluiceError(
    'INVALID_PRODUCER_ID_MAPPING',
    `producer id ${producer.producerId} is not ${transactionalId}'s; call InitProducerId`,
  );
