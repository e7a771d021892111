/**
 * The log's segments as Kafka's tools show them, on a hand-built partition: which segment items count
 * (live past the log start, below segEnd, with an end), the active segment from segEnd (or the log
 * start) to the log end, each segment's exact figures, and the reads made.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { pageItem } from '../../../../lib/core/log/batch-index.js';
import { initialPartitionState } from '../../../../lib/core/log/partition-codec.js';
import type { PartitionState, TailEntry } from '../../../../lib/core/log/partition-state.js';
import { describeSegments } from '../../../../lib/core/log/segments/describe.js';
import { segmentItem } from '../../../../lib/core/log/segments/segment-index.js';
import { readsRecorded } from '../../../support/segment-support.js';

const TOPIC = 'topic';
const ROLLED = 1_700_000_000_000;
/** An entry of `n` offsets, `l` bytes, first and newest timestamps `first` and `max`. */
const entry = (n: number, l: number, first: number, max: number, records = n): TailEntry => ({
  objectKey: 'd/a',
  position: 0,
  sizeInBytes: l,
  offsetCount: n,
  recordCount: records,
  maxTimestamp: max,
  firstTimestamp: first,
});
const segment = (base: number, entries: TailEntry[]) => {
  let at = base;
  const chunks = entries.map((e) => {
    const chunk = { ...e, baseOffset: at };
    at += e.offsetCount;
    return chunk;
  });
  return segmentItem(TOPIC, 0, `g/${base}`, chunks, ROLLED + base);
};

const stateOf = (s: Partial<PartitionState> & { segEnd?: number }, tail: TailEntry[]) =>
  ({
    ...initialPartitionState(TOPIC, 't', 0, ['s0']),
    ...s,
    tail,
  }) as PartitionState;

describe('describing a partition’s segments', () => {
  it('counts the segments below segEnd that reach past the log start, then the active segment', async () => {
    const store = new MemoryMetadataStore();
    // [0, 4) ends at the log start 4: gone. [4, 10): first timestamps 0, 7 and none; newest 10, 5, none.
    await store.put(segment(0, [entry(2, 10, 1, 2), entry(2, 10, 1, 2)]));
    await store.put(segment(4, [entry(2, 100, 0, 10), entry(2, 50, 7, 5), entry(2, 25, -1, -1, 0)]));
    // [10, 14): first timestamps falling, 5 then 3; newest 6 then 4.
    await store.put(segment(10, [entry(2, 40, 5, 6), entry(2, 30, 3, 4)]));
    // A segment item at segEnd, not yet in the segment index: not counted.
    await store.put(segment(14, [entry(2, 999, 1, 1)]));
    // The active segment: page [14, 16), then the tail [16, 17).
    await store.put(pageItem(TOPIC, 0, 14, [entry(1, 7, 20, 21), entry(1, 8, 22, 23)]));
    const state = stateOf({ logStartOffset: 4, segEnd: 14, tailBase: 16, nextOffset: 17 }, [
      entry(1, 9, 19, 30),
    ]);
    const recorded = readsRecorded(store);
    expect(await describeSegments(recorded.store, TOPIC, 0, state)).toStrictEqual({
      partition: 0,
      logStartOffset: 4,
      logEndOffset: 17,
      sizeBytes: 175 + 70 + 24,
      segments: [
        {
          baseOffset: 4,
          endOffset: 10,
          sizeBytes: 175,
          batches: 3,
          records: 4,
          firstTimestamp: 0,
          maxTimestamp: 10,
          tier: 'remote',
          rolledAt: ROLLED + 4,
        },
        {
          baseOffset: 10,
          endOffset: 14,
          sizeBytes: 70,
          batches: 2,
          records: 4,
          firstTimestamp: 3,
          maxTimestamp: 6,
          tier: 'remote',
          rolledAt: ROLLED + 10,
        },
        {
          baseOffset: 14,
          endOffset: 17,
          sizeBytes: 24,
          batches: 3,
          records: 3,
          firstTimestamp: 19,
          maxTimestamp: 30,
          tier: 'local',
        },
      ],
    });
    expect(recorded.reads.every((r) => r.consistent)).toBe(true);
  });

  it('leaves out tail entries wholly below a log start inside the tail, and reads no index then', async () => {
    const store = new MemoryMetadataStore();
    await store.put(segment(0, [entry(10, 100, 1, 2)]));
    await store.put(pageItem(TOPIC, 0, 10, [entry(4, 40, 3, 4)]));
    // Tail [14, 15) and [15, 16); the log starts at 15. The live entry's records were all compacted away.
    const state = stateOf({ logStartOffset: 15, segEnd: 10, tailBase: 14, nextOffset: 16 }, [
      entry(1, 5, 8, 9),
      entry(1, 6, -1, -1, 0),
    ]);
    const recorded = readsRecorded(store);
    expect(await describeSegments(recorded.store, TOPIC, 0, state)).toStrictEqual({
      partition: 0,
      logStartOffset: 15,
      logEndOffset: 16,
      sizeBytes: 6,
      segments: [
        {
          baseOffset: 15,
          endOffset: 16,
          sizeBytes: 6,
          batches: 1,
          records: 0,
          firstTimestamp: -1,
          maxTimestamp: -1,
          tier: 'local',
        },
      ],
    });
    expect(recorded.reads).toEqual([]);
  });

  it('reads no segment index when the log starts at segEnd', async () => {
    const store = new MemoryMetadataStore();
    await store.put(segment(0, [entry(10, 100, 1, 2)]));
    await store.put(pageItem(TOPIC, 0, 10, [entry(4, 40, 3, 4)]));
    const state = stateOf({ logStartOffset: 10, segEnd: 10, tailBase: 14, nextOffset: 14 }, []);
    const recorded = readsRecorded(store);
    const described = await describeSegments(recorded.store, TOPIC, 0, state);
    expect(described.segments.map((s) => [s.baseOffset, s.endOffset, s.tier])).toEqual([[10, 14, 'local']]);
    // The batch index's page holding offset 10, which reaches the tail.
    expect(recorded.reads).toEqual([{ op: 'query', consistent: true }]);
  });

  it('skips a segment item without a numeric end, and a rolledAt that is not a number', async () => {
    const store = new MemoryMetadataStore();
    const { end: _end, ...endless } = segment(0, [entry(4, 10, 1, 2)]);
    await store.put(endless);
    await store.put({ ...segment(4, [entry(4, 20, 1, 2)]), end: '8' });
    await store.put({ ...segment(8, [entry(2, 30, 1, 2)]), rolledAt: 'x' });
    const state = stateOf({ logStartOffset: 0, segEnd: 10, tailBase: 10, nextOffset: 10 }, []);
    expect((await describeSegments(store, TOPIC, 0, state)).segments).toStrictEqual([
      {
        baseOffset: 8,
        endOffset: 10,
        sizeBytes: 30,
        batches: 1,
        records: 2,
        firstTimestamp: 1,
        maxTimestamp: 2,
        tier: 'remote',
      },
    ]);
  });
});
