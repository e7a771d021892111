/**
 * One replicator pass (replicatePartition), exactly: what it copies, the LEO, caught-up time and HW
 * it writes and in how many writes, who rejoins and who leaves the ISR and why, when it probes a store
 * and when it elects, and how it behaves when stores fail, a write loses to a concurrent commit or
 * election, or the metadata store errors.
 */
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../../protocol/errors.js';
import { dataObjectPrefix } from '../../../../lib/core/keys.js';
import { replicatePartition } from '../../../../lib/core/replication/replicator.js';
import type { UpdateAction } from '../../../../lib/ports/metadata-store.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import type { MetadataCall } from '../../../support/seams.js';
import { LAG_MS, replicationCluster } from './replication-support.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';

/** Whether an update sets this attribute (a string) or this map entry ([stateAttr.logEndOffsets, store]). */
const sets = (call: MetadataCall, path: string | [string, string]) =>
  (call.actions ?? []).some(
    (a: UpdateAction) => 'set' in a && JSON.stringify(a.set) === JSON.stringify(path),
  );

/**
 * Topic `t` with `synced` records on every store and then `ahead` acks=1 records on the leader only;
 * `writes` lists every partition state update from then on (which attributes it set).
 */
const partition = async ({ synced = 3, ahead = 2, replicationFactor = 3 } = {}) => {
  const c = replicationCluster();
  const t = await c.create({ 'min.insync.replicas': '1' }, replicationFactor);
  for (let i = 0; i < synced; i++) await c.send(`s${i}`);
  for (let i = 0; i < ahead; i++) await c.send(`a${i}`, '1');
  const { leader, replicas } = await t.state();
  const [f1, f2] = replicas.filter((r) => r !== leader) as [string, string | undefined];
  const writes: MetadataCall[] = [];
  c.hooks.stateUpdate = (call, run) => {
    writes.push(call);
    return run();
  };
  c.lists.length = 0;
  c.calls.length = 0;
  c.stateReads.count = 0;
  // What a pass did; the state it left (`after`, for the partition gauges) is checked on its own below.
  const passWithState = () => replicatePartition(c.ctx, t.topic, 0);
  const pass = async () => {
    const { after: _after, ...did } = await passWithState();
    return did;
  };
  const keysOf = (store: string) => c.raw[Number(store.slice(1))]!.keys();
  return { c, ...t, leader, replicas, f1, f2: f2!, writes, pass, passWithState, keysOf };
};

describe('catching up followers in the ISR', () => {
  it('copies only the objects a follower lacks and moves its LEO, caught-up time and the HW in one write', async () => {
    const p = await partition({ replicationFactor: 2 });
    p.c.clock.time += 100;
    const readAt = p.c.clock.now();
    const { after, ...did } = await p.passWithState();
    expect(did).toEqual({ copied: 2, advanced: [p.f1], joined: [], left: [] });
    const s = await p.state();
    expect(after).toMatchObject({
      replicas: s.replicas,
      isr: s.isr,
      logEndOffsets: s.logEndOffsets,
      nextOffset: s.nextOffset,
    });
    expect([s.logEndOffsets, s.highWatermark, s.lastCaughtUpTimeMs[p.f1], s.isr]).toEqual([
      { [p.leader]: 5, [p.f1]: 5 },
      5,
      readAt,
      p.replicas,
    ]);
    expect(p.keysOf(p.f1)).toEqual(p.keysOf(p.leader));
    expect(p.writes).toHaveLength(1);
    expect([
      sets(p.writes[0]!, [stateAttr.logEndOffsets, p.f1]),
      sets(p.writes[0]!, stateAttr.highWatermark),
    ]).toEqual([true, true]);
    // It read the leader's store to copy: no probe needed.
    expect(p.c.lists).toEqual([]);
    expect((await p.c.read(p.f1)).values).toEqual(['s0', 's1', 's2', 'a0', 'a1']);
  });

  it('moves followers in parallel from one read, then raises the HW once more from a fresh read', async () => {
    const p = await partition();
    expect(await p.pass()).toEqual({ copied: 4, advanced: [p.f1, p.f2], joined: [], left: [] });
    const s = await p.state();
    expect([s.logEndOffsets, s.highWatermark]).toEqual([{ [p.leader]: 5, [p.f1]: 5, [p.f2]: 5 }, 5]);
    expect(
      p.writes.map((w) => [
        sets(w, [stateAttr.logEndOffsets, p.f1]),
        sets(w, [stateAttr.logEndOffsets, p.f2]),
        sets(w, stateAttr.highWatermark),
      ]),
    ).toEqual([
      [true, false, false],
      [false, true, false],
      [false, false, true],
    ]);
  });

  it('leaves a one-replica partition alone without a store call', async () => {
    const p = await partition({ replicationFactor: 1 });
    expect(await p.pass()).toEqual({ copied: 0, advanced: [], joined: [], left: [] });
    expect([p.c.calls, p.writes]).toEqual([[], []]);
  });

  it('with nothing to copy, probes the leader once and refreshes a caught-up time only past half the lag window', async () => {
    const p = await partition({ ahead: 0 });
    const prefix = dataObjectPrefix(p.topic.topicId);
    const start = (await p.state()).lastCaughtUpTimeMs;
    p.c.clock.time += LAG_MS / 2 - 1;
    expect(await p.pass()).toEqual({ copied: 0, advanced: [], joined: [], left: [] });
    expect([p.c.lists, p.writes]).toEqual([[{ store: p.leader, prefix, limit: 1 }], []]);
    // One read of the partition: nothing moved, so no HW raise and no shrink reads it again.
    expect(p.c.stateReads.count).toBe(1);
    p.c.clock.time += 1;
    const readAt = p.c.clock.now();
    expect(await p.pass()).toEqual({ copied: 0, advanced: [], joined: [], left: [] });
    const s = await p.state();
    expect(s.lastCaughtUpTimeMs).toEqual({ [p.leader]: start[p.leader], [p.f1]: readAt, [p.f2]: readAt });
    expect([s.logEndOffsets, s.highWatermark, p.writes.length]).toEqual([
      { [p.leader]: 3, [p.f1]: 3, [p.f2]: 3 },
      3,
      2,
    ]);
    // A refresh moved no LEO: no second round for either follower, no HW raise.
    expect(p.c.stateReads.count).toBe(2);
  });
});

