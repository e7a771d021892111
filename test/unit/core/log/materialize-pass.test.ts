/**
 * One materialization pass on a hand-built partition item (lib/core/log/materialize.ts): exactly which
 * tail entries leave (committed ones, 64 at most), the items written for them, the trim, and the
 * conditions that make a pass that raced another one, or a commit, change nothing.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import { pageEntries, pageItem } from '../../../../lib/core/log/batch-index.js';
import { IDEMPOTENCY_WINDOW_MS, materializeTail } from '../../../../lib/core/log/materialize.js';
import type { PartitionState, TailEntry } from '../../../../lib/core/log/partition-state.js';
import {
  decodePartitionState,
  encodePartitionItem,
  encodeTailEntry,
  initialPartitionState,
  producerAttr,
  stateAttr,
} from '../../../../lib/core/log/partition-codec.js';
import type { MetadataStore } from '../../../../lib/ports/metadata-store.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import { InterceptedMetadataStore } from '../../../support/seams.js';

const TOPIC = 'topic';
const NOW = 1_700_000_000_000;
const EXPIRY = 86_400_000;
const entry = (t: number, extra: Partial<TailEntry> = {}): TailEntry => ({
  objectKey: dataObjectKey(TOPIC, `o${t}`),
  position: 0,
  sizeInBytes: 10,
  offsetCount: 2,
  recordCount: 2,
  maxTimestamp: t,
  firstTimestamp: t - 1,
  ...extra,
});

/** A partition item with `tail` from offset 100, the high watermark at `hw`. */
const partition = async (tail: TailEntry[], hw: number, extra: Partial<PartitionState> = {}) => {
  const store = new MemoryMetadataStore();
  const key = keys.partitionState(TOPIC, 0);
  await store.put(
    encodePartitionItem(TOPIC, {
      ...decodePartitionState(initialPartitionState(TOPIC, 't', 0, ['s0'])),
      tailBase: 100,
      logStartOffset: 100,
      nextOffset: 100 + 2 * tail.length,
      highWatermark: hw,
      maxTimestampSoFar: 5,
      tail,
      ...extra,
    }),
  );
  const state = async () => decodePartitionState((await store.get(key))!);
  const items = (prefix: string) =>
    store
      .dump()
      .filter((i) => i.pk === key.pk && i.sk.startsWith(prefix))
      .sort((a, b) => (a.sk < b.sk ? -1 : 1));
  const pass = (s: MetadataStore = store, now = NOW, maxProducers?: number) =>
    materializeTail(s, TOPIC, 0, {
      now,
      producerExpirationMs: EXPIRY,
      ...(maxProducers ? { maxProducers } : {}),
    });
  return { store, key, state, items, pass };
};

