/**
 * Kafka's ElectLeaders admin call (kafka-leader-election): per partition, PREFERRED moves leadership
 * back to the first assigned replica once it is in sync; UNCLEAN replaces a leader whose store does
 * not answer, with an out-of-sync replica if nothing in sync is left, and only where the topic sets
 * unclean.leader.election.enable. Each partition answers on its own, as in Kafka.
 */
import { SluiceError, isSluiceError } from '../../../protocol/errors.js';
import { checkPartition, readPartitionState } from '../log/context.js';
import { dataObjectPrefix } from '../keys.js';
import { effectiveConfig } from '../topics/configs.js';
import type { Topic } from '../topics/model.js';
import { electLeader } from './election.js';
import type { ReplicationContext } from './replication-context.js';
import { storeAnswers } from './replication-context.js';

export type AdminElectionType = 'PREFERRED' | 'UNCLEAN';

export type ElectionResult =
  | { partition: number; leader: string; leaderEpoch: number; truncatedFrom?: number; truncatedTo?: number }
  | { partition: number; error: { code: string; message: string; retriable: boolean } };

export const electLeaders = async (
  ctx: ReplicationContext,
  topic: Topic,
  type: AdminElectionType,
  partitions?: readonly number[],
): Promise<ElectionResult[]> => {
  if (type === 'UNCLEAN' && !effectiveConfig(topic.configs)['unclean.leader.election.enable']) {
    throw new SluiceError(
      'INVALID_REQUEST',
      `topic ${topic.name} has unclean.leader.election.enable=false; set it to allow UNCLEAN elections`,
    );
  }
  const targets = partitions ?? Array.from({ length: topic.partitions }, (_, p) => p);
  for (const p of targets) checkPartition(topic, p);
  return Promise.all(
    targets.map(async (partition): Promise<ElectionResult> => {
      try {
        const outcome =
          type === 'PREFERRED'
            ? await electLeader(ctx, topic, partition, { type: 'PREFERRED' })
            : await uncleanElection(ctx, topic, partition);
        return {
          partition,
          leader: outcome.state.leader,
          leaderEpoch: outcome.state.leaderEpoch,
          ...(outcome.truncated
            ? { truncatedFrom: outcome.truncated.from, truncatedTo: outcome.truncated.to }
            : {}),
        };
      } catch (error) {
        if (!isSluiceError(error)) throw error;
        return { partition, error: { code: error.code, message: error.message, retriable: error.retriable } };
      }
    }),
  );
};

const uncleanElection = async (ctx: ReplicationContext, topic: Topic, partition: number) => {
  const state = await readPartitionState(ctx.store, topic, partition);
  const alive = await storeAnswers(ctx, state.leader, dataObjectPrefix(topic.topicId));
  if (alive)
    throw new SluiceError(
      'ELECTION_NOT_NEEDED',
      `leader ${state.leader} of ${topic.name}-${partition} answers`,
    );
  return electLeader(ctx, topic, partition, {
    type: 'UNCLEAN',
    exclude: [state.leader],
    seenEpoch: state.leaderEpoch,
  });
};
