/**
 * What the produce and fetch paths share: storage, the topic catalog, limits, and a cache of each
 * partition's leader epoch and replicas (commits are fenced on the epoch, so a stale entry costs one
 * retry, never correctness).
 */
import type { Clock } from '../../ports/clock.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import type { ObjectStore } from '../../ports/object-store.js';
import type { Telemetry } from '../../ports/telemetry.js';
import { noTelemetry } from '../../ports/telemetry.js';
import { SluiceError } from '../../../protocol/errors.js';
import { keys } from '../keys.js';
import type { TopicRegistry } from '../topics/registry.js';
import type { Topic } from '../topics/model.js';
import type { PartitionState } from './partition-state.js';
import { MAX_PRODUCERS_PER_PARTITION } from './producer-bounds.js';
import { decodePartitionState } from './partition-codec.js';

export interface LogOptions {
  store: MetadataStore;
  objectStores: readonly ObjectStore[];
  /** Where rolled segments go (KIP-405's remote tier); without one, maintenance does not roll. */
  segmentStore?: ObjectStore;
  catalog: TopicRegistry;
  clock: Clock;
  /** Largest produce body accepted, after decoding (API.md default 4 MiB). */
  maxRequestBytes?: number;
  /** Tail entries after which a committer moves them to the batch index. */
  tailFlushEntries?: number;
  /**
   * The committer that moves the tail does it after answering its produce, not before (default false:
   * before). Nothing depends on it having run: the commit stands, and the next mover or maintenance
   * takes what a lost one left.
   */
  materializeAfterAck?: boolean;
  /** Long-poll re-check interval. */
  pollIntervalMs?: number;
  producerExpirationMs?: number;
  /** Idempotent producer states one partition item keeps (default MAX_PRODUCERS_PER_PARTITION). */
  maxProducersPerPartition?: number;
  /**
   * A produce commits only if its data object was written less than this long ago; it must stay well
   * below maintenance's orphan grace period, or a stalled produce could commit an object the collector
   * has just deleted (default 5 minutes, against a 15-minute grace).
   */
  commitDeadlineMs?: number;
  /**
   * Kafka's replica.lag.time.max.ms (default 30 s): a follower store that has not caught up for this
   * long, or whose write takes this long, leaves the ISR.
   */
  replicaLagTimeMaxMs?: number;
  /**
   * How long a commit whose producer sequence is ahead of the partition's waits for the batches before
   * it, which a pipelining producer may have in flight (lib/core/log/sequence-wait.ts); default 0, as
   * Kafka's broker: answer OUT_OF_ORDER_SEQUENCE_NUMBER at once.
   */
  sequenceGapWaitMs?: number;
  /** Backoff jitter of ISR changes and elections (seeded in simulations). */
  random?: () => number;
  newId?: () => string;
  /** Where log lines and metrics go (default: nowhere). */
  telemetry?: Telemetry;
}

export interface LogContext {
  store: MetadataStore;
  catalog: TopicRegistry;
  clock: Clock;
  maxRequestBytes: number;
  tailFlushEntries: number;
  materializeAfterAck: boolean;
  /** Work started after a request was answered (the tail's move): `settled()` waits for it. */
  background: BackgroundWork;
  pollIntervalMs: number;
  producerExpirationMs: number;
  maxProducersPerPartition: number;
  commitDeadlineMs: number;
  replicaLagTimeMaxMs: number;
  sequenceGapWaitMs: number;
  random: () => number;
  newId: () => string;
  telemetry: Telemetry;
  objectStore(id: string): ObjectStore;
  segmentStore: ObjectStore | undefined;
  leadership: LeadershipCache;
}

