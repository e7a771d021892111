import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { GroupCoordinator } from '../../../../lib/core/groups/coordinator.js';
import { groupKeys } from '../../../../lib/core/groups/group-items.js';
import {
  InMemoryTopics,
  InterleavingStore,
  ManualClock,
  seededRandom,
} from '../../../support/group-simulation.js';
import type {
  GroupDescription,
  HeartbeatResponse,
  TopicPartitions,
} from '../../../../lib/core/groups/types.js';
import { Router } from '../../../../lib/http/router.js';
import { groupRoutes } from '../../../../lib/http/routes/groups.js';

interface ErrorResponse {
  error: { code: string; message: string; retriable: boolean };
}

const setup = (partitions: Record<string, number> = { orders: 6 }, concurrent = false) => {
  const memory = new MemoryMetadataStore();
  const random = seededRandom(42);
  const store = concurrent ? new InterleavingStore(memory, random) : memory;
  const clock = new ManualClock();
  const topics = new InMemoryTopics(partitions);
  const coordinator = new GroupCoordinator({ store, clock, topics, offsets: topics, random });
  const router = new Router(groupRoutes(coordinator));
  const call = async <T>(method: string, path: string, body?: unknown) => {
    const res = await router.handle({
      method,
      path,
      query: {},
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? new Uint8Array() : new TextEncoder().encode(JSON.stringify(body)),
    });
    return { status: res.status, body: res.body as T };
  };
  const heartbeat = (body: Record<string, unknown>, group = 'g1') =>
    call<HeartbeatResponse & ErrorResponse>(
      'POST',
      `/v1/groups/${encodeURIComponent(group)}/heartbeat`,
      body,
    );
  const join = (subscribedTopics: string[] = ['orders'], extra: Record<string, unknown> = {}) =>
    heartbeat({ memberId: null, memberEpoch: 0, subscribedTopics, ...extra });
  const describeGroup = async () => (await call<GroupDescription>('GET', '/v1/groups/g1')).body;
  const meta = () => memory.get(groupKeys.meta('g1'));
  return { memory, clock, topics, coordinator, call, heartbeat, join, describeGroup, meta };
};

const tp = (topic: string, partitions: number[]): TopicPartitions => ({ topic, partitions });

