/**
 * Key-value state: a table read from a topic, and the aggregations of a grouped stream
 * (count, reduce, aggregate). Each update writes the store and forwards the change downstream.
 */
import type { Processor } from '../processor.js';
import type { StoreSpec } from '../topology.js';
import { KeyValueStore } from '../state/stores.js';
import type { ValueAndTimestamp } from '../state/stores.js';
import type { TaskStores } from '../state/task-stores.js';

/** How a KTable's current value for a key is read by a join (Kafka's KTableValueGetter). */
export interface ValueGetter {
  stores: string[];
  get(key: unknown, stores: TaskStores): Promise<ValueAndTimestamp<unknown> | null>;
}

export const kvStore = (stores: TaskStores, spec: StoreSpec): KeyValueStore<unknown, unknown> =>
  new KeyValueStore(stores, spec.name, spec.keySerde, spec.valueSerde);

export const storeGetter = (spec: StoreSpec): ValueGetter => ({
  stores: [spec.name],
  get: (key, stores) => kvStore(stores, spec).get(key),
});

export const filteredGetter = (
  parent: ValueGetter,
  predicate: (k: unknown, v: unknown) => boolean,
  keepWhen: boolean,
): ValueGetter => ({
  stores: parent.stores,
  get: async (key, stores) => {
    const found = await parent.get(key, stores);
    return found !== null && predicate(key, found.value) === keepWhen ? found : null;
  },
});

export const mappedGetter = (
  parent: ValueGetter,
  mapper: (v: unknown, k: unknown) => unknown,
): ValueGetter => ({
  stores: parent.stores,
  get: async (key, stores) => {
    const found = await parent.get(key, stores);
    return found === null ? null : { value: mapper(found.value, key), timestamp: found.timestamp };
  },
});

/** builder.table: the latest value per key; a tombstone deletes. Records without a key are skipped. */
export const tableSourceProcessor = (spec: StoreSpec): Processor => ({
  process: async (r, ctx) => {
    if (r.key === null) return;
    const store = kvStore(ctx.stores, spec);
    const old = await store.get(r.key);
    store.put(r.key, r.value, r.timestamp);
    await ctx.forward({ ...r, value: { newValue: r.value, oldValue: old?.value ?? null } });
  },
});

export interface Aggregation {
  initializer: () => unknown;
  aggregator: (key: unknown, value: unknown, aggregate: unknown) => unknown;
}

/** count/reduce/aggregate of a KGroupedStream. Records with a null key or value are skipped. */
export const streamAggregateProcessor = (spec: StoreSpec, aggregation: Aggregation): Processor => ({
  process: async (r, ctx) => {
    if (r.key === null || r.value === null) return;
    const store = kvStore(ctx.stores, spec);
    const old = await store.get(r.key);
    const newValue = aggregation.aggregator(
      r.key,
      r.value,
      old === null ? aggregation.initializer() : old.value,
    );
    // The result's time is the latest of the records that made it (Kafka's KStreamAggregate).
    const timestamp = old === null ? r.timestamp : Math.max(r.timestamp, old.timestamp);
    store.put(r.key, newValue, timestamp);
    await ctx.forward({ ...r, timestamp, value: { newValue, oldValue: old?.value ?? null } });
  },
});

/** reduce has no initializer: the first value of a key is its aggregate. */
export const reduction = (reducer: (aggregate: unknown, value: unknown) => unknown): Aggregation => {
  const FIRST = Symbol('first');
  return {
    initializer: () => FIRST,
    aggregator: (_key, value, aggregate) => (aggregate === FIRST ? value : reducer(aggregate, value)),
  };
};

export const counting: Aggregation = { initializer: () => 0, aggregator: (_k, _v, n) => (n as number) + 1 };
