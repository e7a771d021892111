/**
 * KIP-890's partition verification on its own: before a producer's first transactional batch in a
 * partition, the producer's transaction must be open at this epoch and hold the partition. It reads
 * the transaction log (transaction-log.ts) and changes nothing, so the produce path checks its batches
 * with this module alone (lib/services.ts createProducer), without the coordinator's transitions,
 * markers and consumer groups; the coordinator (coordinator.ts) answers the same check through it.
 */
import { SluiceError } from '../../../protocol/errors.js';
import type { TransactionVerifier } from '../log/append-commit.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import { TransactionLog } from './transaction-log.js';

/**
 * The check: answers the open transaction's number (the batch's guard), or throws the error the
 * producer gets (INVALID_PRODUCER_EPOCH when fenced or ahead, INVALID_TXN_STATE when the partition is
 * not in an open transaction).
 */
export const verifyPartition = async (
  log: TransactionLog,
  producerId: number,
  producerEpoch: number,
  topic: string,
  partition: number,
): Promise<number> => {
  const transactionalId = await log.ownerOf(producerId);
  const meta = transactionalId === undefined ? undefined : await log.read(transactionalId);
  if (!meta) {
    throw new SluiceError(
      'INVALID_TXN_STATE',
      `producer id ${producerId} has no transactional.id; transactional batches need one`,
    );
  }
  if (meta.producerId !== producerId || producerEpoch < meta.producerEpoch) {
    throw new SluiceError(
      'INVALID_PRODUCER_EPOCH',
      `producer ${producerId} epoch ${producerEpoch} is fenced: ${meta.transactionalId} is at epoch ${meta.producerEpoch}`,
    );
  }
  if (producerEpoch > meta.producerEpoch) {
    throw new SluiceError(
      'INVALID_PRODUCER_EPOCH',
      `producer ${producerId} epoch ${producerEpoch} is ahead of the coordinator's ${meta.producerEpoch}`,
    );
  }
  const added = meta.partitions.some((p) => p.topic === topic && p.partition === partition);
  if (meta.state !== 'Ongoing' || !added) {
    throw new SluiceError(
      'INVALID_TXN_STATE',
      `${topic}-${partition} is not in ${meta.transactionalId}'s open transaction; call AddPartitionsToTxn first`,
    );
  }
  return meta.transactionNumber;
};

/** The producer's verifier (LogAppender's TransactionVerifier) over the transaction log in `store`. */
export const transactionVerifier = (store: MetadataStore): TransactionVerifier => {
  const log = new TransactionLog(store);
  return (producerId, producerEpoch, topic, partition) =>
    verifyPartition(log, producerId, producerEpoch, topic, partition);
};
