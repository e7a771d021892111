/**
 * The ElectLeaders admin call (electLeaders) for UNCLEAN elections: the topic-level refusal, the
 * per-partition answer while the leader still answers, a leader elected by someone else meanwhile,
 * and a failure that is no Kafka error.
 */
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../../protocol/errors.js';
import { electLeaders } from '../../../../lib/core/replication/elect-leaders.js';
import { arrangedPartition } from './replication-support.js';

/** Topic `t` whose leader alone is in sync, with out-of-sync followers at LEOs 4 and 2 of 5. */
const offline = async (
  configs: Record<string, string> = { 'min.insync.replicas': '1', 'unclean.leader.election.enable': 'true' },
) => {
  const p = await arrangedPartition({ leos: [4, 2], hw: 5, configs });
  await p.arrange([{ set: 'isr', value: [p.leader] }]);
  return { ...p, elect: () => electLeaders(p.c.ctx, p.topic, 'UNCLEAN') };
};

describe('electLeaders UNCLEAN', () => {
  it('is refused for a topic without unclean.leader.election.enable, before any partition is touched', async () => {
    const p = await offline({ 'min.insync.replicas': '1' });
    p.c.down.add(p.leader);
    p.c.calls.length = 0;
    const error = await p.elect().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceError);
    expect(error).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'topic t has unclean.leader.election.enable=false; set it to allow UNCLEAN elections',
    });
    expect([p.c.calls, p.writes()]).toEqual([[], 0]);
  });

  it('answers ELECTION_NOT_NEEDED for a partition whose leader answers', async () => {
    const p = await offline();
    expect(await p.elect()).toEqual([
      {
        partition: 0,
        error: {
          code: 'ELECTION_NOT_NEEDED',
          message: `leader ${p.leader} of t-0 answers`,
          retriable: false,
        },
      },
    ]);
    expect(p.writes()).toBe(0);
  });

  it('reports a leader that someone else elected since it read the partition, without electing again', async () => {
    const p = await offline();
    p.c.down.add(p.leader);
    p.c.hooks.objectCall = async (call) => {
      if (call.store !== p.leader) return;
      p.c.hooks.objectCall = undefined;
      await p.arrange([
        { set: 'leaderEpoch', value: 1 },
        { set: 'leader', value: p.f2 },
      ]);
    };
    expect(await p.elect()).toEqual([{ partition: 0, leader: p.f2, leaderEpoch: 1 }]);
    expect(p.writes()).toBe(0);
  });

  it('elects the longest out-of-sync log and reports the truncation', async () => {
    const p = await offline();
    p.c.down.add(p.leader);
    expect(await p.elect()).toEqual([
      { partition: 0, leader: p.f1, leaderEpoch: 1, truncatedFrom: 5, truncatedTo: 4 },
    ]);
  });

  it('fails the whole call on an error that is not a Kafka error', async () => {
    const p = await offline();
    p.c.down.add(p.leader);
    const bug = new TypeError('not a Kafka error');
    p.c.hooks.stateUpdate = () => Promise.reject(bug);
    await expect(p.elect()).rejects.toBe(bug);
  });
});