describe('joining and converging', () => {
  it('issues a member id and the whole assignment to the first member', async () => {
    const { join, describeGroup } = setup();
    const res = await join();
    expect(res.status).toBe(200);
    expect(res.body.memberId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(res.body).toMatchObject({
      memberEpoch: 1,
      heartbeatIntervalMs: 5000,
      assignment: { topicPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])] },
    });
    const group = await describeGroup();
    expect(group).toMatchObject({ groupId: 'g1', state: 'STABLE', groupEpoch: 1, assignor: 'uniform' });
    expect(group.members).toEqual([
      {
        memberId: res.body.memberId,
        instanceId: null,
        memberEpoch: 1,
        subscribedTopics: ['orders'],
        assignment: { topicPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])] },
      },
    ]);
  });

  it('revokes before it reassigns, so a partition never has two owners', async () => {
    const { join, heartbeat, describeGroup } = setup();
    const a = (await join()).body;
    const b = await join();
    // b's share is still a's: b gets the new epoch but nothing yet.
    expect(b.body).toMatchObject({ memberEpoch: 2, assignment: { topicPartitions: [] } });
    expect((await describeGroup()).state).toBe('RECONCILING');

    const revoke = await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    expect(revoke.body).toMatchObject({
      memberEpoch: 1,
      assignment: { topicPartitions: [tp('orders', [0, 1, 2])] },
    });

    // b asks again before a has let go: still nothing.
    const early = await heartbeat({ memberId: b.body.memberId, memberEpoch: 2, ownedPartitions: [] });
    expect(early.body.assignment).toBeNull();

    const acked = await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2])],
    });
    expect(acked.body).toMatchObject({ memberEpoch: 2, assignment: null });

    const got = await heartbeat({ memberId: b.body.memberId, memberEpoch: 2, ownedPartitions: [] });
    expect(got.body).toMatchObject({
      memberEpoch: 2,
      assignment: { topicPartitions: [tp('orders', [3, 4, 5])] },
    });
    const steady = await heartbeat({
      memberId: b.body.memberId,
      memberEpoch: 2,
      ownedPartitions: [tp('orders', [3, 4, 5])],
    });
    expect(steady.body.assignment).toBeNull();
    expect((await describeGroup()).state).toBe('STABLE');
  });

  it('repeats an unchanged assignment only to a member whose report shows it missed it', async () => {
    const { join, heartbeat } = setup();
    const a = (await join()).body;
    const all = [tp('orders', [0, 1, 2, 3, 4, 5])];
    // The join's answer was lost: the member says it owns nothing, so it is told again.
    const again = await heartbeat({ memberId: a.memberId, memberEpoch: 1, ownedPartitions: [] });
    expect(again.body).toMatchObject({ memberEpoch: 1, assignment: { topicPartitions: all } });
    const inStep = await heartbeat({ memberId: a.memberId, memberEpoch: 1, ownedPartitions: all });
    expect(inStep.body.assignment).toBeNull();
    const silent = await heartbeat({ memberId: a.memberId, memberEpoch: 1 });
    expect(silent.body.assignment).toBeNull();
  });

  it('does not write the group item for a heartbeat that changes nothing', async () => {
    const { join, heartbeat, meta, clock } = setup();
    const a = (await join()).body;
    const before = await meta();
    clock.advance(5000);
    const res = await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    expect(res.body).toMatchObject({ memberEpoch: 1, assignment: null });
    expect(await meta()).toEqual(before);
  });

  it('bumps the group epoch when a member leaves and hands its partitions over', async () => {
    const { join, heartbeat, describeGroup } = setup();
    const a = (await join()).body;
    await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    const b = (await join()).body;
    await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    await heartbeat({ memberId: a.memberId, memberEpoch: 1, ownedPartitions: [tp('orders', [0, 1, 2])] });
    await heartbeat({ memberId: b.memberId, memberEpoch: 2, ownedPartitions: [] });

    const left = await heartbeat({ memberId: a.memberId, memberEpoch: -1 });
    expect(left).toEqual({
      status: 200,
      body: { memberId: a.memberId, memberEpoch: -1, heartbeatIntervalMs: 5000, assignment: null },
    });
    const res = await heartbeat({
      memberId: b.memberId,
      memberEpoch: 2,
      ownedPartitions: [tp('orders', [3, 4, 5])],
    });
    expect(res.body).toMatchObject({
      memberEpoch: 3,
      assignment: { topicPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])] },
    });
    expect(await describeGroup()).toMatchObject({ state: 'STABLE', groupEpoch: 3 });
  });
});