export const createLogContext = (options: LogOptions): LogContext => {
  const byId = new Map(options.objectStores.map((s) => [s.id, s]));
  return {
    store: options.store,
    catalog: options.catalog,
    clock: options.clock,
    maxRequestBytes: options.maxRequestBytes ?? 4 * 1024 * 1024,
    tailFlushEntries: options.tailFlushEntries ?? 16,
    materializeAfterAck: options.materializeAfterAck ?? false,
    background: new BackgroundWork(),
    pollIntervalMs: options.pollIntervalMs ?? 100,
    producerExpirationMs: options.producerExpirationMs ?? 86_400_000,
    maxProducersPerPartition: options.maxProducersPerPartition ?? MAX_PRODUCERS_PER_PARTITION,
    commitDeadlineMs: options.commitDeadlineMs ?? 5 * 60_000,
    replicaLagTimeMaxMs: options.replicaLagTimeMaxMs ?? 30_000,
    sequenceGapWaitMs: options.sequenceGapWaitMs ?? 0,
    random: options.random ?? Math.random,
    newId: options.newId ?? (() => globalThis.crypto.randomUUID()),
    telemetry: options.telemetry ?? noTelemetry,
    objectStore: (id) => {
      const store = byId.get(id);
      if (!store)
        throw new SluiceError('NOT_LEADER_OR_FOLLOWER', `store ${id} is not configured in this deployment`);
      return store;
    },
    segmentStore: options.segmentStore,
    leadership: new LeadershipCache(options.store),
  };
};

/** Promises started off a request's path, kept until they settle (their errors are theirs to handle). */
export class BackgroundWork {
  private readonly running = new Set<Promise<unknown>>();

  start(work: () => Promise<unknown>): void {
    const running = work()
      .catch(() => undefined)
      .finally(() => this.running.delete(running));
    this.running.add(running);
  }

  /** Resolves once everything started so far, and anything it started, has settled. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  get size(): number {
    return this.running.size;
  }
}

export interface Leadership {
  leaderEpoch: number;
  leader: string;
  isr: string[];
}

export class LeadershipCache {
  private readonly entries = new Map<string, Leadership>();

  constructor(private readonly store: MetadataStore) {}

  async get(topic: Topic, partition: number, options: { fresh?: boolean } = {}): Promise<Leadership> {
    const id = `${topic.topicId}#${partition}`;
    const cached = this.entries.get(id);
    if (cached && !options.fresh) return cached;
    const state = await readPartitionState(this.store, topic, partition);
    return this.remember(topic, partition, state);
  }

  remember(topic: Topic, partition: number, state: PartitionState): Leadership {
    const leadership = { leaderEpoch: state.leaderEpoch, leader: state.leader, isr: state.isr };
    this.entries.set(`${topic.topicId}#${partition}`, leadership);
    return leadership;
  }
}

export const readPartitionState = async (
  store: MetadataStore,
  topic: Topic,
  partition: number,
): Promise<PartitionState> => {
  checkPartition(topic, partition);
  const item = await store.get(keys.partitionState(topic.topicId, partition), { consistent: true });
  if (!item || item['deleted'] === true) throw new TopicGoneError(topic.name, partition);
  return decodePartitionState(item);
};

/**
 * The partition item of a topic id the catalog handed out is gone or marked deleted: the topic was
 * deleted (and perhaps re-created under a new id) after this instance cached it.
 */
export class TopicGoneError extends SluiceError {
  constructor(topic: string, partition: number) {
    super('UNKNOWN_TOPIC_OR_PARTITION', `partition ${topic}-${partition} does not exist`);
    this.name = 'TopicGoneError';
  }
}

/**
 * Runs `fn` with the topic as cached; if it finds the cached topic deleted, runs it once more with the
 * registry's current entry (a re-created topic of that name, or UNKNOWN_TOPIC_OR_PARTITION). `fn` must
 * have had no effect when it throws TopicGoneError: the commit condition guarantees that for writes.
 */
export const withCurrentTopic = async <T>(
  ctx: Pick<LogContext, 'catalog'>,
  name: string,
  fn: (topic: Topic) => Promise<T>,
): Promise<T> => {
  try {
    return await fn(await ctx.catalog.get(name));
  } catch (error) {
    if (!(error instanceof TopicGoneError)) throw error;
    ctx.catalog.forget(name);
    return fn(await ctx.catalog.get(name, { fresh: true }));
  }
};

export const checkPartition = (topic: Topic, partition: number): void => {
  if (!Number.isInteger(partition) || partition < 0 || partition >= topic.partitions) {
    throw new SluiceError(
      'UNKNOWN_TOPIC_OR_PARTITION',
      `topic ${topic.name} has partitions 0..${topic.partitions - 1}; partition ${partition} does not exist`,
    );
  }
};

export const parsePartitionParam = (raw: string | undefined): number => {
  if (raw === undefined || !/^\d{1,9}$/.test(raw)) {
    throw new SluiceError(
      'UNKNOWN_TOPIC_OR_PARTITION',
      `partition ${JSON.stringify(raw)} is not a partition number`,
    );
  }
  return Number(raw);
};
