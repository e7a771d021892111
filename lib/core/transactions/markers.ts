/**
 * Transaction markers: the control batch (COMMIT or ABORT) the coordinator writes into every partition
 * a transaction touched, as Kafka's WriteTxnMarkers does. A marker is a log append like any batch (its
 * object on every in-sync store, then one conditional update of the partition item) that also closes
 * the producer's open transaction there (`tx`), which lets the last stable offset move on, records an
 * ABORT's first offset for the aborted-transactions index, and raises the producer's epoch on the
 * partition to the marker's, so a zombie's late batch is refused (INVALID_PRODUCER_EPOCH).
 *
 * Writing a marker again is a no-op: once the transaction is closed here and the partition holds the
 * marker's epoch, the condition fails and the partition counts as done. So a coordinator that crashed
 * half way through its markers rolls forward by writing them all again.
 */
import { SluiceError } from '../../../protocol/errors.js';
import type { ControlType } from '../../../protocol/record-batch/index.js';
import { encodeControlBatch, stampPartitionLeaderEpoch } from '../../../protocol/record-batch/index.js';
import type { Condition, UpdateAction } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { dataObjectKey, keys } from '../keys.js';
import type { LogContext } from '../log/context.js';
import { TopicGoneError, readPartitionState } from '../log/context.js';
import type { TailEntry } from '../log/partition-state.js';
import { encodeTailEntry } from '../log/partition-state.js';
import { logSizeChange } from '../log/log-size.js';
import { explainReplicaFailure, replicaCommitClauses } from '../replication/commit-clauses.js';
import { replicatePartition } from '../replication/replicator.js';

export interface Marker {
  type: ControlType;
  producerId: number;
  /** The epoch the coordinator ends the transaction with (one past the transaction's own: KIP-890). */
  producerEpoch: number;
  /**
   * Set when the transaction ends without an epoch bump (transaction version 1): the epoch no longer
   * tells this marker from the next transaction's, so the partition keeps the number of the last
   * transaction it holds a marker of (`mk`), and the producer's sequence goes on across transactions.
   */
  transactionNumber?: number;
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

export type MarkerOutcome = 'written' | 'already' | 'topic-gone';

const MAX_ATTEMPTS = 6;

/** Writes the marker into every partition; all settle before the first failure (if any) is thrown. */
export const writeMarkers = async (
  ctx: LogContext,
  partitions: readonly TopicPartition[],
  marker: Marker,
): Promise<MarkerOutcome[]> => {
  const settled = await Promise.allSettled(partitions.map((tp) => writeMarker(ctx, tp, marker)));
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<MarkerOutcome>).value);
};

