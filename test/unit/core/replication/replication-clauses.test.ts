/**
 * The pure parts of replication, pinned exactly: the replica clauses every produce commit carries
 * (which LEOs move, when the HW moves with them, what fences the commit), the reading of a failed
 * commit's item, replica assignment, and the store time limit and liveness probe.
 */
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../../protocol/errors.js';
import { assignReplicas } from '../../../../lib/core/replication/assignment.js';
import type { ReplicaWrite } from '../../../../lib/core/replication/commit-clauses.js';
import {
  explainReplicaFailure,
  replicaCommitClauses,
} from '../../../../lib/core/replication/commit-clauses.js';
import { storeAnswers, withinLag } from '../../../../lib/core/replication/replication-context.js';
import { LAG_MS, replicationCluster } from './replication-support.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';

const write = (overrides: Partial<ReplicaWrite> = {}): ReplicaWrite => ({
  acks: 'all',
  leader: 's0',
  leaderEpoch: 3,
  isr: ['s0', 's1', 's2'],
  span: 2,
  now: 5_000,
  ...overrides,
});

const fencing = (isr: string[]) => [
  { path: 'leaderEpoch', op: '=', value: 3 },
  { path: 'isr', op: '=', value: isr },
];
const atLeaderLeo = (s: string) => ({ path: [stateAttr.logEndOffsets, s], op: '=', otherPath: 'nextOffset' });
const moves = (s: string) => [
  { set: [stateAttr.logEndOffsets, s], add: 2, from: 'nextOffset' },
  { set: [stateAttr.lastCaughtUpTimeMs, s], value: 5_000 },
];
const hwMoves = { set: stateAttr.highWatermark, add: 2, from: 'nextOffset' };

describe('replicaCommitClauses', () => {
  it('acks=all: every ISR store must be at the leader LEO; each LEO, caught-up time and the HW move by the span', () => {
    expect(replicaCommitClauses(write())).toEqual({
      conditions: [...fencing(['s0', 's1', 's2']), atLeaderLeo('s0'), atLeaderLeo('s1'), atLeaderLeo('s2')],
      actions: [...moves('s0'), ...moves('s1'), ...moves('s2'), hwMoves],
    });
  });

  it('acks=1: only the leader LEO moves, and the HW stays for the replicator', () => {
    expect(replicaCommitClauses(write({ acks: '1' }))).toEqual({
      conditions: [...fencing(['s0', 's1', 's2']), atLeaderLeo('s0')],
      actions: moves('s0'),
    });
  });

  it('acks=1 on an ISR of the leader alone moves the HW with the leader LEO', () => {
    expect(replicaCommitClauses(write({ acks: '1', isr: ['s0'] }))).toEqual({
      conditions: [...fencing(['s0']), atLeaderLeo('s0')],
      actions: [...moves('s0'), hwMoves],
    });
  });

  it('acks=1 on a one-store ISR moves the HW in the commit itself (no replicator pass)', async () => {
    const c = replicationCluster();
    const { state } = await c.create({ 'min.insync.replicas': '1' }, 1);
    expect((await c.send('a', '1')).body.results[0]).toMatchObject({ offset: 0 });
    const s = await state();
    expect([s.isr, s.nextOffset, s.highWatermark]).toEqual([[s.leader], 1, 1]);
    expect((await c.read()).values).toEqual(['a']);
  });
});

