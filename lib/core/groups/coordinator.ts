/**
 * The consumer-group coordinator (KIP-848) with no process of its own: every call reads the group from
 * the metadata table, decides, and writes back conditionally; a lost race starts the call over through
 * the one bounded retry helper. Session timeouts are enforced by whoever looks next: any heartbeat of
 * the group, a commit, or the scheduled sweep.
 */
import { randomUUID } from 'node:crypto';
import { SluiceError } from '../../../protocol/errors.js';
import type { Clock } from '../../ports/clock.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import { TransactionCanceledError } from '../../ports/metadata-store.js';
import { StaleRead, retryOnConflict } from './cas-retry.js';
import { GroupDraft, groupState, liveMembers, newGroupMeta } from './group.js';
import type { LoadedGroup } from './group-items.js';
import { GroupItems, encodeOffset } from './group-items.js';
import { applyClassic } from './classic.js';
import { applyHeartbeat } from './heartbeat.js';
import type { DeleteOffsetsRequest } from './offset-delete.js';
import { deleteOffsetsOnce } from './offset-delete.js';
import { OffsetWriter } from './offset-writer.js';
import { toTopicPartitions } from './partition-map.js';
import {
  validateClassicMember,
  validateCommit,
  validateGroupId,
  validateHeartbeat,
  validateReset,
  validateTopicName,
} from './requests.js';
import { TopicLookup } from './topic-lookup.js';
import type { Telemetry } from '../../ports/telemetry.js';
import { noTelemetry } from '../../ports/telemetry.js';
import type {
  ClassicMemberRequest,
  ClassicMemberResponse,
  CommitRequest,
  CommitResult,
  CommittedOffset,
  GroupDescription,
  GroupListing,
  GroupTopics,
  HeartbeatRequest,
  HeartbeatResponse,
  OffsetDescription,
  PartitionOffsets,
  ResetRequest,
  SweepResult,
} from './types.js';

export interface GroupCoordinatorOptions {
  store: MetadataStore;
  clock: Clock;
  topics: GroupTopics;
  offsets: PartitionOffsets;
  /** Kafka's group.consumer.session.timeout.ms. */
  sessionTimeoutMs?: number;
  /** Kafka's group.consumer.heartbeat.interval.ms, told to every member. */
  heartbeatIntervalMs?: number;
  /** Jitter and member ids; seed it for reproducible simulations. */
  random?: () => number;
  /** Rebalances are counted here (RebalanceRateAndTimeMs); default: nowhere. */
  telemetry?: Telemetry;
}

export class GroupCoordinator {
  private readonly telemetry: Telemetry;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  private readonly items: GroupItems;
  private readonly clock: Clock;
  private readonly topics: GroupTopics;
  private readonly offsets: PartitionOffsets;
  private readonly random: () => number;
  private readonly newMemberId: () => string;
  private readonly writer: OffsetWriter;
  private readonly store: MetadataStore;

  constructor({
    store,
    clock,
    topics,
    offsets,
    sessionTimeoutMs = 45_000,
    heartbeatIntervalMs = 5_000,
    random,
    telemetry = noTelemetry,
  }: GroupCoordinatorOptions) {
    this.telemetry = telemetry;
    this.store = store;
    this.items = new GroupItems(store);
    this.clock = clock;
    this.topics = topics;
    this.offsets = offsets;
    this.sessionTimeoutMs = sessionTimeoutMs;
    this.heartbeatIntervalMs = heartbeatIntervalMs;
    this.random = random ?? Math.random;
    this.newMemberId = random ? () => uuidFrom(random) : randomUUID;
    this.writer = new OffsetWriter({
      store,
      items: this.items,
      sessionTimeoutMs,
      expire: (loaded, now) => this.expireLoaded(loaded, now),
    });
  }

  /** ConsumerGroupHeartbeat: join (epoch 0), heartbeat, leave (-1) or leave temporarily (-2). */
  async heartbeat(groupId: string, request: HeartbeatRequest): Promise<HeartbeatResponse> {
    validateGroupId(groupId);
    validateHeartbeat(request);
    return this.memberStep('heartbeat', groupId, request.subscribedTopics, (view, context) =>
      applyHeartbeat(view, request, context),
    );
  }

