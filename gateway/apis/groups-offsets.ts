/**
 * OffsetCommit, OffsetFetch and OffsetDelete on the group's committed offsets: the very offsets the
 * HTTP API and `sluice groups` show. A commit carries the member's generation (classic) or member
 * epoch (KIP-848) and is fenced by it; one without a member (generation -1) is Kafka's simple
 * consumer's, accepted only while the group has no members.
 */
import { OFFSETS_PER_COMMIT } from '../../protocol/commit-limit.js';
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR, kafkaErrorCode } from '../../protocol/kafka/error-codes.js';
import { OffsetCommit, OffsetDelete, OffsetFetch } from '../../protocol/kafka/messages/group-offsets.js';
import type { CommittedOffset } from '../../lib/wire/types.js';
import type { ApiHandler } from '../api.js';
import { errorCodeOf } from '../api.js';
import type { OffsetToCommit } from '../groups-backend.js';
import { classicErrorCode, isGroupId } from './groups-errors.js';

/** Kafka's offset.metadata.max.bytes default, as the core bounds it. */
const MAX_METADATA_CHARS = 4096;

/** The offsets an OffsetCommit or TxnOffsetCommit names: per topic, per partition. */
export interface CommittedTopics {
  topics: {
    name: string;
    partitions: { partitionIndex: number; committedOffset: number; committedMetadata: string | null }[];
  }[];
}

interface CommitRequest extends CommittedTopics {
  groupId: string;
  generationIdOrMemberEpoch: number;
  memberId: string;
}

/** OffsetCommit's and TxnOffsetCommit's answer: one error code per partition the request named. */
export const commitAnswer = (
  request: CommittedTopics,
  code: (topic: string, partition: number) => number,
): Message => ({
  throttleTimeMs: 0,
  topics: request.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({
      partitionIndex: p.partitionIndex,
      errorCode: code(t.name, p.partitionIndex),
    })),
  })),
});

export const offsetCommit: ApiHandler = {
  schema: OffsetCommit,
  minVersion: 0,
  maxVersion: 9,
  errorResponse: (request, errorCode) => commitAnswer(request as unknown as CommitRequest, () => errorCode),
  async handle(request, ctx) {
    const commit = request as unknown as CommitRequest;
    if (!isGroupId(commit.groupId)) return commitAnswer(commit, () => ERROR.INVALID_GROUP_ID);
    const member =
      commit.generationIdOrMemberEpoch < 0 && commit.memberId === ''
        ? null
        : { memberId: commit.memberId, memberEpoch: commit.generationIdOrMemberEpoch };
    if (member && (member.memberId === '' || member.memberEpoch < 0)) {
      return commitAnswer(commit, () =>
        member.memberId === '' ? ERROR.UNKNOWN_MEMBER_ID : ERROR.ILLEGAL_GENERATION,
      );
    }
    // Per-partition refusals Kafka gives without asking the coordinator.
    const local = new Map<string, number>();
    const offsets: OffsetToCommit[] = [];
    const seen = new Set<string>();
    for (const t of commit.topics) {
      for (const p of t.partitions) {
        const key = `${t.name}\u0000${p.partitionIndex}`;
        const offset = Number(p.committedOffset);
        const metadata = p.committedMetadata ?? '';
        if (metadata.length > MAX_METADATA_CHARS) local.set(key, ERROR.OFFSET_METADATA_TOO_LARGE);
        else if (offset < 0 || !Number.isSafeInteger(offset) || p.partitionIndex < 0)
          local.set(key, ERROR.INVALID_COMMIT_OFFSET_SIZE);
        else if (!seen.has(key)) {
          seen.add(key);
          offsets.push({ topic: t.name, partition: p.partitionIndex, offset, metadata });
        }
      }
    }
    const results = new Map<string, number>();
    // One commit is atomic in Sluice up to OFFSETS_PER_COMMIT partitions; a larger Kafka commit goes
    // in several, each fenced by the same generation.
    for (let i = 0; i < offsets.length; i += OFFSETS_PER_COMMIT) {
      const chunk = offsets.slice(i, i + OFFSETS_PER_COMMIT);
      try {
        for (const r of await ctx.gateway.sluice.groups.commit(commit.groupId, member, chunk)) {
          results.set(`${r.topic}\u0000${r.partition}`, r.error ? kafkaErrorCode(r.error.code) : ERROR.NONE);
        }
      } catch (error) {
        // KIP-848 members (v9+) know a stale epoch by its own name; classic members as ILLEGAL_GENERATION.
        const code =
          ctx.version >= 9 && (error as { code?: unknown }).code === 'STALE_MEMBER_EPOCH'
            ? ERROR.STALE_MEMBER_EPOCH
            : classicErrorCode(error);
        for (const o of chunk) results.set(`${o.topic}\u0000${o.partition}`, code);
      }
    }
    return commitAnswer(commit, (topic, partition) => {
      const key = `${topic}\u0000${partition}`;
      return local.get(key) ?? results.get(key) ?? ERROR.NONE;
    });
  },
};

