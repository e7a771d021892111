/** What the replication module needs from the log's context (lib/core/log/context.ts provides it). */
import type { Clock } from '../../ports/clock.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import type { ObjectStore } from '../../ports/object-store.js';
import type { Telemetry } from '../../ports/telemetry.js';
import { SluiceError } from '../../../protocol/errors.js';
import type { CasRetryOptions } from '../groups/cas-retry.js';
import type { PartitionState } from '../log/partition-state.js';
import type { Topic } from '../topics/model.js';

export interface ReplicationContext {
  store: MetadataStore;
  clock: Clock;
  random: () => number;
  /** Kafka's replica.lag.time.max.ms: a follower not caught up for this long leaves the ISR. */
  replicaLagTimeMaxMs: number;
  /** ISR changes and elections are counted here (IsrShrinksPerSec, LeaderElectionRateAndTimeMs …). */
  telemetry: Telemetry;
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

/**
 * A store call that has not answered within replica.lag.time.max.ms counts as failed: a frozen store
 * (SIGSTOP, a partition in the network) must not hold a write, a copy or a liveness probe forever.
 */
export const withinLag = <T>(
  ctx: Pick<ReplicationContext, 'clock' | 'replicaLagTimeMaxMs'>,
  store: string,
  call: Promise<T>,
): Promise<T> => {
  const limit = ctx.replicaLagTimeMaxMs;
  // Once the call has answered, the race ignores the timer's later rejection (and handles it).
  return Promise.race([
    call,
    ctx.clock.sleep(limit).then((): never => {
      throw new SluiceError('REQUEST_TIMED_OUT', `store ${store} did not answer within ${limit} ms`);
    }),
  ]);
};

/** Whether a store answers at all (one LIST of at most one key). */
export const storeAnswers = (ctx: ReplicationContext, store: string, prefix: string): Promise<boolean> =>
  withinLag(ctx, store, ctx.objectStore(store).list(prefix, { limit: 1 })).then(
    () => true,
    () => false,
  );
