/**
 * Topic administration over the metadata store: create, list, describe, grow, reconfigure, delete.
 * The registry item (`TOPICS`/name) is the source of truth for a name; partitions live under the
 * topic's id, so a deleted name can be reused at once without ever mixing two topics' data.
 */
import { assignReplicas } from '../replication/assignment.js';
import { highWatermarkOf, logEndOffsets, outOfSyncReplicas } from '../replication/replica-state.js';
import type { Item, MetadataStore } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import type { Clock } from '../../ports/clock.js';
import { SluiceError } from '../../../protocol/errors.js';
import { keys } from '../keys.js';
import { decodePartitionState, initialPartitionState } from '../log/partition-codec.js';
import type { TopicConfig } from './configs.js';
import { parseConfigOverrides } from './configs.js';
import type { PartitionInfo, StoreInfo, Topic } from './model.js';
import { TOPIC_NAME } from './model.js';

export const MAX_PARTITIONS = 10_000;

export interface TopicCatalogOptions {
  store: MetadataStore;
  clock: Clock;
  /** The deployment's replica stores, in order (s0, s1, ...). */
  stores: readonly StoreInfo[];
  newId?: () => string;
  /** How long `get(name)` may serve a cached registry entry (commits are fenced anyway). */
  cacheTtlMs?: number;
}

export interface CreateTopicInput {
  name: string;
  partitions?: number;
  replicationFactor?: number;
  configs?: unknown;
}

// Any JSON value may arrive here: describe it without serializing it (a deep value overflows the stack).
/** Partition items fenced at once when a topic is deleted. */
const FENCE_CONCURRENCY = 16;

const describeName = (name: unknown): string =>
  typeof name === 'string'
    ? JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name)
    : `of type ${typeof name}`;

export const validateTopicName = (name: unknown): string => {
  if (typeof name !== 'string' || !TOPIC_NAME.test(name) || name === '.' || name === '..') {
    throw new SluiceError(
      'INVALID_TOPIC_EXCEPTION',
      `topic name ${describeName(name)} is invalid: use 1-249 of [a-zA-Z0-9._-], not "." or ".."`,
    );
  }
  return name;
};

export class TopicCatalog {
  private readonly cache = new Map<string, { topic: Topic; at: number }>();
  private readonly newId: () => string;

  constructor(private readonly options: TopicCatalogOptions) {
    this.newId = options.newId ?? (() => globalThis.crypto.randomUUID());
  }

  get stores(): readonly StoreInfo[] {
    return this.options.stores;
  }