describe('explainReplicaFailure', () => {
  const item = (overrides: Partial<Parameters<typeof explainReplicaFailure>[1]> = {}) => ({
    leaderEpoch: 3,
    isr: ['s0', 's1', 's2'],
    nextOffset: 10,
    logEndOffsets: { s0: 10, s1: 10, s2: 10 },
    ...overrides,
  });

  it('names a newer leader epoch first', () => {
    expect(explainReplicaFailure(write(), item({ leaderEpoch: 4, isr: ['s1'] }))).toBe('fenced-epoch');
  });

  it('names an ISR that shrank, grew or changed a member under the same epoch', () => {
    expect(explainReplicaFailure(write(), item({ isr: ['s0', 's1'] }))).toBe('fenced-isr');
    expect(explainReplicaFailure(write({ isr: ['s0', 's1'] }), item())).toBe('fenced-isr');
    expect(explainReplicaFailure(write({ isr: ['s0', 's1'] }), item({ isr: ['s0'] }))).toBe('fenced-isr');
    expect(explainReplicaFailure(write({ isr: ['s0', 's1'] }), item({ isr: ['s0', 's2'] }))).toBe(
      'fenced-isr',
    );
  });

  it('names a leader LEO that is not the log end (a damaged item)', () => {
    expect(explainReplicaFailure(write(), item({ logEndOffsets: { s0: 9, s1: 10, s2: 10 } }))).toBe(
      'leader-diverged',
    );
  });

  it('acks=all: names an ISR follower behind the leader; acks=1 does not wait for followers', () => {
    const behind = item({ logEndOffsets: { s0: 10, s1: 10, s2: 7 } });
    expect(explainReplicaFailure(write(), behind)).toBe('lagging');
    expect(explainReplicaFailure(write({ acks: '1' }), behind)).toBeUndefined();
    expect(explainReplicaFailure(write(), item())).toBeUndefined();
  });
});

describe('assignReplicas', () => {
  it('starts from the topic id and walks the stores from there', () => {
    // sha256('topic-a') starts at store 2 of 3, sha256('topic-b') at store 1 of 5.
    const three = ['s0', 's1', 's2'];
    expect(assignReplicas(three, 'topic-a', 0, 3)).toEqual(['s2', 's0', 's1']);
    expect(assignReplicas(three, 'topic-a', 1, 2)).toEqual(['s0', 's1']);
    const five = ['s0', 's1', 's2', 's3', 's4'];
    expect([0, 3, 4].map((p) => assignReplicas(five, 'topic-b', p, 3))).toEqual([
      ['s1', 's2', 's3'],
      ['s4', 's0', 's1'],
      ['s0', 's1', 's2'],
    ]);
  });

  it('spreads the partition 0 leaders of many topics over every store', () => {
    const leaders = Array.from({ length: 30 }, (_, i) =>
      assignReplicas(['s0', 's1', 's2'], `topic-${i}`, 0, 1),
    );
    expect(['s0', 's1', 's2'].map((s) => leaders.filter(([l]) => l === s).length)).toEqual([12, 7, 11]);
  });

  it('refuses a replication factor above the store count', () => {
    expect(() => assignReplicas(['s0', 's1'], 'topic-a', 0, 3)).toThrow(
      new RangeError('replication factor 3 > 2 stores'),
    );
    expect(assignReplicas(['s0', 's1'], 'topic-a', 0, 2)).toHaveLength(2);
  });
});

describe('withinLag and storeAnswers', () => {
  it('fails a store call that does not answer within replica.lag.time.max.ms with REQUEST_TIMED_OUT', async () => {
    const c = replicationCluster();
    const error = await withinLag(c.ctx, 's1', new Promise<never>(() => undefined)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceError);
    expect(error).toMatchObject({
      code: 'REQUEST_TIMED_OUT',
      retriable: true,
      message: `store s1 did not answer within ${LAG_MS} ms`,
    });
  });

  it('passes through an answer or an error that comes in time', async () => {
    const c = replicationCluster();
    await expect(withinLag(c.ctx, 's1', Promise.resolve('body'))).resolves.toBe('body');
    const refused = new SluiceError('KAFKA_STORAGE_ERROR', 'down');
    await expect(withinLag(c.ctx, 's1', Promise.reject(refused))).rejects.toBe(refused);
  });

  it('probes a store with one LIST of at most one key, and counts a failed or frozen store as dead', async () => {
    const c = replicationCluster();
    await c.raw[1]!.put('d/x/1', new Uint8Array([1]));
    await c.raw[1]!.put('d/x/2', new Uint8Array([2]));
    expect(await storeAnswers(c.ctx, 's1', 'd/x/')).toBe(true);
    expect(c.lists).toEqual([{ store: 's1', prefix: 'd/x/', limit: 1 }]);
    c.down.add('s1');
    expect(await storeAnswers(c.ctx, 's1', 'd/x/')).toBe(false);
    c.down.clear();
    c.frozen.add('s2');
    expect(await storeAnswers(c.ctx, 's2', 'd/x/')).toBe(false);
  });
});
