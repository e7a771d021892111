/**
 * A consumer group as one value (its metadata plus its members) and the group-level steps of KIP-848:
 * expiring members, bumping the group epoch when membership, subscriptions or subscribed topics change,
 * and computing the target assignment of a new group epoch.
 */
import { ASSIGNOR_FUNCTIONS, preferredAssignor } from './assignors.js';
import type { Member } from './member.js';
import { heldPartitions, isExpired } from './member.js';
import type { PartitionMap } from './partition-map.js';
import { pairs } from './partition-map.js';
import type { AssignorName, GroupState, TopicInfo } from './types.js';
import { DEFAULT_ASSIGNOR, STATIC_LEAVE_EPOCH } from './types.js';

export interface GroupMeta {
  /** Compare-and-set version of the stored group item; 0 before it is first written. */
  version: number;
  groupEpoch: number;
  /** The group epoch the target assignment was computed for. */
  assignmentEpoch: number;
  assignor: AssignorName;
  /** The subscribed topics as they were at groupEpoch: a change in the catalog bumps the epoch. */
  topics: Readonly<Record<string, TopicInfo>>;
  /** Each member's share of the target assignment of assignmentEpoch. */
  target: Readonly<Record<string, PartitionMap>>;
  /** Set while the group is being deleted. */
  dead: boolean;
  createdAt: number;
}

export interface GroupView {
  groupId: string;
  meta: GroupMeta;
  members: ReadonlyMap<string, Member>;
}

export const newGroupMeta = (now: number): GroupMeta => ({
  version: 0,
  groupEpoch: 0,
  assignmentEpoch: 0,
  assignor: DEFAULT_ASSIGNOR,
  topics: {},
  target: {},
  dead: false,
  createdAt: now,
});

/** Expiry limit per write: a transaction holds at most 100 items. Leftovers go next time. */
export const MAX_EXPIRED_PER_WRITE = 64;

export const liveMembers = (view: GroupView, now: number, sessionTimeoutMs: number): Member[] =>
  [...view.members.values()].filter((m) => !isExpired(m, now, sessionTimeoutMs));

export const groupState = (view: GroupView, now: number, sessionTimeoutMs: number): GroupState => {
  if (view.meta.dead) return 'DEAD';
  const live = liveMembers(view, now, sessionTimeoutMs);
  if (live.length === 0) return 'EMPTY';
  // Members whose session ran out are as good as gone: removing them opens a new epoch.
  if (live.length < view.members.size || view.meta.groupEpoch > view.meta.assignmentEpoch) return 'ASSIGNING';
  const settled = (m: Member): boolean =>
    m.memberEpoch === STATIC_LEAVE_EPOCH ||
    (m.memberEpoch === view.meta.assignmentEpoch && m.state === 'STABLE');
  return live.every(settled) ? 'STABLE' : 'RECONCILING';
};

/** A mutable working copy of a group for one request; `view()` gives the result to persist. */
export class GroupDraft {
  readonly groupId: string;
  meta: GroupMeta;
  readonly members: Map<string, Member>;
  private readonly originalEpoch: number;

  constructor(view: GroupView) {
    this.groupId = view.groupId;
    // Shared until changed: every change below replaces meta (and target) with a new object.
    this.meta = view.meta;
    this.members = new Map(view.members);
    this.originalEpoch = view.meta.groupEpoch;
  }

  view(): GroupView {
    return { groupId: this.groupId, meta: this.meta, members: new Map(this.members) };
  }

  /** One bump per request however many things changed: the epoch only names a new target. */
  bumpGroupEpoch(): void {
    this.meta = { ...this.meta, groupEpoch: this.originalEpoch + 1 };
  }

  addMember(member: Member): void {
    this.members.set(member.memberId, member);
    this.bumpGroupEpoch();
  }

  putMember(member: Member): void {
    this.members.set(member.memberId, member);
  }

  removeMember(memberId: string): void {
    if (!this.members.delete(memberId)) return;
    const target = { ...this.meta.target };
    delete target[memberId];
    this.meta = { ...this.meta, target };
    this.bumpGroupEpoch();
  }

  /** A static member's new incarnation takes over the old one's place, target included (no new epoch). */
  replaceMember(oldId: string, member: Member): void {
    const target = { ...this.meta.target };
    const share = target[oldId];
    delete target[oldId];
    if (share) target[member.memberId] = share;
    this.members.delete(oldId);
    this.members.set(member.memberId, member);
    this.meta = { ...this.meta, target };
  }

  /** Removes members whose session or rebalance timeout ran out; returns their ids. */
  expire(now: number, sessionTimeoutMs: number): string[] {
    const expired = [...this.members.values()]
      .filter((m) => isExpired(m, now, sessionTimeoutMs))
      .slice(0, MAX_EXPIRED_PER_WRITE)
      .map((m) => m.memberId);
    for (const id of expired) this.removeMember(id);
    return expired;
  }

  /** Topics any member subscribes to. */
  subscribedTopics(): string[] {
    return [...new Set([...this.members.values()].flatMap((m) => m.subscribedTopics))].sort();
  }

  /** Records the catalog's view of the subscribed topics; a difference opens a new group epoch. */
  refreshTopics(catalog: ReadonlyMap<string, TopicInfo | undefined>): void {
    const topics: Record<string, TopicInfo> = {};
    for (const name of this.subscribedTopics()) {
      const info = catalog.get(name);
      if (info && info.partitions > 0) topics[name] = { topicId: info.topicId, partitions: info.partitions };
    }
    if (sameTopics(topics, this.meta.topics)) return;
    this.meta = { ...this.meta, topics };
    this.bumpGroupEpoch();
  }

  /** Computes the target assignment when the group epoch moved past it. */
  refreshTarget(): void {
    if (this.meta.groupEpoch <= this.meta.assignmentEpoch) return;
    const members = [...this.members.values()];
    // An empty group keeps the assignor it last used, so describing a stopped app (a Streams app asks
    // for range) shows what assigned its partitions, not the default nobody asked for.
    const assignor =
      members.length === 0 ? this.meta.assignor : preferredAssignor(members.map((m) => m.serverAssignor));
    const partitions = Object.fromEntries(
      Object.entries(this.meta.topics).map(([name, t]) => [name, t.partitions]),
    );
    const target = ASSIGNOR_FUNCTIONS[assignor]({
      members: members.map((m) => ({
        memberId: m.memberId,
        subscribedTopics: m.subscribedTopics,
        current: this.meta.target[m.memberId] ?? {},
      })),
      topics: partitions,
    });
    this.meta = { ...this.meta, assignor, target, assignmentEpoch: this.meta.groupEpoch };
  }

  /** Whether a member other than `memberId` holds the partition (assigned or pending revocation). */
  heldByOther(memberId: string): (topic: string, partition: number) => boolean {
    const owners = new Map<string, string>();
    for (const m of this.members.values()) {
      if (m.memberId === memberId) continue;
      for (const [topic, p] of pairs(heldPartitions(m))) owners.set(`${topic}\u0000${p}`, m.memberId);
    }
    return (topic, p) => owners.has(`${topic}\u0000${p}`);
  }
}

const sameTopics = (
  a: Readonly<Record<string, TopicInfo>>,
  b: Readonly<Record<string, TopicInfo>>,
): boolean => {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k]?.topicId === b[k]?.topicId && a[k]?.partitions === b[k]?.partitions);
};