describe('a materialization pass', () => {
  it('moves the committed entries only: those wholly below the high watermark', async () => {
    const tail = [entry(10), entry(20), entry(30)];
    // Offsets 100-101, 102-103, 104-105; the high watermark inside the third.
    const p = await partition(tail, 105);
    const calls: string[] = [];
    const counted = new InterceptedMetadataStore(p.store, async (call, run) => (calls.push(call.op), run()));
    expect(await p.pass(counted)).toBe(2);
    // The item read, the page and the time mark put, the trim: no batch write without keys or producers.
    expect(calls.sort()).toEqual(['get', 'put', 'put', 'update']);
    expect(
      p.items('B#').map((page) => [page.sk, pageEntries(page).map((x) => [x.baseOffset, x.entry])]),
    ).toEqual([
      [
        keys.batch(TOPIC, 0, 100).sk,
        [
          [100, tail[0]],
          [102, tail[1]],
        ],
      ],
    ]);
    const after = await p.state();
    expect([after.tailBase, after.tail, after.maxTimestampSoFar, after.logStartOffset]).toEqual([
      104,
      [tail[2]],
      20,
      100,
    ]);
    expect(p.items('T#')).toEqual([{ ...keys.timeIndex(TOPIC, 0, 20, 100), o: 100, p: 5 }]);
    // At the high watermark exactly, the last one too.
    const q = await partition(tail, 106);
    expect(await q.pass()).toBe(3);
    expect((await q.state()).tail).toEqual([]);
    // Nothing committed, nothing to expire: nothing written.
    const r = await partition(tail, 101);
    const reads: string[] = [];
    const quiet = new InterceptedMetadataStore(r.store, async (call, run) => (reads.push(call.op), run()));
    expect(await r.pass(quiet)).toBe(0);
    expect(reads).toEqual(['get']);
    expect(r.store.dump().map((i) => i.sk)).toEqual(['STATE']);
  });

  it('moves at most 64 entries a pass', async () => {
    const tail = Array.from({ length: 70 }, (_, i) => entry(10 + i));
    const p = await partition(tail, 240);
    expect(await p.pass()).toBe(64);
    expect((await p.state()).tailBase).toBe(228);
    expect(await p.pass()).toBe(6);
    expect(p.items('B#').map((page) => [page.sk, pageEntries(page).length])).toEqual([
      [keys.batch(TOPIC, 0, 100).sk, 64],
      [keys.batch(TOPIC, 0, 228).sk, 6],
    ]);
  });

  it('writes each Idempotency-Key for the window and each producer epoch’s history until the producer expires', async () => {
    const mark = 'HASH.FP.loyw3v28';
    const tail = [
      entry(10, { idempotencyMark: mark }),
      entry(20, { producerId: 3, producerEpoch: 1, baseSequence: 0, lastSequence: 1 }),
      entry(30),
    ];
    const p = await partition(tail, 106, {
      idempotencyKeys: ['HASH'],
      idempotencyKeysGeneration: 4,
      producers: { '3': { producerEpoch: 1, lastSequence: 1, lastTimestamp: NOW } },
    });
    expect(await p.pass()).toBe(3);
    expect(p.items('K#')).toEqual([
      {
        ...keys.idempotencyKey(TOPIC, 0, 'HASH'),
        o: 100,
        n: 2,
        t: 10,
        m: mark,
        expiresAt: Math.ceil((NOW + IDEMPOTENCY_WINDOW_MS) / 1000),
      },
    ]);
    expect(IDEMPOTENCY_WINDOW_MS).toBe(900_000);
    expect(p.items('S#')).toEqual([
      {
        ...keys.producerBatches(TOPIC, 0, 3, 1, 106),
        b: ['0|1|102'],
        t: [20],
        expiresAt: Math.ceil((NOW + EXPIRY) / 1000),
      },
    ]);
    const after = await p.state();
    // The key's hash stays in the commit condition's list until the next pass, whose generation moves
    // on now; the producer stays.
    expect([
      after.idempotencyKeys,
      after.idempotencyKeysMoved,
      after.idempotencyKeysGeneration,
      after.producers,
    ]).toEqual([['HASH'], 1, 5, { '3': { producerEpoch: 1, lastSequence: 1, lastTimestamp: NOW } }]);
  });

  it('removes the keys a pass moved at the next pass, and only those', async () => {
    const tail = [
      entry(10, { idempotencyMark: 'A.FP.1' }),
      entry(20),
      entry(30, { idempotencyMark: 'B.FP.1' }),
    ];
    const p = await partition(tail, 106, {
      idempotencyKeys: ['OLD', 'A', 'B'],
      idempotencyKeysMoved: 1,
      idempotencyKeysGeneration: 7,
    });
    expect(await p.pass()).toBe(3);
    const after = await p.state();
    expect([after.idempotencyKeys, after.idempotencyKeysMoved, after.idempotencyKeysGeneration]).toEqual([
      ['A', 'B'],
      2,
      8,
    ]);
    const q = await partition([entry(40)], 102, {
      idempotencyKeys: ['A', 'B', 'C'],
      idempotencyKeysMoved: 2,
      idempotencyKeysGeneration: 8,
    });
    expect(await q.pass()).toBe(1);
    const later = await q.state();
    expect([later.idempotencyKeys, later.idempotencyKeysMoved, later.idempotencyKeysGeneration]).toEqual([
      ['C'],
      0,
      9,
    ]);
  });

  it('drops producers idle past producer.id.expiration.ms, also with nothing to move', async () => {
    const pr = {
      '1': { producerEpoch: 0, lastSequence: 4, lastTimestamp: NOW - EXPIRY - 1 },
      '2': { producerEpoch: 0, lastSequence: 9, lastTimestamp: NOW - EXPIRY },
      '3': { producerEpoch: 0, lastSequence: 0, lastTimestamp: NOW - 1 },
    };
    const p = await partition([entry(10)], 100, { producers: pr });
    expect(await p.pass()).toBe(0);
    const after = await p.state();
    expect([after.producers, after.tail.length, after.tailBase]).toEqual([
      { '2': pr['2'], '3': pr['3'] },
      1,
      100,
    ]);
    expect(p.items('B#')).toEqual([]);
    // Beyond maxProducers, the least recently active go too.
    const q = await partition([], 100, { producers: pr });
    await q.pass(q.store, NOW, 1);
    expect((await q.state()).producers).toEqual({ '3': pr['3'] });
  });

  it('trims nothing when another pass trimmed first, or a producer it expires wrote meanwhile', async () => {
    const racing = async (
      change: (p: Awaited<ReturnType<typeof partition>>) => Promise<void>,
      extra: Partial<PartitionState> = {},
    ) => {
      const p = await partition([entry(10), entry(20)], 104, extra);
      const store = new InterceptedMetadataStore(p.store, async (call, run) => {
        if (call.op === 'update') await change(p);
        return run();
      });
      expect(await p.pass(store)).toBe(0);
      return p.state();
    };
    const trimmed = await racing((p) =>
      p.store.update(p.key, [{ set: 'tailBase', value: 104 }]).then(() => undefined),
    );
    expect(trimmed.tail).toHaveLength(2);
    const rekeyed = await racing((p) =>
      p.store.update(p.key, [{ set: stateAttr.idempotencyKeysGeneration, value: 1 }]).then(() => undefined),
    );
    expect(rekeyed.tail).toHaveLength(2);
    const idle = { '9': { producerEpoch: 0, lastSequence: 0, lastTimestamp: NOW - EXPIRY - 1 } };
    const woke = await racing(
      (p) =>
        p.store
          .update(p.key, [{ set: [stateAttr.producers, '9', producerAttr.lastTimestamp], value: NOW }])
          .then(() => undefined),
      { producers: idle },
    );
    expect([woke.tail.length, woke.producers['9']?.lastTimestamp]).toEqual([2, NOW]);
    // A commit that appended meanwhile does not stop the trim: its entry stays at the end.
    const appended = await partition([entry(10), entry(20)], 104);
    const store = new InterceptedMetadataStore(appended.store, async (call, run) => {
      if (call.op === 'update' && call.actions?.some((a) => 'removeHead' in a))
        await appended.store.update(appended.key, [
          { set: 'tail', append: [encodeTailEntry(entry(30), TOPIC)] },
          { set: 'nextOffset', value: 106 },
        ]);
      return run();
    });
    expect(await appended.pass(store)).toBe(2);
    expect((await appended.state()).tail).toEqual([entry(30)]);
  });

  it('leaves a time mark already there as it is, and passes a failed mark write on', async () => {
    const p = await partition([entry(10), entry(20)], 104);
    // A compaction's rebuild put this mark first (a lower timestamp at the same key is its business).
    const rebuilt = { ...keys.timeIndex(TOPIC, 0, 20, 100), o: 100, p: 3 };
    await p.store.put(rebuilt);
    expect(await p.pass()).toBe(2);
    expect(p.items('T#')).toEqual([rebuilt]);

    const q = await partition([entry(10), entry(20)], 104);
    const failing = new InterceptedMetadataStore(q.store, async (call, run) => {
      if (call.op === 'put' && call.key?.sk.startsWith('T#')) throw new Error('throttled');
      return run();
    });
    await expect(q.pass(failing)).rejects.toThrow(new Error('throttled'));
    expect((await q.state()).tailBase).toBe(100);
  });

  it('refuses to follow a page that ends inside one of its tail entries', async () => {
    const p = await partition([entry(10), entry(20)], 104);
    // A page at the tail's base that claims offset 100 alone: the tail's entry spans 100-101.
    await p.store.put(pageItem(TOPIC, 0, 100, [{ ...entry(10), offsetCount: 1 }]));
    await expect(p.pass()).rejects.toThrow(
      new Error(`batch index page ${keys.batch(TOPIC, 0, 100).sk} ends at 101, inside a tail entry`),
    );
    expect((await p.state()).tailBase).toBe(100);
  });

  it('passes a failing store on, and reads nothing for a partition that does not exist', async () => {
    const p = await partition([entry(10)], 102);
    const failing = new InterceptedMetadataStore(p.store, async (call, run) => {
      if (call.op === 'update') throw new Error('throttled');
      return run();
    });
    await expect(p.pass(failing)).rejects.toThrow(new Error('throttled'));
    expect((await p.state()).tail).toHaveLength(1);
    expect(await materializeTail(p.store, TOPIC, 5, { now: NOW, producerExpirationMs: EXPIRY })).toBe(0);
  });
});

