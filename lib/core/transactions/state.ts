/**
 * A transactional.id's coordinator state: one item, moved from state to state by conditional writes
 * (Kafka's TransactionMetadata and its transitions, KIP-98), each conditioned on the version read.
 */
import type { AttributeValue, Item } from '../../ports/metadata-store.js';
import { keys } from '../keys.js';
import type { TopicPartition } from './markers.js';

export type TransactionState =
  'Empty' | 'Ongoing' | 'PrepareCommit' | 'PrepareAbort' | 'CompleteCommit' | 'CompleteAbort';

export type TransactionVersion = 1 | 2;

/** Who ended the transaction: the producer (EndTxn), a new instance (InitProducerId) or the timeout. */
export type EndedBy = 'client' | 'fence' | 'timeout';

export interface PendingOffset {
  topic: string;
  partition: number;
  offset: number;
  metadata: string;
}

export interface TransactionMetadata {
  transactionalId: string;
  producerId: number;
  /** The current epoch; while a transaction ends, already the bumped one its markers carry (KIP-890). */
  producerEpoch: number;
  /** The epoch the transaction ran under, while it is being ended or once it has ended. */
  lastProducerEpoch: number;
  /**
   * The number of the open (or last) transaction of this producer id, counting from 1 (0 before the
   * first). Markers of a transaction that ends without an epoch bump carry it.
   */
  transactionNumber: number;
  /**
   * How the open or last transaction ends (KIP-890's transaction.version): 2 bumps the epoch at every
   * end; 1, for clients whose EndTxn (v0-v4) cannot learn a new epoch, keeps the epoch and its sequences.
   * Absent while no end has been asked for: the producer chooses it with EndTxn.
   */
  transactionVersion?: TransactionVersion;
  state: TransactionState;
  endedBy?: EndedBy;
  partitions: TopicPartition[];
  /** Consumer groups added with AddOffsetsToTxn, and the offsets TxnOffsetCommit put in each. */
  groups: string[];
  pendingOffsets: Record<string, PendingOffset[]>;
  transactionTimeoutMs: number;
  /** When the open transaction began (-1 when none is open). */
  transactionStartTimeMs: number;
  lastUpdateTimeMs: number;
  version: number;
}

export const TRANSACTION_SHARDS = 16;

/** FNV-1a: spreads ids over the shard keys so no one DynamoDB partition carries every coordinator. */
export const shardOf = (transactionalId: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < transactionalId.length; i++) {
    h ^= transactionalId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % TRANSACTION_SHARDS;
};

export const transactionKey = (transactionalId: string) =>
  keys.transaction(transactionalId, shardOf(transactionalId));

export const encodeTransaction = (m: TransactionMetadata): Item => ({
  ...transactionKey(m.transactionalId),
  ...(m as unknown as Record<string, AttributeValue>),
});

export const decodeTransaction = (item: Item): TransactionMetadata => {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as unknown as TransactionMetadata;
};

export const isPrepare = (s: TransactionState): boolean => s === 'PrepareCommit' || s === 'PrepareAbort';
export const isComplete = (s: TransactionState): boolean =>
  s === 'Empty' || s === 'CompleteCommit' || s === 'CompleteAbort';
