/**
 * Replication on in-memory stores, step by step: assignment, acks=all and acks=1 commits, the HW,
 * ISR shrink on a failed write, NOT_ENOUGH_REPLICAS, catch-up and rejoin, failover with truncation,
 * PREFERRED and UNCLEAN elections, and the topic and cluster descriptions.
 */
import { describe, expect, it } from 'vitest';
import type { PartitionState } from '../../../../lib/core/log/partition-state.js';
import { effectiveConfig } from '../../../../lib/core/topics/configs.js';
import { decodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import { assignReplicas } from '../../../../lib/core/replication/assignment.js';
import { replicatePartition } from '../../../../lib/core/replication/replicator.js';
import { LAG_MS, replicationCluster } from './replication-support.js';

const cluster = replicationCluster;

describe('replica assignment', () => {
  it('puts the replicas of a partition on distinct stores and spreads leaders evenly', () => {
    const stores = ['s0', 's1', 's2'];
    const all = Array.from({ length: 6 }, (_, p) => assignReplicas(stores, 'topic-a', p, 3));
    for (const replicas of all) expect(new Set(replicas).size).toBe(3);
    const leaders = all.map((r) => r[0]);
    expect(stores.map((s) => leaders.filter((l) => l === s).length)).toEqual([2, 2, 2]);
    expect(assignReplicas(stores, 'topic-a', 0, 2)).toEqual(all[0]!.slice(0, 2));
  });

  it('refuses a replication factor above the store count with INVALID_REPLICATION_FACTOR', async () => {
    const c = cluster(2);
    const r = await c.http('POST', '/v1/topics', { name: 't', replicationFactor: 3 });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_REPLICATION_FACTOR');
    expect((await c.http('GET', '/v1/topics')).body.topics).toEqual([]);
  });
});

describe('acks=all', () => {
  it('writes every ISR store, moves every LEO and the HW in the commit, and stamps the leader epoch', async () => {
    const c = cluster();
    const { state } = await c.create({ 'min.insync.replicas': '2' });
    expect((await c.send('a')).body.results[0]).toMatchObject({ offset: 0 });
    const s = await state();
    expect(s.highWatermark).toBe(1);
    expect(s.logEndOffsets).toEqual({ s0: 1, s1: 1, s2: 1 });
    const key = s.tail[0]!.objectKey;
    for (const store of c.raw) expect(store.keys()).toEqual([key]);
    const batch = decodeRecordBatch(await c.raw[0]!.get(key));
    expect(batch.header.partitionLeaderEpoch).toBe(0);
    for (const replica of s.replicas) expect((await c.read(replica)).values).toEqual(['a']);
  });

  it('drops a follower that fails the write from the ISR and still acknowledges with min.insync=2', async () => {
    const c = cluster();
    const { state } = await c.create({ 'min.insync.replicas': '2' });
    const [, , third] = (await state()).replicas;
    c.down.add(third!);
    const r = await c.send('a');
    expect(r.status).toBe(200);
    const s = await state();
    expect(s.isr).toEqual(s.replicas.slice(0, 2));
    expect(s.highWatermark).toBe(1);
    expect(s.logEndOffsets[third!]).toBe(0);
    const described = (await c.http('GET', '/v1/topics/t')).body.partitions[0];
    expect(described).toMatchObject({ isr: s.replicas.slice(0, 2), osr: [third], highWatermark: 1 });
    expect(described.logEndOffsets).toEqual({ [s.replicas[0]!]: 1, [s.replicas[1]!]: 1, [third!]: 0 });
    expect((await c.read(third)).body.error.code).toBe('NOT_LEADER_OR_FOLLOWER');
  });

  it('answers NOT_LEADER_OR_FOLLOWER to replica= naming a store that is no (in-sync) replica, whatever the offset', async () => {
    const c = replicationCluster();
    const { state } = await c.create({}, 1);
    await c.send('a');
    const s = await state();
    expect(s.highWatermark).toBe(1);
    const others = c.raw.map((store) => store.id).filter((name) => !s.replicas.includes(name));
    expect(others).toHaveLength(2);
    const answers = [];
    for (const replica of [...others, 'no-such-store'])
      for (const offset of [0, 1]) {
        const r = await c.http(
          'GET',
          `/v1/topics/t/partitions/0/records?offset=${offset}&replica=${replica}`,
        );
        answers.push([replica, offset, r.status, r.body.error?.code]);
      }
    expect(answers).toEqual(
      [...others, 'no-such-store'].flatMap((replica) => [
        [replica, 0, 503, 'NOT_LEADER_OR_FOLLOWER'],
        [replica, 1, 503, 'NOT_LEADER_OR_FOLLOWER'],
      ]),
    );
    expect((await c.read(s.replicas[0])).values).toEqual(['a']);
  });

  it('refuses with NOT_ENOUGH_REPLICAS below min.insync.replicas, writes nothing, and reads go on', async () => {
    const c = cluster();
    const { state } = await c.create({ 'min.insync.replicas': '2' });
    await c.send('a');
    const [, second, third] = (await state()).replicas;
    c.down.add(second!);
    c.down.add(third!);
    const r = await c.send('b');
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ code: 'NOT_ENOUGH_REPLICAS', retriable: true });
    const after = await state();
    expect(after.isr).toEqual([after.leader]);
    expect(after.nextOffset).toBe(1);
    const again = await c.send('c');
    expect(again.body.error.code).toBe('NOT_ENOUGH_REPLICAS');
    expect((await c.read()).values).toEqual(['a']);
    expect((await c.send('d', '1')).status).toBe(200);
  });

  it('rejoins a restored store once the replicator has copied it up to the leader', async () => {
    const c = cluster();
    const { topic, state } = await c.create({ 'min.insync.replicas': '2' });
    const [, , third] = (await state()).replicas;
    c.down.add(third!);
    await c.send('a');
    await c.send('b');
    c.down.delete(third!);
    const pass = await replicatePartition(c.sluice.log, topic, 0);
    expect(pass).toMatchObject({ copied: 2, advanced: [third], joined: [third], left: [] });
    const s = await state();
    expect(s.isr).toEqual(s.replicas);
    expect(s.logEndOffsets[third!]).toBe(2);
    expect((await c.read(third)).values).toEqual(['a', 'b']);
  });
});

