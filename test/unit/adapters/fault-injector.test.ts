import { afterEach, describe, expect, it } from 'vitest';
import {
  FaultInjector,
  FaultyMetadataStore,
  FaultyObjectStore,
  ManualClock,
  drive,
  parseFaultSpec,
  seededRandom,
  setFaultsEnabled,
  totalFaultCounts,
  weighted,
  withFaults,
} from '../../../lib/adapters/fault/index.js';
import { MemoryMetadataStore } from '../../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../../lib/adapters/memory/object-store.js';
import { ConditionFailedError } from '../../../lib/ports/metadata-store.js';
import { SluiceError } from '../../../protocol/errors.js';

const key = { pk: 'P#t#0', sk: 'STATE' };
const injectors: FaultInjector[] = [];
const injector = (spec: ConstructorParameters<typeof FaultInjector>[0], clock?: ManualClock) => {
  const i = new FaultInjector(spec, clock);
  injectors.push(i);
  return i;
};

afterEach(() => {
  injectors.splice(0).forEach((i) => i.dispose());
  setFaultsEnabled(true);
});

describe('seededRandom', () => {
  it('replays the same sequence for a seed and a different one for another', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const xs = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c())).not.toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('picks weighted keys in proportion and never a zero weight', () => {
    const random = seededRandom(1);
    const counts = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 4000; i++) counts[weighted(random, { a: 1, b: 3, c: 0 })]++;
    expect(counts.c).toBe(0);
    expect(counts.b / counts.a).toBeGreaterThan(2.5);
    expect(counts.b / counts.a).toBeLessThan(3.5);
  });
});

describe('ManualClock', () => {
  it('fires timers in due order, each continuation at its own time, and only those due', async () => {
    const clock = new ManualClock(1000);
    const woke: [string, number][] = [];
    void clock.sleep(30).then(() => woke.push(['c', clock.now()]));
    void clock.sleep(10).then(() => woke.push(['a', clock.now()]));
    void clock.sleep(10).then(() => woke.push(['b', clock.now()]));
    void clock.sleep(100).then(() => woke.push(['late', clock.now()]));
    await clock.advance(50);
    expect(woke).toEqual([
      ['a', 1010],
      ['b', 1010],
      ['c', 1030],
    ]);
    expect(clock.now()).toBe(1050);
    expect(clock.pending).toBe(1);
    expect(await clock.runNext()).toBe(true);
    expect(woke.at(-1)).toEqual(['late', 1100]);
    expect(await clock.runNext()).toBe(false);
  });

  it('drives work that sleeps to completion, and reports work stuck without timers', async () => {
    const clock = new ManualClock(0);
    const work = (async () => {
      await clock.sleep(5_000);
      await clock.sleep(60_000);
      return clock.now();
    })();
    expect(await drive(clock, work)).toBe(65_000);
    await expect(drive(clock, new Promise<never>(() => {}))).rejects.toThrow(/stuck/);
  });
});