export const writeMarker = async (
  ctx: LogContext,
  tp: TopicPartition,
  marker: Marker,
): Promise<MarkerOutcome> => {
  let topic;
  try {
    topic = await ctx.catalog.get(tp.topic);
  } catch (error) {
    if (error instanceof SluiceError && error.code === 'UNKNOWN_TOPIC_OR_PARTITION') return 'topic-gone';
    throw error;
  }
  const pid = String(marker.producerId);
  for (let attempt = 1; ; attempt++) {
    let state;
    try {
      state = await readPartitionState(ctx.store, topic, tp.partition);
    } catch (error) {
      // A deleted topic keeps no log for the marker to close.
      if (error instanceof TopicGoneError) return 'topic-gone';
      throw error;
    }
    const firstOffset = state.tx?.[pid];
    const known = state.pr[pid];
    const number = marker.transactionNumber;
    // The partition holds the marker's epoch (or, without a bump, its transaction's number): this marker
    // is written (a later transaction of the producer, which may be open here now, starts only after
    // every marker of this one is).
    if (known !== undefined && known.e > marker.producerEpoch) return 'already';
    if (known !== undefined && known.e === marker.producerEpoch && number === undefined) return 'already';
    if (number !== undefined && (state.mk?.[pid] ?? 0) >= number) return 'already';
    if (number !== undefined && state.mk === undefined) {
      await ensureMarkerMap(ctx, topic.topicId, tp.partition);
      continue;
    }
    // Kafka timestamps are whole ms; a simulated clock may have advanced by a jittered fraction.
    const now = Math.floor(ctx.clock.now());
    const bytes = encodeControlBatch({ ...marker, timestamp: now });
    stampPartitionLeaderEpoch(bytes, state.leaderEpoch);
    const key = dataObjectKey(topic.topicId, ctx.newId());
    await Promise.all(state.isr.map((id) => ctx.objectStore(id).put(key, bytes)));
    const entry: TailEntry = {
      o: key,
      b: 0,
      l: bytes.length,
      n: 1,
      c: 1,
      t: now,
      f: now,
      p: marker.producerId,
      e: marker.producerEpoch,
      q: -1,
      z: -1,
      x: marker.type === 'ABORT' ? 'a' : 'c',
      ...(marker.type === 'ABORT' && firstOffset !== undefined ? { xf: firstOffset } : {}),
    };
    const write = {
      acks: 'all' as const,
      leader: state.leader,
      leaderEpoch: state.leaderEpoch,
      isr: state.isr,
    };
    const replica = replicaCommitClauses({ ...write, span: 1, now });
    const conditions: Condition[] = [
      ...replica.conditions,
      { notExists: 'deleted' },
      firstOffset === undefined
        ? { notExists: ['tx', pid] }
        : { path: ['tx', pid], op: '=', value: firstOffset },
      number === undefined
        ? {
            or: [
              { notExists: ['pr', pid] },
              { path: ['pr', pid, 'e'], op: '<', value: marker.producerEpoch },
            ],
          }
        : known === undefined
          ? { notExists: ['pr', pid] }
          : {
              and: [
                { path: ['pr', pid, 'e'], op: '=', value: known.e },
                { path: ['pr', pid, 's'], op: '=', value: known.s },
                state.mk?.[pid] === undefined
                  ? { notExists: ['mk', pid] }
                  : { path: ['mk', pid], op: '=', value: state.mk[pid] },
              ],
            },
    ];
    // Without a bump the producer's sequence goes on in the next transaction, as Kafka keeps it.
    const sequence = number !== undefined && known?.e === marker.producerEpoch ? known.s : -1;
    const actions: UpdateAction[] = [
      { set: 'nextOffset', add: 1 },
      { set: 'tail', append: [encodeTailEntry(entry, topic.topicId)] },
      logSizeChange(entry.l),
      ...replica.actions,
      { set: ['pr', pid], value: { e: marker.producerEpoch, s: sequence, t: now } },
    ];
    if (number !== undefined) actions.push({ set: ['mk', pid], value: number });
    if (firstOffset !== undefined) actions.push({ remove: ['tx', pid] });
    try {
      await ctx.store.update(keys.partitionState(topic.topicId, tp.partition), actions, {
        condition: { and: conditions },
      });
      return 'written';
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      const current = error.current;
      if (!current || current['deleted'] === true) return 'topic-gone';
      if (attempt >= MAX_ATTEMPTS) {
        throw new SluiceError(
          'COORDINATOR_NOT_AVAILABLE',
          `the ${marker.type} marker of producer ${pid} on ${tp.topic}-${tp.partition} kept racing; retry`,
        );
      }
      const failure = explainReplicaFailure(write, {
        leaderEpoch: current['leaderEpoch'] as number,
        isr: current['isr'] as string[],
        nextOffset: current['nextOffset'] as number,
        leo: current['leo'] as Record<string, number>,
      });
      if (failure === 'lagging') await replicatePartition(ctx, topic, tp.partition);
      // Anything else (a new leader epoch or ISR, the producer's state moved): read again and decide.
    }
  }
};

/** Items from before transaction version 1 have no `mk` map, and a nested member needs its map. */
const ensureMarkerMap = async (ctx: LogContext, topicId: string, partition: number): Promise<void> => {
  await ctx.store
    .update(keys.partitionState(topicId, partition), [{ set: 'mk', ifNotExists: {} }], {
      condition: { exists: 'pk' },
    })
    .catch((error: unknown) => {
      // A purged item: the next read of the loop finds the topic gone.
      if (!(error instanceof ConditionFailedError)) throw error;
    });
};
