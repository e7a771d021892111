/**
 * ListOffsets: −2 the log start offset, −1 the high watermark (the last stable offset under
 * isolation_level=1, read_committed), otherwise the first offset at or after a time.
 */
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { ListOffsets } from '../../protocol/kafka/messages/list-offsets.js';
import type { ApiHandler } from '../api.js';
import { errorCodeOf } from '../api.js';
import { READ_COMMITTED } from './fetch.js';

export const EARLIEST_TIMESTAMP = -2;
export const LATEST_TIMESTAMP = -1;

interface ListOffsetsRequest {
  isolationLevel: number;
  topics: {
    name: string;
    partitions: { partitionIndex: number; currentLeaderEpoch: number; timestamp: number }[];
  }[];
}

export const listOffsets: ApiHandler = {
  schema: ListOffsets,
  minVersion: 1,
  maxVersion: 7,
  errorResponse(request, errorCode) {
    const { topics } = request as unknown as ListOffsetsRequest;
    return {
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
      })),
    };
  },
  async handle(request, ctx) {
    const { topics, isolationLevel } = request as unknown as ListOffsetsRequest;
    const answer = await Promise.all(
      topics.map(async (t) => {
        // Leader epochs are per partition; one describe per topic answers them all.
        const described = ctx.gateway.sluice.describeTopic(t.name).then(
          (d) => new Map(d.partitions.map((p) => [p.partition, p.leaderEpoch])),
          () => new Map<number, number>(),
        );
        return {
          name: t.name,
          partitions: await Promise.all(
            t.partitions.map(async (p): Promise<Message> => {
              const at =
                p.timestamp === EARLIEST_TIMESTAMP
                  ? 'earliest'
                  : p.timestamp === LATEST_TIMESTAMP
                    ? 'latest'
                    : p.timestamp;
              if (typeof at === 'number' && at < 0)
                return { partitionIndex: p.partitionIndex, errorCode: ERROR.UNSUPPORTED_VERSION };
              try {
                const [found, epochs] = await Promise.all([
                  ctx.gateway.sluice.listOffsets(
                    t.name,
                    p.partitionIndex,
                    at,
                    isolationLevel === READ_COMMITTED ? 'read_committed' : 'read_uncommitted',
                  ),
                  described,
                ]);
                const leaderEpoch = epochs.get(p.partitionIndex) ?? -1;
                if (p.currentLeaderEpoch >= 0 && leaderEpoch >= 0 && p.currentLeaderEpoch > leaderEpoch)
                  return { partitionIndex: p.partitionIndex, errorCode: ERROR.UNKNOWN_LEADER_EPOCH };
                return {
                  partitionIndex: p.partitionIndex,
                  errorCode: ERROR.NONE,
                  timestamp: found.offset === null ? -1 : (found.timestamp ?? -1),
                  offset: found.offset ?? -1,
                  leaderEpoch,
                };
              } catch (error) {
                return { partitionIndex: p.partitionIndex, errorCode: errorCodeOf(error) };
              }
            }),
          ),
        };
      }),
    );
    return { throttleTimeMs: 0, topics: answer };
  },
};
