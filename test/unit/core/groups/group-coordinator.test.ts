/**
 * The coordinator's calls end to end over the memory store: what each refusal says, what a describe
 * lists and in which order, what the sweep does to dead, expired and failing groups, and what a call
 * that keeps losing its compare-and-set race answers (naming the call).
 */
import { describe, expect, it } from 'vitest';
import { groupKeys } from '../../../../lib/core/groups/group-items.js';
import { fromTopicPartitions } from '../../../../lib/core/groups/partition-map.js';
import type { GroupTopics } from '../../../../lib/core/groups/types.js';
import { SluiceError } from '../../../../protocol/errors.js';
import type { MetadataStore } from '../../../../lib/ports/metadata-store.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import { coordinatorSetup, refusal, storeHooks } from './group-coordinator-support.js';

type Setup = ReturnType<typeof coordinatorSetup>;

const join = (s: Setup, memberId: string, group = 'g') =>
  s.coordinator.heartbeat(group, {
    memberId,
    memberEpoch: 0,
    instanceId: null,
    subscribedTopics: ['t'],
    ownedPartitions: null,
    rebalanceTimeoutMs: null,
    serverAssignor: null,
  });

const offset = (partition: number, value: number) => ({ topic: 't', partition, offset: value, metadata: '' });

describe('refusals', () => {
  it('name the unknown group, topic or field', async () => {
    const s = coordinatorSetup();
    const badTopic = 'topic must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)';
    expect(await refusal(s.coordinator.fetchOffsets('g', 'bad topic'))).toEqual({
      code: 'INVALID_REQUEST',
      message: badTopic,
    });
    expect(await refusal(s.coordinator.deleteOffsets('g', { topic: 'bad topic', partitions: null }))).toEqual(
      {
        code: 'INVALID_REQUEST',
        message: badTopic,
      },
    );
    expect(await refusal(s.coordinator.resetOffsets('g', { topic: 'nope', to: 'earliest' }))).toEqual({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: 'topic nope does not exist',
    });
    expect(await refusal(s.coordinator.describeGroup('nope'))).toEqual({
      code: 'GROUP_ID_NOT_FOUND',
      message: 'group nope does not exist',
    });
    expect(await refusal(s.coordinator.deleteGroup('nope'))).toEqual({
      code: 'GROUP_ID_NOT_FOUND',
      message: 'group nope does not exist',
    });
    await join(s, 'ma');
    expect(await refusal(s.coordinator.deleteGroup('g'))).toEqual({
      code: 'NON_EMPTY_GROUP',
      message: 'group g still has members',
    });
  });

  it('of a call that keeps losing its race name the call, retriably', async () => {
    const { failing, wrap } = storeHooks();
    const s = coordinatorSetup({ t: 4 }, { store: wrap });
    await join(s, 'ma');
    await s.coordinator.commitOffsets('g', { memberId: 'ma', memberEpoch: 1, offsets: [offset(0, 1)] });
    await join(s, 'mb', 'h');
    s.clock.advance(45_000);
    failing.with = () => new ConditionFailedError(undefined);
    const calls: [string, () => Promise<unknown>][] = [
      ['heartbeat', () => join(s, 'mc')],
      [
        'classic member',
        () =>
          s.coordinator.classicMember('g', {
            memberId: 'md',
            memberEpoch: null,
            instanceId: null,
            subscribedTopics: ['t'],
            ownedPartitions: fromTopicPartitions([]),
            rebalanceTimeoutMs: null,
            serverAssignor: null,
          }),
      ],
      [
        'offset commit',
        () => s.coordinator.commitOffsets('e', { memberId: null, memberEpoch: null, offsets: [] }),
      ],
      ['offset reset', () => s.coordinator.resetOffsets('e', { topic: 't', to: 'latest' })],
      ['offset deletion', () => s.coordinator.deleteOffsets('g', { topic: 't', partitions: null })],
      ['member expiry', () => s.coordinator.expireMembers('h')],
      ['group deletion', () => s.coordinator.deleteGroup('g')],
    ];
    for (const [what, call] of calls) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SluiceError);
      expect(error).toMatchObject({
        code: 'COORDINATOR_NOT_AVAILABLE',
        message: `${what} kept conflicting with concurrent changes; retry`,
        retriable: true,
      });
    }
  });
});