describe('errors', () => {
  it('answers UNKNOWN_MEMBER_ID for a member the group does not know', async () => {
    const { join, heartbeat } = setup();
    await join();
    const res = await heartbeat({ memberId: 'nobody', memberEpoch: 1 });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'UNKNOWN_MEMBER_ID', retriable: false });
    expect((await heartbeat({ memberId: 'nobody', memberEpoch: 1 }, 'no-such-group')).status).toBe(404);
  });

  it('fences epochs ahead of the member’s, and old ones unless they are a lost answer', async () => {
    const { join, heartbeat } = setup();
    const a = (await join()).body;
    await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    const b = (await join()).body;
    const ahead = await heartbeat({ memberId: b.memberId, memberEpoch: 3 });
    expect(ahead.status).toBe(409);
    expect(ahead.body.error.code).toBe('FENCED_MEMBER_EPOCH');

    // b moved from epoch 0 to 2 at join; a retried join response (epoch 0) with what it owns is accepted...
    await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    await heartbeat({ memberId: a.memberId, memberEpoch: 1, ownedPartitions: [tp('orders', [0, 1, 2])] });
    // a is now at epoch 2 with previous epoch 1: epoch 1 with a subset of its partitions = lost answer.
    const lost = await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2])],
    });
    expect(lost.body).toMatchObject({
      memberEpoch: 2,
      assignment: { topicPartitions: [tp('orders', [0, 1, 2])] },
    });
    // ...but not with partitions it no longer has, and never without saying what it owns.
    const zombie = await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3])],
    });
    expect(zombie.body.error.code).toBe('FENCED_MEMBER_EPOCH');
    expect((await heartbeat({ memberId: a.memberId, memberEpoch: 1 })).body.error.code).toBe(
      'FENCED_MEMBER_EPOCH',
    );
  });

  it('rejects malformed requests with 400 and writes nothing', async () => {
    const { heartbeat, memory, call } = setup();
    const bad: [Record<string, unknown>, string][] = [
      [{ memberEpoch: 0, subscribedTopics: ['orders'], colour: 'red' }, 'unknown field'],
      [{ memberEpoch: 0 }, 'subscribedTopics is required'],
      [{ memberEpoch: '0', subscribedTopics: ['orders'] }, 'memberEpoch'],
      [{ memberEpoch: 0, subscribedTopics: 'orders' }, 'subscribedTopics'],
      [{ memberEpoch: 0, subscribedTopics: ['bad topic'] }, 'subscribedTopics[0]'],
      [{ memberEpoch: 0, subscribedTopics: ['orders'], serverAssignor: 'sticky' }, 'serverAssignor'],
      [
        {
          memberEpoch: 0,
          subscribedTopics: ['orders'],
          ownedPartitions: [{ topic: 'orders', partitions: [-1] }],
        },
        'partitions',
      ],
      [{ memberEpoch: 3 }, 'memberId is required'],
      [{ memberId: 'x', memberEpoch: -2 }, 'instanceId'],
      [{ memberId: 'x', memberEpoch: -3 }, 'memberEpoch'],
    ];
    for (const [body, message] of bad) {
      const res = await heartbeat(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      expect(res.body.error.message).toContain(message);
    }
    const longId = await heartbeat({ memberEpoch: 0, subscribedTopics: ['orders'] }, 'g'.repeat(256));
    expect(longId.status).toBe(400);
    const control = await heartbeat({ memberEpoch: 0, subscribedTopics: ['orders'] }, 'tab\there');
    expect(control.status).toBe(400);
    const notJson = await call('POST', '/v1/groups/g1/heartbeat');
    expect(notJson.status).toBe(400);
    expect(memory.dump()).toEqual([]);
  });
});

describe('static membership', () => {
  it('keeps a temporarily departed member’s assignment and hands it to its next incarnation', async () => {
    const { join, heartbeat, describeGroup } = setup();
    const a = (await join(['orders'], { instanceId: 'host-1' })).body;
    const other = await join(['orders'], { instanceId: 'host-1' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('UNRELEASED_INSTANCE_ID');

    const left = await heartbeat({ memberId: a.memberId, memberEpoch: -2, instanceId: 'host-1' });
    expect(left.body).toMatchObject({ memberEpoch: -2, assignment: null });
    const epochBefore = (await describeGroup()).groupEpoch;

    const back = await join(['orders'], { instanceId: 'host-1' });
    expect(back.status).toBe(200);
    expect(back.body.memberId).not.toBe(a.memberId);
    expect(back.body).toMatchObject({
      memberEpoch: 1,
      assignment: { topicPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])] },
    });
    const group = await describeGroup();
    expect(group.groupEpoch).toBe(epochBefore);
    expect(group.members.map((m) => [m.memberId, m.instanceId])).toEqual([[back.body.memberId, 'host-1']]);
    // The old incarnation is gone.
    expect((await heartbeat({ memberId: a.memberId, memberEpoch: 1 })).status).toBe(404);
  });

  it('removes a departed static member after the session timeout and reassigns its partitions', async () => {
    const { join, heartbeat, clock } = setup();
    const a = (await join(['orders'], { instanceId: 'host-1' })).body;
    await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    const b = (await join()).body;
    await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    await heartbeat({ memberId: a.memberId, memberEpoch: 1, ownedPartitions: [tp('orders', [0, 1, 2])] });
    await heartbeat({ memberId: a.memberId, memberEpoch: -2, instanceId: 'host-1' });
    await heartbeat({ memberId: b.memberId, memberEpoch: 2, ownedPartitions: [] });
    clock.advance(30_000);
    const still = await heartbeat({
      memberId: b.memberId,
      memberEpoch: 2,
      ownedPartitions: [tp('orders', [3, 4, 5])],
    });
    expect(still.body).toMatchObject({ memberEpoch: 2, assignment: null });
    clock.advance(15_000);
    const res = await heartbeat({
      memberId: b.memberId,
      memberEpoch: 2,
      ownedPartitions: [tp('orders', [3, 4, 5])],
    });
    expect(res.body).toMatchObject({
      memberEpoch: 3,
      assignment: { topicPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])] },
    });
  });
});

