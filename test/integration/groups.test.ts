/** Consumer groups (API.md, KIP-848 style) over real HTTP against DynamoDB Local. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
  for (const [name, partitions] of [
    ['orders', 6],
    ['payments', 60],
    ['solo', 2],
  ] as const) {
    expect((await t.call('POST', '/v1/topics', { name, partitions })).status).toBe(201);
  }
});
afterAll(async () => {
  await t?.stack.stop();
});

interface Member {
  memberId: string;
  memberEpoch: number;
  owned: number[];
}

type Owned = { topic: string; partitions: number[] }[];

/**
 * One heartbeat as a Kafka client sends it: a retriable COORDINATOR_NOT_AVAILABLE (503, the
 * coordinator's conflict retries ran out under heavy contention; nothing was written) is sent again
 * after a short jittered pause. Every other answer is the test's to check.
 */
const heartbeat = async (group: string, body: Record<string, unknown>) => {
  for (let attempt = 1; ; attempt++) {
    const r = await t.call('POST', `/v1/groups/${group}/heartbeat`, body);
    const retriable = r.status === 503 && r.json?.error?.code === 'COORDINATOR_NOT_AVAILABLE';
    if (!retriable || attempt >= 5) return r;
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200));
  }
};

/** One member's heartbeat loop step: reports what it owns, adopts what it is given. */
const beat = async (group: string, topic: string, m: Member) => {
  const r = await heartbeat(group, {
    memberId: m.memberId,
    memberEpoch: m.memberEpoch,
    ownedPartitions: [{ topic, partitions: m.owned }],
  });
  expect(r.status).toBe(200);
  m.memberEpoch = r.json.memberEpoch;
  if (r.json.assignment)
    m.owned = (r.json.assignment.topicPartitions as Owned).find((x) => x.topic === topic)?.partitions ?? [];
  return r;
};

const join = async (group: string, topic: string, extra: Record<string, unknown> = {}): Promise<Member> => {
  const r = await heartbeat(group, {
    memberId: null,
    memberEpoch: 0,
    subscribedTopics: [topic],
    ownedPartitions: [],
    ...extra,
  });
  expect(r.status).toBe(200);
  expect(typeof r.json.memberId).toBe('string');
  expect(r.json.heartbeatIntervalMs).toBeGreaterThan(0);
  const owned =
    ((r.json.assignment?.topicPartitions ?? []) as Owned).find((x) => x.topic === topic)?.partitions ?? [];
  return { memberId: r.json.memberId, memberEpoch: r.json.memberEpoch, owned };
};

const noOverlap = (members: Member[]) => {
  const all = members.flatMap((m) => m.owned);
  expect(new Set(all).size).toBe(all.length);
};