/** A store whose `ops` calls do nothing (and succeed) once `inert.on` is set: writes that never land. */
const inertStore = (ops: string[]) => {
  const inert = { on: false };
  const wrap = (store: MetadataStore): MetadataStore =>
    new Proxy(store, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          inert.on && ops.includes(String(name))
            ? Promise.resolve(undefined)
            : (value as (...a: unknown[]) => unknown).apply(target, args);
      },
    });
  return { inert, wrap };
};

/** The exhausted retry's code and message, and the message of the conflict that exhausted it. */
const givenUp = async (promise: Promise<unknown>) => {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(SluiceError);
  const { code, message, cause } = error as SluiceError & { cause: Error };
  return { code, message, cause: cause.message };
};

describe('a call that keeps starting over', () => {
  // Kills the mutants of the StaleRead reasons (coordinator.ts and offset-writer.ts): the reason is the
  // cause of the retriable error a caller gets once the attempts run out.
  it('because a dead group’s purge never lands gives up with that as the cause', async () => {
    const { inert, wrap } = inertStore(['delete']);
    const s = coordinatorSetup({ t: 4 }, { store: wrap });
    await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets: [offset(0, 5)] });
    await s.store.update(groupKeys.meta('g'), [{ set: 'dead', value: true }]);
    inert.on = true;
    expect(await givenUp(join(s, 'ma'))).toEqual({
      code: 'COORDINATOR_NOT_AVAILABLE',
      message: 'heartbeat kept conflicting with concurrent changes; retry',
      cause: 'group g was being deleted',
    });
    const commit = s.coordinator.commitOffsets('g', {
      memberId: null,
      memberEpoch: null,
      offsets: [offset(0, 6)],
    });
    expect(await givenUp(commit)).toEqual({
      code: 'COORDINATOR_NOT_AVAILABLE',
      message: 'offset commit kept conflicting with concurrent changes; retry',
      cause: 'group g was being deleted',
    });
  });

  it('because the expiry of timed-out members never lands gives up with that as the cause', async () => {
    const { inert, wrap } = inertStore(['transact', 'update', 'delete']);
    const s = coordinatorSetup({ t: 4 }, { store: wrap });
    await join(s, 'ma');
    s.clock.advance(45_000);
    inert.on = true;
    expect(await givenUp(s.coordinator.deleteGroup('g'))).toEqual({
      code: 'COORDINATOR_NOT_AVAILABLE',
      message: 'group deletion kept conflicting with concurrent changes; retry',
      cause: 'expired members removed',
    });
    const commit = s.coordinator.commitOffsets('g', {
      memberId: null,
      memberEpoch: null,
      offsets: [offset(0, 6)],
    });
    expect(await givenUp(commit)).toEqual({
      code: 'COORDINATOR_NOT_AVAILABLE',
      message: 'offset commit kept conflicting with concurrent changes; retry',
      cause: 'expired members removed',
    });
  });
});

describe('a rebalance', () => {
  it('is timed in RebalanceRateAndTimeMs per group when a step sets a new target, and only then', async () => {
    // Kills the mutants of the assignment-epoch test before the metric, its name and its dimension.
    const points: [string, number, Record<string, unknown>][] = [];
    const { before, wrap } = storeHooks();
    const s = coordinatorSetup(
      { t: 4 },
      {
        store: wrap,
        telemetry: {
          metric: (name, value, dimensions) => void points.push([name, value, dimensions]),
          log: () => undefined,
          annotate: () => undefined,
        },
      },
    );
    // The step's write takes 7 ms.
    before('transact', async () => s.clock.advance(7));
    expect((await join(s, 'ma')).memberEpoch).toBe(1);
    expect(points).toEqual([['RebalanceRateAndTimeMs', 7, { group: 'g' }]]);
    // A heartbeat of the same member at its epoch changes no target.
    await s.coordinator.heartbeat('g', {
      memberId: 'ma',
      memberEpoch: 1,
      instanceId: null,
      subscribedTopics: null,
      ownedPartitions: null,
      rebalanceTimeoutMs: null,
      serverAssignor: null,
    });
    expect(points).toHaveLength(1);
  });
});

