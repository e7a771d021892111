/**
 * ListOffsets by timestamp on a hand-built partition (lib/core/log/time-index.ts firstEntryReaching):
 * the exact offset for each timestamp through the marks, without them, from the log start on, and in
 * the partition item's tail.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import { pageItem } from '../../../../lib/core/log/batch-index.js';
import type { MetadataStore, QueryInput } from '../../../../lib/ports/metadata-store.js';
import type { PartitionState, TailEntry } from '../../../../lib/core/log/partition-state.js';
import { decodePartitionState, initialPartitionState } from '../../../../lib/core/log/partition-codec.js';
import { firstEntryReaching, timeMarkItem, timeMarks } from '../../../../lib/core/log/time-index.js';

const TOPIC = 'topic';
const entry = (t: number): TailEntry => ({
  objectKey: dataObjectKey(TOPIC, 'x'),
  position: 0,
  sizeInBytes: 10,
  offsetCount: 1,
  recordCount: 1,
  maxTimestamp: t,
  firstTimestamp: t,
});

/**
 * Offsets 0-3 (page 0) at 100, 300, 200, 500; 4-5 (page 4) at 400, 600; the tail, 6-7, at 700 and
 * 650. One mark per page, as the materializer writes them.
 */
const partition = async (marks = true, logStartOffset = 0) => {
  const store = new MemoryMetadataStore();
  await store.put(pageItem(TOPIC, 0, 0, [100, 300, 200, 500].map(entry)));
  await store.put(pageItem(TOPIC, 0, 4, [400, 600].map(entry)));
  const first = timeMarks(
    [100, 300, 200, 500].map((maxTimestamp, i) => ({ baseOffset: i, maxTimestamp })),
    -1,
  );
  const second = timeMarks(
    [400, 600].map((maxTimestamp, i) => ({ baseOffset: 4 + i, maxTimestamp })),
    first.runningMax,
  );
  expect([...first.marks, ...second.marks]).toEqual([
    { maxTimestamp: 500, baseOffset: 0, prev: -1 },
    { maxTimestamp: 600, baseOffset: 5, prev: 500 },
  ]);
  if (marks) for (const m of [...first.marks, ...second.marks]) await store.put(timeMarkItem(TOPIC, 0, m));
  const state: PartitionState = {
    ...decodePartitionState(initialPartitionState(TOPIC, 't', 0, ['s0'])),
    logStartOffset,
    tailBase: 6,
    nextOffset: 8,
    highWatermark: 8,
    maxTimestampSoFar: second.runningMax,
    tail: [entry(700), entry(650)],
  };
  const at = async (timestamp: number) =>
    (await firstEntryReaching(store, TOPIC, 0, state, timestamp))?.baseOffset;
  return { store, state, at };
};

describe('the first offset whose timestamp reaches X', () => {
  it('is found through the marks, in the batch index and in the tail', async () => {
    const p = await partition();
    const stamps = [-5, 0, 100, 101, 250, 300, 301, 500, 501, 550, 600, 601, 650, 700, 701];
    expect(await Promise.all(stamps.map(p.at))).toEqual([
      0,
      0,
      0,
      1,
      1,
      1,
      3,
      3,
      5,
      5,
      5,
      6,
      6,
      6,
      undefined,
    ]);
  });

  it('is the same without marks: a scan from the log start, or the tail alone past the running max', async () => {
    const p = await partition(false);
    const stamps = [-5, 0, 100, 101, 250, 300, 301, 500, 501, 550, 600, 601, 650, 700, 701];
    expect(await Promise.all(stamps.map(p.at))).toEqual([
      0,
      0,
      0,
      1,
      1,
      1,
      3,
      3,
      5,
      5,
      5,
      6,
      6,
      6,
      undefined,
    ]);
  });

  it('is at or after the log start', async () => {
    const p = await partition(true, 2);
    expect(await Promise.all([50, 250, 450, 600].map(p.at))).toEqual([2, 3, 3, 5]);
    // A log start inside the tail (records deleted up to offset 7).
    const q = await partition(true, 7);
    expect(await Promise.all([50, 600, 650, 651].map(q.at))).toEqual([7, 7, 7, undefined]);
  });

  it('is the entry with its base offset and entry', async () => {
    const p = await partition();
    expect(await firstEntryReaching(p.store, TOPIC, 0, p.state, 650)).toEqual({
      baseOffset: 6,
      entry: entry(700),
    });
    const indexed = await firstEntryReaching(p.store, TOPIC, 0, p.state, 450);
    expect([indexed?.baseOffset, indexed?.entry]).toEqual([3, entry(500)]);
  });

  it('skips marks of no use for X (a late mark whose previous max already reached X)', async () => {
    const p = await partition();
    // True of the log (nothing before 5 is above 500), but no help below 500, where it sorts first.
    await p.store.put({ ...keys.timeIndex(TOPIC, 0, 450, 5), o: 5, p: 500 });
    expect(await Promise.all([250, 450].map(p.at))).toEqual([1, 3]);
  });

  it('does not start at a mark whose previous max is X itself: a batch before it may be at X', async () => {
    const p = await partition();
    // Only the second mark left (the first dropped by a compaction rebuild that raced a pass): it says
    // nothing before 5 is above 500, but offset 3 is at 500.
    await p.store.delete(keys.timeIndex(TOPIC, 0, 500, 0));
    expect(await Promise.all([500, 501].map(p.at))).toEqual([3, 5]);
  });

  it('reads the index from the mark on, or not at all past the running max', async () => {
    /** The index queries (not the time index's) of one lookup: their ranges of sort keys. */
    const ranges = async (marks: boolean, timestamp: number) => {
      const p = await partition(marks);
      const queries: QueryInput[] = [];
      const spy = Object.create(p.store, {
        query: { value: (input: QueryInput) => (queries.push(input), p.store.query(input)) },
      }) as MetadataStore;
      const found = await firstEntryReaching(spy, TOPIC, 0, p.state, timestamp);
      return [
        found?.baseOffset,
        queries.map((q) => q.sk).filter((sk) => !(sk && 'between' in sk && sk.between[0].startsWith('T#'))),
      ];
    };
    // 550: the mark at 5 (previous max 500) says nothing before 5 reaches it; page 4 holds 5.
    expect(await ranges(true, 550)).toEqual([5, [{ between: ['B#', keys.batch(TOPIC, 0, 5).sk] }]]);
    // 650 without marks: above the running max (600), so in the tail; no index read.
    expect(await ranges(false, 650)).toEqual([6, []]);
  });
});