  async create(input: CreateTopicInput): Promise<Topic> {
    const name = validateTopicName(input.name);
    const partitions = positiveInt(input.partitions ?? 1, 'partitions', 'INVALID_PARTITIONS', MAX_PARTITIONS);
    const storeCount = this.options.stores.length;
    const replicationFactor = positiveInt(
      input.replicationFactor ?? 1,
      'replicationFactor',
      'INVALID_REPLICATION_FACTOR',
      storeCount,
    );
    const configs = parseConfigOverrides(input.configs);
    checkMinIsr(configs, replicationFactor);

    const topic: Topic = {
      name,
      topicId: this.newId(),
      partitions,
      replicationFactor,
      configs,
      createdAt: this.options.clock.now(),
    };
    // Partition items first, under a fresh id nobody else can see; the registry put makes them live.
    await this.writePartitions(topic, 0, partitions);
    try {
      await this.options.store.put(toItem(topic), { condition: { notExists: 'pk' } });
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        await this.purgePartitionItems(topic.topicId, partitions);
        throw new SluiceError('TOPIC_ALREADY_EXISTS', `topic ${name} already exists`);
      }
      throw error;
    }
    this.remember(topic);
    return topic;
  }

  async list(): Promise<Topic[]> {
    const topics: Topic[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.options.store.query({
        pk: keys.topicsPk,
        consistent: true,
        ...(cursor ? { cursor } : {}),
      });
      topics.push(...page.items.map(fromItem));
      cursor = page.cursor;
    } while (cursor);
    return topics;
  }

  /** The registry entry, from a short-lived cache unless `fresh`; throws UNKNOWN_TOPIC_OR_PARTITION. */
  async get(name: string, options: { fresh?: boolean } = {}): Promise<Topic> {
    const cached = this.cache.get(name);
    const ttl = this.options.cacheTtlMs ?? 0;
    if (!options.fresh && cached && this.options.clock.now() - cached.at < ttl) return cached.topic;
    const item = await this.options.store.get(keys.topic(name), { consistent: true });
    if (!item) {
      this.cache.delete(name);
      throw unknownTopic(name);
    }
    const topic = fromItem(item);
    this.remember(topic);
    return topic;
  }

  forget(name: string): void {
    this.cache.delete(name);
  }

  async partitionInfo(topic: Topic): Promise<PartitionInfo[]> {
    const items = await Promise.all(
      Array.from({ length: topic.partitions }, (_, p) =>
        this.options.store.get(keys.partitionState(topic.topicId, p), { consistent: true }),
      ),
    );
    return items.map((item, partition) => {
      if (!item)
        throw new SluiceError(
          'UNKNOWN_TOPIC_OR_PARTITION',
          `partition ${topic.name}-${partition} is missing`,
        );
      const s = decodePartitionState(item);
      return {
        partition,
        leader: s.leader,
        leaderEpoch: s.leaderEpoch,
        replicas: s.replicas,
        isr: s.isr,
        osr: outOfSyncReplicas(s),
        logEndOffsets: logEndOffsets(s),
        logStartOffset: s.logStartOffset,
        highWatermark: highWatermarkOf(s),
      };
    });
  }

  /** Grows partitions and/or changes configs; both checked before anything is written. */
  async update(name: string, input: { partitions?: unknown; configs?: unknown }): Promise<Topic> {
    const current = await this.get(name, { fresh: true });
    const configOverrides = input.configs === undefined ? undefined : parseConfigOverrides(input.configs);
    let partitions = current.partitions;
    if (input.partitions !== undefined) {
      partitions = positiveInt(input.partitions, 'partitions', 'INVALID_PARTITIONS', MAX_PARTITIONS);
      if (partitions < current.partitions) {
        throw new SluiceError(
          'INVALID_PARTITIONS',
          `topic ${name} has ${current.partitions} partitions; partitions can only grow`,
        );
      }
    }
    const configs =
      configOverrides === undefined ? current.configs : { ...current.configs, ...configOverrides };
    checkMinIsr(configs, current.replicationFactor);
    const next: Topic = { ...current, partitions, configs };
    if (partitions > current.partitions) await this.writePartitions(next, current.partitions, partitions);
    try {
      await this.options.store.put(toItem(next), {
        condition: {
          and: [
            { path: 'topicId', op: '=', value: current.topicId },
            { path: 'partitions', op: '=', value: current.partitions },
          ],
        },
      });
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        throw new SluiceError('INVALID_REQUEST', `topic ${name} changed concurrently; retry`, {
          retriable: true,
        });
      }
      throw error;
    }
    this.remember(next);
    return next;
  }

  /**
   * Removes the name at once and records the id for maintenance, which purges partitions, index and
   * objects. Writers holding the old id keep writing only into partitions nobody can reach by name.
   */
  async delete(name: string): Promise<Topic> {
    const current = await this.get(name, { fresh: true });
    await this.options.store
      .transact([
        { delete: keys.topic(name), condition: { path: 'topicId', op: '=', value: current.topicId } },
        {
          put: {
            ...keys.deletedTopic(current.topicId),
            name,
            partitions: current.partitions,
            deletedAt: this.options.clock.now(),
          },
        },
      ])
      .catch((error: unknown) => {
        if (error instanceof Error && error.name === 'TransactionCanceledError') throw unknownTopic(name);
        throw error;
      });
    this.cache.delete(name);
    await this.fencePartitions(current);
    return current;
  }

  /**
   * Marks every partition item of a deleted topic: another instance that still caches the topic id
   * then fails its commits and reads (TopicGoneError) instead of acknowledging writes nobody can read
   * or serving the deleted data, until maintenance purges the items. Absent items stay absent.
   */
  private async fencePartitions(topic: Topic): Promise<void> {
    const { store } = this.options;
    for (let from = 0; from < topic.partitions; from += FENCE_CONCURRENCY) {
      const upTo = Math.min(topic.partitions, from + FENCE_CONCURRENCY);
      await Promise.all(
        Array.from({ length: upTo - from }, (_, i) =>
          store
            .update(keys.partitionState(topic.topicId, from + i), [{ set: 'deleted', value: true }], {
              condition: { exists: 'pk' },
            })
            .catch((error: unknown) => {
              if (!(error instanceof ConditionFailedError)) throw error;
            }),
        ),
      );
    }
  }

  private async writePartitions(topic: Topic, from: number, to: number): Promise<void> {
    const storeIds = this.options.stores.map((s) => s.id);
    const items: Item[] = [];
    for (let p = from; p < to; p++) {
      const replicas = assignReplicas(storeIds, topic.topicId, p, topic.replicationFactor);
      items.push(initialPartitionState(topic.topicId, topic.name, p, replicas, this.options.clock.now()));
    }
    await this.options.store.batchWrite({ puts: items });
  }

  private async purgePartitionItems(topicId: string, partitions: number): Promise<void> {
    await this.options.store.batchWrite({
      deletes: Array.from({ length: partitions }, (_, p) => keys.partitionState(topicId, p)),
    });
  }

  private remember(topic: Topic): void {
    this.cache.set(topic.name, { topic, at: this.options.clock.now() });
  }
}