describe('a committed transaction’s offsets', () => {
  const committed = (s: Setup, group = 'g') => s.coordinator.fetchOffsets(group).then((r) => r.offsets);

  it('create the group they are for when it does not exist, and none when there are none', async () => {
    // Kills the mutants of the empty-list return and of the group-existence test before the create.
    const s = coordinatorSetup();
    await s.coordinator.writeTransactionalOffsets('e', []);
    await s.coordinator.writeTransactionalOffsets('g', [offset(1, 7)]);
    expect((await s.coordinator.listGroups()).groups).toEqual([{ groupId: 'g', state: 'EMPTY', members: 0 }]);
    expect(await committed(s)).toEqual([offset(1, 7)]);
  });

  it('write only the offsets to a group that exists', async () => {
    // Kills the mutant that tries to create the group every time (a refused transaction per commit).
    const { before, wrap } = storeHooks();
    const s = coordinatorSetup({ t: 4 }, { store: wrap });
    await join(s, 'ma');
    let transacts = 0;
    before('transact', async () => void transacts++);
    await s.coordinator.writeTransactionalOffsets('g', [offset(0, 3)]);
    expect(transacts).toBe(0);
    expect(await committed(s)).toEqual([offset(0, 3)]);
  });

  it('are written when another writer creates the group first, not when the create fails otherwise', async () => {
    // Kills the mutants of the catch that ignores only the create's TransactionCanceledError.
    const { before, wrap } = storeHooks();
    const s = coordinatorSetup({ t: 4 }, { store: wrap });
    before('transact', async () => {
      await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets: [] });
    });
    await s.coordinator.writeTransactionalOffsets('g', [offset(0, 3)]);
    expect(await committed(s)).toEqual([offset(0, 3)]);
    const down = new Error('store unreachable');
    before('transact', () => Promise.reject(down));
    await expect(s.coordinator.writeTransactionalOffsets('h', [offset(0, 4)])).rejects.toBe(down);
    expect(await committed(s, 'h')).toEqual([]);
  });
});

describe('describing a group', () => {
  it('lists the live members by member id, whatever order they joined in', async () => {
    const s = coordinatorSetup();
    for (const id of ['mc', 'ma', 'mb']) await join(s, id);
    expect((await s.members()).map((m) => m.id)).toEqual(['ma', 'mb', 'mc']);
  });

  it('lists them in member id order whatever order the store returns them in (DynamoDB’s is UTF-8 bytes)', async () => {
    // Kills the mutants of describeGroup's member sort: by UTF-8 bytes 'ｚ' (EF BD 9A) comes before
    // '😀' (F0 9F 98 80), by UTF-16 code units (JavaScript's order) after it (FF5A > D83D).
    const utf8 = (store: MetadataStore): MetadataStore =>
      Object.assign(Object.create(store) as MetadataStore, {
        query: async (input: Parameters<MetadataStore['query']>[0]) => {
          const page = await store.query(input);
          const bytes = (sk: unknown) => Buffer.from(String(sk));
          return { ...page, items: [...page.items].sort((a, b) => Buffer.compare(bytes(a.sk), bytes(b.sk))) };
        },
      });
    const s = coordinatorSetup({ t: 4 }, { store: utf8 });
    for (const id of ['ｚ', '😀']) await join(s, id);
    expect((await s.members()).map((m) => m.id)).toEqual(['😀', 'ｚ']);
  });

  it('gives a committed partition the topic no longer has no high watermark and no lag', async () => {
    const s = coordinatorSetup({ t: 3 });
    s.topics.append('t', 1, [1, 2, 3]);
    s.topics.append('t', 2, [1]);
    const offsets = [offset(1, 1), offset(2, 0)];
    await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets });
    s.topics.remove('t');
    s.topics.create('t', 2);
    s.topics.append('t', 1, [1, 2]);
    expect((await s.coordinator.describeGroup('g')).offsets).toEqual([
      { topic: 't', partition: 1, committedOffset: 1, highWatermark: 2, lag: 1 },
      { topic: 't', partition: 2, committedOffset: 0, highWatermark: null, lag: null },
    ]);
  });

  it('of a group whose deletion was interrupted shows it DEAD with no offsets', async () => {
    const s = coordinatorSetup();
    await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets: [offset(0, 5)] });
    await s.store.update(groupKeys.meta('g'), [{ set: 'dead', value: true }]);
    expect(await s.coordinator.describeGroup('g')).toMatchObject({ state: 'DEAD', members: [], offsets: [] });
  });
});

describe('listing groups', () => {
  it('leaves out a registry entry whose group item is gone', async () => {
    const s = coordinatorSetup();
    await join(s, 'ma', 'g');
    await join(s, 'mb', 'h');
    await s.store.delete(groupKeys.meta('h'));
    expect((await s.coordinator.listGroups()).groups).toEqual([
      { groupId: 'g', state: 'STABLE', members: 1 },
    ]);
  });
});

