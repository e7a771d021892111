import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { GroupCoordinator } from '../../../../lib/core/groups/coordinator.js';
import { groupKeys } from '../../../../lib/core/groups/group-items.js';
import { InMemoryTopics, ManualClock, seededRandom } from '../../../support/group-simulation.js';
import type {
  CommittedOffset,
  CommitResult,
  GroupDescription,
  GroupListing,
  HeartbeatResponse,
  TopicPartitions,
} from '../../../../lib/core/groups/types.js';
import { Router } from '../../../../lib/http/router.js';
import { groupRoutes } from '../../../../lib/http/routes/groups.js';
import { routeCaller } from './group-routes-support.js';

interface ErrorResponse {
  error: { code: string; message: string; retriable: boolean };
}

const setup = () => {
  const store = new MemoryMetadataStore();
  const clock = new ManualClock();
  const topics = new InMemoryTopics({ orders: 3, payments: 2 });
  const coordinator = new GroupCoordinator({
    store,
    clock,
    topics,
    offsets: topics,
    random: seededRandom(3),
  });
  const router = new Router(groupRoutes(coordinator));
  const send = routeCaller(router);
  const call = <T>(method: string, path: string, body?: unknown, query: Record<string, string> = {}) =>
    send<T & ErrorResponse>(method, path, body, query);
  const join = async (group = 'g1') =>
    (
      await call<HeartbeatResponse>('POST', `/v1/groups/${group}/heartbeat`, {
        memberId: null,
        memberEpoch: 0,
        subscribedTopics: ['orders', 'payments'],
      })
    ).body;
  const heartbeat = (body: Record<string, unknown>) =>
    call<HeartbeatResponse>('POST', '/v1/groups/g1/heartbeat', body);
  const commit = (body: Record<string, unknown>, group = 'g1') =>
    call<{ results: CommitResult[] }>('POST', `/v1/groups/${group}/offsets`, body);
  const fetchOffsets = async (query: Record<string, string> = {}, group = 'g1') =>
    (await call<{ offsets: CommittedOffset[] }>('GET', `/v1/groups/${group}/offsets`, undefined, query)).body;
  const reset = (body: Record<string, unknown>) =>
    call<{ offsets: CommittedOffset[] }>('POST', '/v1/groups/g1/offsets/reset', body);
  const describeGroup = (group = 'g1') => call<GroupDescription>('GET', `/v1/groups/${group}`);
  return {
    store,
    clock,
    topics,
    coordinator,
    call,
    join,
    heartbeat,
    commit,
    fetchOffsets,
    reset,
    describeGroup,
  };
};

const offset = (topic: string, partition: number, value: number, metadata = '') => ({
  topic,
  partition,
  offset: value,
  metadata,
});
const tp = (topic: string, partitions: number[]): TopicPartitions => ({ topic, partitions });

