/**
 * The replicator: copies committed data from the leader's store to each follower store and moves the
 * follower's LEO, the HW and the ISR in one conditional write per follower. It holds no state between
 * passes, so the maintenance function (AWS) or a timer (`npm start`) can run it, and an acks=all writer
 * that finds a follower behind runs it itself before committing.
 *
 * - A follower's LEO moves from `from` to `to` only if it is still `from` (no double move) under the
 *   same leader epoch; the HW rises in the same write to the ISR's smallest LEO, conditioned on the
 *   ISR read and on `hw <= new` (never backwards).
 * - A follower out of the ISR that now holds at least the HW rejoins (Kafka's ISR expansion rule);
 *   commits that wrote to the smaller ISR are then fenced by their ISR condition.
 * - A follower whose store fails a copy, or that has not caught up for replica.lag.time.max.ms,
 *   leaves the ISR; a leader whose store fails a read is replaced by an election.
 */
import type { Condition, UpdateAction } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { SluiceError } from '../../../protocol/errors.js';
import { dataObjectPrefix, isSegmentObjectKey, keys } from '../keys.js';
import { readPartitionState } from '../log/context.js';
import type { PartitionState } from '../log/partition-state.js';
import { decodePartitionState, stateAttr } from '../log/partition-codec.js';
import { locateEntries } from '../log/reader.js';
import type { Topic } from '../topics/model.js';
import { electLeader } from './election.js';
import { isLagging, removeFromIsr } from './isr.js';
import type { ReplicationContext } from './replication-context.js';
import { storeAnswers, withinLag } from './replication-context.js';
import { logEndOffsetOf, minLogEndOffset } from './replica-state.js';

export interface ReplicationPass {
  /** Objects copied to followers. */
  copied: number;
  /** Followers whose LEO moved. */
  advanced: string[];
  joined: string[];
  left: string[];
  /** The new leader when the leader's store failed. */
  elected?: string;
  /** The leader's store failed and no in-sync store could take over (Kafka's offline partition). */
  offline?: boolean;
  /** The partition's replicas, ISR and LEOs after the pass (for the partition gauges). */
  after?: Pick<PartitionState, 'replicas' | 'isr' | 'logEndOffsets' | 'nextOffset'>;
}

type FollowerResult =
  { kind: 'advanced' | 'joined' | 'idle' | 'raced' } | { kind: 'failed' } | { kind: 'leader-failed' };

export const replicatePartition = async (
  ctx: ReplicationContext,
  topic: Topic,
  partition: number,
): Promise<ReplicationPass> => {
  const pass: ReplicationPass = { copied: 0, advanced: [], joined: [], left: [] };
  const state = await readPartitionState(ctx.store, topic, partition);
  if (state.replicas.length < 2) return pass;
  const readAt = ctx.clock.now();
  const followers = state.replicas.filter((r) => r !== state.leader);
  const results = await Promise.all(
    followers.map((f) =>
      follow(ctx, topic, partition, state, f, readAt, pass).catch((): FollowerResult => ({ kind: 'raced' })),
    ),
  );
  // With nothing to copy no read reached the leader's store: probe it, so a dead leader is replaced
  // even while nobody produces (one LIST per partition per pass).
  const probed = pass.copied > 0 || (await storeAnswers(ctx, state.leader, dataObjectPrefix(topic.topicId)));
  if (!probed || results.some((r) => r.kind === 'leader-failed')) {
    try {
      const outcome = await electLeader(ctx, topic, partition, {
        type: 'FAILOVER',
        exclude: [state.leader],
        seenEpoch: state.leaderEpoch,
      });
      if (outcome.elected) pass.elected = outcome.state.leader;
      pass.after = outcome.state;
    } catch (error) {
      // Nobody may lead (Kafka's offline partition): the leader keeps the partition until it answers.
      if (!(error instanceof SluiceError && error.code === 'ELIGIBLE_LEADERS_NOT_AVAILABLE')) throw error;
      pass.offline = true;
      pass.after = state;
    }
    return pass;
  }
  const now = ctx.clock.now();
  const leaving = followers.filter(
    (f, i) =>
      state.isr.includes(f) &&
      (results[i]!.kind === 'failed' ||
        (results[i]!.kind !== 'advanced' && isLagging(state, f, now, ctx.replicaLagTimeMaxMs))),
  );
  const failed = leaving.filter((f) => results[followers.indexOf(f)]!.kind === 'failed');
  const lagging = leaving.filter((f) => !failed.includes(f));
  if (failed.length > 0)
    await removeFromIsr(ctx, topic, partition, failed, { reason: 'failed', seenEpoch: state.leaderEpoch });
  if (lagging.length > 0)
    await removeFromIsr(ctx, topic, partition, lagging, { reason: 'lagging', seenEpoch: state.leaderEpoch });
  pass.left.push(...leaving);
  // Followers moved in parallel, each from the same read: raise the HW once more from a fresh one.
  const last = pass.advanced.length > 0 ? await raiseHighWatermark(ctx, topic, partition) : undefined;
  pass.after = last ?? afterPass(state, pass);
  return pass;
};