  /**
   * A classic member's JoinGroup (memberEpoch null), SyncGroup or Heartbeat (its generationId) in the
   * same group as KIP-848 members (classic.ts).
   */
  async classicMember(groupId: string, request: ClassicMemberRequest): Promise<ClassicMemberResponse> {
    validateGroupId(groupId);
    validateClassicMember(request);
    return this.memberStep('classic member', groupId, request.subscribedTopics, (view, context) =>
      applyClassic(view, request, context),
    );
  }

  /** One member's step (KIP-848 or classic) applied to the group it reads, saved under the group epoch. */
  private async memberStep<R>(
    label: string,
    groupId: string,
    subscribedTopics: readonly string[] | null | undefined,
    step: (
      view: LoadedGroup['view'],
      context: Parameters<typeof applyHeartbeat>[2],
    ) => { next: Parameters<GroupItems['save']>[1]; response: R },
  ): Promise<R> {
    const lookup = new TopicLookup(this.topics);
    // Looked up before the group is read, so the catalog's latency is not inside the window in which a
    // concurrent change makes this attempt's write fail.
    await lookup.describeAll(subscribedTopics ?? []);
    const started = this.clock.now();
    return this.retry(label, async () => {
      const loaded = await this.loadLive(groupId);
      const names = [...loaded.view.members.values()].flatMap((m) => m.subscribedTopics);
      const topics = await lookup.describeAll([...names, ...(subscribedTopics ?? [])]);
      const { next, response } = step(loaded.view, {
        now: this.clock.now(),
        sessionTimeoutMs: this.sessionTimeoutMs,
        heartbeatIntervalMs: this.heartbeatIntervalMs,
        topics,
        newMemberId: this.newMemberId,
      });
      await this.items.save(loaded, next);
      // A new target assignment is a rebalance: its time is the step that computed and stored it.
      if (next.meta.assignmentEpoch > loaded.view.meta.assignmentEpoch)
        this.telemetry.metric('RebalanceRateAndTimeMs', this.clock.now() - started, { group: groupId });
      return response;
    });
  }

  /** OffsetCommit, fenced by member epoch; per-partition results in request order. */
  async commitOffsets(groupId: string, request: CommitRequest): Promise<{ results: CommitResult[] }> {
    validateGroupId(groupId);
    validateCommit(request);
    const lookup = new TopicLookup(this.topics);
    const results: CommitResult[] = [];
    const accepted: CommittedOffset[] = [];
    for (const entry of request.offsets) {
      const { topic, partition } = entry;
      const info = await lookup.describe(topic);
      if (info && partition < info.partitions) {
        results.push({ topic, partition });
        accepted.push(entry);
      } else {
        const message = `${topic}/${partition} does not exist`;
        results.push({
          topic,
          partition,
          error: { code: 'UNKNOWN_TOPIC_OR_PARTITION', message, retriable: false },
        });
      }
    }
    await this.retry('offset commit', async () => {
      const now = this.clock.now();
      const guard =
        request.memberId === null
          ? await this.writer.emptyGroupGuard(groupId, now, 'commit')
          : await this.writer.memberGuard(groupId, request.memberId, request.memberEpoch as number, now);
      await this.writer.write(groupId, guard, accepted, now);
    });
    return { results };
  }

  /**
   * KIP-447: TxnOffsetCommit carries the consumer's group metadata; a member that left or moved to a
   * newer epoch is a zombie whose offsets must not join the transaction. No member id (a consumer that
   * assigns partitions itself): nothing to check, as Kafka's generation -1.
   */
  async checkTransactionalMember(
    groupId: string,
    memberId: string | null,
    memberEpoch: number,
  ): Promise<void> {
    validateGroupId(groupId);
    if (memberId === null) return;
    await this.writer.memberGuard(groupId, memberId, memberEpoch, this.clock.now());
  }

