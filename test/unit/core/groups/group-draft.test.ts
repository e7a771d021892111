/**
 * The group-level steps of KIP-848 on one value: the group state, one epoch bump per request however
 * much changed, expiry (to the millisecond, at most 64 per write), topic refreshes that bump only on a
 * real change, the target computed once per new epoch, and who else holds a partition.
 */
import { describe, expect, it } from 'vitest';
import type { GroupView } from '../../../../lib/core/groups/group.js';
import {
  GroupDraft,
  groupState,
  liveMembers,
  MAX_EXPIRED_PER_WRITE,
  newGroupMeta,
} from '../../../../lib/core/groups/group.js';
import type { Member } from '../../../../lib/core/groups/member.js';
import { newMember } from '../../../../lib/core/groups/member.js';
import type { TopicInfo } from '../../../../lib/core/groups/types.js';

const SESSION = 45_000;
const m = (id: string, extra: Partial<Member> = {}): Member => ({ ...newMember(id, 0), ...extra });
const view = (members: Member[], meta: Partial<GroupView['meta']> = {}): GroupView => ({
  groupId: 'g',
  meta: { ...newGroupMeta(7), ...meta },
  members: new Map(members.map((x) => [x.memberId, x])),
});
const catalog = (entries: [string, TopicInfo | undefined][]) => new Map(entries);

describe('the group state', () => {
  it('is DEAD, EMPTY, ASSIGNING, RECONCILING or STABLE, exactly', () => {
    expect(newGroupMeta(7)).toEqual({
      version: 0,
      groupEpoch: 0,
      assignmentEpoch: 0,
      assignor: 'uniform',
      topics: {},
      target: {},
      dead: false,
      createdAt: 7,
    });
    expect(groupState(view([m('a')], { dead: true }), 0, SESSION)).toBe('DEAD');
    expect(groupState(view([]), 0, SESSION)).toBe('EMPTY');
    expect(groupState(view([m('a')]), SESSION, SESSION)).toBe('EMPTY');
    expect(groupState(view([m('a'), m('b', { lastSeen: 10 })]), SESSION, SESSION)).toBe('ASSIGNING');
    expect(groupState(view([m('a')], { groupEpoch: 2, assignmentEpoch: 1 }), 0, SESSION)).toBe('ASSIGNING');
    const settled = { groupEpoch: 2, assignmentEpoch: 2 };
    expect(groupState(view([m('a', { memberEpoch: 2 })], settled), 0, SESSION)).toBe('STABLE');
    expect(
      groupState(view([m('a', { memberEpoch: -2 }), m('b', { memberEpoch: 2 })], settled), 0, SESSION),
    ).toBe('STABLE');
    expect(groupState(view([m('a', { memberEpoch: 1 })], settled), 0, SESSION)).toBe('RECONCILING');
    expect(
      groupState(view([m('a', { memberEpoch: 2, state: 'UNREVOKED_PARTITIONS' })], settled), 0, SESSION),
    ).toBe('RECONCILING');
    expect(
      liveMembers(view([m('a', { lastSeen: 1 }), m('b')]), SESSION, SESSION).map((x) => x.memberId),
    ).toEqual(['a']);
  });
});

