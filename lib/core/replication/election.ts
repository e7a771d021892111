/**
 * Leader election: one conditional write that bumps leaderEpoch, conditioned on the epoch and ISR it
 * read, so two electors can never both win an epoch, and every commit that began under the old epoch
 * is fenced (FENCED_LEADER_EPOCH, KIP-101/KIP-320).
 *
 * - FAILOVER (the leader's store failed): the ISR member with the largest LEO leads. Records past its
 *   LEO were never below the HW (HW = min LEO over the ISR), so nothing acknowledged with acks=all is
 *   lost; acks=1 records that no follower had yet are truncated, as in Kafka.
 * - With no other ISR member, and only when the topic sets unclean.leader.election.enable, an
 *   out-of-sync replica leads (UNCLEAN): the log is truncated to its LEO and the truncation reported.
 * - PREFERRED (kafka-leader-election): the first assigned replica leads again once it is in the ISR
 *   and holds the leader's whole log, so the move truncates nothing.
 */
import type { Condition, UpdateAction } from '../../ports/metadata-store.js';
import { SluiceError } from '../../../protocol/errors.js';
import { retryOnConflict } from '../groups/cas-retry.js';
import { keys } from '../keys.js';
import { readPartitionState } from '../log/context.js';
import { markHash } from '../log/idempotency.js';
import { bytesOf, logSizeChange } from '../log/log-size.js';
import type { PartitionState } from '../log/partition-state.js';
import { asPartitionState, encodeTailEntry, tailOffsets } from '../log/partition-state.js';
import { effectiveConfig } from '../topics/configs.js';
import type { Topic } from '../topics/model.js';
import type { ReplicationContext } from './replication-context.js';
import { casOptions } from './replication-context.js';
import { logEndOffsetOf } from './replica-state.js';

export type ElectionType = 'PREFERRED' | 'UNCLEAN' | 'FAILOVER';

export interface ElectionOptions {
  type: ElectionType;
  /** Stores known to have failed (never elected). */
  exclude?: readonly string[];
  /** Elect only if the partition is still at this epoch (someone else may have elected already). */
  seenEpoch?: number;
}

export interface ElectionOutcome {
  state: PartitionState;
  elected: boolean;
  /** Set when the new leader's log was shorter: offsets [to, from) were dropped. */
  truncated?: { from: number; to: number };
  unclean: boolean;
}

interface Choice {
  leader: string;
  isr: string[];
  unclean: boolean;
}

export const electLeader = async (
  ctx: ReplicationContext,
  topic: Topic,
  partition: number,
  options: ElectionOptions,
): Promise<ElectionOutcome> => {
  const where = `${topic.name}-${partition}`;
  const startedAt = ctx.clock.now();
  const outcome = await retryOnConflict(`leader election of ${where}`, casOptions(ctx), async () => {
    const state = await readPartitionState(ctx.store, topic, partition);
    if (options.seenEpoch !== undefined && state.leaderEpoch !== options.seenEpoch)
      return { state, elected: false, unclean: false };
    const choice = choose(topic, state, options, where);
    const cut = logEndOffsetOf(state, choice.leader);
    const truncating = cut < state.nextOffset;
    if (truncating && cut < state.tailBase) {
      throw new SluiceError(
        'ELIGIBLE_LEADERS_NOT_AVAILABLE',
        `electing ${choice.leader} on ${where} would truncate to ${cut}, below the indexed log at ${state.tailBase}`,
      );
    }
    const conditions: Condition[] = [
      { path: 'leaderEpoch', op: '=', value: state.leaderEpoch },
      { path: 'isr', op: '=', value: state.isr },
    ];
    const actions: UpdateAction[] = [
      { set: 'leaderEpoch', value: state.leaderEpoch + 1 },
      { set: 'leader', value: choice.leader },
      { set: 'isr', value: choice.isr },
      { set: ['lc', choice.leader], value: ctx.clock.now() },
    ];
    if (truncating) {
      conditions.push(
        { path: 'nextOffset', op: '=', value: state.nextOffset },
        { path: 'tailBase', op: '=', value: state.tailBase },
      );
      actions.push(...truncation(topic, state, cut));
    } else {
      // Commits under the old epoch may still land before this write: the new leader then has them
      // too (it is in the ISR they were written to), which this condition checks.
      conditions.push({ path: ['leo', choice.leader], op: '=', otherPath: 'nextOffset' });
    }
    // Unclean: the new leader alone is the ISR, so the HW is its LEO, even if that is lower.
    if (choice.unclean) actions.push({ set: 'hw', value: cut });
    const item = await ctx.store.update(keys.partitionState(topic.topicId, partition), actions, {
      condition: { and: conditions },
      returnValues: 'allNew',
    });
    return {
      state: asPartitionState(item!),
      elected: true,
      unclean: choice.unclean,
      ...(truncating ? { truncated: { from: state.nextOffset, to: cut } } : {}),
    };
  });
  ctx.leadership.remember(topic, partition, outcome.state);
  if (outcome.elected) {
    ctx.telemetry.metric('LeaderElectionRateAndTimeMs', ctx.clock.now() - startedAt, {});
    ctx.telemetry.log('warn', 'leader elected', {
      topic: topic.name,
      partition,
      leader: outcome.state.leader,
      leaderEpoch: outcome.state.leaderEpoch,
      electionType: options.type,
      unclean: outcome.unclean,
    });
  }
  return outcome;
};

