/**
 * Idempotent producers' history items on their own (lib/core/log/producer-history.ts): what one pass
 * writes per producer epoch, and how a retried batch's offsets are found: newest pass first, stopping
 * at the first pass that reaches down to its sequence, in pages of 4, then 32, 256 and 1,000 items.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import type { TailEntry } from '../../../../lib/core/log/partition-state.js';
import { findMaterializedBatch, producerHistoryItems } from '../../../../lib/core/log/producer-history.js';
import type { MetadataStore, QueryInput } from '../../../../lib/ports/metadata-store.js';

const TOPIC = 'topic';
const entry = (n: number, producer?: [id: number, epoch: number, first: number], t = 1): TailEntry => ({
  objectKey: dataObjectKey(TOPIC, 'x'),
  position: 0,
  sizeInBytes: 10,
  offsetCount: n,
  recordCount: n,
  maxTimestamp: t,
  firstTimestamp: 1,
  ...(producer
    ? {
        producerId: producer[0],
        producerEpoch: producer[1],
        baseSequence: producer[2],
        lastSequence: producer[2] + n - 1,
      }
    : {}),
});

describe('the history items of a pass', () => {
  it('list each producer epoch’s batches of the pass, keyed by where the pass ends', () => {
    const moved = [
      { baseOffset: 10, entry: entry(3, [7, 0, 0], 1_010) },
      { baseOffset: 13, entry: entry(1, undefined, 1_013) },
      { baseOffset: 14, entry: entry(2, [8, 2, 5], 1_014) },
      { baseOffset: 16, entry: entry(2, [7, 0, 3], 1_016) },
      { baseOffset: 18, entry: entry(1, [7, 1, 0], 1_018) },
    ];
    // `t`: each batch's largest timestamp, in the order of `b`.
    expect(producerHistoryItems(TOPIC, 0, moved, 19, 12_345)).toEqual([
      {
        ...keys.producerBatches(TOPIC, 0, 7, 0, 19),
        b: ['0|2|10', '3|4|16'],
        t: [1_010, 1_016],
        expiresAt: 12_345,
      },
      { ...keys.producerBatches(TOPIC, 0, 8, 2, 19), b: ['5|6|14'], t: [1_014], expiresAt: 12_345 },
      { ...keys.producerBatches(TOPIC, 0, 7, 1, 19), b: ['0|0|18'], t: [1_018], expiresAt: 12_345 },
    ]);
    expect(producerHistoryItems(TOPIC, 0, [{ baseOffset: 0, entry: entry(1) }], 1, 1)).toEqual([]);
  });
});

describe('finding a materialized batch', () => {
  /**
   * Passes of producer 7 epoch 0, each of `perPass` one-sequence batches, the last pass newest; the
   * batch of sequence s has offset 100 + s and largest timestamp 5,000 + s.
   */
  const history = async (passes: number, perPass = 2) => {
    const inner = new MemoryMetadataStore();
    let seq = 0;
    for (let pass = 0; pass < passes; pass++) {
      const moved = Array.from({ length: perPass }, () => ({
        baseOffset: 100 + seq,
        entry: entry(1, [7, 0, seq], 5_000 + seq++),
      }));
      for (const item of producerHistoryItems(TOPIC, 0, moved, 100 + seq, 1)) await inner.put(item);
    }
    const limits: number[] = [];
    const store = Object.create(inner, {
      query: { value: (input: QueryInput) => (limits.push(input.limit!), inner.query(input)) },
    }) as MetadataStore;
    const find = (firstSequence: number, lastSequence = firstSequence, producerEpoch = 0) =>
      findMaterializedBatch(store, TOPIC, 0, { producerId: 7, producerEpoch, firstSequence, lastSequence });
    return { inner, store, limits, find };
  };

  it('answers the batch with exactly these sequences and its offset', async () => {
    const h = await history(3);
    expect(await h.find(0)).toEqual({
      firstSequence: 0,
      lastSequence: 0,
      baseOffset: 100,
      maxTimestamp: 5_000,
    });
    expect(await h.find(3)).toEqual({
      firstSequence: 3,
      lastSequence: 3,
      baseOffset: 103,
      maxTimestamp: 5_003,
    });
    expect(await h.find(5)).toEqual({
      firstSequence: 5,
      lastSequence: 5,
      baseOffset: 105,
      maxTimestamp: 5_005,
    });
    // The same first sequence with another last one, a sequence never sent, another epoch: none.
    expect(await h.find(3, 4)).toBeUndefined();
    expect(await h.find(6)).toBeUndefined();
    expect(await h.find(3, 3, 1)).toBeUndefined();
  });

  it('looks no further back than the newest pass reaching down to the sequence', async () => {
    const h = await history(2);
    // An older incarnation's pass (expired, restarted at 0 under the same epoch) is shadowed: the newest
    // pass starting at or below sequence 1 is the one that holds it if any does.
    await h.inner.put({
      ...keys.producerBatches(TOPIC, 0, 7, 0, 50),
      b: ['1|1|50'],
      t: [5_050],
      expiresAt: 1,
    });
    expect(await h.find(1)).toEqual({
      firstSequence: 1,
      lastSequence: 1,
      baseOffset: 101,
      maxTimestamp: 5_001,
    });
    // A newer pass starting below the sequence that does not hold it ends the search.
    await h.inner.put({
      ...keys.producerBatches(TOPIC, 0, 7, 0, 900),
      b: ['0|0|800'],
      t: [8_000],
      expiresAt: 1,
    });
    expect(await h.find(1)).toBeUndefined();
    expect(await h.find(0)).toEqual({
      firstSequence: 0,
      lastSequence: 0,
      baseOffset: 800,
      maxTimestamp: 8_000,
    });
  });

  it('answers each batch with the time at its own place in `t`', async () => {
    const h = await history(0);
    await h.inner.put({
      ...keys.producerBatches(TOPIC, 0, 7, 0, 30),
      b: ['0|1|20', '2|2|25', '3|4|27'],
      t: [9_001, 9_002, 9_003],
      expiresAt: 1,
    });
    expect((await h.find(2))?.maxTimestamp).toBe(9_002);
    expect((await h.find(3, 4))?.maxTimestamp).toBe(9_003);
    expect((await h.find(0, 1))?.maxTimestamp).toBe(9_001);
  });

  it('passes over items without a batch list', async () => {
    const h = await history(1);
    await h.inner.put({ ...keys.producerBatches(TOPIC, 0, 7, 0, 999), expiresAt: 1 });
    await h.inner.put({ ...keys.producerBatches(TOPIC, 0, 7, 0, 998), b: [], expiresAt: 1 });
    expect(await h.find(1)).toEqual({
      firstSequence: 1,
      lastSequence: 1,
      baseOffset: 101,
      maxTimestamp: 5_001,
    });
  });

  it('reads 4 items first, then 8 times more per page up to 1,000', async () => {
    const h = await history(400, 1);
    expect(await h.find(0)).toEqual({
      firstSequence: 0,
      lastSequence: 0,
      baseOffset: 100,
      maxTimestamp: 5_000,
    });
    expect(h.limits).toEqual([4, 32, 256, 1000]);
    h.limits.length = 0;
    expect(await h.find(398)).toEqual({
      firstSequence: 398,
      lastSequence: 398,
      baseOffset: 498,
      maxTimestamp: 5_398,
    });
    expect(h.limits).toEqual([4]);
    h.limits.length = 0;
    expect(await h.find(395)).toEqual({
      firstSequence: 395,
      lastSequence: 395,
      baseOffset: 495,
      maxTimestamp: 5_395,
    });
    expect(h.limits).toEqual([4, 32]);
  });
});