describe('a failed leader', () => {
  it('is replaced when its store does not answer the probe, though nothing was to be copied', async () => {
    const p = await partition({ ahead: 0 });
    p.c.down.add(p.leader);
    expect(await p.pass()).toEqual({ copied: 0, advanced: [], joined: [], left: [], elected: p.f1 });
    const s = await p.state();
    expect([s.leader, s.leaderEpoch, s.isr]).toEqual([p.f1, 1, [p.f1, p.f2]]);
  });

  it('is replaced when its store answers LISTs but fails the reads of a copy; nothing reaches the followers', async () => {
    const p = await partition();
    const before = p.keysOf(p.f1);
    p.c.refused.add(`${p.leader}:get`);
    expect(await p.pass()).toEqual({ copied: 0, advanced: [], joined: [], left: [], elected: p.f1 });
    const s = await p.state();
    // acks=1 records no follower had are truncated, as in Kafka.
    expect([s.leader, s.leaderEpoch, s.nextOffset, s.highWatermark]).toEqual([p.f1, 1, 3, 3]);
    expect([p.keysOf(p.f1), p.keysOf(p.f2)]).toEqual([before, before]);
  });

  it('is left in place when someone else elected since the pass read the partition', async () => {
    const p = await partition({ ahead: 0 });
    p.c.down.add(p.leader);
    p.c.hooks.objectCall = async (call) => {
      if (call.store !== p.leader || call.op !== 'list') return;
      p.c.hooks.objectCall = undefined;
      await p.arrange([
        { set: 'leaderEpoch', value: 1 },
        { set: 'leader', value: p.f2 },
      ]);
    };
    expect(await p.pass()).toEqual({ copied: 0, advanced: [], joined: [], left: [] });
    expect([(await p.state()).leader, (await p.state()).leaderEpoch]).toEqual([p.f2, 1]);
  });

  it('whose election fails on a metadata store error fails the pass with that error', async () => {
    const p = await partition({ ahead: 0 });
    p.c.down.add(p.leader);
    const error = new SluiceError('KAFKA_STORAGE_ERROR', 'metadata store down');
    p.c.hooks.stateUpdate = () => Promise.reject(error);
    await expect(p.pass()).rejects.toBe(error);
  });
});