describe('membership and assignment', () => {
  it('assigns every partition once and rebalances on join and leave without two owners', async () => {
    const a = await join('g1', 'orders');
    expect(a.owned.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    const b = await join('g1', 'orders');
    const members = [a, b];
    for (let round = 0; round < 5; round++) {
      for (const m of members) {
        await beat('g1', 'orders', m);
        noOverlap(members);
      }
    }
    expect(a.owned.length).toBe(3);
    expect(b.owned.length).toBe(3);
    expect([...a.owned, ...b.owned].sort()).toEqual([0, 1, 2, 3, 4, 5]);

    const described = await t.call('GET', '/v1/groups/g1');
    expect(described.status).toBe(200);
    expect(described.json.state).toBe('STABLE');
    expect(described.json.members).toHaveLength(2);

    const left = await heartbeat('g1', { memberId: b.memberId, memberEpoch: -1 });
    expect(left.status).toBe(200);
    expect(left.json.memberEpoch).toBe(-1);
    await beat('g1', 'orders', a);
    expect(a.owned.sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('fences unknown members and stale epochs', async () => {
    const unknown = await heartbeat('g1', { memberId: 'nobody', memberEpoch: 3 });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('UNKNOWN_MEMBER_ID');
    const m = await join('g2', 'solo');
    const fenced = await heartbeat('g2', { memberId: m.memberId, memberEpoch: m.memberEpoch + 5 });
    expect(fenced.status).toBe(409);
    expect(fenced.json.error.code).toBe('FENCED_MEMBER_EPOCH');
    const bad = await heartbeat('g2', { memberId: null, memberEpoch: 0 });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_REQUEST');
  });

  it(
    '50 members joining at once end with a consistent assignment of 60 partitions',
    { timeout: 120_000 },
    async () => {
      const members = await Promise.all(Array.from({ length: 50 }, () => join('big', 'payments')));
      for (let round = 0; round < 6; round++) {
        await Promise.all(members.map((m) => beat('big', 'payments', m)));
        noOverlap(members);
      }
      const owned = members.flatMap((m) => m.owned).sort((x, y) => x - y);
      expect(owned).toEqual(Array.from({ length: 60 }, (_, i) => i));
      for (const m of members) expect(m.owned.length === 1 || m.owned.length === 2).toBe(true);
      const described = await t.call('GET', '/v1/groups/big');
      expect(described.json.members).toHaveLength(50);
      expect(described.json.state).toBe('STABLE');
    },
  );
});

describe('offsets', () => {
  it('commits fenced by member epoch, fetches, describes lag, resets and deletes', async () => {
    await t.call('POST', '/v1/topics/solo/records', {
      records: Array.from({ length: 5 }, (_, i) => ({ value: `v${i}`, partition: 0 })),
    });
    const m = await join('g3', 'solo');
    const ok = await t.call('POST', '/v1/groups/g3/offsets', {
      memberId: m.memberId,
      memberEpoch: m.memberEpoch,
      offsets: [{ topic: 'solo', partition: 0, offset: 3, metadata: 'm' }],
    });
    expect(ok.status).toBe(200);
    expect(ok.json.results).toEqual([{ topic: 'solo', partition: 0 }]);

    const stale = await t.call('POST', '/v1/groups/g3/offsets', {
      memberId: m.memberId,
      memberEpoch: m.memberEpoch - 1,
      offsets: [{ topic: 'solo', partition: 0, offset: 1 }],
    });
    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe('STALE_MEMBER_EPOCH');
    const fetched = await t.call('GET', '/v1/groups/g3/offsets?topic=solo');
    expect(fetched.json.offsets).toEqual([{ topic: 'solo', partition: 0, offset: 3, metadata: 'm' }]);

    const simple = await t.call('POST', '/v1/groups/g3/offsets', {
      offsets: [{ topic: 'solo', partition: 0, offset: 0 }],
    });
    expect(simple.status).not.toBe(200);
    const nonEmptyReset = await t.call('POST', '/v1/groups/g3/offsets/reset', {
      topic: 'solo',
      to: 'earliest',
    });
    expect(nonEmptyReset.status).toBe(409);
    expect(nonEmptyReset.json.error.code).toBe('NON_EMPTY_GROUP');
    const nonEmptyDelete = await t.call('DELETE', '/v1/groups/g3');
    expect(nonEmptyDelete.status).toBe(409);
    expect(nonEmptyDelete.json.error.code).toBe('NON_EMPTY_GROUP');

    const described = await t.call('GET', '/v1/groups/g3');
    expect(described.json.offsets).toContainEqual({
      topic: 'solo',
      partition: 0,
      committedOffset: 3,
      highWatermark: 5,
      lag: 2,
    });

    await heartbeat('g3', { memberId: m.memberId, memberEpoch: -1 });
    const reset = await t.call('POST', '/v1/groups/g3/offsets/reset', { topic: 'solo', to: 'latest' });
    expect(reset.status).toBe(200);
    expect((await t.call('GET', '/v1/groups/g3/offsets')).json.offsets).toContainEqual(
      expect.objectContaining({ topic: 'solo', partition: 0, offset: 5 }),
    );
    const byOffset = await t.call('POST', '/v1/groups/g3/offsets/reset', {
      topic: 'solo',
      to: { offset: 2 },
    });
    expect(byOffset.status).toBe(200);
    const simpleNow = await t.call('POST', '/v1/groups/g3/offsets', {
      offsets: [{ topic: 'solo', partition: 1, offset: 0 }],
    });
    expect(simpleNow.status).toBe(200);

    const listed = await t.call('GET', '/v1/groups');
    expect(listed.json.groups).toContainEqual(
      expect.objectContaining({ groupId: 'g3', state: 'EMPTY', members: 0 }),
    );
    expect((await t.call('DELETE', '/v1/groups/g3')).status).toBe(204);
    expect((await t.call('GET', '/v1/groups/g3')).status).toBe(404);
    expect((await t.call('DELETE', '/v1/groups/g3')).json.error.code).toBe('GROUP_ID_NOT_FOUND');
  });

  it('rejects malformed commits and writes nothing', async () => {
    const m = await join('g4', 'solo');
    for (const body of [
      '{',
      {
        memberId: m.memberId,
        memberEpoch: m.memberEpoch,
        offsets: [{ topic: 'solo', partition: 0, offset: -5 }],
      },
      { offsets: 'x' },
    ]) {
      const r = await t.call('POST', '/v1/groups/g4/offsets', body);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('INVALID_REQUEST');
    }
    expect((await t.call('GET', '/v1/groups/g4/offsets')).json.offsets).toEqual([]);
  });
});
