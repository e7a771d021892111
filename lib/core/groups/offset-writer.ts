/**
 * Committed offsets are written in transactions that also test who may write them, so nothing slips in
 * between the check and the write: a member's commit holds only while the member item still has that
 * member epoch and a live session; a commit outside the group protocol (or a reset) holds only while
 * the group has no members.
 */
import { SluiceError } from '../../../protocol/errors.js';
import type { MetadataStore, TransactOp } from '../../ports/metadata-store.js';
import { StaleRead } from './cas-retry.js';
import { OFFSETS_PER_COMMIT } from '../../../protocol/commit-limit.js';
import { liveMembers, newGroupMeta } from './group.js';
import type { GroupItems, LoadedGroup } from './group-items.js';
import { encodeOffset, groupKeys } from './group-items.js';
import { isExpired } from './member.js';
import type { CommittedOffset } from './types.js';

/**
 * A commit fits one transaction (validateCommit refuses more rather than split it into transactions
 * that could half-apply); a reset of a wide topic still takes several.
 */
const OFFSETS_PER_TRANSACTION = OFFSETS_PER_COMMIT;

export type OffsetGuard = Extract<TransactOp, { check: unknown }>;

export interface OffsetWriterOptions {
  store: MetadataStore;
  items: GroupItems;
  sessionTimeoutMs: number;
  /** Removes members whose session ran out (a group of only those counts as empty). */
  expire: (loaded: LoadedGroup, now: number) => Promise<number>;
}

export class OffsetWriter {
  constructor(private readonly options: OffsetWriterOptions) {}

  /** Kafka's check for a member's commit: known member, live session, current member epoch. */
  async memberGuard(
    groupId: string,
    memberId: string,
    memberEpoch: number,
    now: number,
  ): Promise<OffsetGuard> {
    const { items, sessionTimeoutMs } = this.options;
    const member = await items.getMember(groupId, memberId);
    if (!member || isExpired(member, now, sessionTimeoutMs)) {
      throw new SluiceError('UNKNOWN_MEMBER_ID', `member ${memberId} is not in group ${groupId}`);
    }
    if (member.memberEpoch !== memberEpoch) {
      throw new SluiceError(
        'STALE_MEMBER_EPOCH',
        `commit with member epoch ${memberEpoch} but member ${memberId} is at epoch ${member.memberEpoch}`,
      );
    }
    return {
      check: groupKeys.member(groupId, memberId),
      condition: {
        and: [
          { path: 'memberEpoch', op: '=', value: memberEpoch },
          { path: 'lastSeen', op: '>', value: now - sessionTimeoutMs },
          { or: [{ notExists: 'revokeDeadline' }, { path: 'revokeDeadline', op: '>', value: now }] },
        ],
      },
    };
  }

  /** The guard for writes that need an empty group; creates the group when it does not exist yet. */
  async emptyGroupGuard(groupId: string, now: number, purpose: 'commit' | 'reset'): Promise<OffsetGuard> {
    const { items, sessionTimeoutMs, expire } = this.options;
    const found = await items.loadMeta(groupId);
    if (!found) {
      await items.createEmpty(groupId, newGroupMeta(now));
    } else if (found.meta.dead) {
      await items.purge(groupId);
      throw new StaleRead(`group ${groupId} was being deleted`);
    } else if (found.memberCount > 0) {
      const loaded = await items.load(groupId, now);
      if (liveMembers(loaded.view, now, sessionTimeoutMs).length > 0) {
        throw purpose === 'commit'
          ? new SluiceError(
              'UNKNOWN_MEMBER_ID',
              `group ${groupId} has members: commit with a memberId and memberEpoch`,
            )
          : new SluiceError(
              'NON_EMPTY_GROUP',
              `group ${groupId} has members; offsets can only be reset while it is empty`,
            );
      }
      await expire(loaded, now);
      throw new StaleRead('expired members removed');
    }
    return {
      check: groupKeys.meta(groupId),
      condition: {
        and: [
          { path: 'memberCount', op: '=', value: 0 },
          { path: 'dead', op: '=', value: false },
        ],
      },
    };
  }

  async write(
    groupId: string,
    guard: OffsetGuard,
    entries: readonly CommittedOffset[],
    now: number,
  ): Promise<void> {
    for (let i = 0; i < entries.length; i += OFFSETS_PER_TRANSACTION) {
      const chunk = entries.slice(i, i + OFFSETS_PER_TRANSACTION);
      await this.options.store.transact([
        guard,
        ...chunk.map((entry) => ({ put: encodeOffset(groupId, entry, now) })),
      ]);
    }
  }
}
