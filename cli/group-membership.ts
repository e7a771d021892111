/**
 * One consumer's membership of a group under KIP-848 (API.md "Consumer groups"): join with epoch 0,
 * heartbeat at the interval the server asks for while reporting the partitions it owns, reconcile each
 * new assignment (revoked partitions are committed and released before the next heartbeat stops listing
 * them), rejoin after FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID, and leave with epoch -1.
 */
import { randomUUID } from 'node:crypto';
import type { HeartbeatRequest, SluiceApi } from './api.js';
import { describePartitions } from './format.js';
import { SluiceError } from '../sdk/errors.js';
import { delay } from './io.js';

export const JOIN_EPOCH = 0;
export const LEAVE_EPOCH = -1;
/** Heartbeat failures in a row that are tolerated (with backoff) before the consumer gives up. */
const MAX_HEARTBEAT_FAILURES = 5;

/** What the consumer does when its partitions change; the membership waits for each to finish. */
export interface Reconciler {
  /** Start consuming newly assigned partitions. */
  assign(partitions: number[]): Promise<void>;
  /** Stop consuming partitions the group moves elsewhere, committing their positions first. */
  revoke(partitions: number[]): Promise<void>;
  /** The member was fenced or forgotten: stop at once; its commits would be rejected. */
  lose(partitions: number[], code: string): Promise<void>;
  /** After each answer that carried an assignment, once the member owns what it was given. */
  reconciled?(): void;
}

export interface GroupMembershipOptions {
  api: SluiceApi;
  groupId: string;
  topic: string;
  reconciler: Reconciler;
  /** Status lines (joins, rebalances, retries). */
  note: (text: string) => void;
  rebalanceTimeoutMs?: number;
  /** KIP-1082: the client picks its member id, so a retried join lands on the same member. */
  memberId?: string;
}

export class GroupMembership {
  memberId: string;
  memberEpoch = JOIN_EPOCH;
  heartbeatIntervalMs = 5_000;
  /** Partitions this member consumes and reports as owned. */
  readonly owned = new Set<number>();
  /** Whether an assignment has been received since the last (re)join. */
  assigned = false;

  constructor(private readonly options: GroupMembershipOptions) {
    this.memberId = options.memberId ?? randomUUID();
  }

  /** One heartbeat and the reconciliation its answer asks for; true when the next should go at once. */
  async heartbeat(): Promise<boolean> {
    const { api, groupId, topic, reconciler, note } = this.options;
    const joining = this.memberEpoch === JOIN_EPOCH;
    const request: HeartbeatRequest = {
      memberId: this.memberId,
      memberEpoch: this.memberEpoch,
      ownedPartitions:
        this.owned.size === 0 ? [] : [{ topic, partitions: [...this.owned].sort((a, b) => a - b) }],
      ...(joining
        ? { subscribedTopics: [topic], rebalanceTimeoutMs: this.options.rebalanceTimeoutMs ?? 60_000 }
        : {}),
    };
    let answer;
    try {
      answer = await api.heartbeat(groupId, request);
    } catch (error) {
      if (!(error instanceof SluiceError)) throw error;
      if (error.code !== 'FENCED_MEMBER_EPOCH' && error.code !== 'UNKNOWN_MEMBER_ID') throw error;
      const lost = [...this.owned];
      note(
        `${error.code}: member ${this.memberId} lost ${lost.length > 0 ? describePartitions(lost) : 'its membership'}; rejoining`,
      );
      this.owned.clear();
      this.memberEpoch = JOIN_EPOCH;
      this.assigned = false;
      await reconciler.lose(lost, error.code);
      return true;
    }
    this.memberId = answer.memberId;
    this.memberEpoch = answer.memberEpoch;
    this.heartbeatIntervalMs = answer.heartbeatIntervalMs;
    if (answer.assignment === null) return false;
    const target = new Set(
      answer.assignment.topicPartitions.filter((tp) => tp.topic === topic).flatMap((tp) => tp.partitions),
    );
    const revoked = [...this.owned].filter((p) => !target.has(p));
    const added = [...target].filter((p) => !this.owned.has(p)).sort((a, b) => a - b);
    if (revoked.length > 0) {
      await reconciler.revoke(revoked);
      for (const p of revoked) this.owned.delete(p);
    }
    if (added.length > 0) {
      await reconciler.assign(added);
      for (const p of added) this.owned.add(p);
    }
    const first = !this.assigned;
    this.assigned = true;
    if (first || revoked.length > 0 || added.length > 0) {
      note(
        `Group ${groupId}: member ${this.memberId} (epoch ${this.memberEpoch}) owns ` +
          `${describePartitions([...this.owned])} of ${topic}`,
      );
    }
    reconciler.reconciled?.();
    // Report the reconciled ownership at once, so the group can hand released partitions on.
    return revoked.length > 0 || added.length > 0;
  }

  /** Heartbeats until `signal` aborts; throws a non-retriable error, or a retriable one that persists. */
  async run(signal: AbortSignal, { immediately = false } = {}): Promise<void> {
    let failures = 0;
    let now = immediately;
    while (!signal.aborted) {
      // After a failure, back off from 1 s but never wait longer than the interval the server asked for.
      const backoff = Math.min(this.heartbeatIntervalMs, 500 * 2 ** failures);
      if (!now) await delay(failures > 0 ? backoff : this.heartbeatIntervalMs, signal);
      if (signal.aborted) return;
      try {
        now = await this.heartbeat();
        failures = 0;
      } catch (error) {
        const retriable = error instanceof SluiceError && error.retriable;
        if (!retriable || ++failures > MAX_HEARTBEAT_FAILURES) throw error;
        this.options.note(`heartbeat failed (${error.code}: ${error.message}); retrying`);
        now = false;
      }
    }
  }

  /** Leaves the group (epoch -1): its partitions go to other members at once, not after the session timeout. */
  async leave(): Promise<void> {
    if (this.memberEpoch === JOIN_EPOCH && !this.assigned) return;
    try {
      await this.options.api.heartbeat(this.options.groupId, {
        memberId: this.memberId,
        memberEpoch: LEAVE_EPOCH,
      });
    } catch (error) {
      // Already gone (expired or fenced): there is nothing to leave.
      if (!(
        error instanceof SluiceError &&
        (error.code === 'UNKNOWN_MEMBER_ID' || error.code === 'FENCED_MEMBER_EPOCH')
      )) {
        throw error;
      }
    } finally {
      this.memberEpoch = JOIN_EPOCH;
      this.assigned = false;
      this.owned.clear();
    }
  }
}
