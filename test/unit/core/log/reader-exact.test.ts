import { describe, expect, it, vi } from 'vitest';
import { MemoryObjectStore } from '../../../../lib/adapters/memory/object-store.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { keys } from '../../../../lib/core/keys.js';
import type { LocatedEntry } from '../../../../lib/core/log/batch-index.js';
import { decodePartitionState } from '../../../../lib/core/log/partition-codec.js';
import { locateEntries, readBatches, storedDataError } from '../../../../lib/core/log/reader.js';
import { encodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import { memorySluice } from '../../../support/log-support.js';

const utf8 = (s: string) => new Uint8Array(Buffer.from(s));
const batchOf = (...values: string[]) =>
  encodeRecordBatch(values.map((v) => ({ key: null, value: utf8(v), timestamp: 1000 })));

/** Entries for `batches` laid end to end in object `o` from byte `from`, offsets from `baseOffset`. */
const laidOut = (o: string, batches: readonly Uint8Array[], from = 0, baseOffset = 0): LocatedEntry[] => {
  let b = from;
  let offset = baseOffset;
  return batches.map((bytes) => {
    const n = bytes.length === 0 ? 1 : new DataView(bytes.buffer, bytes.byteOffset).getInt32(23) + 1;
    const located = {
      baseOffset: offset,
      entry: {
        objectKey: o,
        position: b,
        sizeInBytes: bytes.length,
        offsetCount: n,
        recordCount: n,
        maxTimestamp: 1000,
        firstTimestamp: 1000,
      },
    };
    b += bytes.length;
    offset += n;
    return located;
  });
};

const storeWith = (objects: Record<string, Uint8Array>) => {
  const store = new MemoryObjectStore('r');
  for (const [key, body] of Object.entries(objects)) void store.put(key, body);
  return store;
};

const rejection = async (promise: Promise<unknown>): Promise<SluiceError> => {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SluiceError);
  return error as SluiceError;
};