describe('what opens a new group epoch', () => {
  it('a subscription change', async () => {
    const { join, heartbeat, describeGroup } = setup({ orders: 2, payments: 2 });
    const a = (await join()).body;
    const res = await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      subscribedTopics: ['orders', 'payments'],
    });
    expect(res.body).toMatchObject({
      memberEpoch: 2,
      assignment: { topicPartitions: [tp('orders', [0, 1]), tp('payments', [0, 1])] },
    });
    expect((await describeGroup()).members[0]?.subscribedTopics).toEqual(['orders', 'payments']);
  });

  it('new partitions of a subscribed topic, and a topic created after the subscription', async () => {
    const { join, heartbeat, topics } = setup({ orders: 2 });
    const a = (await join(['orders', 'later'])).body;
    expect(a.assignment?.topicPartitions).toEqual([tp('orders', [0, 1])]);
    topics.grow('orders', 3);
    const grown = await heartbeat({ memberId: a.memberId, memberEpoch: 1 });
    expect(grown.body).toMatchObject({
      memberEpoch: 2,
      assignment: { topicPartitions: [tp('orders', [0, 1, 2])] },
    });
    topics.create('later', 1);
    const created = await heartbeat({ memberId: a.memberId, memberEpoch: 2 });
    expect(created.body).toMatchObject({
      memberEpoch: 3,
      assignment: { topicPartitions: [tp('later', [0]), tp('orders', [0, 1, 2])] },
    });
  });

  it('a deleted topic, whose partitions are revoked', async () => {
    const { join, heartbeat, topics } = setup({ orders: 1, payments: 1 });
    const a = (await join(['orders', 'payments'])).body;
    topics.remove('payments');
    const owned = [tp('orders', [0]), tp('payments', [0])];
    const res = await heartbeat({ memberId: a.memberId, memberEpoch: 1, ownedPartitions: owned });
    expect(res.body).toMatchObject({ memberEpoch: 1, assignment: { topicPartitions: [tp('orders', [0])] } });
    const done = await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0])],
    });
    expect(done.body).toMatchObject({ memberEpoch: 2, assignment: null });
  });

  it('uses the assignor the members ask for', async () => {
    const { join, describeGroup } = setup({ orders: 3, payments: 3 });
    await join(['orders', 'payments'], { serverAssignor: 'range', memberId: 'a' });
    await join(['orders', 'payments'], { serverAssignor: 'range', memberId: 'b' });
    const group = await describeGroup();
    expect(group.assignor).toBe('range');
    expect(group.members.map((m) => m.memberId)).toEqual(['a', 'b']);
  });
});

