/**
 * Produce: each partition's RecordBatch bytes go, untouched, to Sluice's binary produce route, which
 * validates them (CRC, structure, every codec), applies the idempotent producer's sequence checks and
 * assigns offsets exactly as for the SDK. One connection's batches to a partition reach Sluice in the
 * order they were sent (Kafka handles a connection's requests in order); different partitions go in
 * parallel. acks=0 gets no answer, acks=1 waits for the leader store, acks=-1 for every ISR store.
 */
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { Produce } from '../../protocol/kafka/messages/produce.js';
import type { ApiHandler } from '../api.js';
import { errorCodeOf, errorMessageOf } from '../api.js';

interface ProduceRequest {
  transactionalId: string | null;
  acks: number;
  timeoutMs: number;
  topicData: { name: string; partitionData: { index: number; records: Uint8Array | null }[] }[];
}

const partitionError = (index: number, errorCode: number, errorMessage: string | null = null): Message => ({
  index,
  errorCode,
  baseOffset: -1,
  logAppendTimeMs: -1,
  logStartOffset: -1,
  recordErrors: [],
  errorMessage,
});

export const produce: ApiHandler = {
  schema: Produce,
  // Kafka 4 serves v3+ but advertises 0 so that librdkafka keeps its compression (KIP-896 note);
  // v0-v2 (message formats 0 and 1) are answered with UNSUPPORTED_VERSION.
  minVersion: 0,
  maxVersion: 11,
  noResponse: (request) => (request as unknown as ProduceRequest).acks === 0,
  errorResponse(request, errorCode) {
    const { topicData } = request as unknown as ProduceRequest;
    return {
      responses: topicData.map((t) => ({
        name: t.name,
        partitionResponses: t.partitionData.map((p) => partitionError(p.index, errorCode)),
      })),
      throttleTimeMs: 0,
    };
  },
  async handle(request, ctx) {
    const body = request as unknown as ProduceRequest;
    if (ctx.version < 3) return produce.errorResponse!(request, ERROR.UNSUPPORTED_VERSION, ctx.version);
    if (body.acks !== 0 && body.acks !== 1 && body.acks !== -1)
      return produce.errorResponse!(request, ERROR.INVALID_REQUIRED_ACKS, ctx.version);
    const acks = body.acks === 1 ? '1' : 'all';
    const responses = await Promise.all(
      body.topicData.map(async (t) => ({
        name: t.name,
        partitionResponses: await Promise.all(
          t.partitionData.map(async (p): Promise<Message> => {
            if (p.records === null || p.records.length === 0)
              return partitionError(p.index, ERROR.CORRUPT_MESSAGE, 'no record batches');
            const records = p.records;
            try {
              const result = await ctx.connection.inOrder(`produce\0${t.name}\0${p.index}`, () =>
                ctx.gateway.sluice.produce(t.name, p.index, records, acks, ctx.connection.closed),
              );
              return {
                index: p.index,
                errorCode: ERROR.NONE,
                baseOffset: result.baseOffset,
                logAppendTimeMs: result.logAppendTime,
                logStartOffset: result.logStartOffset,
                recordErrors: [],
                errorMessage: null,
              };
            } catch (error) {
              return partitionError(p.index, errorCodeOf(error), errorMessageOf(error));
            }
          }),
        ),
      })),
    );
    return { responses, throttleTimeMs: 0 };
  },
};
