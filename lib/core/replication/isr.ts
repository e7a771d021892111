/**
 * ISR shrink: a store that failed a write, or lagged past replica.lag.time.max.ms, leaves the ISR by a
 * conditional write on the epoch and the ISR it read. The HW may rise in the same write (the new ISR's
 * smallest LEO, read in that state: LEOs only grow within an epoch, so the value read is a lower bound
 * of the true one, and `hw <= :new` keeps it from ever moving back). A failed leader is replaced by an
 * election instead (election.ts). The ISR never becomes empty; acks=all writes are refused while it is
 * smaller than min.insync.replicas.
 */
import type { Condition, UpdateAction } from '../../ports/metadata-store.js';
import { retryOnConflict } from '../groups/cas-retry.js';
import { keys } from '../keys.js';
import { readPartitionState } from '../log/context.js';
import type { PartitionState } from '../log/partition-state.js';
import { decodePartitionState, stateAttr } from '../log/partition-codec.js';
import type { Topic } from '../topics/model.js';
import { electLeader } from './election.js';
import type { ReplicationContext } from './replication-context.js';
import { casOptions } from './replication-context.js';
import { minLogEndOffset } from './replica-state.js';

export type ShrinkReason = 'failed' | 'lagging';

/** A follower is out of sync once it has not held the leader's LEO for replica.lag.time.max.ms. */
export const isLagging = (state: PartitionState, store: string, now: number, lagMaxMs: number): boolean =>
  (state.logEndOffsets[store] ?? 0) < state.nextOffset &&
  now - (state.lastCaughtUpTimeMs[store] ?? 0) > lagMaxMs;

export const removeFromIsr = async (
  ctx: ReplicationContext,
  topic: Topic,
  partition: number,
  stores: readonly string[],
  options: { reason: ShrinkReason; seenEpoch: number },
): Promise<PartitionState> => {
  const key = keys.partitionState(topic.topicId, partition);
  let left: string[] = [];
  const state = await retryOnConflict(
    `ISR shrink of ${topic.name}-${partition}`,
    casOptions(ctx),
    async (): Promise<PartitionState> => {
      const state = await readPartitionState(ctx.store, topic, partition);
      if (state.leaderEpoch !== options.seenEpoch) return state;
      if (options.reason === 'failed' && stores.includes(state.leader)) {
        return (
          await electLeader(ctx, topic, partition, {
            type: 'FAILOVER',
            exclude: stores,
            seenEpoch: state.leaderEpoch,
          })
        ).state;
      }
      const now = ctx.clock.now();
      const leaving = stores.filter(
        (s) =>
          s !== state.leader &&
          state.isr.includes(s) &&
          (options.reason === 'failed' || isLagging(state, s, now, ctx.replicaLagTimeMaxMs)),
      );
      if (leaving.length === 0) return state;
      const isr = state.isr.filter((s) => !leaving.includes(s));
      const conditions: Condition[] = [
        { path: 'leaderEpoch', op: '=', value: state.leaderEpoch },
        { path: 'isr', op: '=', value: state.isr },
      ];
      const actions: UpdateAction[] = [{ set: 'isr', value: isr }];
      const hw = minLogEndOffset(state, isr);
      if (hw > state.highWatermark) {
        actions.push({ set: stateAttr.highWatermark, value: hw });
        conditions.push({ path: stateAttr.highWatermark, op: '<=', value: hw });
      }
      const item = await ctx.store.update(key, actions, {
        condition: { and: conditions },
        returnValues: 'allNew',
      });
      left = leaving;
      return decodePartitionState(item!);
    },
  );
  ctx.leadership.remember(topic, partition, state);
  if (left.length > 0) {
    ctx.telemetry.metric('IsrShrinksPerSec', left.length, {});
    ctx.telemetry.log('warn', 'ISR shrink', {
      topic: topic.name,
      partition,
      left,
      reason: options.reason,
      isr: state.isr,
    });
  }
  return state;
};
