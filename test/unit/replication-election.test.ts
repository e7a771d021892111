/**
 * Leader election (electLeader) on an arranged partition item: which replica FAILOVER, UNCLEAN and
 * PREFERRED elect, the epoch, ISR, HW and LEOs they write, the truncation of records the new leader
 * lacks (with their Idempotency-Keys), every refusal with its code and message, and elections that
 * lose their conditional write to a concurrent commit or ISR change.
 */
import { describe, expect, it } from 'vitest';
import type { ElectionOptions } from '../../lib/core/replication/election.js';
import { electLeader } from '../../lib/core/replication/election.js';
import type { ArrangedPartition } from './replication-support.js';
import { arrangedPartition } from './replication-support.js';

const partition = async (arrangement: ArrangedPartition) => {
  const p = await arrangedPartition(arrangement);
  const elect = (options: ElectionOptions) => electLeader(p.c.ctx, p.topic, 0, options);
  const refusal = (options: ElectionOptions) => elect(options).catch((e: unknown) => e);
  return { ...p, elect, refusal };
};

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
    expect([before.ik.length, before.ikGen]).toEqual([2, 0]);
    const outcome = await p.elect({ type: 'FAILOVER', exclude: [p.leader] });
    expect(outcome.truncated).toEqual({ from: 2, to: 1 });
    expect([outcome.state.ik, outcome.state.ikGen]).toEqual([[before.ik[0]], 1]);
    const retried = await p.c.send('b', '1', { 'idempotency-key': 'k2' });
    expect([retried.status, retried.body.results[0].offset]).toEqual([200, 1]);
    expect(await p.c.send('a', 'all', { 'idempotency-key': 'k1' })).toMatchObject(kept);
  });
});
