/**
 * OffsetForLeaderEpoch (KIP-320): clients ask where their last fetched epoch ended, to detect log
 * truncation after a leader change. Sluice keeps no per-epoch history, and its logs are truncated
 * only by an unclean election: the answer is the requested epoch (never above the current one) ending
 * at the high watermark, which tells a client that nothing it read was truncated.
 */
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { OffsetForLeaderEpoch } from '../../protocol/kafka/messages/offset-for-leader-epoch.js';
import type { ApiHandler } from '../api.js';
import { errorCodeOf } from '../api.js';

interface Request {
  topics: {
    topic: string;
    partitions: { partition: number; currentLeaderEpoch: number; leaderEpoch: number }[];
  }[];
}

export const offsetForLeaderEpoch: ApiHandler = {
  schema: OffsetForLeaderEpoch,
  minVersion: 0,
  maxVersion: 4,
  errorResponse(request, errorCode) {
    return {
      topics: (request as unknown as Request).topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode })),
      })),
    };
  },
  async handle(request, ctx) {
    const { topics } = request as unknown as Request;
    return {
      throttleTimeMs: 0,
      topics: await Promise.all(
        topics.map(async (t) => {
          let partitions: Map<number, { leaderEpoch: number; highWatermark: number }>;
          try {
            const d = await ctx.gateway.sluice.describeTopic(t.topic);
            partitions = new Map(d.partitions.map((p) => [p.partition, p]));
          } catch (error) {
            const errorCode = errorCodeOf(error);
            return {
              topic: t.topic,
              partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode })),
            };
          }
          return {
            topic: t.topic,
            partitions: t.partitions.map((p): Message => {
              const state = partitions.get(p.partition);
              if (!state) return { partition: p.partition, errorCode: ERROR.UNKNOWN_TOPIC_OR_PARTITION };
              if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch < state.leaderEpoch)
                return { partition: p.partition, errorCode: ERROR.FENCED_LEADER_EPOCH };
              if (p.currentLeaderEpoch > state.leaderEpoch)
                return { partition: p.partition, errorCode: ERROR.UNKNOWN_LEADER_EPOCH };
              return {
                partition: p.partition,
                errorCode: ERROR.NONE,
                leaderEpoch: Math.min(p.leaderEpoch, state.leaderEpoch),
                endOffset: state.highWatermark,
              };
            }),
          };
        }),
      ),
    };
  },
};