describe('followers leaving the ISR', () => {
  it('a follower whose store fails a copy leaves at once, though it caught up a moment ago', async () => {
    const p = await partition();
    p.c.refused.add(`${p.f1}:put`);
    expect(await p.pass()).toEqual({ copied: 2, advanced: [p.f2], joined: [], left: [p.f1] });
    const s = await p.state();
    expect([s.isr, s.highWatermark, s.logEndOffsets[p.f1]]).toEqual([[p.leader, p.f2], 5, 3]);
    // The pass, f2's check for another round, the shrink and the HW raise: no lagging shrink read.
    expect(p.c.stateReads.count).toBe(4);
  });

  it('a follower behind for longer than replica.lag.time.max.ms leaves when its write loses; one that advances stays', async () => {
    const p = await partition();
    p.c.clock.time += LAG_MS + 1;
    p.c.hooks.stateUpdate = (call, run) => {
      p.writes.push(call);
      return sets(call, [stateAttr.logEndOffsets, p.f1])
        ? Promise.reject(new ConditionFailedError(undefined))
        : run();
    };
    expect(await p.pass()).toEqual({ copied: 4, advanced: [p.f2], joined: [], left: [p.f1] });
    const s = await p.state();
    expect([s.isr, s.highWatermark, s.logEndOffsets[p.f1], s.logEndOffsets[p.f2]]).toEqual([
      [p.leader, p.f2],
      5,
      3,
      5,
    ]);
  });

  it('a failed and a lagging follower leave in one pass, each for its own reason', async () => {
    const p = await partition();
    p.c.refused.add(`${p.f1}:put`);
    await p.arrange([{ set: [stateAttr.lastCaughtUpTimeMs, p.f2], value: p.c.clock.now() - LAG_MS - 1 }]);
    p.c.hooks.stateUpdate = (call, run) => {
      p.writes.push(call);
      return sets(call, [stateAttr.logEndOffsets, p.f2])
        ? Promise.reject(new ConditionFailedError(undefined))
        : run();
    };
    expect(await p.pass()).toEqual({ copied: 2, advanced: [], joined: [], left: [p.f1, p.f2] });
    expect((await p.state()).isr).toEqual([p.leader]);
  });

  it('a metadata store error on one follower write leaves that follower for the next pass; the others go on', async () => {
    const p = await partition();
    p.c.hooks.stateUpdate = (call, run) =>
      sets(call, [stateAttr.logEndOffsets, p.f1])
        ? Promise.reject(new SluiceError('KAFKA_STORAGE_ERROR', 'down'))
        : run();
    expect(await p.pass()).toEqual({ copied: 4, advanced: [p.f2], joined: [], left: [] });
    const s = await p.state();
    expect([s.isr, s.highWatermark, s.logEndOffsets]).toEqual([
      p.replicas,
      3,
      { [p.leader]: 5, [p.f1]: 3, [p.f2]: 5 },
    ]);
  });
});

