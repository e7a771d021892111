/**
 * InitProducerId for the idempotent producer: Sluice issues the producer id and epoch (POST
 * /v1/producers), and its produce route checks each batch's sequence against them exactly as a broker
 * does. A producer that asks again after an error (KIP-360, v3+) gets a fresh id, which Kafka allows.
 * Transactional ids are not served here yet (the transaction coordinator is issue 27).
 */
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { InitProducerId } from '../../protocol/kafka/messages/init-producer-id.js';
import type { ApiHandler } from '../api.js';

interface Request {
  transactionalId: string | null;
}

export const initProducerId: ApiHandler = {
  schema: InitProducerId,
  minVersion: 0,
  maxVersion: 5,
  async handle(request, ctx) {
    const { transactionalId } = request as unknown as Request;
    if (transactionalId !== null)
      return {
        throttleTimeMs: 0,
        errorCode: ERROR.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        producerId: -1,
        producerEpoch: -1,
      };
    const { producerId, producerEpoch } = await ctx.gateway.sluice.initProducerId();
    return { throttleTimeMs: 0, errorCode: ERROR.NONE, producerId, producerEpoch };
  },
};
