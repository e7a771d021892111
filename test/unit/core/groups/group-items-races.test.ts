/**
 * How a group's items keep "a partition never has two owners" (DESIGN invariant 5) against writers
 * that get in between a read and a write: a member taking partitions is fenced by the target epoch it
 * decided under, and a META writer that read the members before a take is fenced by META's version.
 * And the items' bookkeeping: versions, offset order across pages, a deletion's order and its races.
 */
import { describe, expect, it } from 'vitest';
import { groupKeys } from '../../../../lib/core/groups/group-items.js';
import { fromTopicPartitions } from '../../../../lib/core/groups/partition-map.js';
import type { ItemKey } from '../../../../lib/ports/metadata-store.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { coordinatorSetup, refusal, storeHooks } from './group-coordinator-support.js';

const setup = (partitions: Record<string, number> = { t: 4 }) => {
  const hooks = storeHooks();
  const s = coordinatorSetup(partitions, { store: hooks.wrap });
  const owned = (partitions: number[]) => fromTopicPartitions([{ topic: 't', partitions }]);
  const assignments = async () =>
    (await s.coordinator.describeGroup('g')).members.map((m) => [
      m.memberId,
      m.assignment.topicPartitions.flatMap((tp) => tp.partitions),
    ]);
  return { ...s, ...hooks, owned, assignments };
};

/** ma at epoch 2 with partitions 0-1, mb just left: ma's next heartbeat takes 2-3 (a take, META unchanged). */
const takeAhead = async () => {
  const s = setup();
  await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
  await s.beat({ memberId: 'mb', subscribedTopics: ['t'] });
  // ma is told to revoke 2-3, then reports it owns only 0-1; mb then gets 2-3.
  let epoch = 1;
  for (let i = 0; i < 2; i++)
    epoch = (await s.beat({ memberId: 'ma', memberEpoch: epoch, ownedPartitions: s.owned([0, 1]) }))
      .memberEpoch;
  expect(epoch).toBe(2);
  await s.beat({ memberId: 'mb', memberEpoch: 2, ownedPartitions: s.owned([]) });
  expect(await s.assignments()).toEqual([
    ['ma', [0, 1]],
    ['mb', [2, 3]],
  ]);
  await s.beat({ memberId: 'mb', memberEpoch: -1 });
  return s;
};

describe('taking partitions', () => {
  it('under a target that moved on before the write is refused, and retried under the new one', async () => {
    const s = await takeAhead();
    // mc joins between ma's read and ma's write: the new target gives mc partitions 2-3.
    s.before('transact', async () => {
      await s.beat({ memberId: 'mc', subscribedTopics: ['t'] });
    });
    await s.beat({ memberId: 'ma', memberEpoch: 2, ownedPartitions: s.owned([0, 1]) });
    expect(await s.assignments()).toEqual([
      ['ma', [0, 1]],
      ['mc', [2, 3]],
    ]);
  });

  it('fences a META writer that read the members before the take', async () => {
    const s = await takeAhead();
    // mc's join read the members while ma held 0-1; ma takes 2-3 before mc's write lands.
    s.before('transact', async () => {
      await s.beat({ memberId: 'ma', memberEpoch: 2, ownedPartitions: s.owned([0, 1]) });
    });
    await s.beat({ memberId: 'mc', subscribedTopics: ['t'] });
    expect(await s.assignments()).toEqual([
      ['ma', [0, 1, 2, 3]],
      ['mc', []],
    ]);
  });
});

describe('a member’s own item', () => {
  it('is written conditioned on its version: a stale heartbeat cannot undo a newer one', async () => {
    const s = setup();
    await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    await s.beat({ memberId: 'mb', subscribedTopics: ['t'] });
    // ma is revoking 2-3 at epoch 1. A heartbeat of ma that reports nothing is overtaken by one that
    // reports the revocation done, which moves ma to epoch 2.
    await s.beat({ memberId: 'ma', memberEpoch: 1 });
    s.before('put', async () => {
      await s.beat({ memberId: 'ma', memberEpoch: 1, ownedPartitions: s.owned([0, 1]) });
    });
    expect(await refusal(s.beat({ memberId: 'ma', memberEpoch: 1 }))).toMatchObject({
      code: 'FENCED_MEMBER_EPOCH',
    });
    expect(await s.members()).toEqual([
      { id: 'ma', epoch: 2 },
      { id: 'mb', epoch: 2 },
    ]);
  });

  it('and META count their writes: each write stores the version it replaced plus one', async () => {
    const s = setup();
    const version = async (key: ItemKey) => (await s.store.get(key))?.['version'];
    await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    expect([await version(groupKeys.meta('g')), await version(groupKeys.member('g', 'ma'))]).toEqual([1, 1]);
    await s.beat({ memberId: 'ma', memberEpoch: 1 });
    await s.beat({ memberId: 'ma', memberEpoch: 1 });
    expect([await version(groupKeys.meta('g')), await version(groupKeys.member('g', 'ma'))]).toEqual([1, 3]);
    await s.beat({ memberId: 'mb', subscribedTopics: ['t'] });
    expect(await version(groupKeys.meta('g'))).toBe(2);
  });
});

