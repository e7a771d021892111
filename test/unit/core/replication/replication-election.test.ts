/**
 * Leader election (electLeader) on an arranged partition item: which replica FAILOVER, UNCLEAN and
 * PREFERRED elect, the epoch, ISR, HW and LEOs they write, the truncation of records the new leader
 * lacks (with their Idempotency-Keys), every refusal with its code and message, and elections that
 * lose their conditional write to a concurrent commit or ISR change.
 */
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../../protocol/errors.js';
import type { ElectionOptions } from '../../../../lib/core/replication/election.js';
import { electLeader } from '../../../../lib/core/replication/election.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import type { ArrangedPartition } from './replication-support.js';
import { arrangedPartition } from './replication-support.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';

const partition = async (arrangement: ArrangedPartition) => {
  const p = await arrangedPartition(arrangement);
  const elect = (options: ElectionOptions) => electLeader(p.c.ctx, p.topic, 0, options);
  const refusal = (options: ElectionOptions) => elect(options).catch((e: unknown) => e);
  return { ...p, elect, refusal };
};

const unclean = { 'min.insync.replicas': '1', 'unclean.leader.election.enable': 'true' };

describe('FAILOVER', () => {
  it('elects the ISR member with the longest log, bumps the epoch, and keeps the HW and the log', async () => {
    const p = await partition({ leos: [3, 5], hw: 3 });
    p.c.clock.time += 250;
    const now = p.c.clock.now();
    const outcome = await p.elect({ type: 'FAILOVER', exclude: [p.leader], seenEpoch: 0 });
    const s = await p.state();
    expect(outcome).toEqual({ state: s, elected: true, unclean: false });
    expect([s.leader, s.leaderEpoch, s.isr, s.highWatermark, s.nextOffset]).toEqual([
      p.f2,
      1,
      [p.f1, p.f2],
      3,
      5,
    ]);
    expect(s.lastCaughtUpTimeMs[p.f2]).toBe(now);
    expect(s.logEndOffsets).toEqual({ [p.leader]: 5, [p.f1]: 3, [p.f2]: 5 });
    expect(p.writes()).toBe(1);
  });

  it('breaks a tie between equally long logs by assignment order', async () => {
    const p = await partition({ leos: [5, 5] });
    expect((await p.elect({ type: 'FAILOVER', exclude: [p.leader] })).state.leader).toBe(p.f1);
  });

  it('never elects an excluded store, even the one with the longest log', async () => {
    const p = await partition({ leos: [5, 4] });
    const outcome = await p.elect({ type: 'FAILOVER', exclude: [p.f1] });
    expect([outcome.state.leader, outcome.state.isr]).toEqual([p.f2, [p.f2]]);
  });

  it('truncates what the new leader lacks, caps every LEO at its log end, and reports the cut', async () => {
    const p = await partition({ leos: [4, 2] });
    const before = await p.state();
    const outcome = await p.elect({ type: 'FAILOVER', exclude: [p.leader] });
    const s = await p.state();
    // The log's byte total loses the dropped entry's bytes, in the same write.
    expect(s.logSizeBytes).toBe(before.logSizeBytes! - before.tail[4]!.sizeInBytes);
    expect(s.logSizeBytes).toBe(s.tail.reduce((sum, e) => sum + e.sizeInBytes, 0));
    expect(outcome).toEqual({ state: s, elected: true, unclean: false, truncated: { from: 5, to: 4 } });
    expect([s.leader, s.isr, s.nextOffset, s.tail.length, s.highWatermark]).toEqual([
      p.f1,
      [p.f1, p.f2],
      4,
      4,
      2,
    ]);
    expect(s.logEndOffsets).toEqual({ [p.leader]: 4, [p.f1]: 4, [p.f2]: 2 });
    expect([s.idempotencyKeys, s.idempotencyKeysGeneration]).toEqual([[], 0]);
  });

  it('does nothing once the partition has left the epoch the caller saw', async () => {
    const p = await partition({ leos: [5, 5] });
    const before = await p.state();
    expect(await p.elect({ type: 'FAILOVER', exclude: [p.leader], seenEpoch: 1 })).toEqual({
      state: before,
      elected: false,
      unclean: false,
    });
    expect(p.writes()).toBe(0);
  });
});