describe('readBatches', () => {
  const a = batchOf('a0', 'a1');
  const b = batchOf('b0');
  const c = batchOf('c0', 'c1', 'c2');

  it('reads a plain ObjectStore, one ranged GET per run of adjacent ranges in one object', async () => {
    // x holds a and b end to end, then a 7-byte gap, then c; y holds a copy of c right where b ends in x.
    const gap = new Uint8Array(7);
    const x = Buffer.concat([a, b, gap, c]);
    const store = storeWith({ x, y: Buffer.concat([a, b, c]) });
    const [ea, eb] = laidOut('x', [a, b]);
    const ec = laidOut('x', [c], a.length + b.length + gap.length, 3)[0]!;
    const ey = laidOut('y', [c], a.length + b.length, 3)[0]!;
    const get = vi.spyOn(store, 'get');

    const batches = await readBatches(store, [ea!, eb!, ec]);
    expect(batches.map((s) => [s.baseOffset, s.header.baseOffset, s.header.recordCount])).toEqual([
      [0, 0, 2],
      [2, 2, 1],
      [3, 3, 3],
    ]);
    expect(get.mock.calls).toEqual([
      ['x', { start: 0, end: a.length + b.length }],
      ['x', { start: a.length + b.length + gap.length, end: x.length }],
    ]);

    // Another object that happens to start where the run ends is its own GET, not part of x's run.
    get.mockClear();
    const mixed = await readBatches(store, [ea!, eb!, ey]);
    expect(mixed.map((s) => s.header.recordCount)).toEqual([2, 1, 3]);
    expect(get.mock.calls).toEqual([
      ['x', { start: 0, end: a.length + b.length }],
      ['y', { start: a.length + b.length, end: a.length + b.length + c.length }],
    ]);
  });

  it('writes the true base offset into each batch it returns', async () => {
    const store = storeWith({ x: Buffer.concat([a, b]) });
    const [batch] = await readBatches(store, laidOut('x', [Buffer.concat([a, b])], 0, 40).slice(0, 1));
    expect(batch!.baseOffset).toBe(40);
    // One entry holding two batches: the second starts after the first's span.
    const both = await readBatches(store, [
      {
        baseOffset: 40,
        entry: {
          objectKey: 'x',
          position: 0,
          sizeInBytes: a.length + b.length,
          offsetCount: 3,
          recordCount: 3,
          maxTimestamp: 1000,
          firstTimestamp: 1000,
        },
      },
    ]);
    expect(both.map((s) => [s.baseOffset, s.header.baseOffset, s.header.lastOffsetDelta])).toEqual([
      [40, 40, 1],
      [42, 42, 0],
    ]);
    expect(new DataView(both[1]!.bytes.buffer, both[1]!.bytes.byteOffset).getBigInt64(0)).toBe(42n);
  });

  it('fails a read of a missing object with a non-retriable storage error naming it and the cause', async () => {
    const store = storeWith({});
    const error = await rejection(readBatches(store, laidOut('gone', [a])));
    expect(error.code).toBe('KAFKA_STORAGE_ERROR');
    expect(error.message).toBe('object gone could not be read: object gone not found');
    expect(error.retriable).toBe(false);
    expect((error.cause as Error).message).toBe('object gone not found');
  });

  it('fails an object shorter than its index entry, naming the offset', async () => {
    const store = storeWith({ x: a.subarray(0, a.length - 5) });
    const error = await rejection(readBatches(store, laidOut('x', [a], 0, 9)));
    expect(error.code).toBe('KAFKA_STORAGE_ERROR');
    expect(error.message).toBe('object x is shorter than its index entry at offset 9');
    expect(error.retriable).toBe(false);
  });

  it('fails a batch that does not verify, with the decoder’s reason', async () => {
    const corrupt = new Uint8Array(a);
    corrupt[corrupt.length - 1]! ^= 0xff;
    const store = storeWith({ x: corrupt });
    const error = await rejection(readBatches(store, laidOut('x', [corrupt], 0, 9)));
    expect(error.code).toBe('KAFKA_STORAGE_ERROR');
    expect(error.message).toMatch(
      /^stored batch at offset 9 in x failed verification: batch at byte 0 is corrupt: stored CRC \d+, computed \d+$/,
    );
    expect(error.retriable).toBe(false);
    expect(error.cause).toBeInstanceOf(SluiceError);
  });

  it('returns the good batches before a bad entry only when partial, and fails a read starting at one', async () => {
    const corrupt = new Uint8Array(b);
    corrupt[corrupt.length - 1]! ^= 0xff;
    const store = storeWith({ x: Buffer.concat([a, corrupt]), y: c });
    const [ea, ebad] = laidOut('x', [a, corrupt]);
    const missing = laidOut('nowhere', [c], 0, 3)[0]!;
    const inY = laidOut('y', [c], 0, 3)[0]!;
    const shortRun = { ...inY, entry: { ...inY.entry, position: 1 } };

    expect((await readBatches(store, [ea!, ebad!], { partial: true })).map((s) => s.baseOffset)).toEqual([0]);
    expect((await readBatches(store, [ea!, missing], { partial: true })).map((s) => s.baseOffset)).toEqual([
      0,
    ]);
    expect((await readBatches(store, [ea!, shortRun], { partial: true })).map((s) => s.baseOffset)).toEqual([
      0,
    ]);
    // Not partial (the default: maintenance reads): the same reads fail.
    expect((await rejection(readBatches(store, [ea!, ebad!]))).message).toMatch(
      /^stored batch at offset 2 in x failed verification/,
    );
    expect((await rejection(readBatches(store, [ea!, missing]))).message).toBe(
      'object nowhere could not be read: object nowhere not found',
    );
    // Partial, but the bad entry is the first: the error is the answer.
    expect((await rejection(readBatches(store, [missing], { partial: true }))).message).toBe(
      'object nowhere could not be read: object nowhere not found',
    );
    expect((await rejection(readBatches(store, [ebad!], { partial: true }))).message).toMatch(
      /^stored batch at offset 2 in x failed verification: batch at byte 0 is corrupt: stored CRC \d+, computed \d+$/,
    );
  });
});