describe('offset commits', () => {
  it('accepts a member’s commit at its current epoch and reads it back', async () => {
    const { join, commit, fetchOffsets } = setup();
    const a = await join();
    const res = await commit({
      memberId: a.memberId,
      memberEpoch: a.memberEpoch,
      offsets: [offset('orders', 0, 10, 'm'), offset('payments', 1, 4)],
    });
    expect(res).toEqual({
      status: 200,
      body: {
        results: [
          { topic: 'orders', partition: 0 },
          { topic: 'payments', partition: 1 },
        ],
      },
    });
    expect(await fetchOffsets()).toEqual({
      offsets: [offset('orders', 0, 10, 'm'), offset('payments', 1, 4)],
    });
    expect(await fetchOffsets({ topic: 'payments' })).toEqual({ offsets: [offset('payments', 1, 4)] });
  });

  it('rejects a stale member epoch with 409 and leaves the stored offset unchanged', async () => {
    const { join, heartbeat, commit, fetchOffsets } = setup();
    const a = await join();
    await commit({ memberId: a.memberId, memberEpoch: 1, offsets: [offset('orders', 0, 10)] });
    const b = await join();
    // a revokes and moves to epoch 2; a zombie commit with epoch 1 must change nothing.
    const owned = [tp('orders', [0, 1, 2]), tp('payments', [0, 1])];
    const r = await heartbeat({ memberId: a.memberId, memberEpoch: 1, ownedPartitions: owned });
    await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: r.body.assignment?.topicPartitions,
    });
    expect(b.memberEpoch).toBe(2);
    const stale = await commit({ memberId: a.memberId, memberEpoch: 1, offsets: [offset('orders', 0, 99)] });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'STALE_MEMBER_EPOCH', retriable: false });
    expect(await fetchOffsets()).toEqual({ offsets: [offset('orders', 0, 10)] });
  });

  it('lets a member commit while it is revoking, at the epoch it still has', async () => {
    const { join, heartbeat, commit, fetchOffsets } = setup();
    const a = await join();
    await join();
    const owned = [tp('orders', [0, 1, 2]), tp('payments', [0, 1])];
    const r = await heartbeat({ memberId: a.memberId, memberEpoch: 1, ownedPartitions: owned });
    expect(r.body.memberEpoch).toBe(1);
    const res = await commit({ memberId: a.memberId, memberEpoch: 1, offsets: [offset('orders', 2, 7)] });
    expect(res.status).toBe(200);
    expect((await fetchOffsets()).offsets).toEqual([offset('orders', 2, 7)]);
  });

  it('rejects unknown and expired members with 404', async () => {
    const { join, commit, clock, fetchOffsets } = setup();
    const a = await join();
    expect(
      (await commit({ memberId: 'ghost', memberEpoch: 1, offsets: [offset('orders', 0, 1)] })).body.error
        .code,
    ).toBe('UNKNOWN_MEMBER_ID');
    clock.advance(45_000);
    const zombie = await commit({
      memberId: a.memberId,
      memberEpoch: a.memberEpoch,
      offsets: [offset('orders', 0, 1)],
    });
    expect(zombie.status).toBe(404);
    expect(zombie.body.error.code).toBe('UNKNOWN_MEMBER_ID');
    expect((await fetchOffsets()).offsets).toEqual([]);
  });

  it('accepts commits without a member only while the group has no members', async () => {
    const { join, commit, fetchOffsets, clock, call } = setup();
    const simple = await commit({ offsets: [offset('orders', 1, 5)] }, 'simple');
    expect(simple.status).toBe(200);
    expect((await fetchOffsets({}, 'simple')).offsets).toEqual([offset('orders', 1, 5)]);
    expect((await call<{ groups: GroupListing[] }>('GET', '/v1/groups')).body.groups).toEqual([
      { groupId: 'simple', state: 'EMPTY', members: 0 },
    ]);

    await join();
    const refused = await commit({ memberId: null, memberEpoch: -1, offsets: [offset('orders', 1, 6)] });
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('UNKNOWN_MEMBER_ID');
    expect((await fetchOffsets()).offsets).toEqual([]);
    // Once the only member's session ran out, the group is empty again.
    clock.advance(45_000);
    expect((await commit({ offsets: [offset('orders', 1, 6)] })).status).toBe(200);
    expect((await fetchOffsets()).offsets).toEqual([offset('orders', 1, 6)]);
  });

  it('reports unknown topics and partitions per partition and commits the rest', async () => {
    const { commit, fetchOffsets } = setup();
    const res = await commit({
      offsets: [offset('orders', 0, 1), offset('orders', 3, 1), offset('nope', 0, 1)],
    });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([
      { topic: 'orders', partition: 0 },
      {
        topic: 'orders',
        partition: 3,
        error: { code: 'UNKNOWN_TOPIC_OR_PARTITION', message: 'orders/3 does not exist', retriable: false },
      },
      {
        topic: 'nope',
        partition: 0,
        error: { code: 'UNKNOWN_TOPIC_OR_PARTITION', message: 'nope/0 does not exist', retriable: false },
      },
    ]);
    expect((await fetchOffsets()).offsets).toEqual([offset('orders', 0, 1)]);
  });

  it('rejects malformed commits with 400 and writes nothing', async () => {
    const { commit, store } = setup();
    const bad: Record<string, unknown>[] = [
      { offsets: [offset('orders', 0, -1)] },
      { offsets: [{ ...offset('orders', 0, 1), extra: 1 }] },
      { offsets: [offset('orders', 0, 1), offset('orders', 0, 2)] },
      { offsets: [{ topic: 'orders', partition: '0', offset: 1 }] },
      { offsets: 'none' },
      { memberId: 'm', offsets: [] },
      { memberEpoch: 3, offsets: [] },
      { offsets: [offset('orders', 0, 1, 'x'.repeat(4097))] },
      { offsets: [], note: 'hi' },
    ];
    for (const body of bad) {
      const res = await commit(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
    }
    expect(store.dump()).toEqual([]);
  });
});

