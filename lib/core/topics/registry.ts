/**
 * The topic registry, read: a topic's registry item (`TOPICS`/name, the source of truth for a name)
 * from a short-lived cache, the listing, and a topic's partitions as stored. Everything that serves
 * the data path (produce, fetch, groups, waits, maintenance) reads topics through this alone; creating,
 * growing, reconfiguring and deleting them is the catalog's (catalog.ts), which only the admin function
 * and the whole-app composition root build, so the other bundles carry none of it.
 */
import { highWatermarkOf, logEndOffsets, outOfSyncReplicas } from '../replication/replica-state.js';
import type { Item, MetadataStore } from '../../ports/metadata-store.js';
import type { Clock } from '../../ports/clock.js';
import { SluiceError } from '../../../protocol/errors.js';
import { keys } from '../keys.js';
import { decodePartitionState } from '../log/partition-codec.js';
import type { TopicConfig } from './configs.js';
import type { PartitionInfo, StoreInfo, Topic } from './model.js';

export interface TopicRegistryOptions {
  store: MetadataStore;
  clock: Clock;
  /** The deployment's replica stores, in order (s0, s1, ...). */
  stores: readonly StoreInfo[];
  /** How long `get(name)` may serve a cached registry entry (commits are fenced anyway). */
  cacheTtlMs?: number;
}

export class TopicRegistry {
  private readonly cache = new Map<string, { topic: Topic; at: number }>();

  constructor(protected readonly options: TopicRegistryOptions) {}

  get stores(): readonly StoreInfo[] {
    return this.options.stores;
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

  protected remember(topic: Topic): void {
    this.cache.set(topic.name, { topic, at: this.options.clock.now() });
  }
}

export const unknownTopic = (name: string): SluiceError =>
  new SluiceError('UNKNOWN_TOPIC_OR_PARTITION', `topic ${name} does not exist`);

export const fromItem = (item: Item): Topic => {
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
