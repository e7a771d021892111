/** Record-at-a-time processors that keep no state: KStream's and KTable's stateless operations. */
import type { Serde } from '../serdes.js';
import { serializeNullable } from '../serdes.js';
import type { Change, Processor, StreamRecord } from '../processor.js';
import type { TopicRef } from '../topology.js';

export interface KeyValue<K, V> {
  key: K;
  value: V;
}

type Fn<R> = (key: unknown, value: unknown) => R;

export const passThrough = (): Processor => ({ process: (r, ctx) => ctx.forward(r) });

export const filterProcessor = (predicate: Fn<boolean>, keepWhen: boolean): Processor => ({
  process: async (r, ctx) => {
    if (predicate(r.key, r.value) === keepWhen) await ctx.forward(r);
  },
});

export const mapProcessor = (mapper: Fn<KeyValue<unknown, unknown>>): Processor => ({
  process: (r, ctx) => {
    const { key, value } = mapper(r.key, r.value);
    return ctx.forward({ ...r, key, value });
  },
});

export const flatMapProcessor = (mapper: Fn<Iterable<KeyValue<unknown, unknown>>>): Processor => ({
  process: async (r, ctx) => {
    for (const { key, value } of mapper(r.key, r.value)) await ctx.forward({ ...r, key, value });
  },
});

/** `mapValues`' mapper takes the value first and the read-only key second. */
export const mapValuesProcessor = (mapper: (value: unknown, key: unknown) => unknown): Processor => ({
  process: (r, ctx) => ctx.forward({ ...r, value: mapper(r.value, r.key) }),
});

export const flatMapValuesProcessor = (
  mapper: (value: unknown, key: unknown) => Iterable<unknown>,
): Processor => ({
  process: async (r, ctx) => {
    for (const value of mapper(r.value, r.key)) await ctx.forward({ ...r, value });
  },
});

export const selectKeyProcessor = (selector: Fn<unknown>): Processor => ({
  process: (r, ctx) => ctx.forward({ ...r, key: selector(r.key, r.value) }),
});

/** peek forwards, foreach does not; both call the action once per record. */
export const peekProcessor = (action: Fn<void>, forward: boolean): Processor => ({
  process: async (r, ctx) => {
    action(r.key, r.value);
    if (forward) await ctx.forward(r);
  },
});

/** `split()`: each record goes to the first branch whose predicate holds, else to the default. */
export const branchProcessor = (
  branches: { child: string; predicate: Fn<boolean> }[],
  defaultChild: string | undefined,
): Processor => ({
  process: async (r, ctx) => {
    const hit = branches.find((b) => b.predicate(r.key, r.value));
    const child = hit?.child ?? defaultChild;
    if (child !== undefined) await ctx.forward(r, child);
  },
});

export const sinkProcessor = (
  topic: TopicRef,
  keySerde: Serde<unknown>,
  valueSerde: Serde<unknown>,
): Processor => ({
  process: (r, ctx) => {
    ctx.collector.send(ctx.topicName(topic.name, topic.internal), {
      key: serializeNullable(keySerde, r.key),
      value: serializeNullable(valueSerde, r.value),
      timestamp: r.timestamp,
      headers: r.headers,
    });
    return Promise.resolve();
  },
});

/** KTable → KStream: each update becomes a record of its new value (a tombstone on delete). */
export const toStreamProcessor = (): Processor => ({
  process: (r, ctx) => ctx.forward({ ...r, value: (r.value as Change).newValue }),
});

/**
 * KTable.filter: an update that fails the predicate becomes a tombstone, so downstream forgets a key
 * that stops qualifying (Kafka forwards the tombstone even when the key was never there).
 */
export const tableFilterProcessor = (predicate: Fn<boolean>, keepWhen: boolean): Processor => ({
  process: (r, ctx) => {
    const change = r.value as Change;
    const keep = (v: unknown): unknown => (v !== null && predicate(r.key, v) === keepWhen ? v : null);
    return ctx.forward({ ...r, value: { newValue: keep(change.newValue), oldValue: keep(change.oldValue) } });
  },
});

export const tableMapValuesProcessor = (mapper: (value: unknown, key: unknown) => unknown): Processor => ({
  process: (r, ctx) => {
    const change = r.value as Change;
    const map = (v: unknown): unknown => (v === null ? null : mapper(v, r.key));
    return ctx.forward({ ...r, value: { newValue: map(change.newValue), oldValue: map(change.oldValue) } });
  },
});

export const changeOf = (newValue: unknown, oldValue: unknown): Change => ({ newValue, oldValue }) as Change;

export type { StreamRecord };