describe('replication beside segments', () => {
  it('rejoins a follower whose LEO is below the rolled segments without reading them from the leader store', async () => {
    const c = cluster(3, { segments: true });
    const { topic, state } = await c.create({ 'segment.ms': '1' });
    const before = await state();
    const [, , third] = before.replicas;
    c.down.add(third!);
    await c.send('a');
    await c.send('b');
    expect((await state()).isr).not.toContain(third);
    await c.sluice.maintenance.indexTail(topic.topicId, 0);
    c.clock.time += 1_000;
    const config = effectiveConfig(topic.configs);
    expect(await c.sluice.maintenance.rollSegments(topic.topicId, 0, config)).toBe(1);
    expect((await state())['segEnd' as keyof PartitionState]).toBe(2);
    c.down.delete(third!);
    // The segment lives in the segment store only: copying it from the leader's store would fail and
    // be taken for a dead leader (an election).
    const pass = await replicatePartition(c.sluice.log, topic, 0);
    expect(pass.elected).toBeUndefined();
    expect(pass).toMatchObject({ joined: [third], left: [] });
    const s = await state();
    expect([s.leader, s.leaderEpoch, s.isr]).toEqual([before.leader, before.leaderEpoch, s.replicas]);
    expect((await c.read(third)).values).toEqual(['a', 'b']);
  });
});