describe('a draft', () => {
  it('bumps the group epoch once per request however many members join or leave', () => {
    const d = new GroupDraft(
      view([m('a'), m('b')], { groupEpoch: 4, target: { a: { t: [0] }, b: { t: [1] } } }),
    );
    d.addMember(m('c'));
    d.removeMember('a');
    d.removeMember('nobody');
    expect(d.meta.groupEpoch).toBe(5);
    expect(d.meta.target).toEqual({ b: { t: [1] } });
    expect([...d.view().members.keys()]).toEqual(['b', 'c']);
    const quiet = new GroupDraft(view([m('a')], { groupEpoch: 4 }));
    quiet.removeMember('nobody');
    quiet.putMember(m('a', { lastSeen: 5 }));
    expect(quiet.meta.groupEpoch).toBe(4);
    expect(quiet.members.get('a')!.lastSeen).toBe(5);
  });

  it('hands a static member’s place and target share to its new incarnation without a new epoch', () => {
    const d = new GroupDraft(
      view([m('old'), m('x')], { groupEpoch: 3, target: { old: { t: [2] }, x: { t: [0] } } }),
    );
    d.replaceMember('old', m('new'));
    expect(d.meta.target).toEqual({ new: { t: [2] }, x: { t: [0] } });
    expect([...d.members.keys()]).toEqual(['x', 'new']);
    expect(d.meta.groupEpoch).toBe(3);
    const none = new GroupDraft(view([m('old')]));
    none.replaceMember('old', m('new'));
    expect(none.meta.target).toEqual({});
  });

  it('expires members at exactly lastSeen + session timeout, at most 64 per write', () => {
    const members = Array.from({ length: 70 }, (_, i) =>
      m(`m${String(i).padStart(2, '0')}`, { lastSeen: 100 }),
    );
    const d = new GroupDraft(view([...members, m('fresh', { lastSeen: 101 })], { groupEpoch: 1 }));
    expect(d.expire(100 + SESSION - 1, SESSION)).toEqual([]);
    const expired = d.expire(100 + SESSION, SESSION);
    expect(MAX_EXPIRED_PER_WRITE).toBe(64);
    expect(expired).toEqual(members.slice(0, 64).map((x) => x.memberId));
    expect(d.members.size).toBe(7);
    expect(d.meta.groupEpoch).toBe(2);
  });

  it('records the subscribed topics from the catalog and bumps only when they change', () => {
    const d = new GroupDraft(
      view([m('a', { subscribedTopics: ['t', 'u'] }), m('b', { subscribedTopics: ['u', 'gone', 'empty'] })]),
    );
    expect(d.subscribedTopics()).toEqual(['empty', 'gone', 't', 'u']);
    const info = catalog([
      ['t', { topicId: 'T', partitions: 2 }],
      ['u', { topicId: 'U', partitions: 1 }],
      ['empty', { topicId: 'E', partitions: 0 }],
      ['gone', undefined],
    ]);
    d.refreshTopics(info);
    expect(d.meta.topics).toEqual({ t: { topicId: 'T', partitions: 2 }, u: { topicId: 'U', partitions: 1 } });
    expect(d.meta.groupEpoch).toBe(1);
    const again = new GroupDraft(d.view());
    again.refreshTopics(info);
    expect(again.meta.groupEpoch).toBe(1);
    for (const changed of [
      catalog([
        ['t', { topicId: 'T', partitions: 3 }],
        ['u', { topicId: 'U', partitions: 1 }],
      ]),
      catalog([
        ['t', { topicId: 'T2', partitions: 2 }],
        ['u', { topicId: 'U', partitions: 1 }],
      ]),
      catalog([['t', { topicId: 'T', partitions: 2 }]]),
    ]) {
      const next = new GroupDraft(d.view());
      next.refreshTopics(changed);
      expect(next.meta.groupEpoch).toBe(2);
    }
  });

  it('bumps when a topic is swapped for another, the count unchanged', () => {
    const d = new GroupDraft(
      view([m('a', { subscribedTopics: ['t', 'v'] })], {
        topics: { t: { topicId: 'T', partitions: 1 }, u: { topicId: 'U', partitions: 1 } },
      }),
    );
    d.refreshTopics(
      catalog([
        ['t', { topicId: 'T', partitions: 1 }],
        ['v', { topicId: 'V', partitions: 1 }],
      ]),
    );
    expect(d.meta.topics).toEqual({ t: { topicId: 'T', partitions: 1 }, v: { topicId: 'V', partitions: 1 } });
    expect(d.meta.groupEpoch).toBe(1);
  });

  it('computes the target once per new epoch, with the members’ preferred assignor', () => {
    const members = [
      m('a', { subscribedTopics: ['t'], serverAssignor: 'range' }),
      m('b', { subscribedTopics: ['t'], serverAssignor: 'range' }),
    ];
    const d = new GroupDraft(
      view(members, { groupEpoch: 1, topics: { t: { topicId: 'T', partitions: 4 } } }),
    );
    d.refreshTarget();
    expect(d.meta).toMatchObject({
      assignor: 'range',
      assignmentEpoch: 1,
      target: { a: { t: [0, 1] }, b: { t: [2, 3] } },
    });
    const settled = new GroupDraft({ ...d.view(), meta: { ...d.meta, target: { a: { t: [9] } } } });
    settled.refreshTarget();
    expect(settled.meta.target).toEqual({ a: { t: [9] } });
  });

  it('knows which partitions another member holds, assigned or still revoking', () => {
    const d = new GroupDraft(
      view([m('a', { assigned: { t: [0] }, revoking: { t: [1] } }), m('b', { assigned: { t: [2] } })]),
    );
    const forB = d.heldByOther('b');
    expect([0, 1, 2, 3].map((p) => forB('t', p))).toEqual([true, true, false, false]);
    expect(forB('u', 0)).toBe(false);
    const forA = d.heldByOther('a');
    expect([0, 1, 2].map((p) => forA('t', p))).toEqual([false, false, true]);
  });
});
