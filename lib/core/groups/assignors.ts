/**
 * Server-side assignors (KIP-848): given the members' subscriptions, the partition counts of the
 * subscribed topics and the previous target assignment, compute the target assignment of a group epoch.
 *
 * - `uniform`: balanced and sticky. Members keep what they had where they still may; free partitions go
 *   to the least loaded eligible member; then one partition at a time moves from the most loaded member
 *   to a less loaded one until no member has two more than another it could give to. Every move lowers
 *   the sum of squared loads, so the loop ends; taking from the most loaded member first keeps the
 *   number of moved partitions at the minimum for homogeneous subscriptions.
 * - `range`: Kafka's RangeAssignor, per topic over the subscribed members sorted by member id.
 */
import type { PartitionMap } from './partition-map.js';
import { pairs, partitionMap } from './partition-map.js';
import type { AssignorName } from './types.js';
import { DEFAULT_ASSIGNOR } from './types.js';

export interface AssignorMember {
  memberId: string;
  subscribedTopics: readonly string[];
  /** The member's target in the previous group epoch (what stickiness preserves). */
  current: PartitionMap;
}

export interface AssignmentSpec {
  members: readonly AssignorMember[];
  /** Partition count of every subscribed topic that exists. */
  topics: Readonly<Record<string, number>>;
}

/** Every member of the spec has an entry, possibly empty. */
export type Assignor = (spec: AssignmentSpec) => Record<string, PartitionMap>;

const byMemberId = (a: AssignorMember, b: AssignorMember): number =>
  a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0;

export const rangeAssignor: Assignor = ({ members, topics }) => {
  const sorted = [...members].sort(byMemberId);
  const given = new Map<string, [string, number[]][]>(sorted.map((m) => [m.memberId, []]));
  for (const topic of Object.keys(topics).sort()) {
    const partitions = topics[topic] ?? 0;
    const subscribers = sorted.filter((m) => m.subscribedTopics.includes(topic));
    if (subscribers.length === 0) continue;
    const each = Math.floor(partitions / subscribers.length);
    const extra = partitions % subscribers.length;
    let start = 0;
    for (const [i, member] of subscribers.entries()) {
      const length = each + (i < extra ? 1 : 0);
      given.get(member.memberId)?.push([topic, Array.from({ length }, (_, k) => start + k)]);
      start += length;
    }
  }
  return Object.fromEntries([...given].map(([id, list]) => [id, partitionMap(list)]));
};

interface Holder {
  memberId: string;
  topics: ReadonlySet<string>;
  held: Map<string, Set<number>>;
  /** Partitions placed by this computation rather than kept: moving them costs no stickiness. */
  fresh: Set<string>;
  load: number;
}

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

export const uniformAssignor: Assignor = ({ members, topics }) => {
  const sorted = [...members].sort(byMemberId);
  const holders = sorted.map((m): Holder => ({
    memberId: m.memberId,
    topics: new Set(m.subscribedTopics.filter((t) => (topics[t] ?? 0) > 0)),
    held: new Map(),
    fresh: new Set(),
    load: 0,
  }));
  const taken = new Set<string>();
  const give = (h: Holder, topic: string, p: number, fresh: boolean): void => {
    let set = h.held.get(topic);
    if (!set) h.held.set(topic, (set = new Set()));
    set.add(p);
    h.load++;
    taken.add(key(topic, p));
    if (fresh) h.fresh.add(key(topic, p));
  };

  // 1. Stickiness: keep what is still valid and not claimed by an earlier member.
  for (const [i, h] of holders.entries()) {
    for (const [topic, p] of pairs(sorted[i]?.current ?? {})) {
      if (h.topics.has(topic) && p < (topics[topic] ?? 0) && !taken.has(key(topic, p)))
        give(h, topic, p, false);
    }
  }

  // 2. Free partitions to the least loaded eligible member (member-id order breaks ties).
  for (const topic of Object.keys(topics).sort()) {
    const eligible = holders.filter((h) => h.topics.has(topic));
    if (eligible.length === 0) continue;
    for (let p = 0; p < (topics[topic] ?? 0); p++) {
      if (taken.has(key(topic, p))) continue;
      let best = eligible[0] as Holder;
      for (const h of eligible) if (h.load < best.load) best = h;
      give(best, topic, p, true);
    }
  }

  // 3. Balance: move single partitions from the most loaded to less loaded eligible members.
  for (;;) {
    const order = [...holders].sort((a, b) => b.load - a.load || (a.memberId < b.memberId ? -1 : 1));
    let moved = false;
    for (const donor of order) {
      for (let r = order.length - 1; r >= 0 && !moved; r--) {
        const receiver = order[r] as Holder;
        if (receiver.load > donor.load - 2) break;
        const pick = pickPartition(donor, receiver);
        if (!pick) continue;
        const [topic, p] = pick;
        donor.held.get(topic)?.delete(p);
        donor.load--;
        donor.fresh.delete(key(topic, p));
        taken.delete(key(topic, p));
        give(receiver, topic, p, true);
        moved = true;
      }
      if (moved) break;
    }
    if (!moved) break;
  }

  return Object.fromEntries(holders.map((h) => [h.memberId, partitionMap(h.held)]));
};

/**
 * A partition the receiver may take: one placed by this computation if any (moving it costs nothing),
 * else the highest partition of the donor's largest topic (keeps topics spread evenly).
 */
const pickPartition = (donor: Holder, receiver: Holder): [string, number] | undefined => {
  let fallback: [string, number] | undefined;
  let fallbackSize = 0;
  for (const [topic, set] of donor.held) {
    if (!receiver.topics.has(topic) || set.size === 0) continue;
    for (const p of set) if (donor.fresh.has(key(topic, p))) return [topic, p];
    if (set.size > fallbackSize) {
      fallback = [topic, Math.max(...set)];
      fallbackSize = set.size;
    }
  }
  return fallback;
};

export const ASSIGNOR_FUNCTIONS: Readonly<Record<AssignorName, Assignor>> = {
  uniform: uniformAssignor,
  range: rangeAssignor,
};

/** The assignor most members ask for (Kafka's rule), the default when none asks or on a tie with it. */
export const preferredAssignor = (preferences: readonly (AssignorName | null)[]): AssignorName => {
  const votes = new Map<AssignorName, number>();
  for (const p of preferences) if (p !== null) votes.set(p, (votes.get(p) ?? 0) + 1);
  let best: AssignorName = DEFAULT_ASSIGNOR;
  for (const [name, n] of votes) if (n > (votes.get(best) ?? 0)) best = name;
  return best;
};
