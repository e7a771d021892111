import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../lib/adapters/fault/random.js';
import {
  LatencyMetadataStore,
  LatencyObjectStore,
  latencyModels,
  parseLatencyModel,
  sampleMs,
  transferMs,
  withLatency,
} from '../../../lib/adapters/latency/index.js';
import { MemoryMetadataStore } from '../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../lib/adapters/memory/object-store.js';
import { ConditionFailedError } from '../../../lib/ports/metadata-store.js';

const quantile = (sorted: number[], q: number): number => sorted[Math.floor(q * (sorted.length - 1))]!;

describe('latency model distributions', () => {
  it.each([
    { p50Ms: 60, p99Ms: 250 },
    { p50Ms: 5, p99Ms: 9 },
    { p50Ms: 10, p99Ms: 25 },
  ])('a seeded log-normal through p50 $p50Ms and p99 $p99Ms reproduces both within 5%', (d) => {
    const random = seededRandom(42);
    const draws = Array.from({ length: 40_000 }, () => sampleMs(d, random)).sort((a, b) => a - b);
    expect(quantile(draws, 0.5)).toBeGreaterThan(d.p50Ms * 0.95);
    expect(quantile(draws, 0.5)).toBeLessThan(d.p50Ms * 1.05);
    expect(quantile(draws, 0.99)).toBeGreaterThan(d.p99Ms * 0.95);
    expect(quantile(draws, 0.99)).toBeLessThan(d.p99Ms * 1.05);
    expect(draws[0]).toBeGreaterThan(0);
  });

  it('replays the same draws from the same seed', () => {
    const d = latencyModels.standard.object.put;
    const a = seededRandom(7);
    const b = seededRandom(7);
    const first = Array.from({ length: 5 }, () => sampleMs(d, a));
    expect(Array.from({ length: 5 }, () => sampleMs(d, b))).toEqual(first);
  });

  it('the none model waits nothing and moves bytes in no time', () => {
    const random = seededRandom(1);
    expect(sampleMs(latencyModels.none.metadata.update, random)).toBe(0);
    expect(transferMs(latencyModels.none, 1 << 30)).toBe(0);
  });

  it('transfer time is bytes over the per-request throughput', () => {
    expect(transferMs(latencyModels.standard, 1024 * 1024)).toBeCloseTo(10, 9);
    expect(transferMs(latencyModels.express, 4 * 1024 * 1024)).toBeCloseTo(40, 9);
  });

  it('Express One Zone is faster than Standard for every object operation (the documented "up to 10x")', () => {
    for (const op of ['put', 'get', 'delete', 'list'] as const) {
      expect(latencyModels.express.object[op].p50Ms * 5).toBeLessThan(
        latencyModels.standard.object[op].p50Ms,
      );
      expect(latencyModels.express.object[op].p99Ms).toBeLessThan(10);
    }
  });

  it('parses model names and refuses unknown ones with the list of valid ones', () => {
    expect(parseLatencyModel(undefined)).toBe('none');
    expect(parseLatencyModel('')).toBe('none');
    expect(parseLatencyModel('express')).toBe('express');
    expect(() => parseLatencyModel('glacier')).toThrow(
      'unknown latency model "glacier": use one of none, standard, express',
    );
  });
});

