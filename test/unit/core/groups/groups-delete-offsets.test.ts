import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { GroupCoordinator } from '../../../../lib/core/groups/coordinator.js';
import { InMemoryTopics, ManualClock, seededRandom } from '../../../support/group-simulation.js';
import type { CommittedOffset, HeartbeatResponse } from '../../../../lib/core/groups/types.js';
import type { TransactOp } from '../../../../lib/ports/metadata-store.js';
import { Router } from '../../../../lib/http/router.js';
import { groupRoutes } from '../../../../lib/http/routes/groups.js';
import { routeCaller } from './group-routes-support.js';

interface Answer {
  results: {
    topic: string;
    partition: number;
    error?: { code: string; message: string; retriable: boolean };
  }[];
  offsets: CommittedOffset[];
  error: { code: string; message: string; retriable: boolean };
}

/** Runs `before` once, just ahead of the first transaction that checks an item (OffsetDelete's guard). */
class InterposingStore extends MemoryMetadataStore {
  before: (() => Promise<void>) | undefined;
  override async transact(ops: readonly TransactOp[]): Promise<void> {
    const run = ops.some((op) => 'check' in op) ? this.before : undefined;
    if (run) {
      this.before = undefined;
      await run();
    }
    return super.transact(ops);
  }
}

const setup = () => {
  const store = new InterposingStore();
  const clock = new ManualClock();
  const topics = new InMemoryTopics({ orders: 3, payments: 2, wide: 120 });
  const coordinator = new GroupCoordinator({
    store,
    clock,
    topics,
    offsets: topics,
    random: seededRandom(7),
  });
  const router = new Router(groupRoutes(coordinator));
  const send = routeCaller(router);
  const call = (method: string, path: string, query: Record<string, string> = {}, body?: unknown) =>
    send<Answer>(method, path, body, query);
  const commit = async (entries: [string, number, number][]) => {
    const offsets = entries.map(([topic, partition, offset]) => ({ topic, partition, offset, metadata: '' }));
    expect((await call('POST', '/v1/groups/g1/offsets', {}, { offsets })).status).toBe(200);
  };
  const remove = (query: Record<string, string>, group = 'g1') =>
    call('DELETE', `/v1/groups/${group}/offsets`, query);
  const committed = async () =>
    (await call('GET', '/v1/groups/g1/offsets')).body.offsets.map(
      (o) => `${o.topic}/${o.partition}@${o.offset}`,
    );
  const join = async (subscribedTopics: string[]) =>
    (await call('POST', '/v1/groups/g1/heartbeat', {}, { memberId: null, memberEpoch: 0, subscribedTopics }))
      .body as unknown as HeartbeatResponse;
  return { store, clock, coordinator, commit, remove, committed, join };
};

