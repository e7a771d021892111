/**
 * InitProducerId. Without a transactional.id, for the idempotent producer: Sluice issues the producer
 * id and epoch (POST /v1/producers), and its produce route checks each batch's sequence against them
 * exactly as a broker does; a producer that asks again after an error (KIP-360, v3+) gets a fresh id,
 * which Kafka allows. With one, the transaction coordinator (POST /v1/transactions/{id}/producer) bumps
 * the id's epoch, fencing the previous instance and aborting what it left open.
 */
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { InitProducerId } from '../../protocol/kafka/messages/init-producer-id.js';
import type { ApiHandler } from '../api.js';
import { isTransactionalId, transactionErrorCode } from './transactions.js';

interface Request {
  transactionalId: string | null;
  transactionTimeoutMs: number;
}

export const initProducerId: ApiHandler = {
  schema: InitProducerId,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, ctx) {
    const { transactionalId, transactionTimeoutMs } = request as unknown as Request;
    const refused = (errorCode: number) => ({
      throttleTimeMs: 0,
      errorCode,
      producerId: -1,
      producerEpoch: -1,
    });
    if (transactionalId === null) {
      const { producerId, producerEpoch } = await ctx.gateway.sluice.initProducerId();
      return { throttleTimeMs: 0, errorCode: ERROR.NONE, producerId, producerEpoch };
    }
    if (!isTransactionalId(transactionalId)) return refused(ERROR.INVALID_REQUEST);
    if (transactionTimeoutMs < 1) return refused(ERROR.INVALID_TRANSACTION_TIMEOUT);
    try {
      const { producerId, producerEpoch } = await ctx.connection.inOrder(`txn\u0000${transactionalId}`, () =>
        ctx.gateway.sluice.initTransactionalProducerId(transactionalId, transactionTimeoutMs),
      );
      return { throttleTimeMs: 0, errorCode: ERROR.NONE, producerId, producerEpoch };
    } catch (error) {
      return refused(transactionErrorCode(error, 'InitProducerId', ctx.version));
    }
  },
};