describe('a materialization pass, exactly', () => {
  /** The actions of the pass's trim, and the pass's answer. */
  const trimOf = async (p: Awaited<ReturnType<typeof partition>>) => {
    const updates: (readonly unknown[])[] = [];
    const seen = new InterceptedMetadataStore(p.store, async (call, run) => {
      if (call.op === 'update') updates.push(call.actions ?? []);
      return run();
    });
    const moved = await p.pass(seen);
    return { moved, updates };
  };
  const trim = (count: number, tailBase: number, max: number) => [
    { removeHead: 'tail', count },
    { set: 'tailBase', value: tailBase },
    { set: stateAttr.maxTimestampSoFar, value: max },
  ];

  it('touches the Idempotency-Keys only when keys move or moved, and removes only what the last pass moved', async () => {
    // No keys before, none now: the generation stays (a keyed commit need not check again).
    const p = await partition([entry(10)], 102, { idempotencyKeysGeneration: 3 });
    expect(await trimOf(p)).toEqual({ moved: 1, updates: [trim(1, 102, 10)] });
    expect((await p.state()).idempotencyKeysGeneration).toBe(3);
    // A key moves, none moved before: no removal of 0 keys. It would change nothing, but the DynamoDB
    // adapter would still name `ik` in the request, and DynamoDB refuses an attribute name no expression uses.
    const q = await partition([entry(10, { idempotencyMark: 'A.FP.1' })], 102, {
      idempotencyKeys: ['A'],
      idempotencyKeysGeneration: 3,
    });
    expect(await trimOf(q)).toEqual({
      moved: 1,
      updates: [
        [
          ...trim(1, 102, 10),
          { set: stateAttr.idempotencyKeysMoved, value: 1 },
          { set: stateAttr.idempotencyKeysGeneration, add: 1 },
        ],
      ],
    });
  });

  it('forgets an expired producer’s last marked transaction only when it has one', async () => {
    const idle = { producerEpoch: 0, lastSequence: 0, lastTimestamp: NOW - EXPIRY - 1 };
    const p = await partition([], 100, {
      producers: { '1': idle, '2': idle },
      lastMarkedTransactions: { '2': 40, '3': 50 },
    });
    expect(await trimOf(p)).toEqual({
      moved: 0,
      updates: [
        [
          { remove: [stateAttr.producers, '1'] },
          { remove: [stateAttr.producers, '2'] },
          { remove: [stateAttr.lastMarkedTransactions, '2'] },
        ],
      ],
    });
    const after = await p.state();
    expect([after.producers, after.lastMarkedTransactions]).toEqual([{}, { '3': 50 }]);
  });

  it('stops at a retired page where its page would go: the pass is long stale', async () => {
    const p = await partition([entry(10), entry(20)], 104);
    await p.store.put({ ...keys.batch(TOPIC, 0, 100), end: 104, expiresAt: 1 });
    expect(await p.pass()).toBe(0);
    expect([(await p.state()).tailBase, p.items('T#')]).toEqual([100, [expect.anything()]]);
    expect((await p.state()).tail).toHaveLength(2);
  });

  it('refuses a page that ends inside its last entry, with the page named', async () => {
    const p = await partition([entry(10), entry(20)], 104);
    // 100-102: inside the second entry (102-103), past the base of every entry of the pass.
    await p.store.put(pageItem(TOPIC, 0, 100, [{ ...entry(10), offsetCount: 3 }]));
    await expect(p.pass()).rejects.toThrow(
      new Error(`batch index page ${keys.batch(TOPIC, 0, 100).sk} ends at 103, inside a tail entry`),
    );
  });

  it('writes the facts of the entries a longer racing page holds past the pass, and takes them', async () => {
    const tail = [entry(10), entry(20), entry(30, { idempotencyMark: 'C.FP.1' })];
    const p = await partition(tail, 104, { idempotencyKeys: ['C'] });
    // A materializer that saw the high watermark at 106 wrote the page for all three.
    await p.store.put(pageItem(TOPIC, 0, 100, tail));
    expect(await p.pass()).toBe(3);
    expect(p.items('K#').map((k) => [k.sk, k['o']])).toEqual([[keys.idempotencyKey(TOPIC, 0, 'C').sk, 104]]);
    const after = await p.state();
    expect([after.tailBase, after.maxTimestampSoFar, after.idempotencyKeysMoved]).toEqual([106, 30, 1]);
  });

  it('passes on a failed page write that names no page in its place', async () => {
    const p = await partition([entry(10)], 102);
    const failing = new InterceptedMetadataStore(p.store, async (call, run) => {
      if (call.op === 'put' && call.key?.sk.startsWith('B#')) throw new ConditionFailedError(undefined);
      return run();
    });
    await expect(p.pass(failing)).rejects.toBeInstanceOf(ConditionFailedError);
    expect((await p.state()).tailBase).toBe(100);
  });

  it('indexes an ABORT marker only with its producer and its transaction’s first offset', async () => {
    const p = await partition([], 100);
    const marker = (t: number, extra: Partial<TailEntry>) =>
      entry(t, { offsetCount: 1, recordCount: 1, ...extra });
    const tail = [
      marker(10, { controlType: 'COMMIT', producerId: 7, producerEpoch: 0, transactionFirstOffset: 90 }),
      marker(20, { controlType: 'ABORT', transactionFirstOffset: 91 }),
      marker(30, { controlType: 'ABORT', producerId: 7, producerEpoch: 0 }),
      entry(40, { producerId: 7, producerEpoch: 0, transactionFirstOffset: 92 }),
      marker(50, { controlType: 'ABORT', producerId: 7, producerEpoch: 0, transactionFirstOffset: 93 }),
    ];
    const state = { ...(await p.state()), tail, nextOffset: 106, highWatermark: 106 };
    expect(await materializeTail(p.store, TOPIC, 0, { now: NOW, producerExpirationMs: EXPIRY, state })).toBe(
      5,
    );
    expect(p.items('A#')).toEqual([{ ...keys.abortedTransaction(TOPIC, 0, 105), p: 7, f: 93 }]);
  });
});
