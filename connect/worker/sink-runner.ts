/**
 * One bounded invocation of a sink task. The task is a KIP-848 member of the group `connect-{name}`:
 * it reads its partitions from the committed offsets, hands converted and transformed records to the
 * sink, and commits, per partition, only the offsets the sink reports durable — after renewing its
 * lease, so a task fenced by pause/stop/restart commits nothing. Partitions the group revokes are
 * flushed and committed before they are released. A crash loses only uncommitted progress: the next
 * invocation reads those records again, and the sinks write deterministically (object names by
 * offset, upserts by key), so the replay produces the same result.
 */
import type { Clock } from '../../lib/ports/clock.js';
import type { SluiceClient, TopicPartitions } from '../../sdk/index.js';
import { SluiceError } from '../../sdk/index.js';
import { createConverter } from '../converters.js';
import { groupIdOf } from '../tasks.js';
import type { SinkPlugin, SinkRecord, SinkTask, TopicPartitionOffset } from '../plugin.js';
import type { ConnectStateStore, Lease } from '../state-store.js';
import { buildChain } from '../transforms/chain.js';
import type { OriginalRecord } from './error-handler.js';
import { ErrorHandler, errorPolicyOf } from './error-handler.js';
import type { SinkPipeline } from './sink-records.js';
import { toSinkRecords } from './sink-records.js';
import { LeaseKeeper } from './lease-keeper.js';
import { TOPIC_REFRESH_MS, isPatternSink, resolveSinkTopics } from './sink-topics.js';

export interface SinkRunOptions {
  client: SluiceClient;
  state: ConnectStateStore;
  clock: Clock;
  lease: Lease;
  /** Wall-clock time at which the invocation must have committed and returned. */
  deadline: number;
  leaseTtlMs: number;
  log: (entry: Record<string, unknown>) => void;
  /** Long-poll of each fetch (default 1000 ms). */
  maxWaitMs?: number;
  /** Commit at least this often (default 5000 ms; Connect's offset.flush.interval.ms). */
  commitIntervalMs?: number;
  /** With topics.regex, how often the topics are listed again (default TOPIC_REFRESH_MS). */
  topicRefreshMs?: number;
  /**
   * Return (committing first) once no record has arrived for this long, instead of waiting out the
   * deadline: a sink woken by new data stops paying for an idle invocation once it caught up.
   */
  idleExitMs?: number;
}

export interface SinkRunResult {
  records: number;
  skipped: number;
}

export const memberIdOf = (connector: string, task: number): string => `connect-${connector}-${task}`;

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

const flatten = (tps: readonly TopicPartitions[]): { topic: string; partition: number }[] =>
  tps.flatMap((tp) => tp.partitions.map((partition) => ({ topic: tp.topic, partition })));