describe('DELETE /v1/groups/{group}/offsets (OffsetDelete)', () => {
  it('deletes the named partitions, then the rest of the topic, answering every asked partition', async () => {
    const { commit, remove, committed } = setup();
    await commit([
      ['orders', 0, 5],
      ['orders', 1, 6],
      ['orders', 2, 7],
      ['payments', 0, 8],
    ]);
    const some = await remove({ topic: 'orders', partitions: '2,0,2' });
    expect(some).toEqual({
      status: 200,
      body: {
        results: [
          { topic: 'orders', partition: 0 },
          { topic: 'orders', partition: 2 },
        ],
      },
    });
    expect(await committed()).toEqual(['orders/1@6', 'payments/0@8']);
    // Without a list: every partition of the topic, those that had no offset left included (Kafka).
    expect((await remove({ topic: 'orders' })).body).toEqual({
      results: [
        { topic: 'orders', partition: 0 },
        { topic: 'orders', partition: 1 },
        { topic: 'orders', partition: 2 },
      ],
    });
    expect(await committed()).toEqual(['payments/0@8']);
    // Nothing left to delete: the partition still answers, with no error; other topics untouched.
    expect(await remove({ topic: 'orders', partitions: '1' })).toEqual({
      status: 200,
      body: { results: [{ topic: 'orders', partition: 1 }] },
    });
    expect(await committed()).toEqual(['payments/0@8']);
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION per partition the topic does not have, deleting the rest', async () => {
    const { commit, remove, committed } = setup();
    await commit([
      ['orders', 1, 6],
      ['payments', 0, 8],
    ]);
    const unknown = (topic: string, partition: number, message: string) => ({
      topic,
      partition,
      error: { code: 'UNKNOWN_TOPIC_OR_PARTITION', message, retriable: false },
    });
    expect(await remove({ topic: 'orders', partitions: '7,1' })).toEqual({
      status: 200,
      body: {
        results: [{ topic: 'orders', partition: 1 }, unknown('orders', 7, 'topic orders has no partition 7')],
      },
    });
    expect(await remove({ topic: 'gone', partitions: '0,1' })).toEqual({
      status: 200,
      body: {
        results: [
          unknown('gone', 0, 'topic gone does not exist'),
          unknown('gone', 1, 'topic gone does not exist'),
        ],
      },
    });
    // No list and no topic: no partitions to answer for, so the request itself is answered.
    expect(await remove({ topic: 'gone' })).toEqual({
      status: 404,
      body: {
        error: { code: 'UNKNOWN_TOPIC_OR_PARTITION', message: 'topic gone does not exist', retriable: false },
      },
    });
    expect(await committed()).toEqual(['payments/0@8']);
  });

  it('answers GROUP_SUBSCRIBED_TO_TOPIC for every partition while a live member subscribes, changing nothing', async () => {
    const { clock, commit, remove, committed, join, coordinator } = setup();
    await commit([
      ['orders', 0, 5],
      ['payments', 1, 9],
    ]);
    const member = await join(['payments']);
    const before = await committed();
    const error = {
      code: 'GROUP_SUBSCRIBED_TO_TOPIC',
      message: `member ${member.memberId} of group g1 subscribes to payments; its offsets cannot be deleted while it does`,
      retriable: false,
    };
    expect(await remove({ topic: 'payments' })).toEqual({
      status: 200,
      body: {
        results: [
          { topic: 'payments', partition: 0, error },
          { topic: 'payments', partition: 1, error },
        ],
      },
    });
    expect((await remove({ topic: 'payments', partitions: '1' })).body).toEqual({
      results: [{ topic: 'payments', partition: 1, error }],
    });
    expect(await committed()).toEqual(before);
    // A topic no member subscribes to can go while the group is active.
    expect((await remove({ topic: 'orders', partitions: '0' })).body).toEqual({
      results: [{ topic: 'orders', partition: 0 }],
    });
    expect(await committed()).toEqual(['payments/1@9']);
    // Once the member's session has run out it no longer subscribes to anything.
    clock.advance(coordinator.sessionTimeoutMs + 1);
    expect((await remove({ topic: 'payments', partitions: '1' })).body).toEqual({
      results: [{ topic: 'payments', partition: 1 }],
    });
    expect(await committed()).toEqual([]);
  });

  it('starts over when a member subscribes between the read and the write, then refuses', async () => {
    const { store, commit, remove, committed, join } = setup();
    await commit([['payments', 0, 3]]);
    let joined = '';
    store.before = async () => {
      joined = (await join(['payments'])).memberId;
    };
    const raced = await remove({ topic: 'payments', partitions: '0' });
    expect(joined).not.toBe('');
    expect(raced.status).toBe(200);
    expect(raced.body.results).toEqual([
      {
        topic: 'payments',
        partition: 0,
        error: {
          code: 'GROUP_SUBSCRIBED_TO_TOPIC',
          message: `member ${joined} of group g1 subscribes to payments; its offsets cannot be deleted while it does`,
          retriable: false,
        },
      },
    ]);
    expect(await committed()).toEqual(['payments/0@3']);
  });

  it('answers 404 GROUP_ID_NOT_FOUND for an unknown group', async () => {
    const { remove } = setup();
    const missing = await remove({ topic: 'orders' }, 'nobody');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({
      code: 'GROUP_ID_NOT_FOUND',
      message: 'group nobody does not exist',
      retriable: false,
    });
  });

  it('refuses more than 99 partitions in one deletion and bad queries with a 400, changing nothing', async () => {
    const { commit, remove, committed } = setup();
    const all = Array.from({ length: 120 }, (_, p): [string, number, number] => ['wide', p, p + 1]);
    await commit(all.slice(0, 99));
    await commit(all.slice(99));
    const whole = await remove({ topic: 'wide' });
    expect(whole.status).toBe(400);
    expect(whole.body.error.code).toBe('INVALID_REQUEST');
    expect(whole.body.error.message).toBe(
      'group g1 has 120 committed offsets for wide; one deletion is atomic and takes at most 99: name the partitions and delete in several requests',
    );
    const hundred = Array.from({ length: 100 }, (_, p) => p).join(',');
    expect((await remove({ topic: 'wide', partitions: hundred })).status).toBe(400);
    const badQueries: Record<string, string>[] = [
      {},
      { topic: 'bad/name' },
      { topic: 'wide', partitions: '1,x' },
      { topic: 'wide', partitions: '' },
      { topic: 'wide', extra: '1' },
    ];
    for (const query of badQueries) {
      const bad = await remove(query);
      expect([bad.status, bad.body.error.code]).toEqual([400, 'INVALID_REQUEST']);
    }
    expect(await committed()).toHaveLength(120);
    const first = Array.from({ length: 99 }, (_, p) => p);
    const chunk = await remove({ topic: 'wide', partitions: first.join(',') });
    expect(chunk.body.results).toEqual(first.map((partition) => ({ topic: 'wide', partition })));
    // The rest: all 120 partitions answer, 21 of them had an offset left.
    expect((await remove({ topic: 'wide' })).body.results).toEqual(
      Array.from({ length: 120 }, (_, partition) => ({ topic: 'wide', partition })),
    );
    expect(await committed()).toEqual([]);
  });
});
