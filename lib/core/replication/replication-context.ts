/** What the replication module needs from the log's context (lib/core/log/context.ts provides it). */
import type { Clock } from '../../ports/clock.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import type { ObjectStore } from '../../ports/object-store.js';
import type { CasRetryOptions } from '../groups/cas-retry.js';
import type { PartitionState } from '../log/partition-state.js';
import type { Topic } from '../topics/model.js';

export interface ReplicationContext {
  store: MetadataStore;
  clock: Clock;
  random: () => number;
  /** Kafka's replica.lag.time.max.ms: a follower not caught up for this long leaves the ISR. */
  replicaLagTimeMaxMs: number;
  objectStore(id: string): ObjectStore;
  leadership: { remember(topic: Topic, partition: number, state: PartitionState): unknown };
}

/** ISR changes and elections race commits on a hot item: retry them, and say so in replication's words. */
export const casOptions = (ctx: ReplicationContext): CasRetryOptions => ({
  clock: ctx.clock,
  random: ctx.random,
  attempts: 10,
  baseDelayMs: 5,
  maxDelayMs: 500,
  exhaustedCode: 'NOT_LEADER_OR_FOLLOWER',
});
