/**
 * Topic administration over the metadata store: create, grow, reconfigure, delete, on top of the
 * registry's reads (registry.ts: list, describe). The registry item (`TOPICS`/name) is the source of
 * truth for a name; partitions live under the topic's id, so a deleted name can be reused at once
 * without ever mixing two topics' data.
 */
import { assignReplicas } from '../replication/assignment.js';
import type { Item } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import { SluiceError } from '../../../protocol/errors.js';
import { keys } from '../keys.js';
import { initialPartitionState } from '../log/partition-codec.js';
import type { TopicConfig } from './configs.js';
import { parseConfigOverrides } from './configs.js';
import type { Topic } from './model.js';
import { TOPIC_NAME } from './model.js';
import type { TopicRegistryOptions } from './registry.js';
import { TopicRegistry, unknownTopic } from './registry.js';

export { unknownTopic } from './registry.js';

export const MAX_PARTITIONS = 10_000;

export interface TopicCatalogOptions extends TopicRegistryOptions {
  newId?: () => string;
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

export class TopicCatalog extends TopicRegistry {
  private readonly newId: () => string;

  constructor(options: TopicCatalogOptions) {
    super(options);
    this.newId = options.newId ?? (() => globalThis.crypto.randomUUID());
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
    this.forget(name);
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
}

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
