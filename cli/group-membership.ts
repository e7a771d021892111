/**
 * One consumer's membership of a group under KIP-848 (API.md "Consumer groups"): join with epoch 0,
 * heartbeat at the interval the server asks for while reporting the partitions it owns, reconcile each
 * new assignment (revoked partitions are committed and released before the next heartbeat stops listing
 * them), rejoin after FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID, and leave with epoch -1. The
 * protocol itself (bodies, epochs, fencing) is the SDK's GroupMember; this adds the CLI's reconciling.
 */
import { randomUUID } from 'node:crypto';
import type { SluiceApi } from './api.js';
import { describePartitions } from './format.js';
import { SluiceError } from '../sdk/errors.js';
import type { GroupMember } from '../sdk/group-member.js';
import { JOIN_EPOCH } from '../sdk/group-member.js';
import { delay } from './io.js';

export { JOIN_EPOCH, LEAVE_EPOCH } from '../sdk/group-member.js';
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
  /** Partitions this member consumes and reports as owned. */
  readonly owned = new Set<number>();
  /** Whether an assignment has been received since the last (re)join. */
  assigned = false;
  private readonly member: GroupMember;

  constructor(private readonly options: GroupMembershipOptions) {
    this.member = options.api.groupMember({
      groupId: options.groupId,
      subscribedTopics: [options.topic],
      ...(options.rebalanceTimeoutMs === undefined ? {} : { rebalanceTimeoutMs: options.rebalanceTimeoutMs }),
    });
    // KIP-1082: the client picks its member id, so a retried join lands on the same member.
    this.member.memberId = options.memberId ?? randomUUID();
  }

  get memberId(): string {
    return this.member.memberId ?? '';
  }

  get memberEpoch(): number {
    return this.member.memberEpoch;
  }

  get heartbeatIntervalMs(): number {
    return this.member.heartbeatIntervalMs;
  }

  /** One heartbeat and the reconciliation its answer asks for; true when the next should go at once. */
  async heartbeat(): Promise<boolean> {
    const { groupId, topic, reconciler, note } = this.options;
    const memberId = this.memberId;
    const owned = this.owned.size === 0 ? [] : [{ topic, partitions: [...this.owned].sort((a, b) => a - b) }];
    const outcome = await this.member.heartbeat(owned);
    if (outcome.kind === 'fenced') {
      const lost = [...this.owned];
      note(
        `${outcome.code}: member ${memberId} lost ${lost.length > 0 ? describePartitions(lost) : 'its membership'}; rejoining`,
      );
      // A forgotten member rejoins under a new id of its own choosing.
      this.member.memberId ??= randomUUID();
      this.owned.clear();
      this.assigned = false;
      await reconciler.lose(lost, outcome.code);
      return true;
    }
    if (outcome.kind === 'unchanged') return false;
    const target = new Set(
      outcome.topicPartitions.filter((tp) => tp.topic === topic).flatMap((tp) => tp.partitions),
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
      await this.member.leave();
    } catch (error) {
      // Already gone (expired or fenced): there is nothing to leave.
      if (!(
        error instanceof SluiceError &&
        (error.code === 'UNKNOWN_MEMBER_ID' || error.code === 'FENCED_MEMBER_EPOCH')
      )) {
        throw error;
      }
    } finally {
      this.assigned = false;
      this.owned.clear();
    }
  }
}
