import { describe, expect, it, vi } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { pageEntries } from '../../../../lib/core/log/batch-index.js';
import { MARK_SPAN, timeMarks } from '../../../../lib/core/log/time-index.js';
import { decodePartitionState } from '../../../../lib/core/log/partition-codec.js';
import { listOffsetsViolations } from '../../../support/list-offsets.js';
import { memorySluice } from '../../../support/log-support.js';

describe('time marks', () => {
  it('mark each run of batches where the running max rose: its max, its first rise and the max before', () => {
    const batches = [
      { baseOffset: 0, maxTimestamp: 50 },
      { baseOffset: 2, maxTimestamp: 30 },
      { baseOffset: 3, maxTimestamp: 70 },
      { baseOffset: 7, maxTimestamp: 60 },
    ];
    expect(timeMarks(batches, -1)).toEqual({
      marks: [{ maxTimestamp: 70, baseOffset: 0, prev: -1 }],
      runningMax: 70,
    });
    // Continuing a running max of 55: the first batch to pass it is at 3.
    expect(timeMarks(batches, 55)).toEqual({
      marks: [{ maxTimestamp: 70, baseOffset: 3, prev: 55 }],
      runningMax: 70,
    });
    expect(timeMarks(batches, 70)).toEqual({ marks: [], runningMax: 70 });
    // Header-only batches (t -1) never rise.
    expect(timeMarks([{ baseOffset: 0, maxTimestamp: -1 }], -1)).toEqual({ marks: [], runningMax: -1 });
  });

  it('split long ranges into runs of at most MARK_SPAN batches', () => {
    const batches = Array.from({ length: MARK_SPAN * 2 + 1 }, (_, i) => ({
      baseOffset: i,
      maxTimestamp: 1000 + i,
    }));
    expect(timeMarks(batches, -1).marks).toEqual([
      { maxTimestamp: 1000 + MARK_SPAN - 1, baseOffset: 0, prev: -1 },
      { maxTimestamp: 1000 + 2 * MARK_SPAN - 1, baseOffset: MARK_SPAN, prev: 1000 + MARK_SPAN - 1 },
      { maxTimestamp: 1000 + 2 * MARK_SPAN, baseOffset: 2 * MARK_SPAN, prev: 1000 + 2 * MARK_SPAN - 1 },
    ]);
    // A run whose batches only equal the running max does not rise: no mark.
    const flat = Array.from({ length: MARK_SPAN + 1 }, (_, i) => ({ baseOffset: i, maxTimestamp: 1000 }));
    expect(timeMarks(flat, -1)).toEqual({
      marks: [{ maxTimestamp: 1000, baseOffset: 0, prev: -1 }],
      runningMax: 1000,
    });
  });
});

