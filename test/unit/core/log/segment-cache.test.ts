/**
 * The fetch process's cache of segment index items: which offsets an item answers for, when it stops
 * answering (its TTL, a compaction generation), and what it holds at most (items per partition,
 * partitions, least recently used first out).
 */
import { describe, expect, it } from 'vitest';
import { retiredPageItem } from '../../../../lib/core/log/batch-index.js';
import { SegmentItemCache } from '../../../../lib/core/log/segments/segment-cache.js';
import { segmentItem } from '../../../../lib/core/log/segments/segment-index.js';

/** The segment item of [base, base + span) in two chunks. */
const segment = (base: number, span = 10, tag = 'a') =>
  segmentItem(
    'topic',
    0,
    `g/topic/0/${base}-${tag}`,
    [
      {
        baseOffset: base,
        position: 0,
        sizeInBytes: 100,
        offsetCount: span - 3,
        recordCount: span - 3,
        maxTimestamp: 50,
        firstTimestamp: 40,
      },
      {
        baseOffset: base + span - 3,
        position: 100,
        sizeInBytes: 60,
        offsetCount: 3,
        recordCount: 3,
        maxTimestamp: 70,
        firstTimestamp: 60,
      },
    ],
    1,
  );

describe('the segment item cache', () => {
  it('answers for the offsets [base, end) of each item it holds, and nothing else', () => {
    const cache = new SegmentItemCache();
    const [a, b] = [segment(100), segment(110)];
    cache.remember('t-0', a, 0, 1000);
    cache.remember('t-0', b, 0, 1000);
    expect([99, 100, 109, 110, 119, 120].map((o) => cache.holding('t-0', o, 0, 1000))).toEqual([
      undefined,
      a,
      a,
      b,
      b,
      undefined,
    ]);
    expect(cache.holding('t-1', 100, 0, 1000)).toBeUndefined();
  });

  it('forgets the whole partition once a hit is older than the TTL or of another compaction generation', () => {
    const cache = new SegmentItemCache(30_000);
    const [a, b] = [segment(0), segment(10)];
    cache.remember('t-0', a, 7, 1000);
    cache.remember('t-0', b, 7, 2000);
    // Exactly the TTL old still answers.
    expect(cache.holding('t-0', 0, 7, 31_000)).toBe(a);
    expect(cache.holding('t-0', 0, 7, 31_001)).toBeUndefined();
    // The younger item went with it.
    expect(cache.holding('t-0', 10, 7, 31_001)).toBeUndefined();

    cache.remember('t-0', a, 7, 1000);
    cache.remember('t-0', b, 7, 1000);
    expect(cache.holding('t-0', 5, 8, 1000)).toBeUndefined();
    expect(cache.holding('t-0', 15, 7, 1000)).toBeUndefined();
    // A miss changes nothing.
    cache.remember('t-0', a, 7, 1000);
    expect(cache.holding('t-0', 50, 8, 1000)).toBeUndefined();
    expect(cache.holding('t-0', 5, 7, 1000)).toBe(a);
  });

  it('keeps the newest item per segment and the last few segments of a partition', () => {
    const cache = new SegmentItemCache(30_000, 3);
    const older = segment(0, 10, 'old');
    const rewritten = segment(0, 10, 'new');
    cache.remember('t-0', older, 0, 1000);
    cache.remember('t-0', rewritten, 0, 1000);
    expect(cache.holding('t-0', 0, 0, 1000)).toBe(rewritten);
    const [s10, s20, s30] = [segment(10), segment(20), segment(30)];
    for (const item of [s10, s20, s30]) cache.remember('t-0', item, 0, 1000);
    // Four segments remembered, three kept: the first one remembered went.
    expect([0, 10, 20, 30].map((o) => cache.holding('t-0', o, 0, 1000))).toEqual([undefined, s10, s20, s30]);
    // Remembering one again does not count twice.
    cache.remember('t-0', s20, 0, 1000);
    expect([10, 20, 30].map((o) => cache.holding('t-0', o, 0, 1000))).toEqual([s10, s20, s30]);
  });

  it('keeps at most maxPartitions partitions, dropping the least recently remembered', () => {
    const cache = new SegmentItemCache(30_000, 4, 2);
    const item = segment(0);
    cache.remember('a', item, 0, 1000);
    cache.remember('b', item, 0, 1000);
    // Remembering into a makes b the least recent.
    cache.remember('a', segment(10), 0, 1000);
    cache.remember('c', item, 0, 1000);
    expect(['a', 'b', 'c'].map((p) => cache.holding(p, 0, 0, 1000))).toEqual([item, undefined, item]);
    cache.forget('a');
    expect(cache.holding('a', 10, 0, 1000)).toBeUndefined();
    cache.remember('d', item, 0, 1000);
    expect(['c', 'd'].map((p) => cache.holding(p, 0, 0, 1000))).toEqual([item, item]);
  });

  it('never remembers a retired item', () => {
    const cache = new SegmentItemCache();
    cache.remember('t-0', retiredPageItem(segment(0), 1000), 0, 1000);
    expect(cache.holding('t-0', 0, 0, 1000)).toBeUndefined();
    expect(cache.holding('t-0', 5, 0, 1000)).toBeUndefined();
  });
});