describe('committed offsets', () => {
  it('read back in topic then numeric partition order, across the store’s 1 MB pages', async () => {
    const s = setup({ a: 130, b: 130 });
    const metadata = 'm'.repeat(4_096);
    for (const [topic, from] of [
      ['b', 0],
      ['a', 99],
      ['a', 0],
      ['b', 99],
    ] as const) {
      const offsets = Array.from({ length: Math.min(99, 130 - from) }, (_, i) => ({
        topic,
        partition: from + i,
        offset: from + i,
        metadata,
      }));
      await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets });
    }
    const expected = ['a', 'b'].flatMap((topic) =>
      Array.from({ length: 130 }, (_, p) => ({ topic, partition: p, offset: p, metadata })),
    );
    expect((await s.coordinator.fetchOffsets('g')).offsets).toEqual(expected);
    expect((await s.coordinator.fetchOffsets('g', 'b')).offsets).toEqual(expected.slice(130));
  });
});

describe('deleting a group', () => {
  it('is refused when a member joins between the check and marking the group dead', async () => {
    const s = setup();
    await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets: [] });
    s.before('update', async () => {
      await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    });
    expect(await refusal(s.coordinator.deleteGroup('g'))).toEqual({
      code: 'NON_EMPTY_GROUP',
      message: 'group g still has members',
    });
    expect(await s.members()).toEqual([{ id: 'ma', epoch: 1 }]);
  });

  it('removes the registry entry before META, so a crash in between leaves a dead group the sweep finishes', async () => {
    const s = setup();
    await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets: [] });
    const down = new SluiceError('KAFKA_STORAGE_ERROR', 'unavailable', { retriable: true });
    const isRegistry = (args: unknown[]) => (args[0] as ItemKey).pk === groupKeys.registryPk;
    s.before(
      'delete',
      async () => {
        throw down;
      },
      isRegistry,
    );
    await expect(s.coordinator.deleteGroup('g')).rejects.toBe(down);
    // Marked dead by a write of its own: META's version moved from 1 (created) to 2.
    expect(s.store.dump().map((i) => [i.pk, i.sk, i['dead'], i['version']])).toEqual([
      ['G#g', 'META', true, 2],
      ['GROUPS', 'g', undefined, undefined],
    ]);
    expect(await s.coordinator.sweep()).toEqual({ groups: 1, membersExpired: 0, failedGroups: 0 });
    expect(s.store.dump()).toEqual([]);
  });

  it('ends quietly when META went meanwhile, and passes on a store failure deleting it', async () => {
    const s = setup();
    const isMeta = (args: unknown[]) => (args[0] as ItemKey).sk === 'META';
    await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets: [] });
    s.before('delete', () => s.store.delete(groupKeys.meta('g')), isMeta);
    await s.coordinator.deleteGroup('g');
    expect(s.store.dump()).toEqual([]);

    await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets: [] });
    const down = new SluiceError('KAFKA_STORAGE_ERROR', 'unavailable', { retriable: true });
    s.before('delete', () => Promise.reject(down), isMeta);
    await expect(s.coordinator.deleteGroup('g')).rejects.toBe(down);
    expect(s.store.dump().map((i) => [i.pk, i.sk, i['dead']])).toEqual([['G#g', 'META', true]]);
  });
});

describe('a purge that another instance finished', () => {
  it('leaves the group created under the same id meanwhile', async () => {
    // Kills the mutant that deletes META without checking it is still the dead group's.
    const s = setup();
    const isMeta = (args: unknown[]) => (args[0] as ItemKey).sk === 'META';
    await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets: [] });
    const offsets = [{ topic: 't', partition: 2, offset: 9, metadata: '' }];
    s.before(
      'delete',
      async () => {
        await s.store.delete(groupKeys.meta('g'));
        await s.coordinator.commitOffsets('g', { memberId: null, memberEpoch: null, offsets });
      },
      isMeta,
    );
    await s.coordinator.deleteGroup('g');
    expect(s.store.dump().map((i) => [i.pk, i.sk, i['dead']])).toEqual([
      ['G#g', 'META', false],
      ['G#g', 'O#t#2', undefined],
      ['GROUPS', 'g', undefined],
    ]);
    expect((await s.coordinator.listGroups()).groups).toEqual([{ groupId: 'g', state: 'EMPTY', members: 0 }]);
  });
});

describe('the group’s reads', () => {
  it('are all strongly consistent: an eventually consistent read could miss a member or a version', async () => {
    const reads: string[] = [];
    const s = coordinatorSetup(
      { t: 4 },
      {
        store: (store) =>
          new Proxy(store, {
            get(target, name, receiver) {
              const value: unknown = Reflect.get(target, name, receiver);
              if (typeof value !== 'function') return value;
              return (...args: unknown[]) => {
                if (name === 'get')
                  reads.push(`get ${String((args[1] as { consistent?: boolean } | undefined)?.consistent)}`);
                if (name === 'query')
                  reads.push(`query ${String((args[0] as { consistent?: boolean }).consistent)}`);
                return (value as (...a: unknown[]) => unknown).apply(target, args);
              };
            },
          }),
      },
    );
    await s.beat({ memberId: 'ma', subscribedTopics: ['t'] });
    await s.coordinator.commitOffsets('g', { memberId: 'ma', memberEpoch: 1, offsets: [] });
    await s.coordinator.fetchOffsets('g');
    await s.beat({ memberId: 'ma', memberEpoch: -1 });
    await s.coordinator.deleteGroup('g');
    expect(new Set(reads)).toEqual(new Set(['get true', 'query true']));
  });
});