describe('deleting a group', () => {
  it('whose members all timed out removes them first, then the group', async () => {
    const s = coordinatorSetup();
    await join(s, 'ma');
    s.clock.advance(45_000);
    await s.coordinator.deleteGroup('g');
    expect(s.store.dump()).toEqual([]);
  });
});

describe('the sweep', () => {
  it('expires members of one group only when asked for one, and writes nothing when none expired', async () => {
    const s = coordinatorSetup();
    await join(s, 'ma', 'g');
    await join(s, 'mb', 'h');
    s.clock.advance(45_000);
    expect(await s.coordinator.expireMembers('g')).toEqual({ groups: 1, membersExpired: 1, failedGroups: 0 });
    expect((await s.coordinator.listGroups()).groups.map((g) => [g.groupId, g.members])).toEqual([
      ['g', 0],
      ['h', 0],
    ]);
    expect((await s.store.get(groupKeys.member('h', 'mb')))?.['memberId']).toBe('mb');
    // A topic that grew opens a new epoch on the next heartbeat, not in a sweep that expired no one.
    const g2 = coordinatorSetup();
    await join(g2, 'ma');
    g2.topics.grow('t', 6);
    const before = g2.store.dump();
    expect(await g2.coordinator.sweep()).toEqual({ groups: 1, membersExpired: 0, failedGroups: 0 });
    expect(g2.store.dump()).toEqual(before);
  });

  it('finishes interrupted deletions, counts a group it cannot write as failed, and goes on', async () => {
    const { failing, wrap } = storeHooks();
    const s = coordinatorSetup({ t: 4 }, { store: wrap });
    await s.coordinator.commitOffsets('dead', { memberId: null, memberEpoch: null, offsets: [offset(0, 5)] });
    await s.store.update(groupKeys.meta('dead'), [{ set: 'dead', value: true }]);
    await join(s, 'ma', 'g');
    s.clock.advance(45_000);
    expect(await s.coordinator.sweep()).toEqual({ groups: 2, membersExpired: 1, failedGroups: 0 });
    expect(s.store.dump().filter((i) => i.pk === groupKeys.pk('dead') || i.sk === 'dead')).toEqual([]);

    await join(s, 'mb', 'g');
    s.clock.advance(45_000);
    const down = new SluiceError('KAFKA_STORAGE_ERROR', 'unavailable', { retriable: true });
    failing.with = () => down;
    expect(await s.coordinator.sweep()).toEqual({ groups: 1, membersExpired: 0, failedGroups: 1 });
    await expect(s.coordinator.expireMembers('g')).rejects.toBe(down);
  });
});

describe('member ids', () => {
  it('are v4 UUIDs drawn from the seeded random source, the same on every run', async () => {
    const s = coordinatorSetup();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await s.beat({ subscribedTopics: ['t'] })).memberId);
    expect(ids).toEqual([
      'b0c5389f-1597-4875-a73a-c7bda903774c',
      'e549c1b9-4004-4b35-851f-78fd3e14d951',
      '68fc4562-37de-48e0-82ce-a623a29350c7',
    ]);
  });
});

describe('the catalog', () => {
  it('is asked about each subscribed topic once per heartbeat, before the group is read', async () => {
    const order: string[] = [];
    const s = coordinatorSetup(
      { t: 4, u: 2 },
      {
        topics: (topics: GroupTopics): GroupTopics => ({
          describe: (name) => {
            order.push(`describe ${name}`);
            return topics.describe(name);
          },
        }),
        store: (store: MetadataStore): MetadataStore =>
          new Proxy(store, {
            get(target, name, receiver) {
              const value: unknown = Reflect.get(target, name, receiver);
              if (typeof value !== 'function') return value;
              return (...args: unknown[]) => {
                order.push(String(name));
                return (value as (...a: unknown[]) => unknown).apply(target, args);
              };
            },
          }),
      },
    );
    await s.beat({ memberId: 'ma', subscribedTopics: ['u'] });
    order.length = 0;
    await s.beat({ memberId: 'mb', subscribedTopics: ['t'] });
    expect(order).toEqual(['describe t', 'get', 'query', 'describe u', 'transact']);
    // A heartbeat that keeps its subscription looks up only the group's topics, once the group is read.
    order.length = 0;
    await s.beat({ memberId: 'ma', memberEpoch: 1 });
    expect(order).toEqual(['get', 'query', 'describe u', 'describe t', 'put']);
  });
});