describe('storedDataError', () => {
  it('is a non-retriable KAFKA_STORAGE_ERROR that appends a Sluice cause’s message, not a foreign one’s', () => {
    const foreign = new Error('socket hang up');
    const plain = storedDataError('object k could not be read', foreign);
    expect([plain.code, plain.message, plain.retriable, plain.cause]).toEqual([
      'KAFKA_STORAGE_ERROR',
      'object k could not be read',
      false,
      foreign,
    ]);
    const inner = new SluiceError('CORRUPT_MESSAGE', 'CRC mismatch');
    const wrapped = storedDataError('stored batch failed verification', inner);
    expect([wrapped.message, wrapped.cause]).toEqual([
      'stored batch failed verification: CRC mismatch',
      inner,
    ]);
    expect(storedDataError('no cause').message).toBe('no cause');
  });
});

describe('locateEntries', () => {
  /** Four indexed requests of 3 records and three in the tail; returns each entry's base offset and size. */
  const partition = async () => {
    const s = memorySluice({ tailFlushEntries: 1000 });
    expect((await s.http('POST', '/v1/topics', { name: 't', partitions: 1 })).status).toBe(201);
    const { topicId } = await s.sluice.catalog.get('t');
    const produce = async (i: number) => {
      const r = await s.http('POST', '/v1/topics/t/records', {
        records: [0, 1, 2].map((j) => ({ partition: 0, value: `v${i}-${j}`.padEnd(20 + i, 'x') })),
      });
      expect(r.status).toBe(200);
    };
    for (let i = 0; i < 4; i++) await produce(i);
    expect(await s.sluice.maintenance.indexTail(topicId, 0)).toBe(4);
    for (let i = 4; i < 7; i++) await produce(i);
    const state = decodePartitionState((await s.store.get(keys.partitionState(topicId, 0)))!);
    expect([state.tailBase, state.tail.length]).toEqual([12, 3]);
    const locate = async (offset: number, maxBytes: number) =>
      (await locateEntries(s.store, topicId, 0, state, offset, maxBytes)).map((x) => x.baseOffset);
    const all = await locateEntries(s.store, topicId, 0, state, 0, Number.MAX_SAFE_INTEGER);
    const sizes = all.map((x) => x.entry.sizeInBytes);
    expect(all.map((x) => x.baseOffset)).toEqual([0, 3, 6, 9, 12, 15, 18]);
    return { locate, sizes };
  };

  it('stops once the entries’ bytes reach maxBytes, in the index and in the tail', async () => {
    const { locate, sizes: l } = await partition();
    // Exactly the first two entries' bytes: two entries; one byte more: a third.
    expect(await locate(0, l[0]! + l[1]!)).toEqual([0, 3]);
    expect(await locate(0, l[0]! + l[1]! + 1)).toEqual([0, 3, 6]);
    // Across the index and the tail, and within the tail alone.
    expect(await locate(6, l[2]! + l[3]! + l[4]!)).toEqual([6, 9, 12]);
    expect(await locate(12, l[4]! + l[5]!)).toEqual([12, 15]);
    expect(await locate(12, l[4]! + 1)).toEqual([12, 15]);
    expect(await locate(15, l[5]!)).toEqual([15]);
  });

  it('returns at least one entry, also for a maxBytes of 0, and starts at the entry holding the offset', async () => {
    const { locate } = await partition();
    expect(await locate(0, 0)).toEqual([0]);
    expect(await locate(13, 0)).toEqual([12]);
    expect(await locate(20, 0)).toEqual([18]);
    expect(await locate(21, 1_000_000)).toEqual([]);
  });

  it('does not count the bytes of an entry before the offset, which the fetch does not return', async () => {
    const { locate, sizes: l } = await partition();
    // Offset 1 is inside the first entry: its bytes are not the fetch's, the next entries' are.
    expect(await locate(1, l[1]!)).toEqual([0, 3]);
    expect(await locate(1, l[1]! + 1)).toEqual([0, 3, 6]);
    // At an entry's base offset its bytes count.
    expect(await locate(3, l[1]!)).toEqual([3]);
  });
});