describe('elections that would lose data are refused', () => {
  it('with no other ISR member and unclean election off: ELIGIBLE_LEADERS_NOT_AVAILABLE', async () => {
    const p = await partition({ leos: [4, 2], hw: 5 });
    await p.arrange([{ set: 'isr', value: [p.leader] }]);
    const error = await p.refusal({ type: 'FAILOVER', exclude: [p.leader] });
    expect(error).toBeInstanceOf(SluiceError);
    expect(error).toMatchObject({
      code: 'ELIGIBLE_LEADERS_NOT_AVAILABLE',
      retriable: true,
      message: 'no in-sync replica of t-0 is left to lead, and unclean.leader.election.enable is false',
    });
    expect(p.writes()).toBe(0);
  });

  it('with no replica left at all, unclean or not', async () => {
    for (const configs of [unclean, { 'min.insync.replicas': '1' }]) {
      const p = await partition({ leos: [4, 2], hw: 5, configs });
      await p.arrange([{ set: 'isr', value: [p.leader] }]);
      const error = await p.refusal({ type: 'FAILOVER', exclude: [p.f1, p.f2] });
      expect(error).toMatchObject({
        code: 'ELIGIBLE_LEADERS_NOT_AVAILABLE',
        message: 'no replica of t-0 is left to lead',
      });
    }
  });

  it('below the indexed log: an unclean leader cannot cut records the batch index already holds', async () => {
    // The HW bounds what the tail hands to the batch index, and an in-sync leader holds the HW.
    const p = await partition({ leos: [1, 1], hw: 5, configs: unclean });
    p.c.hooks.stateUpdate = undefined;
    await p.arrange([{ set: 'isr', value: [p.leader] }]);
    await p.c.sluice.maintenance.indexTail(p.topic.topicId, 0);
    const before = await p.state();
    expect(before.tailBase).toBe(5);
    const error = await p.refusal({ type: 'UNCLEAN', exclude: [p.leader] });
    expect(error).toMatchObject({
      code: 'ELIGIBLE_LEADERS_NOT_AVAILABLE',
      message: `electing ${p.f1} on t-0 would truncate to 1, below the indexed log at 5`,
    });
    expect(await p.state()).toEqual(before);
  });

  it('after 10 lost conditional writes: a retriable NOT_LEADER_OR_FOLLOWER', async () => {
    const p = await partition({ leos: [5, 5] });
    let attempts = 0;
    p.c.hooks.stateUpdate = () => {
      attempts++;
      return Promise.reject(new ConditionFailedError(undefined));
    };
    const error = await p.refusal({ type: 'FAILOVER', exclude: [p.leader] });
    expect(error).toMatchObject({
      code: 'NOT_LEADER_OR_FOLLOWER',
      retriable: true,
      message: 'leader election of t-0 kept conflicting with concurrent changes; retry',
    });
    expect(attempts).toBe(10);
    expect((await p.state()).leaderEpoch).toBe(0);
  });
});

describe('UNCLEAN', () => {
  it('lets the longest out-of-sync log lead alone, with the HW at its LEO, and reports the truncation', async () => {
    const p = await partition({ leos: [4, 2], hw: 5, configs: unclean });
    await p.arrange([{ set: 'isr', value: [p.leader] }]);
    const outcome = await p.elect({ type: 'UNCLEAN', exclude: [p.leader], seenEpoch: 0 });
    const s = await p.state();
    expect(outcome).toEqual({ state: s, elected: true, unclean: true, truncated: { from: 5, to: 4 } });
    expect([s.leader, s.leaderEpoch, s.isr, s.highWatermark, s.nextOffset]).toEqual([p.f1, 1, [p.f1], 4, 4]);
    expect(s.logEndOffsets).toEqual({ [p.leader]: 4, [p.f1]: 4, [p.f2]: 2 });
  });

  it('never elects an excluded out-of-sync store', async () => {
    const p = await partition({ leos: [4, 2], hw: 5, configs: unclean });
    await p.arrange([{ set: 'isr', value: [p.leader] }]);
    const outcome = await p.elect({ type: 'UNCLEAN', exclude: [p.leader, p.f1] });
    expect([outcome.state.leader, outcome.state.isr, outcome.state.highWatermark]).toEqual([p.f2, [p.f2], 2]);
  });
});

describe('PREFERRED', () => {
  /** The first assigned replica lost the lead to the second, which now leads at epoch 1. */
  const movedAway = async (leos: [number, number], preferredLeo = 5) => {
    const p = await partition({ leos, hw: Math.min(preferredLeo, ...leos) });
    await p.arrange([
      { set: 'leader', value: p.f1 },
      { set: 'leaderEpoch', value: 1 },
      { set: [stateAttr.logEndOffsets, p.leader], value: preferredLeo },
    ]);
    return p;
  };

  it('moves the lead back to the first replica once it holds the whole log, keeping ISR and HW', async () => {
    const p = await movedAway([5, 3]);
    const outcome = await p.elect({ type: 'PREFERRED' });
    const s = await p.state();
    expect(outcome).toEqual({ state: s, elected: true, unclean: false });
    expect([s.leader, s.leaderEpoch, s.isr, s.highWatermark, s.nextOffset]).toEqual([
      p.leader,
      2,
      p.replicas,
      3,
      5,
    ]);
  });

  it('refuses while the first replica is behind, or out of the ISR: PREFERRED_LEADER_NOT_AVAILABLE', async () => {
    const behind = await movedAway([5, 5], 4);
    const out = await movedAway([5, 5]);
    await out.arrange([{ set: 'isr', value: [out.f1, out.f2] }]);
    for (const p of [behind, out]) {
      expect(await p.refusal({ type: 'PREFERRED' })).toMatchObject({
        code: 'PREFERRED_LEADER_NOT_AVAILABLE',
        retriable: true,
        message: `preferred replica ${p.leader} of t-0 is not in sync with the leader yet`,
      });
      expect((await p.state()).leaderEpoch).toBe(1);
    }
  });

  it('refuses where the first replica already leads: ELECTION_NOT_NEEDED', async () => {
    const p = await partition({ leos: [5, 5] });
    expect(await p.refusal({ type: 'PREFERRED' })).toMatchObject({
      code: 'ELECTION_NOT_NEEDED',
      retriable: false,
      message: `${p.leader} already leads t-0`,
    });
  });
});

