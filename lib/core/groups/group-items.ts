/**
 * How a consumer group lives in the metadata table (one partition key per group):
 *
 *   G#{groupId} / META                    groupEpoch, assignmentEpoch, assignor, subscribed-topic metadata,
 *                                         the target assignment (ranges per member and topic), memberCount,
 *                                         version (compare-and-set), dead (while being deleted)
 *   G#{groupId} / M#{memberId}            one member: epochs, state, assigned and revoking partitions,
 *                                         subscription, lastSeen (session), version (compare-and-set)
 *   G#{groupId} / O#{topic}#{partition}   a committed offset and its metadata
 *   GROUPS      / {groupId}               registry for listing; written at creation and deletion only
 *
 * Why no partition ever has two owners: a partition is handed out only by a transaction that touches
 * META, and META is always read before the member items.
 * - A change to META itself (membership, group epoch, target, subscribed topics) puts META
 *   conditioned on its version, with the member items it touches (each conditioned on its own version).
 * - A member taking partitions of the current target (nothing else changing) only increments META's
 *   version, conditioned on the target epoch it decided under. Takers under the same target epoch never
 *   want the same partition, so they do not conflict with each other; a taker under an older target
 *   fails its condition; and any META writer that read members before the take fails on the version.
 * - Everything else (lastSeen, releasing partitions, moving to a new member epoch) writes only that
 *   member's item, conditioned on its version: giving partitions up cannot create a second owner.
 */
import type { Item, ItemKey, MetadataStore, TransactOp } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import type { GroupMeta, GroupView } from './group.js';
import { newGroupMeta } from './group.js';
import type { Member, MemberState } from './member.js';
import { heldPartitions } from './member.js';
import { decodePartitionMap, encodePartitionMap, isSubset } from './partition-map.js';
import type { AssignorName, CommittedOffset, TopicInfo } from './types.js';

export const groupKeys = {
  pk: (groupId: string): string => `G#${groupId}`,
  meta: (groupId: string): ItemKey => ({ pk: groupKeys.pk(groupId), sk: 'META' }),
  member: (groupId: string, memberId: string): ItemKey => ({
    pk: groupKeys.pk(groupId),
    sk: `M#${memberId}`,
  }),
  memberPrefix: 'M#',
  offset: (groupId: string, topic: string, partition: number): ItemKey => ({
    pk: groupKeys.pk(groupId),
    sk: `O#${topic}#${partition}`,
  }),
  offsetPrefix: (topic?: string): string => (topic === undefined ? 'O#' : `O#${topic}#`),
  registry: (groupId: string): ItemKey => ({ pk: 'GROUPS', sk: groupId }),
  registryPk: 'GROUPS',
} as const;

export const encodeMeta = (groupId: string, meta: GroupMeta, memberCount: number): Item => ({
  ...groupKeys.meta(groupId),
  groupId,
  version: meta.version,
  groupEpoch: meta.groupEpoch,
  assignmentEpoch: meta.assignmentEpoch,
  assignor: meta.assignor,
  topics: Object.fromEntries(
    Object.keys(meta.topics)
      .sort()
      .map((name) => [name, { ...(meta.topics[name] as TopicInfo) }]),
  ),
  target: Object.fromEntries(
    Object.keys(meta.target)
      .sort()
      .map((id) => [id, encodePartitionMap(meta.target[id] ?? {})]),
  ),
  memberCount,
  dead: meta.dead,
  createdAt: meta.createdAt,
});

export const decodeMeta = (item: Item): GroupMeta => ({
  version: item['version'] as number,
  groupEpoch: item['groupEpoch'] as number,
  assignmentEpoch: item['assignmentEpoch'] as number,
  assignor: item['assignor'] as AssignorName,
  topics: item['topics'] as unknown as Record<string, TopicInfo>,
  target: Object.fromEntries(
    Object.entries((item['target'] ?? {}) as Record<string, unknown>).map(([id, v]) => [
      id,
      decodePartitionMap(v),
    ]),
  ),
  dead: item['dead'] === true,
  createdAt: item['createdAt'] as number,
});

