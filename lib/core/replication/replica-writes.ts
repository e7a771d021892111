/**
 * Replica writes: a produce request's data objects go to every in-sync store (acks=all) or the leader
 * (acks=1) before the commit, stamped with the leader epoch; a store that fails or lags is recorded,
 * not thrown, and settled before the commit (a failed leader is replaced, failed followers leave the
 * ISR). After an election or ISR change the batches are written again for the new leadership.
 */
import { SluiceError, isSluiceError } from '../../../protocol/errors.js';
import { stampPartitionLeaderEpoch } from '../../../protocol/record-batch/index.js';
import { dataObjectKey } from '../keys.js';
import type { Leadership, LogContext } from '../log/context.js';
import type { TailEntry } from '../log/partition-state.js';
import type { TopicConfig } from '../topics/configs.js';
import type { Topic } from '../topics/model.js';
import type { Acks } from './commit-clauses.js';
import { electLeader } from './election.js';
import { removeFromIsr } from './isr.js';
import { withinLag } from './replication-context.js';

/** Where one write's data object went, under which leadership. */
export interface ReplicaWrites {
  acks: Acks;
  leader: string;
  leaderEpoch: number;
  isr: string[];
  /** Stores that hold the object. */
  stores: string[];
  /** Stores whose write failed or timed out. */
  failed: string[];
  /** Why the leader's write failed, if it did. */
  leaderError?: unknown;
}

/** What the replica writes read of one partition's write, and fill in. */
export interface ReplicatedWrite {
  partition: number;
  indexes: number[];
  batches: Uint8Array[];
  timestamps: number[];
  /** The tail entry the commit appends: the object, the batches' place in it, their counts and times. */
  entry?: TailEntry;
  written?: ReplicaWrites;
  writtenAt?: number;
}

/** acks=all needs min.insync.replicas in-sync stores before anything is written. */
export const checkReplicas = async (
  ctx: LogContext,
  topic: Topic,
  writes: readonly ReplicatedWrite[],
  config: TopicConfig,
  acks: Acks,
): Promise<void> => {
  for (const w of writes) {
    const { isr } = await ctx.leadership.get(topic, w.partition);
    if (acks === 'all' && isr.length < config['min.insync.replicas']) {
      throw new SluiceError(
        'NOT_ENOUGH_REPLICAS',
        `partition ${topic.name}-${w.partition} has ${isr.length} in-sync store(s); min.insync.replicas=${config['min.insync.replicas']}`,
      );
    }
  }
};

/**
 * One object per leadership (epoch and target stores: the ISR for acks=all, the leader for acks=1)
 * holding all of the request's batches for those partitions (one PUT per store per request), written
 * before any commit. Each batch carries the epoch in its PartitionLeaderEpoch field. A failed or
 * timed-out store write is recorded, not thrown: the commit step shrinks the ISR or elects.
 */
export const writeObjects = async (
  ctx: LogContext,
  topic: Topic,
  writes: readonly ReplicatedWrite[],
  mark: string | undefined,
  acks: Acks,
  override?: Pick<TailEntry, 'offsetCount' | 'recordCount' | 'maxTimestamp' | 'firstTimestamp'>,
): Promise<void> => {
  const groups = new Map<
    string,
    { target: Omit<ReplicaWrites, 'stores' | 'failed'>; stores: string[]; writes: ReplicatedWrite[] }
  >();
  for (const w of writes) {
    const { leader, leaderEpoch, isr } = await ctx.leadership.get(topic, w.partition);
    const stores = acks === 'all' ? isr : [leader];
    const id = `${leaderEpoch}|${leader}|${isr.join(',')}`;
    const group = groups.get(id) ?? { target: { acks, leader, leaderEpoch, isr }, stores, writes: [] };
    group.writes.push(w);
    groups.set(id, group);
    for (const b of w.batches) stampPartitionLeaderEpoch(b, leaderEpoch);
  }
  await Promise.all(
    [...groups.values()].map(async (group) => {
      const key = dataObjectKey(topic.topicId, ctx.newId());
      let offset = 0;
      const chunks: Uint8Array[] = [];
      for (const w of group.writes) {
        const start = offset;
        for (const b of w.batches) {
          chunks.push(b);
          offset += b.length;
        }
        w.entry = {
          objectKey: key,
          position: start,
          sizeInBytes: offset - start,
          offsetCount: override?.offsetCount ?? w.indexes.length,
          recordCount: override?.recordCount ?? w.indexes.length,
          // A JSON request's timestamps: on a LogAppendTime topic, buildBatches made them all `now`.
          maxTimestamp: override?.maxTimestamp ?? Math.max(...w.timestamps),
          firstTimestamp: override?.firstTimestamp ?? Math.min(...w.timestamps),
          ...(mark === undefined ? {} : { idempotencyMark: mark }),
        };
      }
      // One batch (a binary produce's usual body) is stored as is, without a copy.
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const writtenAt = ctx.clock.now();
      const settled = await Promise.allSettled(
        group.stores.map((id) => putWithin(ctx, id, key, body, group.target.isr)),
      );
      const failed = group.stores.filter((_, i) => settled[i]!.status === 'rejected');
      const written: ReplicaWrites = {
        ...group.target,
        stores: group.stores.filter((id) => !failed.includes(id)),
        failed,
        ...leaderErrorOf(group.stores, settled, group.target.leader),
      };
      for (const w of group.writes) Object.assign(w, { written, writtenAt });
    }),
  );
};