export const unknownTopic = (name: string): SluiceError =>
  new SluiceError('UNKNOWN_TOPIC_OR_PARTITION', `topic ${name} does not exist`);

const positiveInt = (
  value: unknown,
  field: string,
  code: 'INVALID_PARTITIONS' | 'INVALID_REPLICATION_FACTOR',
  max: number,
): number => {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new SluiceError(code, `${field} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  if (value > max) {
    const why =
      code === 'INVALID_REPLICATION_FACTOR' ? `this deployment has ${max} store(s)` : `the limit is ${max}`;
    throw new SluiceError(code, `${field} ${value} is too large: ${why}`);
  }
  return value;
};

const checkMinIsr = (configs: Partial<TopicConfig>, replicationFactor: number): void => {
  const minIsr = configs['min.insync.replicas'];
  if (minIsr !== undefined && minIsr > replicationFactor) {
    throw new SluiceError(
      'INVALID_CONFIG',
      `min.insync.replicas=${minIsr} exceeds the replication factor ${replicationFactor}`,
    );
  }
};

const toItem = (topic: Topic): Item => ({
  ...keys.topic(topic.name),
  name: topic.name,
  topicId: topic.topicId,
  partitions: topic.partitions,
  replicationFactor: topic.replicationFactor,
  configs: topic.configs as Record<string, string | number | boolean>,
  createdAt: topic.createdAt,
});

const fromItem = (item: Item): Topic => {
  if (typeof item['topicId'] !== 'string')
    throw new SluiceError('UNKNOWN_SERVER_ERROR', `corrupt topic registry item ${item.sk}`);
  return {
    name: item['name'] as string,
    topicId: item['topicId'],
    partitions: item['partitions'] as number,
    replicationFactor: item['replicationFactor'] as number,
    configs: (item['configs'] ?? {}) as Partial<TopicConfig>,
    createdAt: item['createdAt'] as number,
  };
};
