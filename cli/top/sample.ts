/**
 * One look at the cluster for `sluice top`: every (filtered) topic's partitions with their replica
 * state, log end offset and stored bytes, and every (filtered) group's committed offsets and lag, all
 * read through the SDK's admin client. Rates come from two samples (rates.ts).
 */
import type { Admin } from '../../sdk/admin.js';
import { SluiceError } from '../../sdk/errors.js';
import type { GroupDescription, GroupState } from '../../sdk/types.js';

export interface PartitionSample {
  partition: number;
  leader: string;
  replicas: string[];
  isr: string[];
  osr: string[];
  /** The leader's log end offset. */
  logEndOffset: number;
  highWatermark: number;
  logStartOffset: number;
  /** Stored RecordBatch bytes (DescribeLogDirs' size). */
  sizeBytes: number;
}

export interface TopicSample {
  name: string;
  minInsyncReplicas: number;
  partitions: PartitionSample[];
}

export interface GroupOffsetSample {
  topic: string;
  partition: number;
  committedOffset: number;
  highWatermark: number | null;
  lag: number | null;
}

export interface GroupSample {
  groupId: string;
  state: GroupState;
  members: number;
  offsets: GroupOffsetSample[];
}

export interface Sample {
  /** Monotonic ms (performance.now()) when the sample was complete: rates divide by differences of it. */
  at: number;
  /** Wall-clock ms of the sample, for the header. */
  time: number;
  topics: TopicSample[];
  groups: GroupSample[];
}

export interface SampleFilter {
  /** Only these topics (all when empty). */
  topics: readonly string[];
  /** Only these groups (all when empty). */
  groups: readonly string[];
}

/** Topics and groups described at once. */
const CONCURRENCY = 8;

const inBatches = async <T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> => {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += CONCURRENCY)
    out.push(...(await Promise.all(items.slice(i, i + CONCURRENCY).map(fn))));
  return out;
};

const sampleTopic = async (admin: Admin, name: string): Promise<TopicSample> => {
  const [topic, segments] = await Promise.all([admin.describeTopic(name), admin.describeSegments(name)]);
  const size = new Map(segments.partitions.map((p) => [p.partition, p.sizeBytes]));
  const minIsr = Number(topic.configs['min.insync.replicas'] ?? '1');
  return {
    name: topic.name,
    minInsyncReplicas: Number.isFinite(minIsr) ? minIsr : 1,
    partitions: topic.partitions.map((p) => ({
      partition: p.partition,
      leader: p.leader,
      replicas: p.replicas,
      isr: p.isr,
      osr: p.osr,
      logEndOffset: p.logEndOffsets[p.leader] ?? p.highWatermark,
      highWatermark: p.highWatermark,
      logStartOffset: p.logStartOffset,
      sizeBytes: size.get(p.partition) ?? 0,
    })),
  };
};

/** A topic or group deleted between the listing and its description is left out of this sample. */
const goneAsUndefined = async <T>(read: Promise<T>): Promise<T | undefined> => {
  try {
    return await read;
  } catch (error) {
    if (
      error instanceof SluiceError &&
      (error.code === 'UNKNOWN_TOPIC_OR_PARTITION' || error.code === 'GROUP_ID_NOT_FOUND')
    )
      return undefined;
    throw error;
  }
};

export const takeSample = async (
  admin: Admin,
  filter: SampleFilter,
  clock: { now: () => number; wallClock: () => number },
): Promise<Sample> => {
  const [topicList, groupList] = await Promise.all([admin.listTopics(), admin.listGroups()]);
  const topicNames = topicList
    .map((t) => t.name)
    .filter((n) => filter.topics.length === 0 || filter.topics.includes(n))
    .sort();
  const groupIds = groupList
    .map((g) => g.groupId)
    .filter((g) => filter.groups.length === 0 || filter.groups.includes(g))
    .sort();
  const [sampled, described] = await Promise.all([
    inBatches(topicNames, (name) => goneAsUndefined(sampleTopic(admin, name))),
    inBatches(groupIds, (id) => goneAsUndefined(admin.describeGroup(id))),
  ]);
  const topics = sampled.filter((t): t is TopicSample => t !== undefined);
  const groups = described
    .filter((g): g is GroupDescription => g !== undefined)
    .map((g) => ({
      groupId: g.groupId,
      state: g.state,
      members: g.members.length,
      offsets: g.offsets
        .filter((o) => filter.topics.length === 0 || filter.topics.includes(o.topic))
        .map(({ topic, partition, committedOffset, highWatermark, lag }) => ({
          topic,
          partition,
          committedOffset,
          highWatermark,
          lag,
        }))
        .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1)),
    }))
    // With --topic, a group that commits to none of the topics has nothing to show.
    .filter((g) => filter.topics.length === 0 || g.offsets.length > 0 || filter.groups.includes(g.groupId));
  return { at: clock.now(), time: clock.wallClock(), topics, groups };
};
