/**
 * The read side of transactions: the aborted transactions a read_committed fetch of [from, to) needs
 * (Kafka's FetchResponse.abortedTransactions: those whose ABORT marker is at or after `from` and whose
 * first offset is before `to`, by first offset), from the index of materialized markers and from the
 * tail, and retention's drop of index items below the new log start.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { materializeTail } from '../../../../lib/core/log/materialize.js';
import { abortedTransactions } from '../../../../lib/core/transactions/index.js';
import type { ProducerIdAndEpoch } from '../../../../lib/core/transactions/index.js';
import { dropAbortedBelow } from '../../../../lib/core/transactions/lso.js';
import type { MetadataStore, QueryInput } from '../../../../lib/ports/metadata-store.js';
import { batch, produceCluster } from '../../../support/produce-support.js';

/** The memory store with DynamoDB-like paging (`limit` items a page), counting queries and batch writes. */
const paged = (inner: MetadataStore, limit: number) => {
  const queries: QueryInput[] = [];
  let batchWrites = 0;
  const store = new Proxy(inner, {
    get(target, name) {
      if (name === 'query')
        return (input: QueryInput) => {
          queries.push(input);
          return target.query({ ...input, limit });
        };
      if (name === 'batchWrite')
        return (writes: Parameters<MetadataStore['batchWrite']>[0]) => {
          batchWrites++;
          return target.batchWrite(writes);
        };
      const value = Reflect.get(target, name) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as MetadataStore;
  return { store, queries, batchWrites: () => batchWrites };
};

/**
 * t-0 holds: 0 A1 (producer 0), 1 B1 (producer 1), 2 ABORT B1, 3 ABORT A1, 4 plain — materialized, so
 * in the aborted index — then in the tail: 5 A2, 6 ABORT A2, 7 B2, 8 COMMIT B2.
 */
const setup = async () => {
  const c = await produceCluster({ partitions: 1 });
  const tc = c.sluice.transactions;
  const produce = (values: string[], p: ProducerIdAndEpoch, seq = 0) =>
    c.sluice.producer.produceBatches(
      't',
      0,
      batch(values, { ...p, baseSequence: seq, isTransactional: true }),
      'all',
    );
  const tp = [{ topic: 't', partition: 0 }];
  let a = await tc.initProducerId('a', 60_000);
  let b = await tc.initProducerId('b', 60_000);
  await tc.addPartitions('a', a, tp);
  await produce(['a1'], a);
  await tc.addPartitions('b', b, tp);
  await produce(['b1'], b);
  b = await tc.endTxn('b', b, false);
  a = await tc.endTxn('a', a, false);
  await c.sluice.producer.produceBatches('t', 0, batch(['plain']), 'all');
  await materializeTail(c.store, c.topic.topicId, 0, {
    now: c.clock.now(),
    producerExpirationMs: 86_400_000,
  });
  await tc.addPartitions('a', a, tp);
  await produce(['a2'], a);
  await tc.endTxn('a', a, false);
  await tc.addPartitions('b', b, tp);
  await produce(['b2'], b);
  await tc.endTxn('b', b, true);
  const state = await c.state(0);
  expect(state.tailBase).toBe(5);
  const A1 = { producerId: 0, firstOffset: 0 };
  const B1 = { producerId: 1, firstOffset: 1 };
  const A2 = { producerId: 0, firstOffset: 5 };
  const aborted = (store: MetadataStore, from: number, to: number) =>
    abortedTransactions(store, c.topic.topicId, 0, state, from, to);
  return { ...c, state, aborted, A1, B1, A2 };
};

describe('abortedTransactions', () => {
  it('lists index and tail entries overlapping the range, by first offset', async () => {
    const s = await setup();
    const { store, queries } = paged(s.store, 1);
    expect(await s.aborted(store, 0, 9)).toEqual([s.A1, s.B1, s.A2]);
    // One page per index item (and the last, empty one): every page is read.
    expect(queries.length).toBeGreaterThanOrEqual(2);
    expect(queries.every((q) => q.consistent === true)).toBe(true);
  });

  it('a transaction is needed from its first offset up to its ABORT marker, inclusive', async () => {
    const s = await setup();
    expect(await s.aborted(s.store, 2, 9)).toEqual([s.A1, s.B1, s.A2]);
    expect(await s.aborted(s.store, 3, 9)).toEqual([s.A1, s.A2]);
    expect(await s.aborted(s.store, 4, 9)).toEqual([s.A2]);
    expect(await s.aborted(s.store, 6, 9)).toEqual([s.A2]);
    expect(await s.aborted(s.store, 7, 9)).toEqual([]);
    expect(await s.aborted(s.store, 0, 1)).toEqual([s.A1]);
    expect(await s.aborted(s.store, 0, 5)).toEqual([s.A1, s.B1]);
    expect(await s.aborted(s.store, 0, 6)).toEqual([s.A1, s.B1, s.A2]);
  });

  it('a read that starts in the tail does not query the index', async () => {
    const s = await setup();
    const { store, queries } = paged(s.store, 100);
    expect(await s.aborted(store, 5, 9)).toEqual([s.A2]);
    expect(queries).toEqual([]);
    expect(await s.aborted(store, 4, 9)).toEqual([s.A2]);
    expect(queries).toHaveLength(1);
  });

  it('reads only the index items of the range, not the rest of the partition', async () => {
    const s = await setup();
    const read: string[] = [];
    const store = new Proxy(s.store, {
      get(target, name) {
        if (name === 'query')
          return async (input: QueryInput) => {
            const page = await target.query(input);
            read.push(...page.items.map((i) => i.sk));
            return page;
          };
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as MetadataStore;
    expect(await s.aborted(store, 0, 9)).toEqual([s.A1, s.B1, s.A2]);
    // Kills a query without its sort-key range (between [] matches the whole partition in the memory
    // store, and is no key condition DynamoDB accepts).
    expect(read).toEqual([2, 3].map((o) => keys.abortedTransaction(s.topic.topicId, 0, o).sk));
  });

  it('orders transactions with the same first offset by producer id', async () => {
    const s = await setup();
    // Two ABORT markers in the tail naming the same first offset (producers 9 and 4), as a state
    // handed in may hold: the answer is by first offset, then producer id.
    const marker = s.state.tail.find((e) => e.controlType === 'ABORT')!;
    const state = {
      ...s.state,
      tail: [
        ...s.state.tail,
        { ...marker, producerId: 9, transactionFirstOffset: 7 },
        { ...marker, producerId: 4, transactionFirstOffset: 7 },
        { ...marker, producerId: 6, transactionFirstOffset: 7 },
      ],
    };
    // Kills the tie-break by the sum of producer ids (a.producerId - b.producerId → +).
    expect(await abortedTransactions(s.store, s.topic.topicId, 0, state, 5, 20)).toEqual([
      s.A2,
      { producerId: 4, firstOffset: 7 },
      { producerId: 6, firstOffset: 7 },
      { producerId: 9, firstOffset: 7 },
    ]);
  });

  it('takes from the tail only ABORT markers that name their producer and first offset', async () => {
    const s = await setup();
    const marker = s.state.tail.find((e) => e.controlType === 'ABORT')!;
    const { producerId: _p, ...anonymous } = marker;
    const state = {
      ...s.state,
      tail: [
        ...s.state.tail,
        // A COMMIT marker carrying a first offset, and an ABORT marker with no producer: neither is
        // an aborted transaction a read_committed consumer must skip.
        { ...marker, controlType: 'COMMIT' as const, producerId: 3, transactionFirstOffset: 7 },
        { ...anonymous, transactionFirstOffset: 8 },
      ],
    };
    // Kills each weakening of the tail filter (controlType === 'ABORT' → true, producerId !== undefined
    // → true, && → ||, and the whole condition → true).
    expect(await abortedTransactions(s.store, s.topic.topicId, 0, state, 5, 20)).toEqual([s.A2]);
  });

  it('a read_committed fetch returns them and drops the aborted records', async () => {
    const s = await setup();
    const f = await s.sluice.fetcher.fetchRecords('t', 0, {
      offset: 0,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      isolationLevel: 'read_committed',
    });
    expect(f.records.map((r) => Buffer.from(r.value!).toString())).toEqual(['plain', 'b2']);
    expect([f.lastStableOffset, f.highWatermark]).toEqual([9, 9]);
  });
});

describe('dropAbortedBelow', () => {
  const indexed = async (s: Awaited<ReturnType<typeof setup>>) =>
    (
      await s.store.query({
        pk: keys.partitionPk(s.topic.topicId, 0),
        sk: { beginsWith: keys.abortedPrefix },
      })
    ).items.map((i) => i.sk);

  it('drops the index items whose marker is below the new log start, page by page, and counts them', async () => {
    const s = await setup();
    const { store, batchWrites } = paged(s.store, 1);
    expect(await indexed(s)).toEqual([2, 3].map((o) => keys.abortedTransaction(s.topic.topicId, 0, o).sk));
    expect(await dropAbortedBelow(store, s.topic.topicId, 0, 2)).toBe(0);
    expect(batchWrites()).toBe(0);
    expect(await dropAbortedBelow(store, s.topic.topicId, 0, 3)).toBe(1);
    expect(await indexed(s)).toEqual([keys.abortedTransaction(s.topic.topicId, 0, 3).sk]);
    await s.sluice.producer.produceBatches('t', 0, batch(['more']), 'all');
    expect(await dropAbortedBelow(store, s.topic.topicId, 0, 9)).toBe(1);
    expect(await indexed(s)).toEqual([]);
  });

  it('drops across several pages', async () => {
    const s = await setup();
    const { store, batchWrites } = paged(s.store, 1);
    expect(await dropAbortedBelow(store, s.topic.topicId, 0, 5)).toBe(2);
    expect(batchWrites()).toBe(2);
    expect(await indexed(s)).toEqual([]);
  });

  it('a log start of 0 leaves everything and reads nothing', async () => {
    const s = await setup();
    const { store, queries } = paged(s.store, 1);
    expect(await dropAbortedBelow(store, s.topic.topicId, 0, 0)).toBe(0);
    expect(queries).toEqual([]);
    expect(await indexed(s)).toHaveLength(2);
  });
});
