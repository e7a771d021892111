/**
 * What `sluice top` shows, computed from two samples: produce rates per topic from the growth of log
 * end offsets (records/s) and of stored bytes (bytes/s); consume rates per group and topic from the
 * growth of committed offsets, in bytes at the partition's average stored bytes per offset; lag per
 * group and partition; and each partition's ISR state as Kafka's broker metrics count it
 * (UnderReplicatedPartitions, UnderMinIsrPartitionCount, OfflinePartitionsCount). Pure functions.
 */
import type { GroupSample, PartitionSample, Sample, TopicSample } from './sample.js';

/** A rate per second, or null when there is no earlier sample to compare with. */
export type Rate = number | null;

export type IsrState = 'in-sync' | 'under-replicated' | 'under-min-isr' | 'offline';

export interface PartitionView extends PartitionSample {
  topic: string;
  state: IsrState;
  recordsInPerSec: Rate;
  bytesInPerSec: Rate;
}

export interface TopicView {
  name: string;
  partitions: number;
  recordsInPerSec: Rate;
  bytesInPerSec: Rate;
  sizeBytes: number;
  underReplicated: number;
  underMinIsr: number;
  offline: number;
}

export interface GroupPartitionView {
  groupId: string;
  topic: string;
  partition: number;
  committedOffset: number;
  highWatermark: number | null;
  lag: number | null;
  recordsOutPerSec: Rate;
}

export interface GroupView {
  groupId: string;
  state: string;
  members: number;
  /** Sum of the partitions' lag (partitions without a high watermark count 0). */
  lag: number;
  maxLag: number;
  recordsOutPerSec: Rate;
  /** Estimated: committed offsets × the partition's stored bytes per offset. */
  bytesOutPerSec: Rate;
  partitions: GroupPartitionView[];
}

export interface TopView {
  time: number;
  /** Seconds between the two samples, or null for the first. */
  intervalSeconds: number | null;
  topics: TopicView[];
  partitions: PartitionView[];
  groups: GroupView[];
}

/**
 * Kafka's broker view of a partition: offline without a leader in the ISR (OfflinePartitionsCount),
 * under min ISR when the ISR is smaller than min.insync.replicas (acks=all writes fail), under-replicated
 * when any replica is out of the ISR.
 */
export const isrState = (
  p: Pick<PartitionSample, 'leader' | 'replicas' | 'isr'>,
  minIsr: number,
): IsrState => {
  if (p.isr.length === 0 || !p.isr.includes(p.leader)) return 'offline';
  if (p.isr.length < Math.min(minIsr, p.replicas.length)) return 'under-min-isr';
  if (p.isr.length < p.replicas.length) return 'under-replicated';
  return 'in-sync';
};

/**
 * Growth per second, never negative: a log that shrank (retention, compaction, a re-created topic)
 * produced nothing measurable in the interval, so it counts 0, not a negative rate.
 */
export const perSecond = (before: number | undefined, after: number, seconds: number | null): Rate =>
  seconds === null || seconds <= 0 || before === undefined ? null : Math.max(0, after - before) / seconds;

/** The sum of the rates that could be measured; null when none could (a first sample). */
const sum = (rates: readonly Rate[]): Rate => {
  const known = rates.filter((r): r is number => r !== null);
  return known.length === 0 && rates.length > 0 ? null : known.reduce((n, r) => n + r, 0);
};

const partitionKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

const bytesPerOffset = (p: PartitionSample): number => {
  const offsets = p.logEndOffset - p.logStartOffset;
  return offsets > 0 ? p.sizeBytes / offsets : 0;
};

export const computeView = (previous: Sample | undefined, current: Sample): TopView => {
  const seconds = previous ? (current.at - previous.at) / 1000 : null;
  const before = new Map<string, PartitionSample>();
  for (const t of previous?.topics ?? [])
    for (const p of t.partitions) before.set(partitionKey(t.name, p.partition), p);
  const now = new Map<string, PartitionSample>();
  for (const t of current.topics) for (const p of t.partitions) now.set(partitionKey(t.name, p.partition), p);

  const partitionsOf = (t: TopicSample): PartitionView[] =>
    t.partitions.map((p) => {
      const old = before.get(partitionKey(t.name, p.partition));
      return {
        ...p,
        topic: t.name,
        state: isrState(p, t.minInsyncReplicas),
        recordsInPerSec: perSecond(old?.logEndOffset, p.logEndOffset, seconds),
        bytesInPerSec: perSecond(old?.sizeBytes, p.sizeBytes, seconds),
      };
    });
  const partitions = current.topics.flatMap(partitionsOf);
  const topics = current.topics.map((t): TopicView => {
    const own = partitions.filter((p) => p.topic === t.name);
    const count = (state: IsrState) => own.filter((p) => p.state === state).length;
    return {
      name: t.name,
      partitions: own.length,
      recordsInPerSec: sum(own.map((p) => p.recordsInPerSec)),
      bytesInPerSec: sum(own.map((p) => p.bytesInPerSec)),
      sizeBytes: own.reduce((n, p) => n + p.sizeBytes, 0),
      // Kafka counts an under-min-ISR partition as under-replicated as well.
      underReplicated: own.filter((p) => p.state === 'under-replicated' || p.state === 'under-min-isr')
        .length,
      underMinIsr: count('under-min-isr'),
      offline: count('offline'),
    };
  });

  const groupBefore = new Map<string, GroupSample>(previous?.groups.map((g) => [g.groupId, g]) ?? []);
  const groups = current.groups.map((g): GroupView => {
    const old = groupBefore.get(g.groupId);
    const committedBefore = new Map(
      old?.offsets.map((o) => [partitionKey(o.topic, o.partition), o.committedOffset]) ?? [],
    );
    const rows = g.offsets.map((o): GroupPartitionView => {
      const start = committedBefore.get(partitionKey(o.topic, o.partition));
      // A partition first committed during the interval: its first commit is no measure of a rate.
      const rate = old ? perSecond(start ?? o.committedOffset, o.committedOffset, seconds) : null;
      return {
        groupId: g.groupId,
        topic: o.topic,
        partition: o.partition,
        committedOffset: o.committedOffset,
        highWatermark: o.highWatermark,
        lag: o.lag,
        recordsOutPerSec: rate,
      };
    });
    const bytesOut = rows.map((r) => {
      const p = now.get(partitionKey(r.topic, r.partition));
      return r.recordsOutPerSec === null ? null : r.recordsOutPerSec * (p ? bytesPerOffset(p) : 0);
    });
    return {
      groupId: g.groupId,
      state: g.state,
      members: g.members,
      lag: rows.reduce((n, r) => n + (r.lag ?? 0), 0),
      maxLag: rows.reduce((n, r) => Math.max(n, r.lag ?? 0), 0),
      recordsOutPerSec: old ? sum(rows.map((r) => r.recordsOutPerSec)) : null,
      bytesOutPerSec: old ? sum(bytesOut) : null,
      partitions: rows,
    };
  });
  return { time: current.time, intervalSeconds: seconds, topics, partitions, groups };
};
