/**
 * The consumer-group coordinator's vocabulary: what it needs from the rest of Sluice (the topic catalog
 * and the log's offsets) and the request/response shapes of API.md "Consumer groups".
 */
import type { PartitionMap, TopicPartitions } from './partition-map.js';

export type { TopicPartitions } from './partition-map.js';

/** The topic catalog as the coordinator sees it. Implemented over the topic catalog elsewhere. */
export interface GroupTopics {
  describe(name: string): Promise<{ topicId: string; partitions: number } | undefined>;
}

/** Offsets of a partition's log, for resets and lag. Implemented over the log elsewhere. */
export interface PartitionOffsets {
  /** logStartOffset */
  earliest(topic: string, partition: number): Promise<number>;
  /** highWatermark */
  latest(topic: string, partition: number): Promise<number>;
  /** The first offset whose record timestamp is ≥ timestampMs, or null when there is none. */
  forTimestamp(topic: string, partition: number, timestampMs: number): Promise<number | null>;
}

export interface TopicInfo {
  topicId: string;
  partitions: number;
}

export const ASSIGNORS = ['uniform', 'range'] as const;
export type AssignorName = (typeof ASSIGNORS)[number];
export const DEFAULT_ASSIGNOR: AssignorName = 'uniform';

/** `{"topic", "partitions": [...]}` as it travels over HTTP. */

export const JOIN_EPOCH = 0;
export const LEAVE_EPOCH = -1;
/** A static member leaving temporarily: it keeps its assignment until its session times out. */
export const STATIC_LEAVE_EPOCH = -2;

export interface HeartbeatRequest {
  memberId: string | null;
  memberEpoch: number;
  instanceId: string | null;
  /** Required on join; null keeps the current subscription. */
  subscribedTopics: string[] | null;
  /** Null when the member did not report what it owns (then revocations cannot complete). */
  ownedPartitions: PartitionMap | null;
  rebalanceTimeoutMs: number | null;
  serverAssignor: AssignorName | null;
}

export interface HeartbeatResponse {
  memberId: string;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  /** Null when unchanged since the member's last answer. */
  assignment: { topicPartitions: TopicPartitions[] } | null;
}

/**
 * A classic member's JoinGroup (memberEpoch null), SyncGroup or Heartbeat (memberEpoch = its
 * generationId) mapped onto the group (lib/core/groups/classic.ts).
 */
export interface ClassicMemberRequest {
  /** Issued before the join (KIP-394: the gateway answers a first JoinGroup with MEMBER_ID_REQUIRED). */
  memberId: string;
  memberEpoch: number | null;
  instanceId: string | null;
  /** Required on join; null keeps the current subscription. */
  subscribedTopics: string[] | null;
  /** On join: what the member still owns (empty for eager protocols, which revoke all before rejoining). */
  ownedPartitions: PartitionMap | null;
  rebalanceTimeoutMs: number | null;
  serverAssignor: AssignorName | null;
}

export interface ClassicMemberResponse {
  memberId: string;
  /** The classic generationId. */
  memberEpoch: number;
  heartbeatIntervalMs: number;
  /** The member's whole current assignment (what SyncGroup returns). */
  assignment: { topicPartitions: TopicPartitions[] };
  /** The member is not reconciled to the group's target: Heartbeat answers REBALANCE_IN_PROGRESS. */
  rebalanceInProgress: boolean;
}

export interface OffsetCommitEntry {
  topic: string;
  partition: number;
  offset: number;
  metadata: string;
}

export interface CommitRequest {
  /** Both null for a commit outside the group protocol (only while the group has no members). */
  memberId: string | null;
  memberEpoch: number | null;
  offsets: OffsetCommitEntry[];
}

export interface ErrorBody {
  code: string;
  message: string;
  retriable: boolean;
}

export type CommitResult =
  { topic: string; partition: number } | { topic: string; partition: number; error: ErrorBody };

export type ResetTarget = 'earliest' | 'latest' | { timestamp: number } | { offset: number };

export interface ResetRequest {
  topic: string;
  to: ResetTarget;
}

export interface CommittedOffset {
  topic: string;
  partition: number;
  offset: number;
  metadata: string;
}

export type GroupState = 'EMPTY' | 'ASSIGNING' | 'RECONCILING' | 'STABLE' | 'DEAD';

export interface GroupListing {
  groupId: string;
  state: GroupState;
  members: number;
}

export interface MemberDescription {
  memberId: string;
  instanceId: string | null;
  memberEpoch: number;
  subscribedTopics: string[];
  assignment: { topicPartitions: TopicPartitions[] };
}

export interface OffsetDescription {
  topic: string;
  partition: number;
  committedOffset: number;
  /** Null when the topic or partition no longer exists. */
  highWatermark: number | null;
  lag: number | null;
}

export interface GroupDescription {
  groupId: string;
  state: GroupState;
  groupEpoch: number;
  assignor: AssignorName;
  members: MemberDescription[];
  offsets: OffsetDescription[];
}

export interface SweepResult {
  /** Groups looked at. */
  groups: number;
  membersExpired: number;
  /** Groups that could not be processed this time (kept conflicting or the store failed). */
  failedGroups: number;
}