/** HW := min LEO over the ISR, if that is higher, by a write conditioned on the epoch and ISR read. */
const raiseHighWatermark = async (
  ctx: ReplicationContext,
  topic: Topic,
  partition: number,
): Promise<PartitionState> => {
  const state = await readPartitionState(ctx.store, topic, partition);
  const hw = minLogEndOffset(state, state.isr);
  if (hw <= state.highWatermark) return state;
  await ctx.store
    .update(keys.partitionState(topic.topicId, partition), [{ set: stateAttr.highWatermark, value: hw }], {
      condition: {
        and: [
          { path: 'leaderEpoch', op: '=', value: state.leaderEpoch },
          { path: 'isr', op: '=', value: state.isr },
          { path: stateAttr.highWatermark, op: '<=', value: hw },
        ],
      },
    })
    .catch((error: unknown) => {
      // A commit or another replicator moved it first; the next pass looks again.
      if (!(error instanceof ConditionFailedError)) throw error;
    });
  return state;
};

/** The ISR a pass leaves behind, from the state it read and the joins and leaves it made. */
const afterPass = (state: PartitionState, pass: ReplicationPass): NonNullable<ReplicationPass['after']> => ({
  replicas: state.replicas,
  isr: state.replicas.filter(
    (r) => (state.isr.includes(r) || pass.joined.includes(r)) && !pass.left.includes(r),
  ),
  logEndOffsets: state.logEndOffsets,
  nextOffset: state.nextOffset,
});

/**
 * Catches one follower up. An out-of-sync follower under a steady produce stream loses the race with
 * the commits (the HW passes what it copied before it can join), so it tries again at once from a fresh
 * read: each round copies only what was committed during the last one, and the rounds shrink until one
 * fits between two commits.
 */
const JOIN_ROUNDS = 5;

const follow = async (
  ctx: ReplicationContext,
  topic: Topic,
  partition: number,
  first: PartitionState,
  follower: string,
  firstReadAt: number,
  pass: ReplicationPass,
): Promise<FollowerResult> => {
  let state = first;
  let readAt = firstReadAt;
  for (let round = 1; ; round++) {
    const result = await catchUp(ctx, topic, partition, state, follower, readAt, pass);
    if (result.kind !== 'raced' && result.kind !== 'advanced') return result;
    if (round >= JOIN_ROUNDS) return result;
    readAt = ctx.clock.now();
    const next = await readPartitionState(ctx.store, topic, partition);
    if (next.leaderEpoch !== first.leaderEpoch || next.isr.includes(follower)) return result;
    state = next;
  }
};

