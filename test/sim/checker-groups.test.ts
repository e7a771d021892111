/**
 * The history checker's consumer-group rules on hand-written histories: one owner per partition,
 * member-epoch fencing of commits, and committed offsets read back.
 */
import { describe, expect, it } from 'vitest';
import { check } from '../support/checker.js';
import type { CommitOp, HeartbeatOp, OffsetFetchOp, Outcome } from '../support/history.js';
import { HistoryRecorder } from '../support/history.js';

const world = () => {
  let wall = 0;
  const rec = new HistoryRecorder(() => wall);
  const at = (ms: number) => (wall = ms);
  /** Starts a heartbeat; finish it later (to interleave) with the returned function. */
  const heartbeat = (member: string, owned: string[], memberEpochSent = 1) => {
    const done = rec.invoke<HeartbeatOp>('heartbeat', member, { group: 'g', member, memberEpochSent, owned });
    return (
      outcome: Outcome,
      result: { memberEpoch?: number; assignment?: string[] | null } = {},
      error?: string,
    ) => done(outcome, result, error);
  };
  const hb = (member: string, owned: string[], assignment: string[] | null, memberEpoch = 1) =>
    heartbeat(member, owned, memberEpoch)('ok', { memberEpoch, assignment });
  const commit = (
    member: string | null,
    memberEpoch: number | null,
    offset: number,
    outcome: Outcome = 'ok',
  ) =>
    rec.invoke<CommitOp>('commit', member ?? 'admin', {
      group: 'g',
      member,
      memberEpoch,
      offsets: [{ tp: 't/0', offset }],
    })(outcome);
  const startCommit = (member: string, memberEpoch: number, offset: number) =>
    rec.invoke<CommitOp>('commit', member, {
      group: 'g',
      member,
      memberEpoch,
      offsets: [{ tp: 't/0', offset }],
    });
  const fetch = (offset: number) =>
    rec.invoke<OffsetFetchOp>('offsetFetch', 'reader', { group: 'g', offsets: [] })('ok', {
      offsets: [{ tp: 't/0', offset }],
    });
  return { rec, at, heartbeat, hb, commit, startCommit, fetch };
};

describe('one owner per partition', () => {
  it('accepts a handover where the new owner gets the partition after the old one released it', () => {
    const w = world();
    w.hb('a', [], ['t/0', 't/1']);
    w.hb('b', [], []);
    w.hb('a', ['t/0', 't/1'], ['t/0']); // told to give up t/1
    w.hb('a', ['t/0'], null); // released t/1
    w.hb('b', [], ['t/1']);
    const report = check(w.rec.history());
    expect(report.counts.twoOwners).toBe(0);
    expect(report.counts.heartbeats).toBe(5);
  });

  it('finds a partition handed to a new member before the old owner released it', () => {
    const w = world();
    w.hb('a', [], ['t/0', 't/1']);
    w.hb('b', [], ['t/1']);
    w.hb('a', ['t/0', 't/1'], ['t/0']);
    w.hb('a', ['t/0'], null);
    const report = check(w.rec.history());
    expect(report.counts.twoOwners).toBe(1);
    expect(report.examples.twoOwners?.[0]).toMatchObject({
      tp: 't/1',
      first: { member: 'a' },
      second: { member: 'b' },
    });
  });

  it('ends ownership at a crash, at a fencing error, and (given the session timeout) when the session ran out', () => {
    const crash = world();
    crash.hb('a', [], ['t/0']);
    crash.rec.crash('a');
    crash.hb('b', [], ['t/0']);
    expect(check(crash.rec.history()).counts.twoOwners).toBe(0);

    const fenced = world();
    fenced.hb('a', [], ['t/0']);
    fenced.heartbeat('a', ['t/0'])('fail', {}, 'FENCED_MEMBER_EPOCH');
    fenced.hb('b', [], ['t/0']);
    expect(check(fenced.rec.history()).counts.twoOwners).toBe(0);

    const expired = world();
    expired.at(1_000);
    expired.hb('a', [], ['t/0']);
    expired.at(50_000);
    expired.hb('b', [], ['t/0']);
    expect(check(expired.rec.history(), { sessionTimeoutMs: 45_000 }).counts.twoOwners).toBe(0);
    expect(check(expired.rec.history()).counts.twoOwners).toBe(1);
    const early = world();
    early.at(1_000);
    early.hb('a', [], ['t/0']);
    early.at(30_000);
    early.hb('b', [], ['t/0']);
    expect(check(early.rec.history(), { sessionTimeoutMs: 45_000 }).counts.twoOwners).toBe(1);
  });

  it('does not count an assignment the member never saw (an ambiguous heartbeat)', () => {
    const w = world();
    w.heartbeat('a', [])('info', {}, 'REQUEST_TIMED_OUT');
    w.hb('b', [], ['t/0']);
    expect(check(w.rec.history()).counts.twoOwners).toBe(0);
  });
});

describe('commits fenced by member epoch', () => {
  it('finds a commit accepted with an epoch older than one the member was given', () => {
    const w = world();
    w.hb('a', [], ['t/0'], 1);
    w.hb('a', ['t/0'], null, 2);
    w.commit('a', 2, 10);
    w.commit('a', 1, 11, 'fail');
    expect(check(w.rec.history()).counts.staleCommits).toBe(0);
    w.commit('a', 1, 12);
    const report = check(w.rec.history());
    expect(report.counts.staleCommits).toBe(1);
    expect(report.examples.staleCommits?.[0]).toMatchObject({ memberEpoch: 1, known: 2 });
  });

  it('finds a commit accepted after the member left', () => {
    const w = world();
    w.hb('a', [], ['t/0'], 1);
    w.heartbeat('a', [], -1)('ok', { memberEpoch: -1, assignment: null });
    w.commit('a', 1, 10);
    expect(check(w.rec.history()).counts.staleCommits).toBe(1);
  });
});

describe('committed offsets read back', () => {
  it('accepts the latest accepted commit, or either of two concurrent ones', () => {
    const w = world();
    w.commit('a', 1, 10);
    const x = w.startCommit('a', 1, 20);
    const y = w.startCommit('b', 1, 30);
    x('ok');
    y('ok');
    w.fetch(20);
    w.fetch(30);
    expect(check(w.rec.history()).counts.lostCommits).toBe(0);
  });

  it('finds an older commit read back after a newer one was accepted, and an offset nobody committed', () => {
    const w = world();
    w.commit('a', 1, 10);
    w.commit('a', 1, 20);
    w.fetch(10);
    w.fetch(99);
    const report = check(w.rec.history());
    expect(report.counts.lostCommits).toBe(2);
    expect(report.examples.lostCommits?.[0]).toMatchObject({ fetched: 10, latestAccepted: 20 });
  });

  it('allows an ambiguous commit to have landed', () => {
    const w = world();
    w.commit('a', 1, 10);
    w.commit('a', 1, 20, 'info');
    w.fetch(20);
    expect(check(w.rec.history()).counts.lostCommits).toBe(0);
  });
});
