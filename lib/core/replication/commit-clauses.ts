/**
 * The replication part of the produce commit: conditions and actions that the one commit UpdateItem
 * (lib/core/log/commit.ts) carries beside offsets and producer sequences. No read comes before it.
 *
 * - Both acks: the leader epoch *and* the ISR the data was written to must still hold. Kafka does not
 *   bump the epoch on an ISR change, so the ISR must fence by itself: a store that joined after the
 *   write began never received the data, and one that left may be counted out of the HW.
 * - acks=all: the data is on every ISR store, and every ISR store's LEO must equal the leader's
 *   (`leo.s = nextOffset`, compared inside the condition). Then each LEO and the HW move to
 *   `nextOffset + n` in the same write: HW = min LEO(ISR) holds exactly, and never moves back.
 * - acks=1: the data is on the leader's store only, so only the leader's LEO moves; the HW moves with
 *   it only when the leader is the whole ISR. The replicator moves followers and the HW later.
 */
import type { Condition, UpdateAction } from '../../ports/metadata-store.js';
import { stateAttr } from '../log/partition-codec.js';

export type Acks = 'all' | '1';

export interface ReplicaWrite {
  acks: Acks;
  leader: string;
  leaderEpoch: number;
  /** The ISR as read when the data was written: every store in it holds the data (acks=all). */
  isr: readonly string[];
  /** Offsets the batch spans. */
  span: number;
  now: number;
}

export const replicaCommitClauses = (
  w: ReplicaWrite,
): { conditions: Condition[]; actions: UpdateAction[] } => {
  const moved = w.acks === 'all' ? w.isr : [w.leader];
  const conditions: Condition[] = [
    { path: 'leaderEpoch', op: '=', value: w.leaderEpoch },
    { path: 'isr', op: '=', value: [...w.isr] },
    ...moved.map((s): Condition => ({
      path: [stateAttr.logEndOffsets, s],
      op: '=',
      otherPath: 'nextOffset',
    })),
  ];
  const actions: UpdateAction[] = moved.flatMap((s): UpdateAction[] => [
    { set: [stateAttr.logEndOffsets, s], add: w.span, from: 'nextOffset' },
    { set: [stateAttr.lastCaughtUpTimeMs, s], value: w.now },
  ]);
  if (w.acks === 'all' || (w.isr.length === 1 && w.isr[0] === w.leader)) {
    actions.push({ set: stateAttr.highWatermark, add: w.span, from: 'nextOffset' });
  }
  return { conditions, actions };
};

/** Why a commit's replication conditions failed, from the item the store handed back. */
export type ReplicaCommitFailure = 'fenced-epoch' | 'fenced-isr' | 'lagging' | 'leader-diverged' | undefined;

export const explainReplicaFailure = (
  w: Pick<ReplicaWrite, 'acks' | 'leader' | 'leaderEpoch' | 'isr'>,
  state: {
    leaderEpoch: number;
    isr: readonly string[];
    nextOffset: number;
    logEndOffsets: Record<string, number>;
  },
): ReplicaCommitFailure => {
  if (state.leaderEpoch !== w.leaderEpoch) return 'fenced-epoch';
  if (state.isr.length !== w.isr.length || state.isr.some((s, i) => s !== w.isr[i])) return 'fenced-isr';
  // The leader's LEO is nextOffset by construction; anything else means the item was damaged.
  if (state.logEndOffsets[w.leader] !== state.nextOffset) return 'leader-diverged';
  // acks=1 moves the leader's LEO alone, which the check above has already found at the log end.
  if (w.acks === 'all' && w.isr.some((s) => state.logEndOffsets[s] !== state.nextOffset)) return 'lagging';
  return undefined;
};
