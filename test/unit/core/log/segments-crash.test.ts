/**
 * A roll crashed at each of its steps, and readers interleaved with every storage operation of the
 * maintenance runs that roll, retire local copies and collect: the log stays readable, byte-identical,
 * and the next run finishes the job, leaving no object behind.
 */
import { describe, expect, it } from 'vitest';
import type { FaultFilter, FaultKind } from '../../../../lib/adapters/fault/index.js';
import {
  FaultInjector,
  FaultyMetadataStore,
  FaultyObjectStore,
} from '../../../../lib/adapters/fault/index.js';
import { InterceptedMetadataStore } from '../../../support/seams.js';
import type { SegmentSetup } from '../../../support/segment-support.js';
import { T0, referencedObjects, segmentSetup, snapshot } from '../../../support/segment-support.js';

const TIMES = [T0, T0 + 5, T0 + 12_004, T0 + 39_009];
const GRACE = 15 * 60_000;

type Step = [name: string, where: 'metadata' | 'segments', filter: FaultFilter, kind: FaultKind];

const STEPS: Step[] = [
  ['reading the indexes', 'metadata', { ops: ['query'] }, 'failBefore'],
  ['before the segment object is written', 'segments', { ops: ['put'] }, 'failBefore'],
  ['after the segment object is written', 'segments', { ops: ['put'] }, 'failAfter'],
  ['re-reading the pages for the swap', 'metadata', { ops: ['get'], sk: 'B#' }, 'failBefore'],
  // The swap raises segEnd with the segment item (one transaction).
  ['before the swap transaction', 'metadata', { ops: ['transact'] }, 'failBefore'],
  ['after the swap transaction took effect', 'metadata', { ops: ['transact'] }, 'failAfter'],
  ['before the merged time mark is written', 'metadata', { ops: ['put'], sk: 'T#' }, 'failBefore'],
  ['before the merged marks are deleted', 'metadata', { ops: ['batchWrite'] }, 'failBefore'],
];

const faulty = async () => {
  const injectors = {
    metadata: new FaultInjector({ seed: 12, rate: 0 }),
    segments: new FaultInjector({ seed: 13, rate: 0 }),
  };
  const s = await segmentSetup({}, 1, {
    wrapStore: (store) => new FaultyMetadataStore(store, injectors.metadata),
    wrapSegmentStore: (store) => new FaultyObjectStore(store, injectors.segments),
  });
  return { s, injectors };
};

const expectCollected = async (s: SegmentSetup) => {
  s.clock.time += GRACE + 1;
  await s.sluice.maintenance.collectOrphans(s.topic.topicId, 1);
  const referenced = await referencedObjects(s);
  expect(s.segments!.keys()).toEqual(referenced.filter((k) => k.startsWith('g/')));
};

describe('a roll that crashes', () => {
  it.each(STEPS)(
    '%s leaves a readable log that the next run rolls',
    async (_name, where, filter, kind) => {
      const { s, injectors } = await faulty();
      // Indexed every 4 requests: 10 pages and 10 time marks, so a roll also merges marks.
      for (let i = 0; i < 10; i++) {
        await s.write(4, T0 + i * 4000);
        await s.index();
      }
      const before = await snapshot(s, 0, TIMES);
      injectors[where].failNext(filter, kind);
      await expect(s.roll()).rejects.toThrow();
      expect(injectors[where].counts[kind]).toBe(1);
      expect(await snapshot(s, 0, TIMES)).toEqual(before);

      await s.roll();
      const segments = await s.segmentItems();
      expect(segments).toHaveLength(5);
      // Segments tile from offset 0.
      let next = 0;
      for (const g of segments) {
        expect(g.sk).toBe(`G#${String(next).padStart(20, '0')}`);
        next = g['end'] as number;
      }
      expect((await s.state())['segEnd' as never]).toBe(next);
      expect(await snapshot(s, 0, TIMES)).toEqual(before);
      await expectCollected(s);
      expect(await snapshot(s, 0, TIMES)).toEqual(before);
    },
    30_000,
  );
});

describe('readers during maintenance', () => {
  it('never see an error, a gap or a reorder while segments roll, local copies go and objects are collected', async () => {
    let check: (() => Promise<void>) | undefined;
    let checks = 0;
    const s = await segmentSetup({ 'local.retention.ms': '1000' }, 1, {
      wrapStore: (store) =>
        new InterceptedMetadataStore(store, async (_call, run) => {
          const reader = check;
          if (reader) {
            check = undefined;
            await reader();
            checks++;
            check = reader;
          }
          return run();
        }),
    });
    for (let i = 0; i < 10; i++) {
      await s.write(4, s.clock.now() - 60_000 + i * 4000);
      await s.index();
    }
    const full = await snapshot(s, 0, TIMES);
    type Read = { offset: number };
    const probes = [0, 37, 141, 200, 288, 351, 399];
    const expected = probes.map((o) => (full.reads as Read[]).find((r) => r.offset === o));
    const probe = async () => {
      const got = [];
      for (const offset of probes) {
        const raw = await s.sluice.fetcher.fetchBatches('t', 0, { offset, maxBytes: 3000, maxWaitMs: 0 });
        const records = await s.sluice.fetcher.fetchRecords('t', 0, { offset, maxBytes: 3000, maxWaitMs: 0 });
        got.push({ offset, raw, records });
      }
      got.forEach(({ offset, raw, records }, i) => {
        const want = expected[i] as unknown as { batches: string[]; next: number; recordsNext: number };
        expect([offset, raw.batches.map((b) => Buffer.from(b).toString('hex')), raw.nextOffset]).toEqual([
          offset,
          want.batches,
          want.next,
        ]);
        expect([offset, records.nextOffset]).toEqual([offset, want.recordsNext]);
      });
      for (const { t, at } of full.times) expect(await s.sluice.fetcher.listOffsets('t', 0, t)).toEqual(at);
    };
    check = probe;
    const first = await s.sluice.maintenance.run();
    expect(first.errors).toEqual([]);
    expect(first.segmentsRolled).toBe(5);
    expect(first.localPagesRetired).toBeGreaterThan(0);
    s.clock.time += GRACE + 1;
    const second = await s.sluice.maintenance.run();
    check = undefined;
    expect(second.errors).toEqual([]);
    expect(second.orphansDeleted).toBeGreaterThan(0);
    expect(checks).toBeGreaterThan(50);
    expect(await snapshot(s, 0, TIMES)).toEqual(full);
  });
});