export const encodeMember = (groupId: string, m: Member): Item => ({
  ...groupKeys.member(groupId, m.memberId),
  memberId: m.memberId,
  instanceId: m.instanceId,
  memberEpoch: m.memberEpoch,
  previousMemberEpoch: m.previousMemberEpoch,
  state: m.state,
  assigned: encodePartitionMap(m.assigned),
  revoking: encodePartitionMap(m.revoking),
  subscribedTopics: [...m.subscribedTopics],
  serverAssignor: m.serverAssignor,
  rebalanceTimeoutMs: m.rebalanceTimeoutMs,
  lastSeen: m.lastSeen,
  // Absent rather than null while not revoking, so commit conditions can test it with attribute_not_exists.
  ...(m.revokeDeadline === null ? {} : { revokeDeadline: m.revokeDeadline }),
  answered: m.answered === null ? null : encodePartitionMap(m.answered),
  version: m.version,
});

export const decodeMember = (item: Item): Member => ({
  memberId: item['memberId'] as string,
  instanceId: (item['instanceId'] ?? null) as string | null,
  memberEpoch: item['memberEpoch'] as number,
  previousMemberEpoch: item['previousMemberEpoch'] as number,
  state: item['state'] as MemberState,
  assigned: decodePartitionMap(item['assigned']),
  revoking: decodePartitionMap(item['revoking']),
  subscribedTopics: item['subscribedTopics'] as string[],
  serverAssignor: (item['serverAssignor'] ?? null) as AssignorName | null,
  rebalanceTimeoutMs: item['rebalanceTimeoutMs'] as number,
  lastSeen: item['lastSeen'] as number,
  revokeDeadline: (item['revokeDeadline'] ?? null) as number | null,
  answered:
    item['answered'] === null || item['answered'] === undefined ? null : decodePartitionMap(item['answered']),
  version: item['version'] as number,
});

const decodeOffset = (item: Item): CommittedOffset => ({
  topic: item['topic'] as string,
  partition: item['partition'] as number,
  offset: item['offset'] as number,
  metadata: (item['metadata'] ?? '') as string,
});

export const encodeOffset = (groupId: string, entry: CommittedOffset, now: number): Item => ({
  ...groupKeys.offset(groupId, entry.topic, entry.partition),
  topic: entry.topic,
  partition: entry.partition,
  offset: entry.offset,
  metadata: entry.metadata,
  commitTimestamp: now,
});

/**
 * Whether the member now holds a partition it did not hold before. Only such a change must be
 * serialized through META: releasing partitions or moving epochs cannot create a second owner.
 */
const acquires = (before: Member, after: Member): boolean =>
  !isSubset(heldPartitions(after), heldPartitions(before));

const versionIs = (version: number) => ({ path: 'version', op: '=' as const, value: version });
const absent = { notExists: 'pk' } as const;
const notDead = { path: 'dead', op: '=' as const, value: false };

export interface LoadedGroup {
  view: GroupView;
  /** Whether the META item exists. */
  stored: boolean;
}

export class GroupItems {
  constructor(private readonly store: MetadataStore) {}

  async loadMeta(groupId: string): Promise<{ meta: GroupMeta; memberCount: number } | undefined> {
    const item = await this.store.get(groupKeys.meta(groupId), { consistent: true });
    return item ? { meta: decodeMeta(item), memberCount: item['memberCount'] as number } : undefined;
  }

  /** META first, then the members: see the module comment for why the order matters. */
  async load(groupId: string, now: number): Promise<LoadedGroup> {
    const meta = (await this.loadMeta(groupId))?.meta;
    const members = meta ? await this.queryAll(groupKeys.pk(groupId), groupKeys.memberPrefix) : [];
    return {
      view: {
        groupId,
        meta: meta ?? newGroupMeta(now),
        members: new Map(members.map(decodeMember).map((m) => [m.memberId, m])),
      },
      stored: meta !== undefined,
    };
  }

  async getMember(groupId: string, memberId: string): Promise<Member | undefined> {
    const item = await this.store.get(groupKeys.member(groupId, memberId), { consistent: true });
    return item ? decodeMember(item) : undefined;
  }

