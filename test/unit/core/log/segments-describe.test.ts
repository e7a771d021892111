/**
 * GET /v1/topics/{topic}/segments: rolled segments from the segment index, the active segment from
 * the batch index and the tail, sizes that add up to the stored batches' bytes, segments that tile
 * the log, and what retention removed left out.
 */
import { describe, expect, it } from 'vitest';
import { pageEntries } from '../../../../lib/core/log/batch-index.js';
import { applyRetention } from '../../../../lib/core/log/retention.js';
import type { TopicSegments } from '../../../../lib/wire/types.js';
import { segmentSetup } from '../../../support/segment-support.js';

const DAY = 86_400_000;

/** 40 requests of 10 records (one batch each) indexed every 5, rolled, then 3 requests left in the tail. */
const rolled = async () => {
  const s = await segmentSetup({ 'retention.ms': String(DAY) }, 2);
  const from = s.clock.now() - DAY - 24_500;
  for (let i = 0; i < 40; i += 5) {
    await s.write(5, from + i * 1000);
    await s.index();
  }
  // Every stored batch's bytes, before the roll moves them: what the sizes must add up to.
  const batchBytes = (await s.livePages()).flatMap(pageEntries).map((x) => x.entry.sizeInBytes);
  await s.roll();
  await s.write(3, s.clock.now());
  const tail = (await s.state()).tail;
  const segments = async (query = '') => {
    const r = await s.http('GET', `/v1/topics/t/segments${query}`);
    expect(r.status).toBe(200);
    return r.body as TopicSegments;
  };
  return { ...s, from, batchBytes, tail, segments };
};

describe('describing segments', () => {
  it('lists the rolled segments, then the active one, tiling the log from log start to log end', async () => {
    const s = await rolled();
    const { partitions } = await s.segments('?partition=0');
    expect(partitions.map((p) => p.partition)).toEqual([0]);
    const p = partitions[0]!;
    expect(s.tail.length).toBe(3);
    expect(p.segments.map((g) => [g.baseOffset, g.endOffset, g.tier])).toEqual([
      [0, 70, 'remote'],
      [70, 140, 'remote'],
      [140, 210, 'remote'],
      [210, 280, 'remote'],
      [280, 350, 'remote'],
      [350, 430, 'local'],
    ]);
    expect(p.logStartOffset).toBe(0);
    expect(p.logEndOffset).toBe(430);
    expect(p.segments.map((g) => g.records)).toEqual([70, 70, 70, 70, 70, 80]);
    expect(p.segments.map((g) => g.batches)).toEqual([7, 7, 7, 7, 7, 8]);
    // Every byte of every batch counted once: the rolled and indexed batches plus the tail.
    const total = [...s.batchBytes, ...s.tail.map((e) => e.sizeInBytes)].reduce((n, l) => n + l, 0);
    expect(p.sizeBytes).toBe(total);
    expect(p.segments.reduce((n, g) => n + g.sizeBytes, 0)).toBe(total);
    // Timestamps: request i is stamped from + 1000 i + record index.
    expect(p.segments[0]!.firstTimestamp).toBe(s.from);
    expect(p.segments[0]!.maxTimestamp).toBe(s.from + 6000 + 9);
    expect(p.segments[0]!.rolledAt).toBe(s.clock.now());
    expect(p.segments[5]!.rolledAt).toBeUndefined();
  });

  it('answers every partition without the filter, an empty partition with no segments', async () => {
    const s = await rolled();
    const { topic, partitions } = await s.segments();
    expect(topic).toBe('t');
    expect(partitions.map((p) => [p.partition, p.segments.length, p.sizeBytes, p.logEndOffset])).toEqual([
      [0, 6, partitions[0]!.sizeBytes, 430],
      [1, 0, 0, 0],
    ]);
    expect(partitions[0]!.sizeBytes).toBeGreaterThan(0);
  });

  it('leaves out the segments retention deleted', async () => {
    const s = await rolled();
    const before = (await s.segments('?partition=0')).partitions[0]!;
    await applyRetention(s.store, s.topic.topicId, 0, { ...s.config(), 'retention.ms': DAY }, s.clock.now());
    const after = (await s.segments('?partition=0')).partitions[0]!;
    expect(after.logStartOffset).toBe(210);
    expect(after.segments.map((g) => g.baseOffset)).toEqual([210, 280, 350]);
    expect(after.sizeBytes).toBe(before.segments.slice(3).reduce((n, g) => n + g.sizeBytes, 0));
  });

  it('refuses an unknown topic, a partition out of range or malformed, and unknown parameters', async () => {
    const s = await rolled();
    const cases: [string, number, string][] = [
      ['/v1/topics/nope/segments', 404, 'UNKNOWN_TOPIC_OR_PARTITION'],
      ['/v1/topics/t/segments?partition=2', 404, 'UNKNOWN_TOPIC_OR_PARTITION'],
      ['/v1/topics/t/segments?partition=-1', 404, 'UNKNOWN_TOPIC_OR_PARTITION'],
      ['/v1/topics/t/segments?partition=1e3', 404, 'UNKNOWN_TOPIC_OR_PARTITION'],
      ['/v1/topics/t/segments?offset=0', 400, 'INVALID_REQUEST'],
    ];
    for (const [path, status, code] of cases) {
      const r = await s.http('GET', path);
      expect([path, r.status, r.body.error.code]).toEqual([path, status, code]);
    }
  });
});
