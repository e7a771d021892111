/**
 * Joins with Kafka Streams' semantics. Stream–table: each stream record looks up the table's current
 * value; table updates emit nothing. Table–table: an update on either side re-joins with the other
 * side's current value, and a delete that ends a join result emits a tombstone. Stream–stream: each
 * record joins the other side's records of the same key within the join window.
 */
import type { Change, Processor } from '../processor.js';
import { JoinWindowStore, StreamTime } from '../state/stores.js';
import type { StoreSpec } from '../topology.js';
import type { JoinWindows } from '../windows.js';
import type { ValueGetter } from './aggregate.js';

export type Joiner = (left: unknown, right: unknown) => unknown;

export const streamTableJoinProcessor = (table: ValueGetter, joiner: Joiner, left: boolean): Processor => ({
  process: async (r, ctx) => {
    if (r.key === null || r.value === null) return;
    const found = await table.get(r.key, ctx.stores);
    if (found === null && !left) return;
    await ctx.forward({ ...r, value: joiner(r.value, found?.value ?? null) });
  },
});

export type TableJoinKind = 'inner' | 'left' | 'outer';

/**
 * One side of a table–table join. `thisIsLeft` says which argument of the joiner this side's value
 * is; `kind` decides which missing side still produces a result.
 */
export const tableTableJoinProcessor = (
  other: ValueGetter,
  joiner: Joiner,
  kind: TableJoinKind,
  thisIsLeft: boolean,
): Processor => ({
  process: async (r, ctx) => {
    if (r.key === null) return;
    const change = r.value as Change;
    const found = await other.get(r.key, ctx.stores);
    const otherValue = found?.value ?? null;
    const join = (mine: unknown): unknown => {
      const [l, rt] = thisIsLeft ? [mine, otherValue] : [otherValue, mine];
      if (l === null && rt === null) return null;
      if (kind === 'inner' && (l === null || rt === null)) return null;
      if (kind === 'left' && l === null) return null;
      return joiner(l, rt);
    };
    const newValue = join(change.newValue);
    const oldValue = join(change.oldValue);
    if (newValue === null && oldValue === null) return;
    const timestamp = found === null ? r.timestamp : Math.max(r.timestamp, found.timestamp);
    await ctx.forward({ ...r, timestamp, value: { newValue, oldValue } });
  },
});

/** The value getter of a table–table join's result, for joins downstream of it. */
export const joinedGetter = (
  left: ValueGetter,
  right: ValueGetter,
  joiner: Joiner,
  kind: TableJoinKind,
): ValueGetter => ({
  stores: [...left.stores, ...right.stores],
  get: async (key, stores) => {
    const [l, r] = [await left.get(key, stores), await right.get(key, stores)];
    if (l === null && r === null) return null;
    if (kind === 'inner' && (l === null || r === null)) return null;
    if (kind === 'left' && l === null) return null;
    return {
      value: joiner(l?.value ?? null, r?.value ?? null),
      timestamp: Math.max(l?.timestamp ?? 0, r?.timestamp ?? 0),
    };
  },
});

/**
 * One side of a windowed stream–stream inner join. Both sides share one stream time (kept in the
 * left side's store); a record whose window has closed by then is dropped.
 */
export const streamStreamJoinProcessor = (
  stores: { mine: StoreSpec; other: StoreSpec; time: string },
  windows: JoinWindows,
  joiner: Joiner,
  thisIsLeft: boolean,
): Processor => ({
  process: async (r, ctx) => {
    if (r.key === null || r.value === null || r.timestamp < 0) return;
    const streamTime = await new StreamTime(ctx.stores, stores.time).observe(r.timestamp);
    // The other side's window for this record: [t - before, t + after] seen from the left.
    const [before, after] = thisIsLeft
      ? [windows.beforeMs, windows.afterMs]
      : [windows.afterMs, windows.beforeMs];
    if (r.timestamp + after + windows.graceMs < streamTime) return;
    const retention = windows.beforeMs + windows.afterMs + windows.graceMs;
    const mine = new JoinWindowStore(
      ctx.stores,
      stores.mine.name,
      stores.mine.keySerde,
      stores.mine.valueSerde,
    );
    await mine.add(r.key, r.value, r.timestamp, r.timestamp + retention);
    const other = new JoinWindowStore(
      ctx.stores,
      stores.other.name,
      stores.other.keySerde,
      stores.other.valueSerde,
    );
    for (const match of await other.fetchRange(r.key, r.timestamp - before, r.timestamp + after)) {
      const value = thisIsLeft ? joiner(r.value, match.value) : joiner(match.value, r.value);
      await ctx.forward({ ...r, value, timestamp: Math.max(r.timestamp, match.timestamp) });
    }
  },
});