describe('ListOffsets by timestamp over a sparse time index', () => {
  const setup = async (configs: Record<string, string> = {}) => {
    const s = memorySluice({ tailFlushEntries: 8 });
    await s.http('POST', '/v1/topics', { name: 't', partitions: 1, configs });
    const topic = await s.sluice.catalog.get('t');
    const pk = keys.partitionPk(topic.topicId, 0);
    const marks = () => s.store.dump().filter((i) => i.pk === pk && i.sk.startsWith(keys.timePrefix));
    const state = async () =>
      decodePartitionState((await s.store.get(keys.partitionState(topic.topicId, 0)))!);
    const exactness = () => listOffsetsViolations(s.sluice.fetcher, 't', 1);
    /** One request (one index entry) of records with these timestamps. */
    const produce = async (stamps: number[], key?: string) => {
      const r = await s.http('POST', '/v1/topics/t/records', {
        records: stamps.map((timestamp, i) => ({
          key: key ?? null,
          value: `v${i}`,
          partition: 0,
          timestamp,
        })),
      });
      expect(r.status).toBe(200);
    };
    return { ...s, topic, marks, state, exactness, produce };
  };

  it('stays exact with timestamps out of order within batches, passes and across them, and after retention', async () => {
    const s = await setup({ 'retention.ms': '200000' });
    const now = s.clock.now();
    // 60 entries of 1 to 3 records; timestamps wander back and forth over 400 s, now and then far ahead.
    for (let i = 0; i < 60; i++) {
      const stamps = Array.from(
        { length: (i % 3) + 1 },
        (_, k) => now - 400_000 + ((i * 7919 + k * 104_729) % 97) * 4_000 + (i % 11 === 5 ? 500_000 : 0),
      );
      await s.produce(stamps);
    }
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    expect((await s.state()).tail).toEqual([]);
    // One mark per pass at most (60 entries, 8 per pass), not one per rise of the running max.
    expect(s.marks().length).toBeGreaterThan(1);
    expect(s.marks().length).toBeLessThanOrEqual(Math.ceil(60 / 8));
    expect(await s.exactness()).toEqual([]);

    // Retention drops the old batches from the start and repairs the marks below the new log start.
    s.clock.time += 300_000;
    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    expect(report.batchesExpired).toBeGreaterThan(0);
    expect((await s.state()).logStartOffset).toBeGreaterThan(0);
    expect(await s.exactness()).toEqual([]);

    // New batches, some older than everything retained, some in the tail still.
    for (const stamps of [[now - 300_000], [now + 10, now - 5], [now + 900_000], [now - 1]])
      await s.produce(stamps);
    expect(await s.exactness()).toEqual([]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    expect(await s.exactness()).toEqual([]);
  });

  it('stays exact with marks a stalled materializer wrote late, and with marks missing', async () => {
    const s = await setup();
    await s.produce([100]);
    await s.produce([200]);
    await s.produce([300]);
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    expect(s.marks().map((m) => [m['o'], m['p']])).toEqual([[0, -1]]);
    // True (nothing before offset 2 is above 200), yet of no use below 200, where it sorts first.
    await s.store.put({ ...keys.timeIndex(s.topic.topicId, 0, 250, 2), o: 2, p: 200 });
    expect((await s.http('GET', '/v1/topics/t/partitions/0/offsets?at=150')).body.offset).toBe(1);
    expect(await s.exactness()).toEqual([]);
    // Without marks, the partition's running max says whether a scan from the log start is needed.
    for (const m of s.marks()) await s.store.delete(m);
    expect((await s.http('GET', '/v1/topics/t/partitions/0/offsets?at=150')).body.offset).toBe(1);
    expect(await s.exactness()).toEqual([]);
  });

  it('stays exact when compaction lowered timestamps and its time-index rebuild failed', async () => {
    const s = await setup({ 'cleanup.policy': 'compact' });
    // k1 at 500 is superseded by k1 at 200: once compacted, the first entry holds no record, and the
    // only record at or after 300 is k2's at 400.
    await s.produce([500], 'k1');
    await s.produce([400], 'k2');
    await s.produce([200], 'k1');
    await s.sluice.maintenance.indexTail(s.topic.topicId, 0);
    expect(s.marks().map((m) => m['o'])).toEqual([0]);
    const rebuild = vi.spyOn(s.store, 'batchWrite').mockRejectedValueOnce(new Error('throttled'));
    const report = await s.sluice.maintenance.run();
    rebuild.mockRestore();
    // The swap went through; the rebuild after it did not.
    expect(report.errors).toEqual([expect.stringMatching(/^compaction t-0: throttled/)]);
    const [first] = pageEntries((await s.store.get(keys.batch(s.topic.topicId, 0, 0)))!);
    expect([first?.entry.recordCount, first?.entry.maxTimestamp]).toEqual([0, -1]);
    // The stale mark still says the max reached 500 at offset 0.
    expect(s.marks().map((m) => [m.sk.slice(2, 17), m['o']])).toEqual([['000000000000500', 0]]);
    const at = await s.http('GET', '/v1/topics/t/partitions/0/offsets?at=300');
    expect(at.body).toEqual({ offset: 1, timestamp: 400 });
    expect(await s.exactness()).toEqual([]);
  });
});
