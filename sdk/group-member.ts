/**
 * A consumer's membership in a group under KIP-848's protocol (API.md "Consumer groups"): it
 * heartbeats with what it owns, the server answers with its target assignment, and member epochs fence
 * zombies. This class only speaks the protocol; the consumer decides what to fetch.
 */
import { EDGE_LIMITS } from '../lib/http/limits.js';
import { SluiceError } from './errors.js';
import type { Retrier } from './retry.js';
import type { Transport } from './transport.js';
import { path } from './transport.js';
import type { HeartbeatResponse, TopicPartitions } from './types.js';

export interface GroupMemberOptions {
  groupId: string;
  subscribedTopics: string[];
  /** A static member's id (kept across restarts). */
  instanceId?: string;
  rebalanceTimeoutMs?: number;
  serverAssignor?: 'uniform' | 'range';
}

export type HeartbeatOutcome =
  | { kind: 'assignment'; topicPartitions: TopicPartitions[] }
  | { kind: 'unchanged' }
  /** The member lost its partitions (fenced or forgotten) and joins again on the next heartbeat. */
  | { kind: 'fenced'; code: string };

export const JOIN_EPOCH = 0;
export const LEAVE_EPOCH = -1;

export class GroupMember {
  memberId: string | null = null;
  memberEpoch = JOIN_EPOCH;
  heartbeatIntervalMs = 5_000;

  private subscription: string[];
  private subscriptionChanged = false;

  constructor(
    private readonly transport: Transport,
    private readonly retry: Retrier,
    private readonly options: GroupMemberOptions,
  ) {
    this.subscription = [...options.subscribedTopics];
  }

  /**
   * Changes the subscribed topics; the next heartbeat sends them (KIP-848 lets a member change its
   * subscription at any time, and the group computes a new assignment).
   */
  subscribe(topics: readonly string[]): void {
    const next = [...new Set(topics)].sort();
    const current = [...this.subscription].sort();
    if (next.length === current.length && next.every((t, i) => t === current[i])) return;
    this.subscription = next;
    this.subscriptionChanged = true;
  }

  get joined(): boolean {
    return this.memberEpoch > 0;
  }

  async heartbeat(owned: TopicPartitions[]): Promise<HeartbeatOutcome> {
    const joining = this.memberEpoch === JOIN_EPOCH;
    const body = {
      memberId: this.memberId,
      memberEpoch: this.memberEpoch,
      instanceId: this.options.instanceId ?? null,
      subscribedTopics: joining || this.subscriptionChanged ? this.subscription : null,
      ownedPartitions: owned,
      rebalanceTimeoutMs: this.options.rebalanceTimeoutMs ?? 60_000,
      serverAssignor: this.options.serverAssignor ?? null,
    };
    let answer: HeartbeatResponse;
    try {
      answer = await this.retry(() =>
        this.transport.json<HeartbeatResponse>({ method: 'POST', path: this.heartbeatPath(), json: body }),
      );
    } catch (error) {
      if (!(error instanceof SluiceError)) throw error;
      if (error.code === 'FENCED_MEMBER_EPOCH') {
        // KIP-848: a fenced member rejoins with epoch 0 under the same member id.
        this.memberEpoch = JOIN_EPOCH;
        return { kind: 'fenced', code: error.code };
      }
      if (error.code === 'UNKNOWN_MEMBER_ID') {
        this.memberId = null;
        this.memberEpoch = JOIN_EPOCH;
        return { kind: 'fenced', code: error.code };
      }
      throw error;
    }
    this.subscriptionChanged = false;
    this.memberId = answer.memberId;
    this.memberEpoch = answer.memberEpoch;
    this.heartbeatIntervalMs = answer.heartbeatIntervalMs;
    return answer.assignment
      ? { kind: 'assignment', topicPartitions: answer.assignment.topicPartitions }
      : { kind: 'unchanged' };
  }

  /** Leaves the group (its partitions are reassigned at once). */
  async leave(): Promise<void> {
    if (this.memberId === null) return;
    const body = {
      memberId: this.memberId,
      memberEpoch: LEAVE_EPOCH,
      instanceId: this.options.instanceId ?? null,
    };
    try {
      await this.transport.json({ method: 'POST', path: this.heartbeatPath(), json: body });
    } finally {
      this.memberId = null;
      this.memberEpoch = JOIN_EPOCH;
    }
  }

  /**
   * Commits offsets under this member's epoch (STALE_MEMBER_EPOCH when it moved on meanwhile). The
   * server takes at most EDGE_LIMITS.maxCommitPartitions per commit, each commit all-or-nothing: more
   * go in several commits, in order, stopping at the first that fails.
   */
  async commit(offsets: { topic: string; partition: number; offset: number }[]): Promise<void> {
    const max = EDGE_LIMITS.maxCommitPartitions;
    for (let i = 0; i < offsets.length; i += max) await this.commitOnce(offsets.slice(i, i + max));
  }

  private async commitOnce(offsets: { topic: string; partition: number; offset: number }[]): Promise<void> {
    const body = {
      memberId: this.memberId,
      memberEpoch: this.memberEpoch,
      offsets: offsets.map((o) => ({ ...o, metadata: '' })),
    };
    const { results } = await this.retry(() =>
      this.transport.json<{
        results: {
          topic: string;
          partition: number;
          error?: { code: string; message: string; retriable: boolean };
        }[];
      }>({
        method: 'POST',
        path: path`/v1/groups/${this.options.groupId}/offsets`,
        json: body,
      }),
    );
    const failed = results.find((r) => r.error);
    if (failed?.error) {
      throw new SluiceError(
        failed.error.code,
        `${failed.topic}-${failed.partition}: ${failed.error.message}`,
        {
          retriable: failed.error.retriable,
          status: 200,
        },
      );
    }
  }

  /** The group's committed offsets for a topic. */
  async committed(topic: string): Promise<Map<number, number>> {
    const { offsets } = await this.retry(() =>
      this.transport.json<{ offsets: { topic: string; partition: number; offset: number }[] }>({
        method: 'GET',
        path: path`/v1/groups/${this.options.groupId}/offsets`,
        query: { topic },
      }),
    );
    return new Map(offsets.filter((o) => o.topic === topic).map((o) => [o.partition, o.offset]));
  }

  private heartbeatPath(): string {
    return path`/v1/groups/${this.options.groupId}/heartbeat`;
  }
}