const choose = (topic: Topic, state: PartitionState, options: ElectionOptions, where: string): Choice => {
  const exclude = options.exclude ?? [];
  if (options.type === 'PREFERRED') {
    const preferred = state.replicas[0]!;
    if (preferred === state.leader)
      throw new SluiceError('ELECTION_NOT_NEEDED', `${preferred} already leads ${where}`);
    if (!state.isr.includes(preferred) || logEndOffsetOf(state, preferred) !== state.nextOffset) {
      throw new SluiceError(
        'PREFERRED_LEADER_NOT_AVAILABLE',
        `preferred replica ${preferred} of ${where} is not in sync with the leader yet`,
      );
    }
    return { leader: preferred, isr: state.isr, unclean: false };
  }
  const out = new Set([...exclude, state.leader]);
  const inSync = best(
    state,
    state.isr.filter((s) => !out.has(s)),
  );
  if (inSync !== undefined) {
    return { leader: inSync, isr: state.isr.filter((s) => !out.has(s)), unclean: false };
  }
  const allowed = effectiveConfig(topic.configs)['unclean.leader.election.enable'];
  const outOfSync = best(
    state,
    state.replicas.filter((s) => !out.has(s) && !state.isr.includes(s)),
  );
  if (!allowed || outOfSync === undefined) {
    throw new SluiceError(
      'ELIGIBLE_LEADERS_NOT_AVAILABLE',
      outOfSync === undefined
        ? `no replica of ${where} is left to lead`
        : `no in-sync replica of ${where} is left to lead, and unclean.leader.election.enable is false`,
    );
  }
  return { leader: outOfSync, isr: [outOfSync], unclean: true };
};

/** The candidate with the longest log; ties go to assignment order. */
const best = (state: PartitionState, candidates: readonly string[]): string | undefined =>
  candidates.reduce<string | undefined>(
    (a, c) => (a === undefined || logEndOffsetOf(state, c) > logEndOffsetOf(state, a) ? c : a),
    undefined,
  );

/** Drops tail entries at or past `cut`, with their Idempotency-Keys, and caps every replica's LEO. */
const truncation = (topic: Topic, state: PartitionState, cut: number): UpdateAction[] => {
  const offsets = tailOffsets(state);
  const kept = state.tail.filter((_, i) => offsets[i]! < cut);
  // A tail entry holds the key's whole mark (hash.fingerprint.time); `ik` holds the hash alone.
  const dropped = new Set(
    state.tail.slice(kept.length).flatMap((e) => (e.k === undefined ? [] : [markHash(e.k)])),
  );
  const actions: UpdateAction[] = [
    { set: 'nextOffset', value: cut },
    { set: 'tail', value: kept.map((e) => encodeTailEntry(e, topic.topicId)) },
    logSizeChange(-bytesOf(state.tail.slice(kept.length))),
    ...state.replicas.map((r): UpdateAction => ({
      set: ['leo', r],
      value: Math.min(logEndOffsetOf(state, r), cut),
    })),
  ];
  if (dropped.size > 0) {
    actions.push({ set: 'ik', value: state.ik.filter((k) => !dropped.has(k)) }, { set: 'ikGen', add: 1 });
  }
  return actions;
};