  /**
   * A committed transaction's offsets become the group's committed offsets, as Kafka applies them at the
   * COMMIT marker. Idempotent (a coordinator that crashed writes them again); no member guard: the member
   * was checked when the offsets joined the transaction.
   */
  async writeTransactionalOffsets(groupId: string, offsets: readonly CommittedOffset[]): Promise<void> {
    if (offsets.length === 0) return;
    if (!(await this.items.loadMeta(groupId))) {
      await this.items.createEmpty(groupId, newGroupMeta(this.clock.now())).catch((error: unknown) => {
        if (!(error instanceof TransactionCanceledError)) throw error;
      });
    }
    const now = this.clock.now();
    await this.store.batchWrite({ puts: offsets.map((entry) => encodeOffset(groupId, entry, now)) });
  }

  async fetchOffsets(groupId: string, topic?: string): Promise<{ offsets: CommittedOffset[] }> {
    validateGroupId(groupId);
    if (topic !== undefined) validateTopicName(topic, 'topic');
    return { offsets: await this.items.offsets(groupId, topic) };
  }

  /** kafka-consumer-groups --reset-offsets for every partition of a topic; only while the group is empty. */
  async resetOffsets(groupId: string, request: ResetRequest): Promise<{ offsets: CommittedOffset[] }> {
    validateGroupId(groupId);
    validateReset(request);
    const info = await this.topics.describe(request.topic);
    if (!info) throw new SluiceError('UNKNOWN_TOPIC_OR_PARTITION', `topic ${request.topic} does not exist`);
    const offsets = await Promise.all(
      Array.from({ length: info.partitions }, async (_, partition) => ({
        topic: request.topic,
        partition,
        offset: await this.resetPosition(request, partition),
        metadata: '',
      })),
    );
    await this.retry('offset reset', async () => {
      const now = this.clock.now();
      const guard = await this.writer.emptyGroupGuard(groupId, now, 'reset');
      await this.writer.write(groupId, guard, offsets, now);
    });
    return { offsets };
  }

  /**
   * OffsetDelete: one topic's committed offsets, answering every asked partition; refused per
   * partition while a live member subscribes to the topic.
   */
  async deleteOffsets(groupId: string, request: DeleteOffsetsRequest): Promise<{ results: CommitResult[] }> {
    validateGroupId(groupId);
    validateTopicName(request.topic, 'topic');
    const deps = { store: this.store, items: this.items, sessionTimeoutMs: this.sessionTimeoutMs };
    // Partitions only grow: a count read once, before the attempts, is never one that has shrunk.
    const info = await this.topics.describe(request.topic);
    const results = await this.retry('offset deletion', () =>
      deleteOffsetsOnce(deps, groupId, request, info?.partitions, this.clock.now()),
    );
    return { results };
  }

  async listGroups(): Promise<{ groups: GroupListing[] }> {
    const now = this.clock.now();
    const groups: GroupListing[] = [];
    for (const groupId of await this.items.groupIds()) {
      const { view, stored } = await this.items.load(groupId, now);
      if (!stored) continue;
      const state = groupState(view, now, this.sessionTimeoutMs);
      groups.push({ groupId, state, members: liveMembers(view, now, this.sessionTimeoutMs).length });
    }
    return { groups };
  }

  async describeGroup(groupId: string): Promise<GroupDescription> {
    validateGroupId(groupId);
    const now = this.clock.now();
    const { view, stored } = await this.items.load(groupId, now);
    if (!stored) throw new SluiceError('GROUP_ID_NOT_FOUND', `group ${groupId} does not exist`);
    const members = liveMembers(view, now, this.sessionTimeoutMs)
      .sort((a, b) => (a.memberId < b.memberId ? -1 : 1))
      .map((m) => ({
        memberId: m.memberId,
        instanceId: m.instanceId,
        memberEpoch: m.memberEpoch,
        subscribedTopics: [...m.subscribedTopics],
        assignment: { topicPartitions: toTopicPartitions(m.assigned) },
      }));
    return {
      groupId,
      state: groupState(view, now, this.sessionTimeoutMs),
      groupEpoch: view.meta.groupEpoch,
      assignor: view.meta.assignor,
      members,
      offsets: view.meta.dead ? [] : await this.describeOffsets(groupId),
    };
  }