describe('acks=1', () => {
  it('commits on the leader only; the HW waits for the replicator', async () => {
    const c = cluster();
    const { topic, state } = await c.create({ 'min.insync.replicas': '2' });
    expect((await c.send('a', '1')).body.results[0]).toMatchObject({ offset: 0 });
    let s = await state();
    expect([s.nextOffset, s.highWatermark, s.logEndOffsets[s.leader]]).toEqual([1, 0, 1]);
    expect((await c.read()).values).toEqual([]);
    await replicatePartition(c.sluice.log, topic, 0);
    s = await state();
    expect(s.highWatermark).toBe(1);
    expect((await c.read()).values).toEqual(['a']);
  });

  it('shrinks a follower that stays behind for replica.lag.time.max.ms, then an acks=all write catches up the rest', async () => {
    const c = cluster();
    const { topic, state } = await c.create({ 'min.insync.replicas': '2' });
    const [, second, third] = (await state()).replicas;
    await c.send('a', '1');
    c.down.add(third!);
    c.clock.time += LAG_MS + 1;
    const pass = await replicatePartition(c.sluice.log, topic, 0);
    expect(pass.left).toEqual([third]);
    const s = await state();
    expect(s.isr).toEqual([s.leader, second]);
    expect(s.highWatermark).toBe(1);
    await c.send('b', '1');
    // acks=all finds the ISR follower one batch behind and replicates before it commits.
    expect((await c.send('c')).body.results[0]).toMatchObject({ offset: 2 });
    expect((await state()).highWatermark).toBe(3);
  });
});