describe('elections against concurrent writes', () => {
  it('loses to an ISR shrink made since its read, and elects again from the ISR left', async () => {
    const p = await partition({ leos: [5, 5] });
    let raced = false;
    p.c.hooks.stateUpdate = async (_call, run) => {
      if (!raced) {
        raced = true;
        await p.arrange([{ set: 'isr', value: [p.leader, p.f2] }]);
      }
      return run();
    };
    const outcome = await p.elect({ type: 'FAILOVER', exclude: [p.leader] });
    expect([outcome.state.leader, outcome.state.leaderEpoch, outcome.state.isr]).toEqual([p.f2, 1, [p.f2]]);
  });

  it('loses to an acks=1 commit that lands under the old epoch, and then truncates it', async () => {
    const p = await partition({ leos: [5, 5] });
    let raced = false;
    p.c.hooks.stateUpdate = async (_call, run) => {
      if (!raced) {
        raced = true;
        expect((await p.c.send('late', '1')).body.results[0]).toMatchObject({ offset: 5 });
      }
      return run();
    };
    const outcome = await p.elect({ type: 'FAILOVER', exclude: [p.leader] });
    const s = await p.state();
    expect(outcome).toEqual({ state: s, elected: true, unclean: false, truncated: { from: 6, to: 5 } });
    expect([s.leader, s.nextOffset, s.tail.length]).toEqual([p.f1, 5, 5]);
    expect(s.logEndOffsets).toEqual({ [p.leader]: 5, [p.f1]: 5, [p.f2]: 5 });
  });

  it('keeps an acks=all commit that landed under the old epoch: the new leader has it', async () => {
    const p = await partition({ leos: [5, 5] });
    let raced = false;
    let writes = 0;
    p.c.hooks.stateUpdate = async (_call, run) => {
      if (!raced) {
        raced = true;
        expect((await p.c.send('late')).body.results[0]).toMatchObject({ offset: 5 });
      }
      writes++;
      return run();
    };
    const outcome = await p.elect({ type: 'FAILOVER', exclude: [p.leader] });
    expect(outcome).toEqual({ state: await p.state(), elected: true, unclean: false });
    expect([outcome.state.leader, outcome.state.nextOffset, outcome.state.highWatermark]).toEqual([
      p.f1,
      6,
      6,
    ]);
    // The election's one write held: the commit kept the new leader at the log end.
    expect(writes).toBe(2);
  });
});

describe('truncation and Idempotency-Keys', () => {
  it('forgets the key of a truncated request, so its retry is appended anew; a kept key still answers', async () => {
    const p = await partition({ leos: [0, 0], values: [] });
    p.c.hooks.stateUpdate = undefined;
    const kept = await p.c.send('a', 'all', { 'idempotency-key': 'k1' });
    expect(kept.body.results[0]).toMatchObject({ offset: 0 });
    expect((await p.c.send('b', '1', { 'idempotency-key': 'k2' })).body.results[0]).toMatchObject({
      offset: 1,
    });
    const before = await p.state();
    expect([before.idempotencyKeys.length, before.idempotencyKeysGeneration]).toEqual([2, 0]);
    const outcome = await p.elect({ type: 'FAILOVER', exclude: [p.leader] });
    expect(outcome.truncated).toEqual({ from: 2, to: 1 });
    expect([outcome.state.idempotencyKeys, outcome.state.idempotencyKeysGeneration]).toEqual([
      [before.idempotencyKeys[0]],
      1,
    ]);
    const retried = await p.c.send('b', '1', { 'idempotency-key': 'k2' });
    expect([retried.status, retried.body.results[0].offset]).toEqual([200, 1]);
    expect(await p.c.send('a', 'all', { 'idempotency-key': 'k1' })).toMatchObject(kept);
  });
});
