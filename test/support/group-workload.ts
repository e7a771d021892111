/**
 * A consumer-group member as KIP-848 clients behave (API.md "Consumer groups"), recording its
 * heartbeats, polls, commits and offset fetches for the checker: it heartbeats with what it owns, takes
 * newly assigned partitions from their committed offsets, drops revoked ones before its next heartbeat
 * (which then no longer lists them), consumes and commits with its member epoch, rejoins when fenced,
 * and may crash (stop without leaving, so its session runs out) and restart as a new member.
 */
import type { Random } from '../../lib/adapters/fault/random.js';
import { randomInt } from '../../lib/adapters/fault/random.js';
import { renderRecord } from './client.js';
import type { CommitOp, HeartbeatOp, OffsetFetchOp, PollOp } from './history.js';
import { errorName, outcomeOfError } from './history.js';
import type { WorkloadContext } from './workload.js';

export interface MemberOptions {
  /** The client (process) name; member ids are `${name}-${incarnation}` (client-chosen, KIP-1082). */
  name: string;
  group: string;
  /** Milliseconds between heartbeats (jittered). */
  heartbeatMs: number;
  /** Keep going until this is true, then leave the group. */
  until: () => boolean;
  /** Chance, per heartbeat, of crashing: stopping without leaving, to come back later as a new member. */
  crashChance?: number;
  rebalanceTimeoutMs?: number;
}

export const tpId = (topic: string, partition: number): string => `${topic}/${partition}`;

const FENCED = new Set(['FENCED_MEMBER_EPOCH', 'UNKNOWN_MEMBER_ID']);

export const runMember = async (ctx: WorkloadContext, options: MemberOptions): Promise<void> => {
  const { recorder, client, topic, random } = ctx;
  let incarnation = 0;
  let memberId = `${options.name}-${incarnation}`;
  let epoch = 0;
  const owned = new Map<number, number>(); // partition → position
  const ownedList = () => [...owned.keys()].sort((a, b) => a - b);

  while (!options.until()) {
    if (options.crashChance && random() < options.crashChance) {
      // Killed without leaving; restarted later as a new member (its old session runs out meanwhile).
      recorder.crash(options.name);
      owned.clear();
      epoch = 0;
      memberId = `${options.name}-${++incarnation}`;
      await ctx.sleep(randomInt(random, 0, options.heartbeatMs * 12));
      continue;
    }
    const partitions = ownedList();
    const done = recorder.invoke<HeartbeatOp>('heartbeat', options.name, {
      group: options.group,
      member: memberId,
      memberEpochSent: epoch,
      owned: partitions.map((p) => tpId(topic, p)),
    });
    try {
      const r = await client.heartbeat(options.group, {
        memberId,
        memberEpoch: epoch,
        instanceId: null,
        subscribedTopics: epoch === 0 ? [topic] : null,
        ownedPartitions: [{ topic, partitions }],
        rebalanceTimeoutMs: options.rebalanceTimeoutMs ?? 10_000,
      });
      const assigned =
        r.assignment === null
          ? null
          : (r.assignment.topicPartitions.find((t) => t.topic === topic)?.partitions ?? []);
      done('ok', {
        memberEpoch: r.memberEpoch,
        assignment: assigned === null ? null : assigned.map((p) => tpId(topic, p)),
      });
      epoch = r.memberEpoch;
      if (assigned !== null) {
        // Revoked: commit where we are, then stop (the next heartbeat no longer lists them).
        for (const p of ownedList()) {
          if (assigned.includes(p)) continue;
          await commit(ctx, options, memberId, epoch, p, owned.get(p)!);
          owned.delete(p);
        }
        for (const p of assigned)
          if (!owned.has(p)) owned.set(p, await committedOffset(ctx, options.group, p));
      }
    } catch (error) {
      const code = errorName(error);
      done(outcomeOfError(error), {}, code);
      if (FENCED.has(code)) {
        owned.clear();
        epoch = 0;
        if (code === 'UNKNOWN_MEMBER_ID') memberId = `${options.name}-${++incarnation}`;
      }
    }

    for (const p of ownedList()) {
      const position = owned.get(p)!;
      const { value } = await recorder.run<PollOp, Awaited<ReturnType<typeof client.fetch>>>(
        'poll',
        options.name,
        { partition: p, offset: position, records: [] },
        () => client.fetch(topic, p, position, { maxBytes: randomInt(random, 1, 400) }),
        (r) => ({
          records: r.records.map((rec) => ({ offset: rec.offset, value: renderRecord(rec) })),
          nextOffset: r.nextOffset,
          highWatermark: r.highWatermark,
          logStartOffset: r.logStartOffset,
        }),
      );
      if (!value || !owned.has(p)) continue;
      owned.set(p, value.nextOffset);
      if (value.nextOffset !== position) await commit(ctx, options, memberId, epoch, p, value.nextOffset);
    }
    if (random() < 0.2) await fetchOffsets(ctx, options.group);
    await ctx.sleep(randomInt(random, Math.floor(options.heartbeatMs / 2), options.heartbeatMs));
  }

  const leave = recorder.invoke<HeartbeatOp>('heartbeat', options.name, {
    group: options.group,
    member: memberId,
    memberEpochSent: -1,
    owned: [],
  });
  owned.clear();
  try {
    const r = await client.heartbeat(options.group, { memberId, memberEpoch: -1, ownedPartitions: [] });
    leave('ok', { memberEpoch: r.memberEpoch, assignment: null });
  } catch (error) {
    leave(outcomeOfError(error), {}, errorName(error));
  }
};