  /** Writes what changed between `before` and `after`; a lost race surfaces as a conflict error. */
  async save(loaded: LoadedGroup, after: GroupView): Promise<void> {
    const { view: before, stored } = loaded;
    const { groupId } = before;
    const memberOps: TransactOp[] = [];
    let membership = false;
    let taking = false;
    for (const [id, m] of after.members) {
      const old = before.members.get(id);
      if (old === m) continue;
      const item = encodeMember(groupId, { ...m, version: (old?.version ?? 0) + 1 });
      memberOps.push({ put: item, condition: old ? versionIs(old.version) : absent });
      membership ||= !old;
      taking ||= old !== undefined && acquires(old, m);
    }
    for (const [id, old] of before.members) {
      if (after.members.has(id)) continue;
      memberOps.push({ delete: groupKeys.member(groupId, id), condition: versionIs(old.version) });
      membership = true;
    }
    const encodeAfter = (version: number): Item =>
      encodeMeta(groupId, { ...after.meta, version }, after.members.size);
    const metaChanged =
      !stored ||
      membership ||
      (after.meta !== before.meta &&
        JSON.stringify(encodeAfter(before.meta.version)) !==
          JSON.stringify(encodeMeta(groupId, before.meta, before.members.size)));

    if (metaChanged) {
      await this.store.transact([
        {
          put: encodeAfter(before.meta.version + 1),
          condition: stored ? versionIs(before.meta.version) : absent,
        },
        ...(stored
          ? []
          : [{ put: { ...groupKeys.registry(groupId), groupId, createdAt: after.meta.createdAt } }]),
        ...memberOps,
      ]);
    } else if (taking) {
      await this.store.transact([
        {
          update: groupKeys.meta(groupId),
          actions: [{ set: 'version', add: 1 }],
          condition: {
            and: [{ path: 'assignmentEpoch', op: '=', value: before.meta.assignmentEpoch }, notDead],
          },
        },
        ...memberOps,
      ]);
    } else {
      for (const op of memberOps) {
        if ('put' in op) await this.store.put(op.put, op.condition ? { condition: op.condition } : {});
      }
    }
  }

  /** Creates an empty group (META and registry) unless it exists; for commits outside the protocol. */
  async createEmpty(groupId: string, meta: GroupMeta): Promise<void> {
    await this.store.transact([
      { put: encodeMeta(groupId, { ...meta, version: 1 }, 0), condition: absent },
      { put: { ...groupKeys.registry(groupId), groupId, createdAt: meta.createdAt } },
    ]);
  }

  async offsets(groupId: string, topic?: string): Promise<CommittedOffset[]> {
    const items = await this.queryAll(groupKeys.pk(groupId), groupKeys.offsetPrefix(topic));
    return items
      .map(decodeOffset)
      .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  }

  async groupIds(): Promise<string[]> {
    return (await this.queryAll(groupKeys.registryPk)).map((item) => item.sk);
  }

  /** Marks the group dead (only while it has no members), so nothing joins it while it is emptied. */
  async markDead(groupId: string, meta: GroupMeta): Promise<void> {
    await this.store.update(
      groupKeys.meta(groupId),
      [
        { set: 'dead', value: true },
        { set: 'version', value: meta.version + 1 },
      ],
      { condition: { and: [versionIs(meta.version), { path: 'memberCount', op: '=', value: 0 }] } },
    );
  }

  /**
   * Removes every item of a dead group. The registry entry goes before META, so a group re-created
   * under the same id after META is gone keeps its registry entry. Safe to repeat after a crash.
   */
  async purge(groupId: string): Promise<void> {
    const pk = groupKeys.pk(groupId);
    for (;;) {
      const page = await this.store.query({ pk, consistent: true, limit: 100 });
      const rest = page.items.filter((item) => item.sk !== 'META');
      if (rest.length === 0) break;
      await this.store.batchWrite({ deletes: rest.map(({ pk: p, sk }) => ({ pk: p, sk })) });
    }
    await this.store.delete(groupKeys.registry(groupId));
    try {
      await this.store.delete(groupKeys.meta(groupId), { condition: { path: 'dead', op: '=', value: true } });
    } catch (error) {
      // Already gone, or someone finished the purge and a new group took the id: nothing left to do.
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }

  private async queryAll(pk: string, prefix?: string): Promise<Item[]> {
    const items: Item[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.query({
        pk,
        consistent: true,
        ...(prefix === undefined ? {} : { sk: { beginsWith: prefix } }),
        ...(cursor === undefined ? {} : { cursor }),
      });
      items.push(...page.items);
      cursor = page.cursor;
    } while (cursor !== undefined);
    return items;
  }
}