interface FetchTopics {
  name: string;
  partitionIndexes: number[];
}
interface FetchRequest {
  groupId: string;
  topics: FetchTopics[] | null;
  groups: { groupId: string; topics: FetchTopics[] | null }[];
}

const fetchedTopics = (committed: CommittedOffset[], asked: FetchTopics[] | null): Message[] => {
  const byKey = new Map(committed.map((o) => [`${o.topic}\u0000${o.partition}`, o]));
  const wanted: FetchTopics[] =
    asked ??
    [...new Set(committed.map((o) => o.topic))].map((name) => ({
      name,
      partitionIndexes: committed.filter((o) => o.topic === name).map((o) => o.partition),
    }));
  return wanted.map((t) => ({
    name: t.name,
    partitions: t.partitionIndexes.map((partitionIndex) => {
      const o = byKey.get(`${t.name}\u0000${partitionIndex}`);
      return {
        partitionIndex,
        committedOffset: o?.offset ?? -1,
        committedLeaderEpoch: -1,
        metadata: o?.metadata ?? '',
        errorCode: ERROR.NONE,
      };
    }),
  }));
};

const failedTopics = (asked: FetchTopics[] | null, errorCode: number): Message[] =>
  (asked ?? []).map((t) => ({
    name: t.name,
    partitions: t.partitionIndexes.map((partitionIndex) => ({
      partitionIndex,
      committedOffset: -1,
      committedLeaderEpoch: -1,
      metadata: '',
      errorCode,
    })),
  }));

export const offsetFetch: ApiHandler = {
  schema: OffsetFetch,
  minVersion: 0,
  maxVersion: 9,
  async handle(request, ctx) {
    const fetch = request as unknown as FetchRequest;
    const one = async (groupId: string, topics: FetchTopics[] | null) => {
      if (!isGroupId(groupId))
        return { topics: failedTopics(topics, ERROR.INVALID_GROUP_ID), errorCode: ERROR.INVALID_GROUP_ID };
      try {
        return {
          topics: fetchedTopics(await ctx.gateway.sluice.groups.offsets(groupId), topics),
          errorCode: ERROR.NONE,
        };
      } catch (error) {
        const errorCode = classicErrorCode(error);
        return { topics: failedTopics(topics, errorCode), errorCode };
      }
    };
    if (ctx.version >= 8) {
      const groups = await Promise.all(
        fetch.groups.map(async (g) => ({ groupId: g.groupId, ...(await one(g.groupId, g.topics)) })),
      );
      return { throttleTimeMs: 0, groups };
    }
    const answer = await one(fetch.groupId, fetch.topics);
    return { throttleTimeMs: 0, topics: answer.topics, errorCode: answer.errorCode };
  },
};

interface DeleteRequest {
  groupId: string;
  topics: { name: string; partitions: { partitionIndex: number }[] }[];
}

export const offsetDelete: ApiHandler = {
  schema: OffsetDelete,
  minVersion: 0,
  maxVersion: 0,
  async handle(request, ctx) {
    const del = request as unknown as DeleteRequest;
    if (!isGroupId(del.groupId)) return { errorCode: ERROR.INVALID_GROUP_ID, throttleTimeMs: 0, topics: [] };
    const topics = [];
    for (const t of del.topics) {
      const partitions = t.partitions.map((p) => p.partitionIndex);
      const codes = new Map<number, number>();
      for (let i = 0; i < partitions.length; i += OFFSETS_PER_COMMIT) {
        const chunk = partitions.slice(i, i + OFFSETS_PER_COMMIT);
        try {
          for (const r of await ctx.gateway.sluice.groups.deleteOffsets(del.groupId, t.name, chunk)) {
            codes.set(r.partition, r.error ? kafkaErrorCode(r.error.code) : ERROR.NONE);
          }
        } catch (error) {
          const errorCode = errorCodeOf(error);
          // A group-level failure (no such group, not authorized) is the answer's own error code.
          if (errorCode === ERROR.GROUP_ID_NOT_FOUND || errorCode === ERROR.GROUP_AUTHORIZATION_FAILED) {
            return { errorCode, throttleTimeMs: 0, topics: [] };
          }
          for (const p of chunk) codes.set(p, errorCode);
        }
      }
      topics.push({
        name: t.name,
        partitions: partitions.map((partitionIndex) => ({
          partitionIndex,
          errorCode: codes.get(partitionIndex) ?? ERROR.NONE,
        })),
      });
    }
    return { errorCode: ERROR.NONE, throttleTimeMs: 0, topics };
  },
};
