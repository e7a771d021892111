/**
 * The forwarding bases pass every method of the store ports to `inner` with the same arguments and
 * `this`, and answer what `inner` answered; each call goes through `around` once, named by its
 * operation. The method lists are checked by tsc to name every member of the port (and each method's
 * full arity), so a method added to MetadataStore or ObjectStore fails here until the base forwards it.
 */
import { describe, expect, it } from 'vitest';
import type { MetadataCall, ObjectCall, ObjectOp } from '../../../lib/adapters/forwarding.js';
import { ForwardingMetadataStore, ForwardingObjectStore } from '../../../lib/adapters/forwarding.js';
import { FaultInjector, FaultyMetadataStore, FaultyObjectStore } from '../../../lib/adapters/fault/index.js';
import {
  LatencyMetadataStore,
  LatencyObjectStore,
  latencyModels,
} from '../../../lib/adapters/latency/index.js';
import { MemoryObjectStore } from '../../../lib/adapters/memory/object-store.js';
import type { MetadataStore } from '../../../lib/ports/metadata-store.js';
import type { ObjectStore } from '../../../lib/ports/object-store.js';

/** Every MetadataStore method and the number of parameters it takes, optional ones included. */
const metadataArity = {
  get: 2,
  put: 2,
  update: 3,
  delete: 2,
  query: 1,
  transact: 1,
  batchWrite: 1,
} satisfies { [K in keyof MetadataStore]: Required<Parameters<MetadataStore[K]>>['length'] };

/** Every ObjectStore method and its full arity; the identity fields are checked on their own. */
const objectArity = {
  put: 2,
  get: 2,
  delete: 1,
  list: 2,
} satisfies { [K in ObjectOp]: Required<Parameters<ObjectStore[K]>>['length'] };
const objectFields = { id: true, location: true, kind: true, zone: true } satisfies Record<
  Exclude<keyof ObjectStore, ObjectOp>,
  true
>;

/** Arguments a method can route on (a key, an item, a list of ops, a query input) that are also unique. */
const argumentsFor = (method: string, arity: number): unknown[] =>
  Array.from({ length: arity }, (_, i) => ({
    pk: `${method}-pk-${i}`,
    sk: `${method}-sk-${i}`,
    puts: [{ pk: `${method}-batch`, sk: 'first' }],
  }));

/** A store whose every method records its call (arguments and `this`) and answers a unique value. */
const recording = <S extends object>(methods: readonly string[], fields: Record<string, unknown> = {}) => {
  const calls: { method: string; args: unknown[]; self: unknown }[] = [];
  const store: Record<string, unknown> = { ...fields };
  for (const method of methods)
    store[method] = function (this: unknown, ...args: unknown[]) {
      calls.push({ method, args, self: this });
      return Promise.resolve(`answer of ${method}`);
    };
  return { store: store as S, calls };
};

