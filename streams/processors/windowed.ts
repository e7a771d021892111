/**
 * Windowed aggregations and final-result suppression, with Kafka Streams' time rules: a processor's
 * stream time is the largest timestamp it has seen; a time window closes when stream time reaches
 * its end plus grace, a session when stream time passes its end plus grace; records for closed
 * windows are dropped.
 */
import type { Processor } from '../processor.js';
import { encodeKey, decodeKey, encodeTime, SessionStore, StreamTime, WindowStore } from '../state/stores.js';
import type { StoreSpec } from '../topology.js';
import type { SessionWindows, TimeWindows, Window, Windowed } from '../windows.js';
import type { Aggregation } from './aggregate.js';

export const timeWindowAggregateProcessor = (
  spec: StoreSpec,
  windows: TimeWindows,
  aggregation: Aggregation,
): Processor => ({
  process: async (r, ctx) => {
    // Kafka refuses negative timestamps; a window cannot hold such a record.
    if (r.key === null || r.value === null || r.timestamp < 0) return;
    const streamTime = await new StreamTime(ctx.stores, spec.name).observe(r.timestamp);
    const closeTime = streamTime - windows.graceMs;
    const store = new WindowStore(ctx.stores, spec.name, spec.keySerde, spec.valueSerde);
    for (const window of windows.windowsFor(r.timestamp)) {
      if (window.end <= closeTime) continue;
      const old = await store.fetchWindow(r.key, window.start);
      const newValue = aggregation.aggregator(
        r.key,
        r.value,
        old === null ? aggregation.initializer() : old.value,
      );
      const timestamp = old === null ? r.timestamp : Math.max(r.timestamp, old.timestamp);
      store.putWindow(r.key, window, newValue, timestamp, window.end + windows.graceMs);
      const key: Windowed<unknown> = { key: r.key, window };
      await ctx.forward({ ...r, key, timestamp, value: { newValue, oldValue: old?.value ?? null } });
    }
  },
});

export interface SessionAggregation extends Aggregation {
  merger: (key: unknown, left: unknown, right: unknown) => unknown;
}

/**
 * Session windows: a record joins every session of its key within the inactivity gap; those sessions
 * merge into one, the merged-away ones are retracted with tombstones, then the new session is sent.
 */
export const sessionAggregateProcessor = (
  spec: StoreSpec,
  windows: SessionWindows,
  aggregation: SessionAggregation,
): Processor => ({
  process: async (r, ctx) => {
    if (r.key === null || r.value === null || r.timestamp < 0) return;
    const streamTime = await new StreamTime(ctx.stores, spec.name).observe(r.timestamp);
    const closeTime = streamTime - windows.graceMs;
    const store = new SessionStore(ctx.stores, spec.name, spec.keySerde, spec.valueSerde);
    const gap = windows.inactivityGapMs;
    const overlapping = await store.findSessions(r.key, r.timestamp - gap, r.timestamp + gap);
    let merged: Window = { start: r.timestamp, end: r.timestamp };
    let aggregate = aggregation.initializer();
    for (const s of overlapping) {
      aggregate = aggregation.merger(r.key, aggregate, s.value);
      merged = { start: Math.min(merged.start, s.window.start), end: Math.max(merged.end, s.window.end) };
    }
    if (merged.end < closeTime) return;
    const retainUntil = (w: Window): number => w.end + gap + windows.graceMs;
    for (const s of overlapping) {
      store.putSession(r.key, s.window, null, retainUntil(s.window));
      const key: Windowed<unknown> = { key: r.key, window: s.window };
      await ctx.forward({ ...r, key, timestamp: s.window.end, value: { newValue: null, oldValue: s.value } });
    }
    aggregate = aggregation.aggregator(r.key, r.value, aggregate);
    store.putSession(r.key, merged, aggregate, retainUntil(merged));
    const key: Windowed<unknown> = { key: r.key, window: merged };
    await ctx.forward({ ...r, key, timestamp: merged.end, value: { newValue: aggregate, oldValue: null } });
  },
});

/**
 * suppress(untilWindowCloses): holds the latest result of each window and emits it once, when the
 * processor's stream time reaches the window's end plus grace. The buffer is a store ordered by window
 * end, so emission is a range read and survives a task moving.
 */
export const suppressProcessor = (spec: StoreSpec, upstream: StoreSpec, graceMs: number): Processor => ({
  process: async (r, ctx) => {
    const windowed = r.key as Windowed<unknown> | null;
    if (windowed === null) return;
    const { newValue } = r.value as { newValue: unknown };
    const streamTime = await new StreamTime(ctx.stores, spec.name).observe(r.timestamp);
    const k = `${encodeTime(windowed.window.end)}|${encodeKey(upstream.keySerde, windowed.key)}|${encodeTime(windowed.window.start)}`;
    ctx.stores.put(
      spec.name,
      k,
      newValue === null
        ? null
        : { key: k, value: upstream.valueSerde.serialize(newValue), timestamp: r.timestamp },
    );
    const closedUpTo = streamTime - graceMs;
    if (closedUpTo < 0) return;
    const due = await ctx.stores.range(spec.name, '', encodeTime(closedUpTo + 1));
    for (const entry of due) {
      const [end, hexKey, start] = entry.key.split('|') as [string, string, string];
      ctx.stores.put(spec.name, entry.key, null);
      const key: Windowed<unknown> = {
        key: decodeKey(upstream.keySerde, hexKey),
        window: { start: Number(start), end: Number(end) },
      };
      await ctx.forward({
        key,
        value: { newValue: upstream.valueSerde.deserialize(entry.value), oldValue: null },
        timestamp: entry.timestamp,
        headers: [],
      });
    }
  },
});