describe('latency store decorators', () => {
  const slow = {
    ...latencyModels.none,
    name: 'standard' as const,
    object: {
      put: { p50Ms: 30, p99Ms: 30.0001 },
      get: { p50Ms: 30, p99Ms: 30.0001 },
      delete: { p50Ms: 30, p99Ms: 30.0001 },
      list: { p50Ms: 30, p99Ms: 30.0001 },
    },
    objectMiBPerSec: 100,
    metadata: { ...latencyModels.none.metadata, update: { p50Ms: 30, p99Ms: 30.0001 } },
  };

  it('an object put waits its latency plus the body transfer, then stores the same bytes', async () => {
    const inner = new MemoryObjectStore('s0');
    const store = new LatencyObjectStore(inner, slow);
    const body = new Uint8Array(2 * 1024 * 1024).fill(7);
    const t0 = performance.now();
    await store.put('k', body);
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(48); // 30 ms + 20 ms for 2 MiB at 100 MiB/s, minus timer slack
    expect(Buffer.from(await inner.get('k')).equals(body)).toBe(true);
    expect(store.id).toBe('s0');
    expect(store.location).toBe(inner.location);
  });

  it('a get waits first byte and transfer and returns the same range', async () => {
    const inner = new MemoryObjectStore('s0');
    await inner.put('k', Uint8Array.from([1, 2, 3, 4, 5]));
    const store = new LatencyObjectStore(inner, slow);
    const t0 = performance.now();
    expect(await store.get('k', { start: 1, end: 4 })).toEqual(Uint8Array.from([2, 3, 4]));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(28);
  });

  it('metadata calls wait per operation and pass results and errors through unchanged', async () => {
    const inner = new MemoryMetadataStore();
    const store = new LatencyMetadataStore(inner, slow);
    await store.put({ pk: 'a', sk: 'b', n: 1 });
    const t0 = performance.now();
    const old = await store.update({ pk: 'a', sk: 'b' }, [{ set: 'n', value: 2 }], {
      returnValues: 'allOld',
    });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(28);
    expect(old?.['n']).toBe(1);
    expect((await inner.get({ pk: 'a', sk: 'b' }))?.['n']).toBe(2);
    await expect(store.put({ pk: 'a', sk: 'b' }, { condition: { notExists: 'pk' } })).rejects.toBeInstanceOf(
      ConditionFailedError,
    );
  });

  /** A timer on virtual time: sleeps move it, and record how long each was asked for. */
  const ms = (x: number) => Math.round(x * 1000) / 1000;
  const virtualTimer = () => {
    const t = { time: 0, sleeps: [] as number[] };
    return {
      t,
      timer: {
        now: () => t.time,
        sleep: async (wait: number) => {
          t.sleeps.push(ms(wait));
          t.time += Math.max(0, wait);
        },
      },
    };
  };

  it("the emulator's own time counts toward the modelled time instead of adding to it", async () => {
    const inner = new MemoryMetadataStore();
    await inner.put({ pk: 'a', sk: 'b', n: 1 });
    const { t, timer } = virtualTimer();
    // A store that itself takes 60 ms (a loaded emulator) under a 30 ms model: 15 ms on the way
    // there, then the call's 60, and nothing after: 75 ms in all, not 30 + 60.
    const slowInner: typeof inner = Object.assign(Object.create(inner) as typeof inner, {
      update: async (...args: Parameters<typeof inner.update>) => {
        t.time += 60;
        return inner.update(...args);
      },
    });
    const store = new LatencyMetadataStore(slowInner, slow, seededRandom(1), timer);
    await store.update({ pk: 'a', sk: 'b' }, [{ set: 'n', value: 2 }]);
    expect(t.sleeps).toEqual([15, -45]);
    expect(ms(t.time)).toBe(75);
    expect((await inner.get({ pk: 'a', sk: 'b' }))?.['n']).toBe(2);
    // A quick store: the rest of the modelled time passes after it answers, 30 ms in all.
    const quick = new LatencyMetadataStore(inner, slow, seededRandom(1), timer);
    t.sleeps.length = 0;
    const before = t.time;
    await quick.update({ pk: 'a', sk: 'b' }, [{ set: 'n', value: 3 }]);
    expect([t.sleeps, ms(t.time - before)]).toEqual([[15, 15], 30]);
  });

  it('a call reaches the store after half its modelled time, and a failed one still takes all of it', async () => {
    const inner = new MemoryMetadataStore();
    await inner.put({ pk: 'a', sk: 'b', n: 1 });
    const { t, timer } = virtualTimer();
    const seen: number[] = [];
    const watched: typeof inner = Object.assign(Object.create(inner) as typeof inner, {
      update: (...args: Parameters<typeof inner.update>) => {
        seen.push(ms(t.time));
        return inner.update(...args);
      },
    });
    const store = new LatencyMetadataStore(watched, slow, seededRandom(1), timer);
    const failed = store.update({ pk: 'a', sk: 'b' }, [{ set: 'n', value: 3 }], {
      condition: { path: 'n', op: '=', value: 9 },
    });
    await expect(failed).rejects.toBeInstanceOf(ConditionFailedError);
    expect([seen, t.sleeps, ms(t.time)]).toEqual([[15], [15, 15], 30]);
    expect((await inner.get({ pk: 'a', sk: 'b' }))?.['n']).toBe(1);
  });

  it('withLatency wraps every store and keeps their ids in order', () => {
    const wrapped = withLatency(latencyModels.express, {
      store: new MemoryMetadataStore(),
      objectStores: [new MemoryObjectStore('s0'), new MemoryObjectStore('s1')],
    });
    expect(wrapped.store).toBeInstanceOf(LatencyMetadataStore);
    expect(wrapped.objectStores.map((s) => s.id)).toEqual(['s0', 's1']);
  });
});
