/**
 * When a sink connector needs to run. Sinks are woken by new data instead of a clock: an invocation
 * starts a sink only when one of its topics has records past the group's committed offsets, so an
 * idle sink is never invoked.
 * - In Lambda, the metadata table's DynamoDB Stream, filtered to partition state items, invokes the
 *   connect-worker function when partitions advance; `topicIdsOfStreamRecords` reads which, and the
 *   sinks consuming those topics run (`triggeredTick`).
 * - The scheduled invocation (sources need it; for sinks it is the safety net for a trigger that was
 *   lost, for instance after the mapping gave up on a failing batch) runs sources and the sinks that
 *   lag, and watches the others while it runs (`scheduledTick`); the local stack's timer starts an
 *   invocation only when a source is started or a sink lags (`anyDue`).
 * Both read the partition items' high watermarks and the group's committed offsets through the SDK.
 */
import type { SluiceClient } from '../../sdk/index.js';
import { SluiceError } from '../../sdk/index.js';
import { groupIdOf } from '../tasks.js';
import type { ConnectorRecord } from '../state-store.js';
import { isPatternSink, sinkTopicsOf } from './sink-topics.js';
import type { TickOptions } from './worker.js';

/** How long a woken sink keeps reading after the last record before it returns (ms). */
export const DEFAULT_SINK_IDLE_MS = 5_000;

export interface StreamRecordLike {
  eventSource?: string;
  dynamodb?: { Keys?: Record<string, { S?: string } | undefined> };
}

/** The topic ids of the partition state items (`P#{topicId}#{partition}` / `STATE`) in a stream batch. */
export const topicIdsOfStreamRecords = (records: readonly StreamRecordLike[]): Set<string> => {
  const ids = new Set<string>();
  for (const r of records) {
    const pk = r.dynamodb?.Keys?.['pk']?.S;
    if (r.dynamodb?.Keys?.['sk']?.S !== 'STATE' || !pk?.startsWith('P#')) continue;
    const id = pk.slice(2, pk.lastIndexOf('#'));
    if (id) ids.add(id);
  }
  return ids;
};

export interface SinkProgress {
  /** Records past the committed offsets (from the log start where nothing is committed). */
  lag: number;
  /** Sum of the high watermarks: grows whenever any of the topics advances. */
  high: number;
}

export class SinkWatch {
  private topics: string[] | undefined;

  constructor(private readonly client: SluiceClient) {}

  private async existingTopics(): Promise<string[]> {
    this.topics ??= (await this.client.admin().listTopics()).map((t) => t.name);
    return this.topics;
  }

  /** The topics a sink connector consumes now (a pattern against the topics that exist). */
  async topicsOf(record: ConnectorRecord): Promise<string[]> {
    const existing = isPatternSink(record.config) ? await this.existingTopics() : [];
    return sinkTopicsOf(record.config, existing);
  }

  async progress(record: ConnectorRecord): Promise<SinkProgress> {
    const admin = this.client.admin();
    let lag = 0;
    let high = 0;
    for (const topic of await this.topicsOf(record)) {
      let offsets;
      try {
        offsets = await admin.fetchTopicOffsets(topic);
      } catch (error) {
        if (error instanceof SluiceError && error.code === 'UNKNOWN_TOPIC_OR_PARTITION') continue;
        throw error;
      }
      const committed = new Map(
        (await admin.fetchOffsets(groupIdOf(record.name), topic).catch(() => [])).map((c) => [
          c.partition,
          c.offset,
        ]),
      );
      for (const p of offsets) {
        high += p.high;
        lag += Math.max(0, p.high - Math.max(p.low, committed.get(p.partition) ?? p.low));
      }
    }
    return { lag, high };
  }
}

/** The scheduled invocation: sources, lagging sinks, and idle sinks watched for new data. */
export const scheduledTick = (
  client: SluiceClient,
  options: { watchMs: number; sinkIdleMs: number },
): TickOptions => {
  const watch = new SinkWatch(client);
  const baseline = new Map<string, number>();
  return {
    select: async (record) => {
      if (record.type !== 'sink') return true;
      const progress = await watch.progress(record);
      baseline.set(record.name, progress.high);
      return progress.lag > 0;
    },
    watch: {
      intervalMs: options.watchMs,
      // Due when the high watermarks grew past those seen when it last started (or was left out): a
      // record that arrived while it ran may start it once more for nothing, but none is left behind.
      due: async (record) => {
        const { high } = await watch.progress(record);
        if (high <= (baseline.get(record.name) ?? Infinity)) return false;
        baseline.set(record.name, high);
        return true;
      },
    },
    sinkIdleMs: options.sinkIdleMs,
  };
};

/** An invocation by the stream trigger: the sinks that consume one of the topics that advanced. */
export const triggeredTick = (
  client: SluiceClient,
  advanced: ReadonlySet<string>,
  options: { sinkIdleMs: number },
): TickOptions => {
  const watch = new SinkWatch(client);
  return {
    select: async (record) =>
      record.type === 'sink' && (await watch.topicsOf(record)).some((topic) => advanced.has(topic)),
    sinkIdleMs: options.sinkIdleMs,
  };
};

/** Whether an invocation has work: a started source, or a started sink whose topics have unread records. */
export const anyDue = async (
  client: SluiceClient,
  connectors: readonly ConnectorRecord[],
): Promise<boolean> => {
  const watch = new SinkWatch(client);
  for (const record of connectors) {
    if (record.targetState !== 'STARTED') continue;
    if (record.type !== 'sink' || (await watch.progress(record)).lag > 0) return true;
  }
  return false;
};