describe('followers rejoining the ISR', () => {
  /** f2 left the ISR and missed `missed` acks=all records while down (none: it left holding all), and is back. */
  const outOfSync = async (missed: number) => {
    const p = await partition({ ahead: 0 });
    p.c.down.add(p.f2);
    for (let i = 0; i < missed; i++) await p.c.send(`m${i}`);
    if (missed === 0) await p.arrange([{ set: 'isr', value: [p.leader, p.f1] }]);
    p.c.down.delete(p.f2);
    expect((await p.state()).isr).toEqual([p.leader, p.f1]);
    // This process caches the shrunk ISR; a rejoin must update it.
    await p.c.ctx.leadership.get(p.topic, 0);
    p.writes.length = 0;
    p.c.lists.length = 0;
    return p;
  };

  it('copies what it missed and joins in the same write, without a probe, and this process sees the new ISR', async () => {
    const p = await outOfSync(2);
    expect(await p.pass()).toEqual({ copied: 2, advanced: [p.f2], joined: [p.f2], left: [] });
    const s = await p.state();
    expect([s.isr, s.highWatermark, s.logEndOffsets[p.f2]]).toEqual([p.replicas, 5, 5]);
    expect(p.c.lists).toEqual([]);
    expect(p.writes).toHaveLength(1);
    expect((await p.c.ctx.leadership.get(p.topic, 0)).isr).toEqual(p.replicas);
  });

  it('with nothing to copy, rejoins only after its store answers a probe', async () => {
    const p = await outOfSync(0);
    const prefix = dataObjectPrefix(p.topic.topicId);
    p.c.down.add(p.f2);
    expect(await p.pass()).toEqual({ copied: 0, advanced: [], joined: [], left: [] });
    expect((await p.state()).isr).toEqual([p.leader, p.f1]);
    p.c.down.delete(p.f2);
    p.c.lists.length = 0;
    expect(await p.pass()).toEqual({ copied: 0, advanced: [], joined: [p.f2], left: [] });
    expect((await p.state()).isr).toEqual(p.replicas);
    expect(p.c.lists).toEqual([
      { store: p.f2, prefix, limit: 1 },
      { store: p.leader, prefix, limit: 1 },
    ]);
  });

  it('joins alone: another out-of-sync replica that does not answer stays out', async () => {
    const p = await outOfSync(0);
    await p.arrange([{ set: 'isr', value: [p.leader] }]);
    p.c.down.add(p.f1);
    expect(await p.pass()).toEqual({ copied: 0, advanced: [], joined: [p.f2], left: [] });
    expect((await p.state()).isr).toEqual([p.leader, p.f2]);
  });

  /** Every join write first lets an acks=all commit to the old ISR land, `times` times. */
  const racedByCommits = (p: Awaited<ReturnType<typeof outOfSync>>, times: number) => {
    let raced = 0;
    p.c.hooks.stateUpdate = async (call, run) => {
      if (sets(call, 'isr') && raced < times) {
        raced++;
        expect((await p.c.send(`r${raced}`)).status).toBe(200);
      }
      p.writes.push(call);
      return run();
    };
  };

  it('keeps what it copied when a commit moves the HW past it, and tries again until it fits', async () => {
    const p = await outOfSync(2);
    racedByCommits(p, 2);
    expect(await p.pass()).toEqual({
      copied: 4,
      advanced: [p.f2, p.f2, p.f2],
      joined: [p.f2],
      left: [],
    });
    const s = await p.state();
    expect([s.isr, s.nextOffset, s.highWatermark, s.logEndOffsets[p.f2]]).toEqual([p.replicas, 7, 7, 7]);
  });

  it('gives up after 5 rounds under a commit stream, out of the ISR with all it copied', async () => {
    const p = await outOfSync(2);
    racedByCommits(p, Number.POSITIVE_INFINITY);
    expect(await p.pass()).toEqual({
      copied: 6,
      advanced: [p.f2, p.f2, p.f2, p.f2, p.f2],
      joined: [],
      left: [],
    });
    const s = await p.state();
    expect([s.isr, s.nextOffset, s.highWatermark, s.logEndOffsets[p.f2]]).toEqual([
      [p.leader, p.f1],
      10,
      10,
      9,
    ]);
  });
});

describe('writes racing the pass', () => {
  it("a follower's write loses to an election made since the pass read the partition", async () => {
    const p = await partition({ replicationFactor: 2 });
    let raced = false;
    p.c.hooks.stateUpdate = async (_call, run) => {
      if (!raced) {
        raced = true;
        await p.arrange([{ set: 'leaderEpoch', value: 1 }]);
      }
      return run();
    };
    expect(await p.pass()).toEqual({ copied: 2, advanced: [], joined: [], left: [] });
    const s = await p.state();
    expect([s.leaderEpoch, s.logEndOffsets[p.f1], s.highWatermark]).toEqual([1, 3, 3]);
  });

  it('the HW raise loses to a truncating election and never puts the HW past the log end', async () => {
    const p = await partition();
    p.c.hooks.stateUpdate = async (call, run) => {
      if (call.actions?.length === 1 && sets(call, stateAttr.highWatermark)) {
        await p.arrange([
          { set: 'leaderEpoch', value: 1 },
          { set: 'nextOffset', value: 4 },
          { set: stateAttr.logEndOffsets, value: { [p.leader]: 4, [p.f1]: 4, [p.f2]: 4 } },
        ]);
      }
      return run();
    };
    expect(await p.pass()).toEqual({ copied: 4, advanced: [p.f1, p.f2], joined: [], left: [] });
    expect([(await p.state()).nextOffset, (await p.state()).highWatermark]).toEqual([4, 3]);
  });

  it('the HW raise fails the pass on a metadata store error', async () => {
    const p = await partition();
    const error = new SluiceError('KAFKA_STORAGE_ERROR', 'metadata store down');
    p.c.hooks.stateUpdate = (call, run) =>
      call.actions?.length === 1 && sets(call, stateAttr.highWatermark) ? Promise.reject(error) : run();
    await expect(p.pass()).rejects.toBe(error);
  });
});
