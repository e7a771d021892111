/**
 * Retention over rolled segments: a segment goes whole, aged by its largest timestamp, whether or not
 * its local batch pages are still there; the batches past the last segment go one by one.
 */
import { describe, expect, it } from 'vitest';
import { pageEntries } from '../../../../lib/core/log/batch-index.js';
import { applyRetention } from '../../../../lib/core/log/retention.js';
import { retireLocalCopies } from '../../../../lib/core/log/segments/local-retention.js';
import { keys } from '../../../../lib/core/keys.js';
import { T0, segmentSetup } from '../../../support/segment-support.js';

const DAY = 86_400_000;

/** 40 requests of 10 records (one batch each), request i stamped now - 1 d - 24.5 s + i s: requests 0..24 expired. */
const rolled = async (configs: Record<string, string>) => {
  const s = await segmentSetup({ 'retention.ms': String(DAY), ...configs });
  // Indexed every 5 requests: pages of 50 offsets, so the pages below a segment's end can retire.
  const from = s.clock.now() - DAY - 24_500;
  for (let i = 0; i < 40; i += 5) {
    await s.write(5, from + i * 1000);
    await s.index();
  }
  await s.roll();
  const segments = (await s.segmentItems()).map((g) => ({
    end: g['end'] as number,
    tMax: Math.max(...pageEntries(g).map((x) => x.entry.maxTimestamp)),
    tMin: Math.min(...pageEntries(g).map((x) => x.entry.maxTimestamp)),
  }));
  const retain = () =>
    applyRetention(s.store, s.topic.topicId, 0, { ...s.config(), 'retention.ms': DAY }, s.clock.now());
  return { ...s, segments, retain };
};

describe('retention by segment', () => {
  it('keeps a segment with one unexpired batch whole, though its older batches are past retention.ms', async () => {
    const s = await rolled({});
    const cutoff = s.clock.now() - DAY;
    expect(s.segments.map((g) => g.end)).toEqual([70, 140, 210, 280, 350]);
    // Segments 0-2 are wholly expired; segment 3 (210-280) holds expired batches 210..249 and newer ones.
    expect(s.segments.map((g) => g.tMax < cutoff)).toEqual([true, true, true, false, false]);
    expect(s.segments[3]!.tMin).toBeLessThan(cutoff);
    expect(await s.retain()).toEqual({ logStartOffset: 210, batchesDeleted: 21 });
    expect((await s.state()).logStartOffset).toBe(210);
    expect((await s.segmentItems()).map((g) => g['end'])).toEqual([280, 350]);
  });

  it('deletes by segment when local retention has already retired the segments’ batch pages', async () => {
    const s = await rolled({ 'local.retention.ms': '1000' });
    expect(await retireLocalCopies(s.store, s.topic.topicId, 0, s.config(), s.clock.now())).toBe(7);
    expect((await s.livePages()).flatMap(pageEntries).map((x) => x.baseOffset)[0]).toBe(350);
    expect(await s.retain()).toEqual({ logStartOffset: 210, batchesDeleted: 21 });
  });
});

/** 40 requests of 10 records (one batch each), request i stamped `stamp(i)`, rolled into segments. */
const rolledAt = async (stamp: (request: number) => number) => {
  const s = await segmentSetup();
  for (let i = 0; i < 40; i++) {
    await s.produce(
      Array.from({ length: 10 }, (_, j) => [0, `k${j}`, 200, stamp(i)] as [number, string, number, number]),
    );
    if (i % 5 === 4) await s.index();
  }
  await s.roll();
  const ends = (await s.segmentItems()).map((g) => g['end']);
  return { ...s, ends };
};

describe('a segment’s age', () => {
  it('is its largest timestamp, even 0: expired once now - retention.ms passes it, to the millisecond', async () => {
    const s = await rolledAt(() => 0);
    expect(s.ends).toEqual([70, 140, 210, 280, 350, 400]);
    const config = { ...s.config(), 'retention.bytes': -1 };
    const now = s.clock.now();
    const retain = (retentionMs: number) =>
      applyRetention(s.store, s.topic.topicId, 0, { ...config, 'retention.ms': retentionMs }, now);
    expect(await retain(now)).toEqual({ logStartOffset: 0, batchesDeleted: 0 });
    expect(await retain(now - 1)).toEqual({ logStartOffset: 400, batchesDeleted: 40 });
  });
});

describe('a segment left below the log start by a run that failed', () => {
  it('counts for nothing, however new its records: the expired segments after it still go', async () => {
    // The first segment (offsets 0-69, requests 0-6) holds records stamped now, the rest are old.
    const s = await rolledAt((i) => (i < 7 ? 1_700_000_000_000 : T0));
    // Offsets 350-399 are short of segment.bytes and too young for segment.ms: batches past the index.
    expect(s.ends).toEqual([70, 140, 210, 280, 350]);
    await s.store.update(keys.partitionState(s.topic.topicId, 0), [{ set: 'logStartOffset', value: 70 }]);
    const config = { ...s.config(), 'retention.bytes': -1, 'retention.ms': 60_000 };
    expect(await applyRetention(s.store, s.topic.topicId, 0, config, s.clock.now())).toEqual({
      logStartOffset: 400,
      batchesDeleted: 33,
    });
  });
});