/** One partition's batches as a new object for the current leadership (after an election or ISR change). */
export const rewrite = async (
  ctx: LogContext,
  topic: Topic,
  w: ReplicatedWrite,
  leadership: Leadership,
  acks: Acks,
): Promise<void> => {
  // Copies: the first object may still be in flight to a slow store, and it keeps its own epoch.
  w.batches = w.batches.map((b) => {
    const copy = new Uint8Array(b);
    stampPartitionLeaderEpoch(copy, leadership.leaderEpoch);
    return copy;
  });
  const key = dataObjectKey(topic.topicId, ctx.newId());
  const body = w.batches.length === 1 ? w.batches[0]! : Buffer.concat(w.batches);
  const stores = acks === 'all' ? leadership.isr : [leadership.leader];
  const writtenAt = ctx.clock.now();
  const settled = await Promise.allSettled(stores.map((id) => putWithin(ctx, id, key, body, leadership.isr)));
  const failed = stores.filter((_, i) => settled[i]!.status === 'rejected');
  w.entry = { ...w.entry!, objectKey: key, position: 0, sizeInBytes: body.length };
  w.written = {
    acks,
    ...leadership,
    stores: stores.filter((id) => !failed.includes(id)),
    failed,
    ...leaderErrorOf(stores, settled, leadership.leader),
  };
  w.writtenAt = writtenAt;
  await settleReplicas(ctx, topic, w);
};

/**
 * A store write. With other in-sync stores to fall back on, one slower than replica.lag.time.max.ms
 * counts as failed; a lone store is left to the client's own timeouts.
 */
const putWithin = (
  ctx: LogContext,
  id: string,
  key: string,
  body: Uint8Array,
  isr: readonly string[],
): Promise<void> => {
  const put = ctx.objectStore(id).put(key, body);
  return isr.length > 1 ? withinLag(ctx, id, put) : put;
};

/**
 * Before the commit: a leader store that failed the write is replaced (the client retries under the
 * new leader); failed followers leave the ISR, and the commit then counts only the stores that hold
 * the data.
 */
export const settleReplicas = async (ctx: LogContext, topic: Topic, w: ReplicatedWrite): Promise<void> => {
  const written = w.written!;
  if (written.failed.length === 0) return;
  const where = `${topic.name}-${w.partition}`;
  if (written.failed.includes(written.leader)) {
    const election = await electLeader(ctx, topic, w.partition, {
      type: 'FAILOVER',
      exclude: written.failed,
      seenEpoch: written.leaderEpoch,
    }).catch((error: unknown) => error);
    // Nobody can take over (a single store, say): the store's own error says what happened.
    if (isSluiceError(election) && election.code === 'ELIGIBLE_LEADERS_NOT_AVAILABLE' && written.leaderError)
      throw written.leaderError;
    throw new SluiceError(
      'NOT_LEADER_OR_FOLLOWER',
      `the leader store ${written.leader} of ${where} failed the write; ${
        election instanceof Error ? election.message : 'a new leader was elected'
      }; retry`,
    );
  }
  await removeFromIsr(ctx, topic, w.partition, written.failed, {
    reason: 'failed',
    seenEpoch: written.leaderEpoch,
  });
};

const leaderErrorOf = (
  stores: readonly string[],
  settled: readonly PromiseSettledResult<void>[],
  leader: string,
): { leaderError?: unknown } => {
  const result = settled[stores.indexOf(leader)];
  return result?.status === 'rejected' ? { leaderError: result.reason } : {};
};
