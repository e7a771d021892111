/**
 * Producer ids and sequences (Kafka's ProducerStateManager, the part that runs before a commit):
 * InitProducerId, the check that an idempotent batch's id was issued, and that the batches of one
 * request come from one producer with contiguous sequences. The partition's own sequence check, against
 * what it committed, is the commit's (lib/core/log/commit.ts).
 */
import { SluiceError } from '../../../protocol/errors.js';
import { keys } from '../keys.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import type { ProducerBatchInfo } from './commit.js';

export class ProducerIds {
  /** Producer ids below this are known to be issued (the counter only grows, so it may lag). */
  private issuedBelow = 0;

  constructor(private readonly store: MetadataStore) {}

  /** InitProducerId: a new producer id with epoch 0. */
  async initProducerId(): Promise<{ producerId: number; producerEpoch: number }> {
    const item = await this.store.update(keys.producerIds, [{ set: 'next', add: 1, initial: 0 }], {
      returnValues: 'allNew',
    });
    return { producerId: (item!['next'] as number) - 1, producerEpoch: 0 };
  }

  /**
   * Idempotent batches must carry an id from InitProducerId: an invented id would add state to the
   * partition item that no producer owns. One consistent read when this instance meets a newer id.
   */
  async checkIssued(producerId: number): Promise<void> {
    if (producerId < this.issuedBelow) return;
    const item = await this.store.get(keys.producerIds, { consistent: true });
    this.issuedBelow = Math.max(this.issuedBelow, (item?.['next'] as number | undefined) ?? 0);
    if (producerId >= this.issuedBelow) {
      throw new SluiceError(
        'UNKNOWN_PRODUCER_ID',
        `producer id ${producerId} was never issued; get one from POST /v1/producers`,
      );
    }
  }
}

/** Batches of one request must come from one producer with contiguous sequences, as Kafka sends them. */
export const chainProducer = (
  previous: ProducerBatchInfo | undefined,
  header: { producerId: number; producerEpoch: number; baseSequence: number; lastOffsetDelta: number },
  index: number,
): ProducerBatchInfo | undefined => {
  const idempotent = header.producerId >= 0;
  if (index > 0 && idempotent !== (previous !== undefined)) {
    throw new SluiceError('INVALID_RECORD', 'batches of one request must all be idempotent or all not');
  }
  if (!idempotent) return undefined;
  if (header.baseSequence < 0 || header.producerEpoch < 0) {
    throw new SluiceError(
      'INVALID_RECORD',
      `batch ${index} has producerId ${header.producerId} but no sequence or epoch`,
    );
  }
  const lastSequence = header.baseSequence + header.lastOffsetDelta;
  if (!previous) {
    return {
      producerId: header.producerId,
      producerEpoch: header.producerEpoch,
      firstSequence: header.baseSequence,
      lastSequence,
    };
  }
  if (header.producerId !== previous.producerId || header.producerEpoch !== previous.producerEpoch) {
    throw new SluiceError(
      'INVALID_RECORD',
      'batches of one request must come from one producer id and epoch',
    );
  }
  if (header.baseSequence !== previous.lastSequence + 1) {
    throw new SluiceError(
      'OUT_OF_ORDER_SEQUENCE_NUMBER',
      `batch ${index} starts at sequence ${header.baseSequence}; expected ${previous.lastSequence + 1}`,
    );
  }
  return { ...previous, lastSequence };
};