export const runSinkTask = async (
  plugin: SinkPlugin,
  config: Record<string, string>,
  options: SinkRunOptions,
): Promise<SinkRunResult> => {
  const { client, state, clock, lease, log } = options;
  const keeper = new LeaseKeeper(lease, state, clock, options.leaseTtlMs);
  const producer = client.producer();
  const errors = new ErrorHandler(errorPolicyOf(config), {
    connector: lease.connector,
    task: lease.task,
    clock,
    log,
    produce: async (topic, messages, idempotencyKey) =>
      void (await producer.send({ topic, messages, idempotencyKey })),
  });
  const originals = new WeakMap<SinkRecord, OriginalRecord>();
  const task: SinkTask = await plugin.createTask(config, {
    connector: lease.connector,
    task: lease.task,
    log,
    reportErrant: async (record, error) => {
      const original = originals.get(record);
      if (!original) throw error;
      await errors.report('TASK_PUT', plugin.class, original, error);
    },
  });
  const keyConverterClass = config['key.converter'] ?? 'org.apache.kafka.connect.storage.StringConverter';
  const valueConverterClass = config['value.converter'] ?? 'org.apache.kafka.connect.json.JsonConverter';
  const pipeline: SinkPipeline = {
    keyConverter: createConverter(keyConverterClass),
    valueConverter: createConverter(valueConverterClass),
    keyConverterClass,
    valueConverterClass,
    chain: buildChain(config),
    errors,
  };
  let topics = await resolveSinkTopics(client, config);
  const member = client.groupMember({ groupId: groupIdOf(lease.connector), subscribedTopics: topics });
  // A member id of the task's own (KIP-1082): the invocation that holds the task's lease rejoins as the
  // member a killed invocation left behind and takes its partitions over at once, instead of waiting a
  // session timeout for it to expire. The lease guarantees that earlier incarnation is gone or fenced.
  member.memberId = memberIdOf(lease.connector, lease.task);
  const consumer = client.consumer();
  const positions = new Map<string, { topic: string; partition: number; offset: number }>();
  const committed = new Map<string, number>();
  let records = 0;

  const commit = async (): Promise<void> => {
    const buffered: TopicPartitionOffset[] = await errors.retry(() => task.flush());
    const held = new Map(buffered.map((o) => [key(o.topic, o.partition), o.offset]));
    const durable = [...positions.entries()].map(([k, p]) => ({
      topic: p.topic,
      partition: p.partition,
      offset: Math.min(p.offset, held.get(k) ?? p.offset),
    }));
    const changed = durable.filter((o) => committed.get(key(o.topic, o.partition)) !== o.offset);
    if (changed.length === 0) return;
    // The lease check comes first: a fenced task must not move the group's offsets.
    await keeper.renew();
    await member.commit(changed);
    for (const o of changed) committed.set(key(o.topic, o.partition), o.offset);
  };

  const assign = async (assigned: readonly { topic: string; partition: number }[]): Promise<void> => {
    const wanted = new Set(assigned.map((tp) => key(tp.topic, tp.partition)));
    const revoked = [...positions.keys()].filter((k) => !wanted.has(k));
    if (revoked.length > 0) {
      await commit();
      await task.close();
      // The sink forgot everything it buffered: the kept partitions restart from what is committed.
      positions.clear();
    }
    for (const topic of new Set(assigned.map((tp) => tp.topic))) {
      const offsets = await member.committed(topic);
      for (const tp of assigned.filter((a) => a.topic === topic)) {
        const k = key(tp.topic, tp.partition);
        if (positions.has(k)) continue;
        const at = offsets.get(tp.partition) ?? committed.get(k);
        positions.set(k, { ...tp, offset: at ?? (await earliest(client, tp.topic, tp.partition)) });
        if (at !== undefined) committed.set(k, at);
      }
    }
  };

  let owned: TopicPartitions[] = [];
  let lastHeartbeat = -Infinity;
  let lastTopicRefresh = clock.now();
  const topicRefreshMs = options.topicRefreshMs ?? TOPIC_REFRESH_MS;
  let lastCommit = clock.now();
  const commitIntervalMs = options.commitIntervalMs ?? 5_000;
  let lastRecordAt = clock.now();
  const idle = (): boolean =>
    options.idleExitMs !== undefined && clock.now() - lastRecordAt >= options.idleExitMs;
  try {
    while (clock.now() < options.deadline && !idle()) {
      await keeper.keep();
      if (isPatternSink(config) && clock.now() - lastTopicRefresh >= topicRefreshMs) {
        lastTopicRefresh = clock.now();
        const now = await resolveSinkTopics(client, config);
        if (now.join('\u0000') !== topics.join('\u0000')) {
          topics = now;
          member.subscribe(topics);
          lastHeartbeat = -Infinity; // tell the group now
        }
      }
      if (clock.now() - lastHeartbeat >= member.heartbeatIntervalMs || owned.length === 0) {
        const outcome = await member.heartbeat(owned);
        lastHeartbeat = clock.now();
        if (outcome.kind === 'assignment') {
          await assign(flatten(outcome.topicPartitions));
          owned = outcome.topicPartitions;
        } else if (outcome.kind === 'fenced') {
          positions.clear();
          await task.close();
          owned = [];
        }
      }
      if (positions.size === 0) {
        await clock.sleep(Math.min(500, Math.max(0, options.deadline - clock.now())));
        continue;
      }
      const budget = options.maxWaitMs ?? 1_000;
      const waitEach =
        positions.size > 1 ? 0 : Math.max(0, Math.min(budget, options.deadline - clock.now() - 50));
      let fetched = 0;
      for (const [k, position] of positions) {
        const batch = await fetchFrom(client, consumer, position, waitEach);
        if (batch.records.length === 0) {
          positions.set(k, { ...position, offset: batch.nextOffset });
          continue;
        }
        const sinkRecords = await toSinkRecords(pipeline, batch.records, originals);
        if (sinkRecords.length > 0) await errors.retry(() => task.put(sinkRecords));
        fetched += batch.records.length;
        records += batch.records.length;
        positions.set(k, { ...position, offset: batch.nextOffset });
      }
      if (fetched > 0) lastRecordAt = clock.now();
      if (clock.now() - lastCommit >= commitIntervalMs) {
        await commit();
        lastCommit = clock.now();
      }
      if (fetched === 0 && positions.size > 1)
        await clock.sleep(Math.min(budget, Math.max(0, options.deadline - clock.now())));
    }
    await commit();
  } finally {
    await task.close().catch(() => undefined);
    await member.leave().catch(() => undefined);
  }
  return { records, skipped: errors.skipped };
};

const earliest = async (client: SluiceClient, topic: string, partition: number): Promise<number> => {
  const offsets = await client.admin().fetchTopicOffsets(topic);
  return offsets.find((o) => o.partition === partition)?.low ?? 0;
};

/** A fetch that restarts at the log start when retention removed the position (auto.offset.reset=earliest). */
const fetchFrom = async (
  client: SluiceClient,
  consumer: ReturnType<SluiceClient['consumer']>,
  position: { topic: string; partition: number; offset: number },
  maxWaitMs: number,
) => {
  try {
    return await consumer.fetch(position.topic, position.partition, position.offset, { maxWaitMs });
  } catch (error) {
    if (!(error instanceof SluiceError) || error.code !== 'OFFSET_OUT_OF_RANGE') throw error;
    const start = await earliest(client, position.topic, position.partition);
    return await consumer.fetch(position.topic, position.partition, start, { maxWaitMs });
  }
};