describe('ForwardingMetadataStore', () => {
  const methods = Object.keys(metadataArity) as (keyof MetadataStore)[];

  it.each(methods)('forwards %s to inner with the same arguments and answers its answer', async (method) => {
    const { store: inner, calls } = recording<MetadataStore>(methods);
    const arounds: MetadataCall[] = [];
    const forwarding = new (class extends ForwardingMetadataStore {
      protected override around<T>(call: MetadataCall, run: () => Promise<T>): Promise<T> {
        arounds.push(call);
        return run();
      }
    })(inner);
    const args = argumentsFor(method, metadataArity[method]);
    const call = forwarding[method] as (...a: unknown[]) => Promise<unknown>;
    expect(await call.apply(forwarding, args)).toBe(`answer of ${method}`);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.method).toBe(method);
    expect(calls[0]!.self).toBe(inner);
    expect(calls[0]!.args).toHaveLength(args.length);
    calls[0]!.args.forEach((a, i) => expect(a).toBe(args[i]));
    expect(arounds.map((c) => c.op)).toEqual([method]);
  });

  it('names the item each call is about', async () => {
    const { store: inner } = recording<MetadataStore>(methods);
    const arounds: MetadataCall[] = [];
    const forwarding = new (class extends ForwardingMetadataStore {
      protected override around<T>(call: MetadataCall, run: () => Promise<T>): Promise<T> {
        arounds.push(call);
        return run();
      }
    })(inner);
    const key = { pk: 'p', sk: 's' };
    const condition = { exists: 'pk' };
    await forwarding.update(key, [{ set: 'n', value: 1 }], { condition });
    await forwarding.transact([{ check: key, condition }, { delete: { pk: 'q', sk: 'r' } }]);
    await forwarding.batchWrite({ deletes: [key] });
    await forwarding.batchWrite({});
    await forwarding.query({ pk: 'p' });
    expect(arounds).toEqual([
      { op: 'update', key, actions: [{ set: 'n', value: 1 }], options: { condition } },
      { op: 'transact', key },
      { op: 'batchWrite', key },
      { op: 'batchWrite' },
      { op: 'query', input: { pk: 'p' } },
    ]);
  });

  it('is what the fault and latency decorators forward through', async () => {
    const { store: inner, calls } = recording<MetadataStore>(methods);
    const off = new FaultInjector({ seed: 1, rate: 0 });
    const none = latencyModels.none;
    for (const store of [new FaultyMetadataStore(inner, off), new LatencyMetadataStore(inner, none)]) {
      calls.length = 0;
      for (const method of methods) {
        const call = store[method] as (...a: unknown[]) => Promise<unknown>;
        expect(await call.apply(store, argumentsFor(method, metadataArity[method]))).toBe(
          `answer of ${method}`,
        );
      }
      expect(calls.map((c) => c.method)).toEqual(methods);
    }
  });
});

describe('ForwardingObjectStore', () => {
  const methods = Object.keys(objectArity) as ObjectOp[];
  const fields = { id: 's1', location: 's3://express--use1-az4--x-s3', kind: 'express', zone: 'use1-az4' };

  it.each(methods)('forwards %s to inner with the same arguments and answers its answer', async (method) => {
    const { store: inner, calls } = recording<ObjectStore>(methods, fields);
    const arounds: ObjectCall[] = [];
    const forwarding = new (class extends ForwardingObjectStore {
      protected override around<T>(call: ObjectCall, run: () => Promise<T>): Promise<T> {
        arounds.push(call);
        return run();
      }
    })(inner);
    const args = argumentsFor(method, objectArity[method]);
    const call = forwarding[method] as (...a: unknown[]) => Promise<unknown>;
    expect(await call.apply(forwarding, args)).toBe(`answer of ${method}`);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.self).toBe(inner);
    calls[0]!.args.forEach((a, i) => expect(a).toBe(args[i]));
    expect(calls[0]!.args).toHaveLength(args.length);
    expect(arounds.map((c) => c.op)).toEqual([method]);
  });

  it('reads its identity through from inner, as it is now', () => {
    const { store: inner } = recording<ObjectStore>(methods, { ...fields });
    const forwarding = new ForwardingObjectStore(inner);
    for (const field of Object.keys(objectFields) as (keyof typeof objectFields)[])
      expect(forwarding[field]).toBe(fields[field]);
    (inner as { zone?: string }).zone = 'use1-az6';
    expect(forwarding.zone).toBe('use1-az6');
  });

  it('keeps an S3 Express store an S3 Express store under the fault and latency decorators', async () => {
    const express = Object.assign(new MemoryObjectStore('x1'), {
      kind: 'express',
      zone: 'use1-az4',
    } as const);
    const off = new FaultInjector({ seed: 1, rate: 0 });
    for (const store of [
      new FaultyObjectStore(express, off),
      new LatencyObjectStore(express, latencyModels.none),
    ]) {
      expect([store.id, store.kind, store.zone]).toEqual(['x1', 'express', 'use1-az4']);
      await store.put('k', new Uint8Array([1, 2, 3]));
      expect([...(await store.get('k', { start: 1, end: 3 }))]).toEqual([2, 3]);
      expect((await store.list('')).objects.map((o) => o.key)).toEqual(['k']);
      await store.delete(['k']);
      expect((await express.list('')).objects).toEqual([]);
    }
  });
});