const commit = async (
  ctx: WorkloadContext,
  options: MemberOptions,
  memberId: string,
  memberEpoch: number,
  partition: number,
  offset: number,
): Promise<void> => {
  await ctx.recorder.run<CommitOp, unknown>(
    'commit',
    options.name,
    {
      group: options.group,
      member: memberId,
      memberEpoch,
      offsets: [{ tp: tpId(ctx.topic, partition), offset }],
    },
    async () => {
      const r = await ctx.client.commitOffsets(options.group, {
        memberId,
        memberEpoch,
        offsets: [{ topic: ctx.topic, partition, offset }],
      });
      const failed = r.results.find((x) => x.error);
      if (failed?.error)
        throw Object.assign(new Error(failed.error.code), { code: failed.error.code, status: 400 });
      return r;
    },
    () => ({}),
  );
};

const committedOffset = async (ctx: WorkloadContext, group: string, partition: number): Promise<number> => {
  const offsets = await fetchOffsets(ctx, group);
  return offsets?.find((o) => o.tp === tpId(ctx.topic, partition))?.offset ?? 0;
};

const fetchOffsets = async (ctx: WorkloadContext, group: string) => {
  const { value } = await ctx.recorder.run<OffsetFetchOp, { tp: string; offset: number }[]>(
    'offsetFetch',
    'offsets-reader',
    { group, offsets: [] },
    async () =>
      (await ctx.client.fetchOffsets(group)).offsets
        .filter((o) => o.topic === ctx.topic)
        .map((o) => ({ tp: tpId(o.topic, o.partition), offset: o.offset })),
    (offsets) => ({ offsets }),
  );
  return value;
};

/** Members joining over time, some crashing; returns when all have left or crashed. */
export const runGroup = async (
  ctx: WorkloadContext,
  options: {
    group: string;
    members: number;
    heartbeatMs: number;
    until: () => boolean;
    crashChance?: number;
    random: Random;
  },
): Promise<void> => {
  await Promise.all(
    Array.from({ length: options.members }, async (_, i) => {
      await ctx.sleep(randomInt(options.random, 0, options.heartbeatMs * 4));
      await runMember(ctx, {
        name: `member-${i}`,
        group: options.group,
        heartbeatMs: options.heartbeatMs,
        until: options.until,
        ...(options.crashChance !== undefined ? { crashChance: options.crashChance } : {}),
      });
    }),
  );
};