describe('offset resets', () => {
  it('resets every partition of a topic to earliest, latest, a timestamp or an offset', async () => {
    const { reset, topics, fetchOffsets } = setup();
    topics.append('orders', 0, [100, 200, 300, 400]);
    topics.append('orders', 1, [150]);
    topics.truncate('orders', 0, 1);

    expect((await reset({ topic: 'orders', to: 'earliest' })).body.offsets.map((o) => o.offset)).toEqual([
      1, 0, 0,
    ]);
    expect((await reset({ topic: 'orders', to: 'latest' })).body.offsets.map((o) => o.offset)).toEqual([
      4, 1, 0,
    ]);
    // By time: the first record at or after 250; none → the end of the log.
    expect((await reset({ topic: 'orders', to: 250 })).body.offsets.map((o) => o.offset)).toEqual([2, 1, 0]);
    // An offset outside the log goes to its nearest end.
    const res = await reset({ topic: 'orders', to: { offset: 3 } });
    expect(res).toEqual({
      status: 200,
      body: { offsets: [offset('orders', 0, 3), offset('orders', 1, 1), offset('orders', 2, 0)] },
    });
    expect((await fetchOffsets()).offsets).toEqual(res.body.offsets);
  });

  it('refuses while the group has members, and for unknown topics or bad targets', async () => {
    const { reset, join, fetchOffsets } = setup();
    await join();
    const busy = await reset({ topic: 'orders', to: 'earliest' });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('NON_EMPTY_GROUP');
    expect((await fetchOffsets()).offsets).toEqual([]);
    expect((await reset({ topic: 'nope', to: 'earliest' })).status).toBe(404);
    expect((await reset({ topic: 'orders', to: 'first' })).status).toBe(400);
    expect((await reset({ topic: 'orders', to: { offset: -1 } })).status).toBe(400);
  });
});

describe('describe, list and delete', () => {
  it('describes members, assignments and offsets with high watermark and lag', async () => {
    const { join, commit, describeGroup, topics } = setup();
    topics.append('orders', 0, [1, 2, 3, 4, 5]);
    const a = await join();
    await commit({
      memberId: a.memberId,
      memberEpoch: 1,
      offsets: [offset('orders', 0, 2), offset('payments', 0, 0)],
    });
    topics.remove('payments');
    const res = await describeGroup();
    expect(res).toEqual({
      status: 200,
      body: {
        groupId: 'g1',
        state: 'STABLE',
        groupEpoch: 1,
        assignor: 'uniform',
        members: [
          {
            memberId: a.memberId,
            instanceId: null,
            memberEpoch: 1,
            subscribedTopics: ['orders', 'payments'],
            assignment: { topicPartitions: [tp('orders', [0, 1, 2]), tp('payments', [0, 1])] },
          },
        ],
        offsets: [
          { topic: 'orders', partition: 0, committedOffset: 2, highWatermark: 5, lag: 3 },
          { topic: 'payments', partition: 0, committedOffset: 0, highWatermark: null, lag: null },
        ],
      },
    });
    expect((await describeGroup('unknown')).status).toBe(404);
    expect((await describeGroup('unknown')).body.error.code).toBe('GROUP_ID_NOT_FOUND');
  });

  it('lists groups with their state and member count', async () => {
    const { join, call, clock } = setup();
    await join('g1');
    await join('g1');
    await join('g2');
    const list = async () => (await call<{ groups: GroupListing[] }>('GET', '/v1/groups')).body.groups;
    expect(await list()).toEqual([
      { groupId: 'g1', state: 'RECONCILING', members: 2 },
      { groupId: 'g2', state: 'STABLE', members: 1 },
    ]);
    clock.advance(45_000);
    expect(await list()).toEqual([
      { groupId: 'g1', state: 'EMPTY', members: 0 },
      { groupId: 'g2', state: 'EMPTY', members: 0 },
    ]);
  });

  it('deletes an empty group with its offsets, and refuses while it has members', async () => {
    const { join, commit, call, store, heartbeat, describeGroup } = setup();
    const a = await join();
    await commit({ memberId: a.memberId, memberEpoch: 1, offsets: [offset('orders', 0, 2)] });
    const busy = await call('DELETE', '/v1/groups/g1');
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('NON_EMPTY_GROUP');

    await heartbeat({ memberId: a.memberId, memberEpoch: -1 });
    expect(await call('DELETE', '/v1/groups/g1')).toEqual({ status: 204 });
    expect(store.dump()).toEqual([]);
    expect((await describeGroup()).status).toBe(404);
    const again = await call('DELETE', '/v1/groups/g1');
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('GROUP_ID_NOT_FOUND');
  });

  it('finishes a deletion that was interrupted before anything else uses the group', async () => {
    const { commit, store, join, fetchOffsets, describeGroup } = setup();
    await commit({ offsets: [offset('orders', 0, 2)] });
    // A deleter marked the group dead and crashed.
    await store.update(groupKeys.meta('g1'), [{ set: 'dead', value: true }]);
    expect((await describeGroup()).body.state).toBe('DEAD');
    const a = await join();
    expect(a.memberEpoch).toBe(1);
    expect((await fetchOffsets()).offsets).toEqual([]);
    expect((await describeGroup()).body).toMatchObject({ state: 'STABLE', groupEpoch: 1 });
  });

  it('rejects unknown query parameters', async () => {
    const { call } = setup();
    expect((await call('GET', '/v1/groups/g1/offsets', undefined, { topik: 'orders' })).status).toBe(400);
    expect((await call('GET', '/v1/groups/g1/offsets', undefined, { topic: 'bad topic' })).status).toBe(400);
  });
});