describe('leader election', () => {
  it('elects an ISR follower when the leader store fails a write, bumps the epoch, and the retry succeeds', async () => {
    const c = cluster();
    const { state } = await c.create({ 'min.insync.replicas': '2' });
    await c.send('a');
    const before = await state();
    c.down.add(before.leader);
    const failed = await c.send('b');
    expect(failed.status).toBe(503);
    expect(failed.body.error.code).toBe('NOT_LEADER_OR_FOLLOWER');
    const after = await state();
    expect(after.leaderEpoch).toBe(1);
    expect(after.leader).toBe(before.replicas[1]);
    expect(after.isr).toEqual(before.replicas.slice(1));
    expect((await c.send('b')).body.results[0]).toMatchObject({ offset: 1 });
    expect((await c.read()).values).toEqual(['a', 'b']);
    const key = (await state()).tail[1]!.objectKey;
    expect(
      decodeRecordBatch(await c.raw[Number(after.leader.slice(1))]!.get(key)).header.partitionLeaderEpoch,
    ).toBe(1);
  });

  it('truncates acks=1 records no follower had, and never below the HW', async () => {
    const c = cluster();
    const { topic, state } = await c.create({ 'min.insync.replicas': '2' });
    await c.send('a');
    await c.send('b', '1');
    const before = await state();
    expect([before.highWatermark, before.nextOffset]).toEqual([1, 2]);
    c.down.add(before.leader);
    const pass = await replicatePartition(c.sluice.log, topic, 0);
    expect(pass.elected).toBe(before.replicas[1]);
    const after = await state();
    expect([after.leaderEpoch, after.nextOffset, after.highWatermark, after.tail.length]).toEqual([
      1, 1, 1, 1,
    ]);
    expect((await c.read()).values).toEqual(['a']);
  });

  it('leaves the partition to its leader when no ISR member is left and unclean election is off', async () => {
    const c = cluster();
    const { topic, state } = await c.create({ 'min.insync.replicas': '1' });
    const [first, second, third] = (await state()).replicas;
    c.down.add(second!);
    c.down.add(third!);
    await c.send('a');
    expect((await state()).isr).toEqual([first]);
    c.down.clear();
    c.down.add(first!);
    await replicatePartition(c.sluice.log, topic, 0);
    expect((await state()).leader).toBe(first);
    const unclean = await c.http('POST', '/v1/topics/t/elect-leaders', { electionType: 'UNCLEAN' });
    expect(unclean.status).toBe(400);
    expect(unclean.body.error.code).toBe('INVALID_REQUEST');
  });

  it('UNCLEAN lets an out-of-sync replica lead where the topic allows it, and reports the truncation', async () => {
    const c = cluster();
    const { state } = await c.create({
      'min.insync.replicas': '1',
      'unclean.leader.election.enable': 'true',
    });
    const [first, second, third] = (await state()).replicas;
    c.down.add(second!);
    c.down.add(third!);
    await c.send('a');
    c.down.clear();
    const alive = await c.http('POST', '/v1/topics/t/elect-leaders', { electionType: 'UNCLEAN' });
    expect(alive.body.results).toEqual([
      { partition: 0, error: expect.objectContaining({ code: 'ELECTION_NOT_NEEDED' }) },
    ]);
    c.down.add(first!);
    const r = await c.http('POST', '/v1/topics/t/elect-leaders', {
      electionType: 'UNCLEAN',
      partitions: [0],
    });
    expect(r.status).toBe(200);
    expect(r.body.results).toEqual([
      { partition: 0, leader: second, leaderEpoch: 1, truncatedFrom: 1, truncatedTo: 0 },
    ]);
    const s = await state();
    expect([s.isr, s.highWatermark, s.nextOffset]).toEqual([[second], 0, 0]);
  });

  it('PREFERRED moves leadership back once the first replica is in sync', async () => {
    const c = cluster();
    const { topic, state } = await c.create({ 'min.insync.replicas': '2' });
    const [first, second] = (await state()).replicas;
    c.down.add(first!);
    await c.send('a');
    expect((await c.send('a')).status).toBe(200);
    expect((await state()).leader).toBe(second);
    const early = await c.http('POST', '/v1/topics/t/elect-leaders', { electionType: 'PREFERRED' });
    expect(early.body.results[0].error.code).toBe('PREFERRED_LEADER_NOT_AVAILABLE');
    c.down.delete(first!);
    await replicatePartition(c.sluice.log, topic, 0);
    const r = await c.http('POST', '/v1/topics/t/elect-leaders', { electionType: 'PREFERRED' });
    expect(r.body.results).toEqual([{ partition: 0, leader: first, leaderEpoch: 2 }]);
    const again = await c.http('POST', '/v1/topics/t/elect-leaders', { electionType: 'PREFERRED' });
    expect(again.body.results[0].error.code).toBe('ELECTION_NOT_NEEDED');
    expect((await c.read()).values).toEqual(['a']);
  });

  it('rejects a malformed elect-leaders request and changes nothing', async () => {
    const c = cluster();
    const { state } = await c.create();
    for (const body of [
      { electionType: 'FAST' },
      { electionType: 'PREFERRED', partitions: [] },
      { electionType: 'PREFERRED', partitions: [0, 0] },
      { electionType: 'PREFERRED', partitions: ['0'] },
      { electionType: 'PREFERRED', extra: 1 },
    ]) {
      const r = await c.http('POST', '/v1/topics/t/elect-leaders', body);
      expect([r.status, r.body.error.code]).toEqual([400, 'INVALID_REQUEST']);
    }
    const r = await c.http('POST', '/v1/topics/t/elect-leaders', {
      electionType: 'PREFERRED',
      partitions: [1],
    });
    expect([r.status, r.body.error.code]).toEqual([404, 'UNKNOWN_TOPIC_OR_PARTITION']);
    expect((await state()).leaderEpoch).toBe(0);
  });
});

describe('GET /v1/cluster', () => {
  it('lists every store with its kind', async () => {
    const c = cluster();
    const r = await c.http('GET', '/v1/cluster');
    expect(r.body.stores).toEqual([
      { id: 's0', location: 'memory://s0', kind: 'standard' },
      { id: 's1', location: 'memory://s1', kind: 'standard' },
      { id: 's2', location: 'memory://s2', kind: 'standard' },
    ]);
  });
});