describe('FaultyMetadataStore', () => {
  const setup = (kind: 'failBefore' | 'failAfter' | 'dropResponse' | 'delay', clock?: ManualClock) => {
    const memory = new MemoryMetadataStore();
    const store = new FaultyMetadataStore(
      memory,
      injector({ seed: 7, rate: 1, kinds: { [kind]: 1 } }, clock),
    );
    return { memory, store };
  };

  it('fails before: a retriable error and nothing written', async () => {
    const { memory, store } = setup('failBefore');
    const error = await store.put({ ...key, n: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceError);
    expect((error as SluiceError).retriable).toBe(true);
    expect(['KAFKA_STORAGE_ERROR', 'THROTTLING_QUOTA_EXCEEDED']).toContain((error as SluiceError).code);
    expect(await memory.get(key)).toBeUndefined();
    expect(store.injector.counts).toMatchObject({ failBefore: 1, failAfter: 0 });
  });

  it('fails after: the write took effect, then the ambiguous error', async () => {
    const { memory, store } = setup('failAfter');
    await memory.put({ ...key, n: 1 });
    await expect(store.update(key, [{ set: 'n', add: 1 }], { returnValues: 'allOld' })).rejects.toMatchObject(
      {
        code: 'KAFKA_STORAGE_ERROR',
        retriable: true,
      },
    );
    expect((await memory.get(key))?.['n']).toBe(2);
  });

  it('hides a failed condition behind the ambiguous error too (the caller cannot tell)', async () => {
    const { memory, store } = setup('failAfter');
    await memory.put({ ...key, n: 1 });
    const error = await store
      .update(key, [{ set: 'n', value: 5 }], { condition: { path: 'n', op: '=', value: 9 } })
      .catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(ConditionFailedError);
    expect((await memory.get(key))?.['n']).toBe(1);
  });

  it('drops the response: the write took effect and the caller sees a timeout', async () => {
    const { memory, store } = setup('dropResponse');
    await expect(store.put({ ...key, n: 3 })).rejects.toMatchObject({ code: 'REQUEST_TIMED_OUT' });
    expect((await memory.get(key))?.['n']).toBe(3);
    expect(store.injector.counts.dropResponse).toBe(1);
  });

  it('delays on the clock, so a concurrent operation overtakes it', async () => {
    const clock = new ManualClock(0);
    const memory = new MemoryMetadataStore();
    const slow = new FaultyMetadataStore(
      memory,
      injector({ seed: 3, rate: 1, kinds: { delay: 1 }, maxDelayMs: 50 }, clock),
    );
    const order: string[] = [];
    const work = Promise.all([
      slow.put({ ...key, by: 'slow' }).then(() => order.push('slow')),
      memory.put({ ...key, by: 'fast' }).then(() => order.push('fast')),
    ]);
    await drive(clock, work);
    expect(order).toEqual(['fast', 'slow']);
    expect(clock.now()).toBeGreaterThan(0);
  });

  it('lands a prefix of a batch write before an after-fault', async () => {
    const memory = new MemoryMetadataStore();
    const landed: number[] = [];
    for (let seed = 0; seed < 30; seed++) {
      const m = new MemoryMetadataStore();
      const store = new FaultyMetadataStore(m, injector({ seed, rate: 1, kinds: { failAfter: 1 } }));
      const puts = Array.from({ length: 4 }, (_, i) => ({ pk: 'x', sk: `s${i}` }));
      await expect(store.batchWrite({ puts })).rejects.toMatchObject({ code: 'KAFKA_STORAGE_ERROR' });
      const got = m.dump().map((i) => i.sk);
      expect(got).toEqual(puts.slice(0, got.length).map((p) => p.sk));
      landed.push(got.length);
    }
    expect(new Set(landed).size).toBeGreaterThan(2);
    expect(memory.dump()).toEqual([]);
  });

  it('applies the filter: only updates of STATE items', async () => {
    const memory = new MemoryMetadataStore();
    const store = new FaultyMetadataStore(
      memory,
      injector({ seed: 1, rate: 1, kinds: { failBefore: 1 }, ops: ['update'], sk: 'STATE' }),
    );
    await store.put({ ...key, n: 1 });
    await store.update({ pk: 'P#t#0', sk: 'B#1' }, [{ set: 'n', value: 1 }]);
    await expect(store.update(key, [{ set: 'n', value: 2 }])).rejects.toBeInstanceOf(SluiceError);
    expect(store.injector.byOperation.get('metadata.update')).toBe(1);
  });

  it('forces scripted faults after skipping some matches, even at rate 0', async () => {
    const memory = new MemoryMetadataStore();
    const store = new FaultyMetadataStore(memory, injector({ seed: 1, rate: 0 }));
    store.injector.failNext({ ops: ['put'] }, 'failAfter', { skip: 1, count: 1 });
    await store.put({ ...key, n: 1 });
    await expect(store.put({ ...key, n: 2 })).rejects.toMatchObject({ code: 'KAFKA_STORAGE_ERROR' });
    await store.put({ ...key, n: 3 });
    expect((await memory.get(key))?.['n']).toBe(3);
    expect(store.injector.counts.failAfter).toBe(1);
  });

  it('stops every injector at the module switch, and counts across injectors', async () => {
    const before = totalFaultCounts().failBefore;
    const a = new FaultyMetadataStore(
      new MemoryMetadataStore(),
      injector({ seed: 1, rate: 1, kinds: { failBefore: 1 } }),
    );
    const b = new FaultyObjectStore(
      new MemoryObjectStore(),
      injector({ seed: 2, rate: 1, kinds: { failBefore: 1 } }),
    );
    await expect(a.get(key)).rejects.toBeInstanceOf(SluiceError);
    await expect(b.get('k')).rejects.toBeInstanceOf(SluiceError);
    expect(totalFaultCounts().failBefore - before).toBe(2);
    setFaultsEnabled(false);
    await a.put({ ...key, n: 1 });
    await b.put('k', new Uint8Array([1]));
    expect(await b.get('k')).toEqual(new Uint8Array([1]));
  });
});

describe('FaultyObjectStore', () => {
  it('leaves the object behind when a put fails after the write', async () => {
    const memory = new MemoryObjectStore();
    const store = new FaultyObjectStore(memory, injector({ seed: 1, rate: 1, kinds: { failAfter: 1 } }));
    await expect(store.put('d/t/1', new Uint8Array([1, 2]))).rejects.toMatchObject({
      code: 'KAFKA_STORAGE_ERROR',
    });
    expect(memory.keys()).toEqual(['d/t/1']);
    expect(store.id).toBe(memory.id);
  });
});

describe('withFaults and SLUICE_FAULTS', () => {
  it('parses a spec and wraps every store with its own seeded injector', () => {
    const spec = parseFaultSpec('{"seed":5,"rate":0.1,"ops":["update"]}');
    expect(spec).toEqual({ seed: 5, rate: 0.1, ops: ['update'] });
    const wrapped = withFaults(spec, {
      store: new MemoryMetadataStore(),
      objectStores: [new MemoryObjectStore('s0'), new MemoryObjectStore('s1')],
    });
    injectors.push(...wrapped.injectors);
    expect(wrapped.objectStores.map((s) => s.id)).toEqual(['s0', 's1']);
    expect(wrapped.injectors.map((i) => i.spec.seed)).toEqual([5, 6, 7]);
    expect(() => parseFaultSpec('{"rate":1}')).toThrow(/seed/);
  });

  it('replays the same fault schedule for the same seed', async () => {
    const schedule = async (seed: number) => {
      const store = new FaultyMetadataStore(new MemoryMetadataStore(), injector({ seed, rate: 0.3 }));
      const out: string[] = [];
      for (let i = 0; i < 40; i++) {
        out.push(
          await store.put({ pk: 'p', sk: String(i) }).then(
            () => 'ok',
            (e: SluiceError) => e.code,
          ),
        );
      }
      return out;
    };
    expect(await schedule(9)).toEqual(await schedule(9));
    expect(await schedule(9)).not.toEqual(await schedule(10));
  });
});
