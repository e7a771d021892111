/** A group coordinator over the memory store with a hand-driven clock, and heartbeats with defaults. */
import { expect } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { GroupCoordinator } from '../../../../lib/core/groups/coordinator.js';
import { InMemoryTopics, ManualClock, seededRandom } from '../../../support/group-simulation.js';
import type { GroupTopics, HeartbeatRequest } from '../../../../lib/core/groups/types.js';
import { SluiceError } from '../../../../protocol/errors.js';
import type { MetadataStore } from '../../../../lib/ports/metadata-store.js';
import type { Telemetry } from '../../../../lib/ports/telemetry.js';

/**
 * `wrap` puts decorators (fault injectors, recorders) between the coordinator and its store or catalog,
 * and can give it a Telemetry.
 */
export const coordinatorSetup = (
  partitions: Record<string, number> = { t: 4 },
  wrap: {
    store?: (store: MetadataStore) => MetadataStore;
    topics?: (topics: GroupTopics) => GroupTopics;
    telemetry?: Telemetry;
  } = {},
) => {
  const topics = new InMemoryTopics(partitions);
  const clock = new ManualClock();
  const store = new MemoryMetadataStore();
  const coordinator = new GroupCoordinator({
    store: wrap.store ? wrap.store(store) : store,
    clock,
    topics: wrap.topics ? wrap.topics(topics) : topics,
    offsets: topics,
    random: seededRandom(5),
    ...(wrap.telemetry ? { telemetry: wrap.telemetry } : {}),
  });
  /** One heartbeat of group g: a join (epoch 0) unless the request says otherwise. */
  const beat = (request: Partial<HeartbeatRequest>) =>
    coordinator.heartbeat('g', {
      memberId: null,
      memberEpoch: 0,
      instanceId: null,
      subscribedTopics: null,
      ownedPartitions: null,
      rebalanceTimeoutMs: null,
      serverAssignor: null,
      ...request,
    });
  const members = async () =>
    (await coordinator.describeGroup('g')).members.map((m) => ({ id: m.memberId, epoch: m.memberEpoch }));
  return { coordinator, topics, clock, store, beat, members };
};

/** The SluiceError the promise rejects with, as code and message. */
export const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SluiceError);
  const { code, message } = error as SluiceError;
  return { code, message };
};

/**
 * A store decorator for races and outages: `before(op, hook, when?)` runs hook once before the next
 * call of op whose arguments pass `when` (another writer getting in between a read and a write); while
 * `failing.with` is set, every write fails with that error (reads still work).
 */
export const storeHooks = () => {
  const failing: { with?: () => Error } = {};
  const pending: { op?: string; hook?: () => Promise<void>; when?: (args: unknown[]) => boolean } = {};
  const writes = ['put', 'update', 'delete', 'transact', 'batchWrite'];
  const wrap = (store: MetadataStore): MetadataStore =>
    new Proxy(store, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (pending.op === name && pending.hook && (pending.when?.(args) ?? true)) {
            const hook = pending.hook;
            pending.hook = undefined;
            await hook();
          }
          if (writes.includes(String(name)) && failing.with) throw failing.with();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  const before = (op: string, hook: () => Promise<void>, when?: (args: unknown[]) => boolean) =>
    Object.assign(pending, { op, hook, when });
  return { failing, wrap, before };
};
