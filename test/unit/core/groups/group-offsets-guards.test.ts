/**
 * Who may write a group's committed offsets, checked again inside the write: a member whose epoch
 * moved, whose revocation ran out or a group that gained a member between the read and the write
 * refuses the commit; the refusals say why; a commit or deletion of nothing writes nothing; a reset
 * of a topic wider than one transaction writes every partition. And OffsetDelete's query and
 * partitions past the topic's end.
 */
import { describe, expect, it } from 'vitest';
import { groupKeys } from '../../../../lib/core/groups/group-items.js';
import { parseDeleteOffsetsQuery } from '../../../../lib/core/groups/offset-delete.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { coordinatorSetup, refusal, storeHooks } from './group-coordinator-support.js';

const offset = (partition: number, value: number) => ({ topic: 't', partition, offset: value, metadata: '' });

const setup = (partitions: Record<string, number> = { t: 4 }) => {
  const hooks = storeHooks();
  const s = coordinatorSetup(partitions, { store: hooks.wrap });
  const commit = (memberId: string | null, memberEpoch: number | null, offsets = [offset(0, 7)]) =>
    s.coordinator.commitOffsets('g', { memberId, memberEpoch, offsets });
  const committed = async () => (await s.coordinator.fetchOffsets('g')).offsets;
  return { ...s, ...hooks, commit, committed };
};

describe('a member’s commit', () => {
  it('is refused when the member’s epoch moves between the check and the write, and writes nothing', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    s.before('transact', async () => {
      await s.store.update(groupKeys.member('g', 'ma'), [{ set: 'memberEpoch', value: 2 }]);
    });
    expect(await refusal(s.commit('ma', 1))).toEqual({
      code: 'STALE_MEMBER_EPOCH',
      message: 'commit with member epoch 1 but member ma is at epoch 2',
    });
    expect(await s.committed()).toEqual([]);
  });

  it('is refused when the member’s revocation deadline passes between the check and the write', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    s.before('transact', async () => {
      await s.store.update(groupKeys.member('g', 'ma'), [{ set: 'revokeDeadline', value: s.clock.now() }]);
    });
    expect(await refusal(s.commit('ma', 1))).toEqual({
      code: 'UNKNOWN_MEMBER_ID',
      message: 'member ma is not in group g',
    });
    expect(await s.committed()).toEqual([]);
  });

  it('of no offsets writes nothing, so it succeeds while the store refuses writes', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    s.failing.with = () => new SluiceError('KAFKA_STORAGE_ERROR', 'unavailable', { retriable: true });
    expect(await s.commit('ma', 1, [])).toEqual({ results: [] });
  });
});

describe('a commit outside the group protocol', () => {
  it('is refused when a member joins between the check and the write, and writes nothing', async () => {
    const s = setup();
    await s.commit(null, null, [offset(1, 1)]);
    s.before('transact', async () => {
      await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    });
    expect(await refusal(s.commit(null, null))).toEqual({
      code: 'UNKNOWN_MEMBER_ID',
      message: 'group g has members: commit with a memberId and memberEpoch',
    });
    expect(await refusal(s.coordinator.resetOffsets('g', { topic: 't', to: 'latest' }))).toEqual({
      code: 'NON_EMPTY_GROUP',
      message: 'group g has members; offsets can only be reset while it is empty',
    });
    expect(await s.committed()).toEqual([offset(1, 1)]);
  });

  it('of a group whose deletion was interrupted finishes the deletion and starts a new group', async () => {
    const s = setup();
    await s.commit(null, null, [offset(1, 1)]);
    await s.store.update(groupKeys.meta('g'), [{ set: 'dead', value: true }]);
    expect(await s.commit(null, null, [offset(2, 5)])).toEqual({ results: [{ topic: 't', partition: 2 }] });
    expect(await s.committed()).toEqual([offset(2, 5)]);
    expect(await s.coordinator.describeGroup('g')).toMatchObject({ state: 'EMPTY', groupEpoch: 0 });
  });
});

describe('a reset', () => {
  it('of a topic wider than one transaction writes every partition (a transaction holds at most 100 items)', async () => {
    const s = setup({ t: 250 });
    const { offsets } = await s.coordinator.resetOffsets('g', { topic: 't', to: 'earliest' });
    expect(offsets.length).toBe(250);
    expect(await s.committed()).toEqual(Array.from({ length: 250 }, (_, p) => offset(p, 0)));
  });
});

describe('OffsetDelete', () => {
  it('reads its query: a topic name and comma-separated partition numbers, at most 99 distinct', () => {
    const parse = (query: Record<string, string>) => {
      try {
        return parseDeleteOffsetsQuery(query);
      } catch (e) {
        return { code: (e as SluiceError).code, message: (e as SluiceError).message };
      }
    };
    expect(parse({ topic: 't', partitions: '3,1,3' })).toEqual({ topic: 't', partitions: [3, 1] });
    expect(parse({ topic: 't' })).toEqual({ topic: 't', partitions: null });
    expect(parse({ topic: 'bad topic' })).toEqual({
      code: 'INVALID_REQUEST',
      message: 'query parameter topic must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)',
    });
    const notNumbers = {
      code: 'INVALID_REQUEST',
      message: 'partitions must be comma-separated partition numbers',
    };
    for (const partitions of ['1,2x', 'x2', '', '1,,2', '-1', '1234567890'])
      expect(parse({ topic: 't', partitions })).toEqual(notNumbers);
    const many = (n: number) => Array.from({ length: n }, (_, p) => p).join(',');
    expect(parse({ topic: 't', partitions: `${many(99)},0` })).toMatchObject({ topic: 't' });
    expect(parse({ topic: 't', partitions: many(100) })).toEqual({
      code: 'INVALID_REQUEST',
      message:
        'partitions lists 100 partitions; one deletion is atomic and takes at most 99: delete in several requests',
    });
  });

  it('answers a partition at or past the topic’s end as unknown and keeps its offset', async () => {
    const s = setup({ t: 3 });
    await s.commit(null, null, [offset(1, 1), offset(2, 2)]);
    s.topics.remove('t');
    s.topics.create('t', 2);
    expect(await s.coordinator.deleteOffsets('g', { topic: 't', partitions: [2, 1] })).toEqual({
      results: [
        { topic: 't', partition: 1 },
        {
          topic: 't',
          partition: 2,
          error: {
            code: 'UNKNOWN_TOPIC_OR_PARTITION',
            message: 'topic t has no partition 2',
            retriable: false,
          },
        },
      ],
    });
    expect(await s.committed()).toEqual([offset(2, 2)]);
  });

  it('of partitions with no committed offset writes nothing, so it succeeds while the store refuses writes', async () => {
    const s = setup();
    await s.commit(null, null, [offset(0, 1)]);
    s.failing.with = () => new SluiceError('KAFKA_STORAGE_ERROR', 'unavailable', { retriable: true });
    expect(await s.coordinator.deleteOffsets('g', { topic: 't', partitions: [3] })).toEqual({
      results: [{ topic: 't', partition: 3 }],
    });
  });
});