const catchUp = async (
  ctx: ReplicationContext,
  topic: Topic,
  partition: number,
  state: PartitionState,
  follower: string,
  readAt: number,
  pass: ReplicationPass,
): Promise<FollowerResult> => {
  const from = logEndOffsetOf(state, follower);
  const to = state.nextOffset;
  if (from < to) {
    const start = Math.max(from, state.logStartOffset);
    const entries = await locateEntries(
      ctx.store,
      topic.topicId,
      partition,
      state,
      start,
      Number.POSITIVE_INFINITY,
    );
    // Offsets already rolled into the segment store are held there for every replica (KIP-405: a
    // follower starts from the leader's local log); a segment object is never in a replica store.
    const objects = [
      ...new Set(entries.filter((e) => !isSegmentObjectKey(e.entry.objectKey)).map((e) => e.entry.objectKey)),
    ];
    const source = ctx.objectStore(state.leader);
    const target = ctx.objectStore(follower);
    for (const key of objects) {
      let body: Uint8Array;
      try {
        body = await withinLag(ctx, state.leader, source.get(key));
      } catch {
        return { kind: 'leader-failed' };
      }
      try {
        await withinLag(ctx, follower, target.put(key, body));
      } catch {
        return { kind: 'failed' };
      }
      pass.copied++;
    }
  }
  // Out of the ISR and now at the leader's LEO, so at or past the HW: it rejoins (the write checks the
  // HW has not moved past `to` meanwhile).
  const joins = !state.isr.includes(follower);
  // A store rejoins only after it answered: with nothing to copy, ask it something.
  if (joins && from === to) {
    const alive = await storeAnswers(ctx, follower, dataObjectPrefix(topic.topicId));
    if (!alive) return { kind: 'failed' };
  }
  // A caught-up ISR member only refreshes its caught-up time now and then (one write per half lag window).
  const refresh = readAt - (state.lastCaughtUpTimeMs[follower] ?? 0) >= ctx.replicaLagTimeMaxMs / 2;
  if (from === to && !joins && !refresh) return { kind: 'idle' };

  const isr = joins ? state.replicas.filter((r) => state.isr.includes(r) || r === follower) : state.isr;
  const conditions: Condition[] = [
    { path: 'leaderEpoch', op: '=', value: state.leaderEpoch },
    { path: [stateAttr.logEndOffsets, follower], op: '=', value: from },
    { path: 'isr', op: '=', value: state.isr },
  ];
  const actions: UpdateAction[] = [
    { set: [stateAttr.logEndOffsets, follower], value: to },
    { set: [stateAttr.lastCaughtUpTimeMs, follower], value: readAt },
  ];
  if (joins) {
    // The HW may have moved past `to` while the copy ran: joining then would put a store in the ISR
    // that lacks committed data.
    actions.push({ set: 'isr', value: isr });
    conditions.push({ path: stateAttr.highWatermark, op: '<=', value: to });
  }
  const hw = minLogEndOffset({ logEndOffsets: { ...state.logEndOffsets, [follower]: to } }, isr);
  if (hw > state.highWatermark) {
    actions.push({ set: stateAttr.highWatermark, value: hw });
    conditions.push({ path: stateAttr.highWatermark, op: '<=', value: hw });
  }
  const write = (actions: UpdateAction[], conditions: Condition[]) =>
    ctx.store
      .update(keys.partitionState(topic.topicId, partition), actions, {
        condition: { and: conditions },
        returnValues: 'allNew',
      })
      .then((item) => {
        if (item) ctx.leadership.remember(topic, partition, decodePartitionState(item));
        return true;
      })
      .catch((error: unknown) => {
        if (error instanceof ConditionFailedError) return false;
        throw error;
      });
  if (!(await write(actions, conditions))) {
    // Joining lost to a commit that moved the HW past `to`: still keep what was copied.
    if (!joins || from === to) return { kind: 'raced' };
    const kept = await write(
      actions.slice(0, 2),
      conditions.filter((c) => !('path' in c && c.path === stateAttr.highWatermark)),
    );
    if (kept) pass.advanced.push(follower);
    return { kind: kept ? 'advanced' : 'raced' };
  }
  if (from < to) pass.advanced.push(follower);
  if (joins) {
    pass.joined.push(follower);
    ctx.telemetry.metric('IsrExpandsPerSec', 1, {});
    ctx.telemetry.log('info', 'ISR expand', { topic: topic.name, partition, joined: follower, isr });
  }
  return { kind: joins ? 'joined' : from < to ? 'advanced' : 'idle' };
};
