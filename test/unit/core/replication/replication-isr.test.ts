/**
 * ISR shrink (removeFromIsr) on an arranged partition item: who leaves for a failed write and who
 * for lagging past replica.lag.time.max.ms (exactly at the bound and past it), the HW it raises, the
 * epoch it is fenced by, the failed leader it hands to an election, the writes it does not make, and
 * a conditional write that loses to a concurrent change.
 */
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../../protocol/errors.js';
import { removeFromIsr } from '../../../../lib/core/replication/isr.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import { LAG_MS, arrangedPartition } from './replication-support.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';

const partition = async (leos: [number, number], caughtUpAgo: [number, number] = [0, 0]) => {
  const p = await arrangedPartition({ leos, caughtUpAgo });
  const shrink = (stores: string[], reason: 'failed' | 'lagging', seenEpoch = 0) =>
    removeFromIsr(p.c.ctx, p.topic, 0, stores, { reason, seenEpoch });
  return { ...p, shrink };
};

describe('removeFromIsr for a failed write', () => {
  it('drops the failed followers, raises the HW to the smallest LEO left, and returns the item written', async () => {
    const p = await partition([4, 2]);
    const after = await p.shrink([p.f2], 'failed');
    expect([after.isr, after.highWatermark, after.leaderEpoch, after.leader]).toEqual([
      [p.leader, p.f1],
      4,
      0,
      p.leader,
    ]);
    expect(await p.state()).toEqual(after);
    expect(p.writes()).toBe(1);
  });

  it('keeps the HW where the ISR left still has it', async () => {
    const p = await partition([2, 4]);
    const after = await p.shrink([p.f2], 'failed');
    expect([after.isr, after.highWatermark]).toEqual([[p.leader, p.f1], 2]);
  });

  it('drops a caught-up follower too: a failed write is reason enough', async () => {
    const p = await partition([5, 5]);
    const after = await p.shrink([p.f1, p.f2], 'failed');
    expect([after.isr, after.highWatermark]).toEqual([[p.leader], 5]);
  });

  it('hands a failed leader to a FAILOVER election that excludes every failed store', async () => {
    const p = await partition([5, 4]);
    const after = await p.shrink([p.leader, p.f1], 'failed');
    expect([after.leader, after.leaderEpoch, after.isr]).toEqual([p.f2, 1, [p.f2]]);
    expect([after.nextOffset, after.highWatermark, after.logEndOffsets]).toEqual([
      4,
      4,
      { [p.leader]: 4, [p.f1]: 4, [p.f2]: 4 },
    ]);
  });

  it('changes nothing, and writes nothing, for stores already out of the ISR or under a newer epoch', async () => {
    const p = await partition([5, 2]);
    await p.shrink([p.f2], 'failed');
    const before = await p.state();
    expect(await p.shrink([p.f2], 'failed')).toEqual(before);
    expect(await p.shrink([p.f1], 'failed', 1)).toEqual(before);
    expect(await p.state()).toEqual(before);
    expect(p.writes()).toBe(1);
  });
});

describe('removeFromIsr for lagging', () => {
  it('drops a follower behind the leader once it has not caught up for more than replica.lag.time.max.ms', async () => {
    const p = await partition([5, 3], [LAG_MS + 1, LAG_MS + 1]);
    const after = await p.shrink([p.f1, p.f2], 'lagging');
    expect([after.isr, after.highWatermark]).toEqual([[p.leader, p.f1], 5]);
  });

  it('keeps a follower behind for exactly replica.lag.time.max.ms, and writes nothing', async () => {
    const p = await partition([3, 3], [LAG_MS, LAG_MS]);
    const after = await p.shrink([p.f1, p.f2], 'lagging');
    expect(after.isr).toEqual(p.replicas);
    expect(p.writes()).toBe(0);
  });

  it('keeps a follower that caught up recently, though it is behind now', async () => {
    const p = await partition([3, 3], [LAG_MS + 1, 10]);
    const after = await p.shrink([p.f1, p.f2], 'lagging');
    expect([after.isr, after.highWatermark]).toEqual([[p.leader, p.f2], 3]);
  });

  it('never drops the leader, nor hands it to an election, for lagging', async () => {
    const p = await partition([3, 3], [LAG_MS + 1, 0]);
    p.c.clock.time += LAG_MS + 1;
    const after = await p.shrink([p.leader, p.f1], 'lagging');
    expect([after.leader, after.leaderEpoch, after.isr]).toEqual([p.leader, 0, [p.leader, p.f2]]);
  });
});

describe('removeFromIsr against concurrent changes', () => {
  it('loses its write to an election made since its read, and then leaves the newer epoch alone', async () => {
    const p = await partition([5, 2]);
    let raced = false;
    p.c.hooks.stateUpdate = async (_call, run) => {
      if (!raced) {
        raced = true;
        await p.arrange([
          { set: 'leaderEpoch', value: 1 },
          { set: 'leader', value: p.f1 },
        ]);
      }
      return run();
    };
    const after = await p.shrink([p.f2], 'failed');
    expect([after.leaderEpoch, after.leader, after.isr]).toEqual([1, p.f1, p.replicas]);
    expect(await p.state()).toEqual(after);
  });

  it('applies while the epoch and ISR it read hold, though the HW rose meanwhile', async () => {
    const p = await partition([2, 2], [0, LAG_MS + 1]);
    p.c.hooks.stateUpdate = async (_call, run) => {
      // Both followers caught up to 5 between the read and the write (another replicator pass).
      await p.arrange([
        { set: [stateAttr.logEndOffsets, p.f1], value: 5 },
        { set: [stateAttr.logEndOffsets, p.f2], value: 5 },
        { set: stateAttr.highWatermark, value: 5 },
      ]);
      return run();
    };
    const after = await p.shrink([p.f2], 'lagging');
    expect([after.isr, after.highWatermark]).toEqual([[p.leader, p.f1], 5]);
  });

  it('gives up after 10 lost writes with a retriable NOT_LEADER_OR_FOLLOWER', async () => {
    const p = await partition([5, 2]);
    let attempts = 0;
    p.c.hooks.stateUpdate = () => {
      attempts++;
      return Promise.reject(new ConditionFailedError(undefined));
    };
    const error = await p.shrink([p.f2], 'failed').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceError);
    expect(error).toMatchObject({
      code: 'NOT_LEADER_OR_FOLLOWER',
      retriable: true,
      message: 'ISR shrink of t-0 kept conflicting with concurrent changes; retry',
    });
    expect(attempts).toBe(10);
    expect((await p.state()).isr).toEqual(p.replicas);
  });

  it('passes a store error through at once', async () => {
    const p = await partition([5, 2]);
    const down = new SluiceError('KAFKA_STORAGE_ERROR', 'metadata store down');
    p.c.hooks.stateUpdate = () => Promise.reject(down);
    await expect(p.shrink([p.f2], 'failed')).rejects.toBe(down);
  });
});
