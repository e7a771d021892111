/**
 * Metadata store contract: DynamoDB's semantics as Sluice relies on them (conditions, update operands
 * read before the write, atomic counters, ordered range queries with cursors, all-or-nothing
 * transactions).
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Condition, Item, MetadataStore, QueryInput } from '../../lib/ports/index.js';
import { ConditionFailedError, TransactionCanceledError } from '../../lib/ports/index.js';
import { SluiceError } from '../../protocol/errors.js';
import type { FixtureRef } from './storage-contract.js';

const failure = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected the operation to fail');
    },
    (error: unknown) => error,
  );

const conditionFailure = async (promise: Promise<unknown>): Promise<ConditionFailedError> => {
  const error = await failure(promise);
  expect(error).toBeInstanceOf(ConditionFailedError);
  return error as ConditionFailedError;
};

/** Every page of a query, following cursors until none is left. */
const queryAll = async (
  store: MetadataStore,
  input: QueryInput,
): Promise<{ pages: Item[][]; items: Item[] }> => {
  const pages: Item[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.query({ ...input, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page.items);
    cursor = page.cursor;
  } while (cursor !== undefined && pages.length < 1000);
  return { pages, items: pages.flat() };
};

const sks = (items: readonly Item[]): string[] => items.map((i) => i.sk);

export const metadataStoreContract = (fixture: FixtureRef): void => {
  const run = randomUUID().slice(0, 8);
  const pk = (name: string): string => `${run}#${name}`;
  const store = (): MetadataStore => fixture().metadata;

  it('round-trips every attribute type, including nested maps, lists and binary', async () => {
    const bytes = new Uint8Array(256).map((_, i) => i);
    const item: Item = {
      pk: pk('types'),
      sk: 'META',
      text: 'héllo ✓ 日本',
      empty: '',
      int: 42,
      negative: -7,
      fraction: 3.25,
      big: Number.MAX_SAFE_INTEGER,
      yes: true,
      no: false,
      nothing: null,
      bytes,
      list: [1, 'two', false, null, [3, [4]], { five: 5 }, new Uint8Array([9, 8])],
      emptyList: [],
      map: { a: { b: { c: 'deep', d: [1, 2, 3] } }, 'with.dot': 1, size: 2, '42': { s: 7 } },
      emptyMap: {},
    };
    await store().put(item);
    const read = await store().get({ pk: item.pk, sk: 'META' }, { consistent: true });
    expect(read).toEqual(item);
    expect(read?.bytes).toBeInstanceOf(Uint8Array);
    expect([...(read?.bytes as Uint8Array)]).toEqual([...bytes]);
    expect(await store().get({ pk: item.pk, sk: 'OTHER' }, { consistent: true })).toBeUndefined();
  });

  it('put replaces the whole item', async () => {
    const key = { pk: pk('replace'), sk: 'S' };
    await store().put({ ...key, a: 1, b: 2 });
    await store().put({ ...key, c: 3 });
    expect(await store().get(key, { consistent: true })).toEqual({ ...key, c: 3 });
  });

  it('lets exactly one of 32 concurrent "not exists" puts win; the others see the winner', async () => {
    const key = { pk: pk('race'), sk: 'META' };
    const results = await Promise.allSettled(
      Array.from({ length: 32 }, (_, writer) =>
        store().put({ ...key, writer }, { condition: { notExists: 'pk' } }),
      ),
    );
    const winners = results.flatMap((r, writer) => (r.status === 'fulfilled' ? [writer] : []));
    expect(winners).toHaveLength(1);
    const winner = { ...key, writer: winners[0] ?? -1 };
    const losers = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(losers).toHaveLength(31);
    for (const error of losers) {
      expect(error).toBeInstanceOf(ConditionFailedError);
      expect((error as ConditionFailedError).current).toEqual(winner);
    }
    expect(await store().get(key, { consistent: true })).toEqual(winner);
  });

  it('update returns the old or the new item when asked, nothing otherwise', async () => {
    const key = { pk: pk('returns'), sk: 'S' };
    expect(await store().update(key, [{ set: 'v', value: 1 }], { returnValues: 'allOld' })).toBeUndefined();
    expect(await store().update(key, [{ set: 'v', value: 2 }], { returnValues: 'allOld' })).toEqual({
      ...key,
      v: 1,
    });
    expect(await store().update(key, [{ set: 'w', value: 'x' }], { returnValues: 'allNew' })).toEqual({
      ...key,
      v: 2,
      w: 'x',
    });
    expect(await store().update(key, [{ remove: 'w' }])).toBeUndefined();
    expect(await store().get(key, { consistent: true })).toEqual({ ...key, v: 2 });
  });

  it('counts atomically under 50 concurrent updates and appends in counter order', async () => {
    const key = { pk: pk('counter'), sk: 'STATE' };
    await store().put({ ...key, next: 0, log: [] });
    const olds = await Promise.all(
      Array.from({ length: 50 }, (_, writer) =>
        store().update(
          key,
          [
            { set: 'next', add: 1 },
            { set: 'log', append: [writer] },
          ],
          { condition: { exists: 'pk' }, returnValues: 'allOld' },
        ),
      ),
    );
    const claimed = olds.map((old) => old?.next as number);
    expect([...claimed].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const final = await store().get(key, { consistent: true });
    expect(final?.next).toBe(50);
    // The writer that read counter value i appended the i-th log entry.
    const expectedLog = Array.from({ length: 50 }, (_, i) => claimed.indexOf(i));
    expect(final?.log).toEqual(expectedLog);
  });

  it('reads every operand before the update (add from another attribute, copyOf)', async () => {
    const key = { pk: pk('operands'), sk: 'S' };
    await store().put({ ...key, next: 10, hw: 3 });
    const after = await store().update(
      key,
      [
        { set: 'next', add: 5 },
        { set: 'hw', copyOf: 'next' },
        { set: 'limit', add: 100, from: 'next' },
      ],
      { returnValues: 'allNew' },
    );
    expect(after).toEqual({ ...key, next: 15, hw: 10, limit: 110 });
  });

  it('copies another attribute into a nested member only when it is absent (keepExisting)', async () => {
    const key = { pk: pk('keep'), sk: 'S' };
    await store().put({ ...key, next: 7, tx: {} });
    const copy = [
      { set: 'next', add: 2 },
      { set: ['tx', '5'], copyOf: 'next', keepExisting: true },
    ] as const;
    expect(await store().update(key, copy, { returnValues: 'allNew' })).toEqual({
      ...key,
      next: 9,
      tx: { '5': 7 },
    });
    expect(await store().update(key, copy, { returnValues: 'allNew' })).toEqual({
      ...key,
      next: 11,
      tx: { '5': 7 },
    });
  });

  it('adds to an initial value when the counter is missing', async () => {
    const key = { pk: pk('initial'), sk: 'S' };
    const created = await store().update(key, [{ set: 'producerId', add: 1, initial: 1000 }], {
      returnValues: 'allNew',
    });
    expect(created).toEqual({ ...key, producerId: 1001 });
    const next = await store().update(
      key,
      [
        { set: 'producerId', add: 1, initial: 1000 },
        { set: 'epoch', add: 1, from: 'epochBase', initial: -1 },
      ],
      { returnValues: 'allNew' },
    );
    expect(next).toEqual({ ...key, producerId: 1002, epoch: 0 });
  });

  it('sets a value only where it is missing (ifNotExists)', async () => {
    const key = { pk: pk('ifnotexists'), sk: 'S' };
    await store().put({ ...key, kept: 'old' });
    const after = await store().update(
      key,
      [
        { set: 'kept', ifNotExists: 'new' },
        { set: 'added', ifNotExists: 'fresh' },
      ],
      { returnValues: 'allNew' },
    );
    expect(after).toEqual({ ...key, kept: 'old', added: 'fresh' });
  });

  it('removes the head of a list, truncating at its length', async () => {
    const key = { pk: pk('removehead'), sk: 'S' };
    await store().put({ ...key, queue: ['a', 'b', 'c', 'd', 'e'], other: [1, 2] });
    expect(
      await store().update(key, [{ removeHead: 'queue', count: 2 }], { returnValues: 'allNew' }),
    ).toEqual({
      ...key,
      queue: ['c', 'd', 'e'],
      other: [1, 2],
    });
    const emptied = await store().update(key, [{ removeHead: 'other', count: 5 }], {
      returnValues: 'allNew',
    });
    expect(emptied?.other).toEqual([]);
  });

  it('reads, writes, removes and conditions on nested map paths', async () => {
    const key = { pk: pk('nested'), sk: 'S' };
    await store().put({ ...key, producers: { '42': { epoch: 3, seq: 10 }, '7': { epoch: 1, seq: 0 } } });
    const after = await store().update(
      key,
      [
        { set: ['producers', '42', 'seq'], add: 5 },
        { set: ['producers', '99'], value: { epoch: 0, seq: 1 } },
        { remove: ['producers', '7'] },
      ],
      { condition: { path: ['producers', '42', 'epoch'], op: '=', value: 3 }, returnValues: 'allNew' },
    );
    expect(after).toEqual({ ...key, producers: { '42': { epoch: 3, seq: 15 }, '99': { epoch: 0, seq: 1 } } });
    const error = await conditionFailure(
      store().update(key, [{ set: ['producers', '42', 'seq'], value: 0 }], {
        condition: { path: ['producers', '42', 'epoch'], op: '>', value: 3 },
      }),
    );
    expect(error.current).toEqual(after);
  });

  it('evaluates comparisons, attribute-to-attribute conditions and contains', async () => {
    const key = { pk: pk('conditions'), sk: 'S' };
    await store().put({ ...key, n: 5, s: 'banana', members: ['m1', 'm2'], hw: 4, next: 9 });
    const holds = async (condition: Parameters<MetadataStore['put']>[1]): Promise<boolean> =>
      store()
        .update(key, [{ set: 'touched', value: true }], condition)
        .then(
          () => true,
          (error: unknown) => {
            if (error instanceof ConditionFailedError) return false;
            throw error;
          },
        );
    const outcomes = {
      eq: await holds({ condition: { path: 'n', op: '=', value: 5 } }),
      ne: await holds({ condition: { path: 'n', op: '<>', value: 5 } }),
      lt: await holds({ condition: { path: 'n', op: '<', value: 6 } }),
      le: await holds({ condition: { path: 'n', op: '<=', value: 4 } }),
      gt: await holds({ condition: { path: 's', op: '>', value: 'apple' } }),
      ge: await holds({ condition: { path: 's', op: '>=', value: 'cherry' } }),
      other: await holds({ condition: { path: 'hw', op: '<=', otherPath: 'next' } }),
      otherFalse: await holds({ condition: { path: 'next', op: '<', otherPath: 'hw' } }),
      listContains: await holds({ condition: { path: 'members', contains: 'm2' } }),
      listLacks: await holds({ condition: { path: 'members', contains: 'm3' } }),
      stringContains: await holds({ condition: { path: 's', contains: 'nan' } }),
      and: await holds({ condition: { and: [{ exists: 'n' }, { notExists: 'zzz' }] } }),
      or: await holds({ condition: { or: [{ exists: 'zzz' }, { path: 'n', op: '=', value: 6 }] } }),
      not: await holds({ condition: { not: { exists: 'zzz' } } }),
      missingNotEqual: await holds({ condition: { path: 'zzz', op: '<>', value: 1 } }),
      missingEqual: await holds({ condition: { path: 'zzz', op: '=', value: 1 } }),
      // Whole lists compare element by element, in order (compaction conditions index pages on this).
      listEqual: await holds({ condition: { path: 'members', op: '=', value: ['m1', 'm2'] } }),
      listReordered: await holds({ condition: { path: 'members', op: '=', value: ['m2', 'm1'] } }),
      listShorter: await holds({ condition: { path: 'members', op: '=', value: ['m1'] } }),
    };
    expect(outcomes).toEqual({
      eq: true,
      ne: false,
      lt: true,
      le: false,
      gt: true,
      ge: false,
      other: true,
      otherFalse: false,
      listContains: true,
      listLacks: false,
      stringContains: true,
      and: true,
      or: false,
      not: true,
      missingNotEqual: true,
      missingEqual: false,
      listEqual: true,
      listReordered: false,
      listShorter: false,
    });
  });

  it('refuses an unknown comparison operator wherever it sits, before reading the item', async () => {
    const key = { pk: pk('badop'), sk: 'S' };
    const missing = { pk: pk('badop'), sk: 'MISSING' };
    await store().put({ ...key, n: 5 });
    // A typo for '>=': no store may take it for some other comparison, nor skip it.
    const typo = { path: 'n', op: '=>', value: 5 } as unknown as Condition;
    const refused = async (write: Promise<unknown>) => {
      const error = await failure(write);
      expect(error).toBeInstanceOf(SluiceError);
      expect(error).not.toBeInstanceOf(ConditionFailedError);
      expect(error).not.toBeInstanceOf(TransactionCanceledError);
    };
    const set = [{ set: 'n', value: 6 }] as const;
    await refused(store().update(key, set, { condition: typo }));
    // Behind an AND that already fails, an OR that already holds, and on an item that does not exist.
    await refused(store().update(key, set, { condition: { and: [{ notExists: 'pk' }, typo] } }));
    await refused(store().update(key, set, { condition: { or: [{ exists: 'pk' }, typo] } }));
    await refused(store().update(missing, set, { condition: { not: typo } }));
    await refused(store().put({ ...key, n: 7 }, { condition: typo }));
    await refused(store().delete(key, { condition: typo }));
    await refused(
      store().transact([
        { check: key, condition: { notExists: 'pk' } },
        { update: missing, actions: set, condition: typo },
      ]),
    );
    expect(await store().get(key, { consistent: true })).toEqual({ ...key, n: 5 });
    expect(await store().get(missing, { consistent: true })).toBeUndefined();
  });

  it('fails conditions on missing items with no current item and writes nothing', async () => {
    const key = { pk: pk('missing'), sk: 'S' };
    expect(
      (await conditionFailure(store().put({ ...key, v: 1 }, { condition: { exists: 'pk' } }))).current,
    ).toBeUndefined();
    const update = store().update(key, [{ set: 'v', value: 1 }], {
      condition: { path: 'v', op: '=', value: 0 },
    });
    expect((await conditionFailure(update)).current).toBeUndefined();
    expect(
      (await conditionFailure(store().delete(key, { condition: { exists: 'pk' } }))).current,
    ).toBeUndefined();
    expect(await store().get(key, { consistent: true })).toBeUndefined();
    await store().update(key, [{ set: 'v', value: 1 }], { condition: { notExists: 'pk' } });
    expect(await store().get(key, { consistent: true })).toEqual({ ...key, v: 1 });
  });

  it('rejects an add whose operand is missing, as a SluiceError that changes nothing', async () => {
    const key = { pk: pk('badadd'), sk: 'S' };
    await store().put({ ...key, v: 1 });
    const error = await failure(store().update(key, [{ set: 'count', add: 1 }]));
    expect(error).toBeInstanceOf(SluiceError);
    expect(error).not.toBeInstanceOf(ConditionFailedError);
    expect(await store().get(key, { consistent: true })).toEqual({ ...key, v: 1 });
  });

  it('deletes unconditionally, idempotently and under a condition', async () => {
    const key = { pk: pk('delete'), sk: 'S' };
    await store().put({ ...key, owner: 'a' });
    const error = await conditionFailure(
      store().delete(key, { condition: { path: 'owner', op: '=', value: 'b' } }),
    );
    expect(error.current).toEqual({ ...key, owner: 'a' });
    expect(await store().get(key, { consistent: true })).toEqual({ ...key, owner: 'a' });
    await store().delete(key, { condition: { path: 'owner', op: '=', value: 'a' } });
    expect(await store().get(key, { consistent: true })).toBeUndefined();
    await store().delete(key);
    expect(await store().get(key, { consistent: true })).toBeUndefined();
  });

  it('queries a partition by sort key ranges, in both orders, with limits and cursors', async () => {
    const partition = pk('query');
    const sk = (n: number): string => `B#${String(n).padStart(5, '0')}`;
    await store().batchWrite({
      puts: [
        ...Array.from({ length: 120 }, (_, n) => ({ pk: partition, sk: sk(n), n })),
        { pk: partition, sk: 'A#before', n: -1 },
        { pk: partition, sk: 'C#after', n: -1 },
        { pk: pk('query-neighbour'), sk: sk(0), n: -1 },
      ],
    });
    const all = Array.from({ length: 120 }, (_, n) => sk(n));
    const q = async (input: Omit<QueryInput, 'pk'>) =>
      queryAll(store(), { pk: partition, consistent: true, ...input });

    expect(sks((await q({ sk: { beginsWith: 'B#' } })).items)).toEqual(all);
    expect(sks((await q({})).items)).toEqual(['A#before', ...all, 'C#after']);
    expect(sks((await q({ sk: { between: [sk(10), sk(19)] } })).items)).toEqual(all.slice(10, 20));
    expect(sks((await q({ sk: { gte: sk(115) } })).items)).toEqual([...all.slice(115), 'C#after']);
    expect(sks((await q({ sk: { lte: sk(2) } })).items)).toEqual(['A#before', ...all.slice(0, 3)]);
    expect(sks((await q({ sk: { gt: sk(118) } })).items)).toEqual([sk(119), 'C#after']);
    expect(sks((await q({ sk: { lt: sk(1) } })).items)).toEqual(['A#before', sk(0)]);
    expect(sks((await q({ sk: { beginsWith: 'B#' }, reverse: true })).items)).toEqual([...all].reverse());

    const first = await store().query({ pk: partition, sk: { lte: sk(999) }, reverse: true, limit: 1 });
    expect(sks(first.items)).toEqual([sk(119)]);
    expect(first.cursor).toBeDefined();

    const paged = await q({ sk: { beginsWith: 'B#' }, limit: 25 });
    expect(sks(paged.items)).toEqual(all);
    expect(paged.pages.slice(0, 5).map((p) => p.length)).toEqual([25, 25, 25, 25, 20]);
    const pagedBack = await q({ sk: { between: [sk(50), sk(99)] }, limit: 7, reverse: true });
    expect(sks(pagedBack.items)).toEqual(all.slice(50, 100).reverse());
    expect(pagedBack.pages.every((p) => p.length <= 7)).toBe(true);
  });

  it('orders sort keys by their UTF-8 bytes (code points), as DynamoDB does, not by UTF-16 units', async () => {
    // U+E000 is EE 80 80 in UTF-8 and U+1F600 (😀) F0 9F 98 80: DynamoDB puts U+E000 first, while
    // JavaScript's < compares the surrogate D83D with E000 and puts 😀 first. Every other pair of
    // characters orders the same both ways.
    const partition = pk('utf8-order');
    const keys = ['k\u{1F600}', 'k\uE000', 'k\uFFFF', 'k\uD7FF', 'kz', 'k\u{10000}'];
    await store().batchWrite({ puts: keys.map((sk) => ({ pk: partition, sk })) });
    const inOrder = ['kz', 'k\uD7FF', 'k\uE000', 'k\uFFFF', 'k\u{10000}', 'k\u{1F600}'];
    const q = async (input: Omit<QueryInput, 'pk'>) =>
      sks((await queryAll(store(), { pk: partition, consistent: true, ...input })).items);
    expect(await q({})).toEqual(inOrder);
    expect(await q({ reverse: true })).toEqual([...inOrder].reverse());
    expect(await q({ sk: { gt: 'k\uE000' } })).toEqual(inOrder.slice(3));
    expect(await q({ sk: { lt: 'k\u{10000}' } })).toEqual(inOrder.slice(0, 4));
    expect(await q({ sk: { between: ['k\uFFFF', 'k\u{1F600}'] } })).toEqual(inOrder.slice(3));
    expect(await q({ sk: { gte: 'k\u{10000}' }, limit: 1 })).toEqual(inOrder.slice(4));
    expect(await q({ sk: { lte: 'k\uFFFF' }, limit: 1, reverse: true })).toEqual(
      inOrder.slice(0, 4).reverse(),
    );
  });

  it('pages at 1 MB even without a limit', async () => {
    const partition = pk('bigpage');
    const blob = 'x'.repeat(100 * 1024);
    const count = 25;
    await store().batchWrite({
      puts: Array.from({ length: count }, (_, n) => ({
        pk: partition,
        sk: `I#${String(n).padStart(3, '0')}`,
        blob,
      })),
    });
    const { pages, items } = await queryAll(store(), { pk: partition, consistent: true });
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages[0]?.length).toBeGreaterThan(5);
    expect(pages[0]?.length).toBeLessThan(count);
    expect(sks(items)).toEqual(Array.from({ length: count }, (_, n) => `I#${String(n).padStart(3, '0')}`));
    expect(items.every((i) => i.blob === blob)).toBe(true);
  });

  it('applies a transaction all or nothing and says which operation failed', async () => {
    const partition = pk('tx');
    const counter = { pk: partition, sk: 'COUNTER' };
    const doomed = { pk: partition, sk: 'DOOMED' };
    const guard = { pk: partition, sk: 'GUARD' };
    await store().batchWrite({ puts: [{ ...counter, v: 1 }, { ...doomed }, { ...guard, epoch: 2 }] });
    const ops = (epoch: number) =>
      [
        { put: { pk: partition, sk: 'NEW', x: 1 }, condition: { notExists: 'pk' } },
        { update: counter, actions: [{ set: 'v', add: 1 }] },
        { delete: doomed },
        { check: guard, condition: { path: 'epoch', op: '=', value: epoch } },
      ] as const;

    const error = await failure(store().transact(ops(1)));
    expect(error).toBeInstanceOf(TransactionCanceledError);
    expect((error as TransactionCanceledError).reasons).toEqual([
      'None',
      'None',
      'None',
      'ConditionalCheckFailed',
    ]);
    expect((error as TransactionCanceledError).conditionFailed).toBe(true);
    const state = async () => sks((await queryAll(store(), { pk: partition, consistent: true })).items);
    expect(await state()).toEqual(['COUNTER', 'DOOMED', 'GUARD']);
    expect((await store().get(counter, { consistent: true }))?.v).toBe(1);

    await store().transact(ops(2));
    expect(await state()).toEqual(['COUNTER', 'GUARD', 'NEW']);
    expect((await store().get(counter, { consistent: true }))?.v).toBe(2);

    const again = await failure(store().transact(ops(2)));
    expect((again as TransactionCanceledError).reasons).toEqual([
      'ConditionalCheckFailed',
      'None',
      'None',
      'None',
    ]);
    expect((await store().get(counter, { consistent: true }))?.v).toBe(2);
  });

  it('batch-writes 60 puts and deletes in one call', async () => {
    const partition = pk('batch');
    const key = (n: number) => ({ pk: partition, sk: `K#${String(n).padStart(3, '0')}` });
    await store().batchWrite({ puts: Array.from({ length: 60 }, (_, n) => ({ ...key(n), n })) });
    const afterPuts = (await queryAll(store(), { pk: partition, consistent: true })).items;
    expect(afterPuts.map((i) => i.n)).toEqual(Array.from({ length: 60 }, (_, n) => n));
    await store().batchWrite({
      puts: Array.from({ length: 5 }, (_, n) => ({ ...key(100 + n), n: 100 + n })),
      deletes: Array.from({ length: 30 }, (_, n) => key(n * 2)),
    });
    const after = (await queryAll(store(), { pk: partition, consistent: true })).items;
    const expected = [...Array.from({ length: 30 }, (_, n) => n * 2 + 1), 100, 101, 102, 103, 104];
    expect(after.map((i) => i.n)).toEqual(expected);

    // Puts apply in order, then deletes, even when one call names a key more than once.
    await store().batchWrite({
      puts: [
        { ...key(200), n: 1 },
        { ...key(200), n: 2 },
        { ...key(201), n: 3 },
      ],
      deletes: [key(201)],
    });
    expect(await store().get(key(200), { consistent: true })).toEqual({ ...key(200), n: 2 });
    expect(await store().get(key(201), { consistent: true })).toBeUndefined();
  });
};