describe('timeouts', () => {
  it('removes a member that stops heartbeating when any other member heartbeats', async () => {
    const { join, heartbeat, clock, describeGroup } = setup();
    const a = (await join()).body;
    await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    const b = (await join()).body;
    clock.advance(44_999);
    await heartbeat({ memberId: b.memberId, memberEpoch: 2, ownedPartitions: [] });
    expect((await describeGroup()).members).toHaveLength(2);
    clock.advance(1);
    const res = await heartbeat({ memberId: b.memberId, memberEpoch: 2, ownedPartitions: [] });
    expect(res.body).toMatchObject({
      memberEpoch: 3,
      assignment: { topicPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])] },
    });
    expect((await heartbeat({ memberId: a.memberId, memberEpoch: 1 })).body.error.code).toBe(
      'UNKNOWN_MEMBER_ID',
    );
  });

  it('fences a member that does not revoke within its rebalance timeout', async () => {
    const { join, heartbeat, clock } = setup();
    const a = (await join(['orders'], { rebalanceTimeoutMs: 10_000 })).body;
    const b = (await join()).body;
    await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    clock.advance(9_000);
    await heartbeat({ memberId: b.memberId, memberEpoch: 2, ownedPartitions: [] });
    await heartbeat({
      memberId: a.memberId,
      memberEpoch: 1,
      ownedPartitions: [tp('orders', [0, 1, 2, 3, 4, 5])],
    });
    clock.advance(1_000);
    const res = await heartbeat({ memberId: b.memberId, memberEpoch: 2, ownedPartitions: [] });
    expect(res.body.assignment?.topicPartitions).toEqual([tp('orders', [0, 1, 2, 3, 4, 5])]);
    expect((await heartbeat({ memberId: a.memberId, memberEpoch: 1 })).status).toBe(404);
  });

  it('sweep() removes expired members of every group and counts them', async () => {
    const { join, clock, coordinator, describeGroup } = setup();
    await join();
    await join(['orders'], {});
    await coordinator.heartbeat('other', {
      memberId: null,
      memberEpoch: 0,
      instanceId: null,
      subscribedTopics: ['orders'],
      ownedPartitions: null,
      rebalanceTimeoutMs: null,
      serverAssignor: null,
    });
    expect(await coordinator.sweep()).toEqual({ groups: 2, membersExpired: 0, failedGroups: 0 });
    clock.advance(45_000);
    expect(await coordinator.sweep()).toEqual({ groups: 2, membersExpired: 3, failedGroups: 0 });
    expect(await describeGroup()).toMatchObject({ state: 'EMPTY', members: [] });
  });
});

describe('concurrency', () => {
  it('50 members joining at once all get in, and the group converges with every partition owned once', async () => {
    const { join, heartbeat, describeGroup } = setup({ orders: 120 }, true);
    const joined = await Promise.all(Array.from({ length: 50 }, () => join()));
    expect(joined.map((r) => r.status)).toEqual(Array(50).fill(200));
    const ids = new Set(joined.map((r) => r.body.memberId));
    expect(ids.size).toBe(50);
    expect((await describeGroup()).members).toHaveLength(50);

    // Every member heartbeats (concurrently) reporting what it was told, until the group is stable.
    const owned = new Map(joined.map((r) => [r.body.memberId, r.body.assignment?.topicPartitions ?? []]));
    const epochs = new Map(joined.map((r) => [r.body.memberId, r.body.memberEpoch]));
    for (let round = 0; round < 6 && (await describeGroup()).state !== 'STABLE'; round++) {
      const answers = await Promise.all(
        [...owned.keys()].map((memberId) =>
          heartbeat({ memberId, memberEpoch: epochs.get(memberId), ownedPartitions: owned.get(memberId) }),
        ),
      );
      for (const res of answers) {
        expect(res.status).toBe(200);
        epochs.set(res.body.memberId, res.body.memberEpoch);
        if (res.body.assignment) owned.set(res.body.memberId, res.body.assignment.topicPartitions);
      }
    }
    const group = await describeGroup();
    expect(group.state).toBe('STABLE');
    const all = group.members.flatMap((m) => m.assignment.topicPartitions.flatMap((t) => t.partitions));
    expect(all.sort((x, y) => x - y)).toEqual(Array.from({ length: 120 }, (_, i) => i));
    const sizes = group.members.map((m) => m.assignment.topicPartitions[0]?.partitions.length ?? 0);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  }, 30_000);
});