  /** Deletes an empty group with its committed offsets. */
  async deleteGroup(groupId: string): Promise<void> {
    validateGroupId(groupId);
    await this.retry('group deletion', async () => {
      const now = this.clock.now();
      const loaded = await this.items.load(groupId, now);
      const { view } = loaded;
      if (!loaded.stored) throw new SluiceError('GROUP_ID_NOT_FOUND', `group ${groupId} does not exist`);
      if (!view.meta.dead) {
        if (liveMembers(view, now, this.sessionTimeoutMs).length > 0) {
          throw new SluiceError('NON_EMPTY_GROUP', `group ${groupId} still has members`);
        }
        if (view.members.size > 0) {
          await this.expireLoaded(loaded, now);
          throw new StaleRead('expired members removed');
        }
        await this.items.markDead(groupId, view.meta);
      }
      await this.items.purge(groupId);
    });
  }

  /** Removes members whose session (or rebalance) timeout ran out, in one group or in all. */
  async expireMembers(groupId?: string): Promise<SweepResult> {
    const ids = groupId === undefined ? await this.items.groupIds() : [groupId];
    const result: SweepResult = { groups: ids.length, membersExpired: 0, failedGroups: 0 };
    for (const id of ids) {
      try {
        result.membersExpired += await this.retry('member expiry', async () => {
          const now = this.clock.now();
          const loaded = await this.items.load(id, now);
          if (!loaded.stored) return 0;
          if (loaded.view.meta.dead) {
            await this.items.purge(id);
            return 0;
          }
          return this.expireLoaded(loaded, now);
        });
      } catch (error) {
        if (groupId !== undefined) throw error;
        result.failedGroups++;
      }
    }
    return result;
  }

  /** The scheduled maintenance entry point: expiry across all groups, finishing interrupted deletions. */
  sweep(): Promise<SweepResult> {
    return this.expireMembers();
  }

  private retry<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    return retryOnConflict(what, { clock: this.clock, random: this.random }, attempt);
  }

  /** Loads a group, finishing its deletion first if one was interrupted. */
  private async loadLive(groupId: string): Promise<LoadedGroup> {
    const loaded = await this.items.load(groupId, this.clock.now());
    if (!loaded.view.meta.dead) return loaded;
    await this.items.purge(groupId);
    throw new StaleRead(`group ${groupId} was being deleted`);
  }

  private async expireLoaded(loaded: LoadedGroup, now: number): Promise<number> {
    const draft = new GroupDraft(loaded.view);
    const removed = draft.expire(now, this.sessionTimeoutMs);
    if (removed.length === 0) return 0;
    draft.refreshTopics(await new TopicLookup(this.topics).describeAll(draft.subscribedTopics()));
    draft.refreshTarget();
    await this.items.save(loaded, draft.view());
    return removed.length;
  }

  private async resetPosition({ topic, to }: ResetRequest, partition: number): Promise<number> {
    if (to === 'earliest') return this.offsets.earliest(topic, partition);
    if (to === 'latest') return this.offsets.latest(topic, partition);
    if ('timestamp' in to) {
      return (
        (await this.offsets.forTimestamp(topic, partition, to.timestamp)) ??
        this.offsets.latest(topic, partition)
      );
    }
    // Like kafka-consumer-groups: an offset outside the log is moved to its nearest end.
    const [earliest, latest] = await Promise.all([
      this.offsets.earliest(topic, partition),
      this.offsets.latest(topic, partition),
    ]);
    return Math.min(Math.max(to.offset, earliest), latest);
  }

  private async describeOffsets(groupId: string): Promise<OffsetDescription[]> {
    const lookup = new TopicLookup(this.topics);
    return Promise.all(
      (await this.items.offsets(groupId)).map(async ({ topic, partition, offset }) => {
        const info = await lookup.describe(topic);
        const highWatermark =
          info && partition < info.partitions ? await this.offsets.latest(topic, partition) : null;
        const lag = highWatermark === null ? null : Math.max(0, highWatermark - offset);
        return { topic, partition, committedOffset: offset, highWatermark, lag };
      }),
    );
  }
}

/** A version-4 UUID from the given random source (deterministic when it is seeded). */
const uuidFrom = (random: () => number): string => {
  const bytes = Array.from({ length: 16 }, () => Math.floor(random() * 256));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
