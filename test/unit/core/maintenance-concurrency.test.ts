/**
 * A run maintains several partitions at once (partitionConcurrency): exactly that many are in flight,
 * and as many rolls and segment PUTs overlap, while the report still counts every partition's work, a
 * topic's orphans are collected only after its last partition is done, and no roll starts past the
 * run's deadline whichever worker reaches it.
 */
import { describe, expect, it } from 'vitest';
import type { ObjectCall } from '../../../lib/adapters/forwarding.js';
import { ForwardingObjectStore } from '../../../lib/adapters/forwarding.js';
import type { MaintenanceOptions } from '../../../lib/core/maintenance.js';
import { Maintenance } from '../../../lib/core/maintenance.js';
import type { Topic } from '../../../lib/core/topics/model.js';
import type { ObjectStore } from '../../../lib/ports/object-store.js';
import { T0, segmentSetup } from '../../support/segment-support.js';

/** A segment store whose calls wait `delayMs` of real time (as S3 would), counting the PUTs in flight. */
class SlowStore extends ForwardingObjectStore {
  delayMs = 0;
  puts = 0;
  maxPuts = 0;
  /** Runs at the start of each PUT (before its wait). */
  onPut: () => void = () => {};

  protected override async around<T>(call: ObjectCall, run: () => Promise<T>): Promise<T> {
    const put = call.op === 'put';
    if (put) {
      this.onPut();
      this.maxPuts = Math.max(this.maxPuts, ++this.puts);
    }
    try {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      return await run();
    } finally {
      if (put) this.puts--;
    }
  }
}

/** Counts partitions and rolls in flight, and logs when each partition ends and each topic's orphans start. */
class CountingMaintenance extends Maintenance {
  partitionsInFlight = 0;
  maxPartitions = 0;
  rollsInFlight = 0;
  maxRolls = 0;
  events: string[] = [];

  constructor(
    options: MaintenanceOptions,
    private readonly names: Map<string, string>,
  ) {
    super(options);
  }

  protected override async maintainPartition(
    ...args: Parameters<Maintenance['maintainPartition']>
  ): Promise<void> {
    const [topic, p]: [Topic, number] = [args[0], args[1]];
    this.maxPartitions = Math.max(this.maxPartitions, ++this.partitionsInFlight);
    try {
      await super.maintainPartition(...args);
    } finally {
      this.partitionsInFlight--;
      this.events.push(`done ${topic.name}-${p}`);
    }
  }

  override async rollSegments(...args: Parameters<Maintenance['rollSegments']>): Promise<number> {
    this.maxRolls = Math.max(this.maxRolls, ++this.rollsInFlight);
    try {
      return await super.rollSegments(...args);
    } finally {
      this.rollsInFlight--;
    }
  }

  override async collectOrphans(topicId: string, partitions: number): Promise<number> {
    this.events.push(`orphans ${this.names.get(topicId)}`);
    return super.collectOrphans(topicId, partitions);
  }
}

/**
 * Topic `t` with 16 partitions each holding one full 16 KiB segment to roll (8 entries of ~2.4 KiB) and
 * topic `u` with 3 partitions of one record each, nothing indexed yet; then the segment store slows down.
 */
const setup = async () => {
  let slow: SlowStore | undefined;
  const s = await segmentSetup({}, 16, {
    wrapSegmentStore: (inner: ObjectStore) => (slow = new SlowStore(inner)),
  });
  for (let p = 0; p < 16; p++) await s.write(8, T0, p);
  expect((await s.http('POST', '/v1/topics', { name: 'u', partitions: 3 })).status).toBe(201);
  for (let p = 0; p < 3; p++)
    expect(
      (await s.http('POST', '/v1/topics/u/records', { records: [{ value: 'v', partition: p }] })).status,
    ).toBe(200);
  const names = new Map((await s.sluice.catalog.list()).map((t) => [t.topicId, t.name]));
  slow!.delayMs = 20;
  const maintenance = (options: Partial<MaintenanceOptions> = {}) =>
    new CountingMaintenance({ log: s.sluice.log, objectStores: [s.objects], ...options }, names);
  return { ...s, slow: slow!, maintenance };
};

describe('maintenance concurrency', () => {
  for (const [concurrency, label] of [
    [undefined, '8 partitions at once by default'],
    [3, '3 partitions at once'],
    [1, 'one partition at a time with 1'],
  ] as const)
    it(`maintains ${label}, counting all of them, each topic's orphans after its partitions`, async () => {
      const s = await setup();
      const expected = concurrency ?? 8;
      const m = s.maintenance(concurrency === undefined ? {} : { partitionConcurrency: concurrency });
      const report = await m.run();
      expect([m.maxPartitions, m.maxRolls, s.slow.maxPuts]).toEqual([expected, expected, expected]);
      expect(report).toMatchObject({
        partitions: 19,
        entriesIndexed: 16 * 8 + 3,
        segmentsRolled: 16,
        orphanScan: true,
        orphansDeleted: 0,
        errors: [],
      });
      for (let p = 0; p < 16; p++) expect(await s.segmentItems(p)).toHaveLength(1);
      // Each topic's orphans are collected once, after every one of its partitions is done.
      for (const [topic, partitions] of [
        ['t', 16],
        ['u', 3],
      ] as const) {
        const orphans = m.events.indexOf(`orphans ${topic}`);
        expect(m.events.lastIndexOf(`orphans ${topic}`)).toBe(orphans);
        for (let p = 0; p < partitions; p++)
          expect(m.events.indexOf(`done ${topic}-${p}`)).toBeLessThan(orphans);
      }
      expect(await m.run()).toMatchObject({ partitions: 19, entriesIndexed: 0, segmentsRolled: 0 });
    });

  it('starts no roll past the deadline, whichever worker reaches it; the next run rolls the rest', async () => {
    const s = await setup();
    const deadline = s.clock.now() + 100;
    const startedAt: number[] = [];
    // Each segment PUT moves the run's clock 30 ms: the 100 ms budget is spent after four PUTs. Rolls
    // that started before then (at most the 8 in flight) still write their segment; no other starts.
    s.slow.onPut = () => {
      startedAt.push(s.clock.now());
      s.clock.time += 30;
    };
    const first = await s.maintenance({ runBudgetMs: 100 }).run();
    expect(first.segmentsRolled).toBe(startedAt.length);
    expect(first.segmentsRolled).toBeGreaterThanOrEqual(4);
    expect(first.segmentsRolled).toBeLessThanOrEqual(8);
    expect(startedAt.filter((at) => at > deadline).length).toBeLessThan(8);
    s.slow.onPut = () => {};
    const second = await s.maintenance().run();
    expect(first.segmentsRolled + second.segmentsRolled).toBe(16);
  });

  it('rejects a partitionConcurrency that is not a positive integer', () => {
    for (const partitionConcurrency of [0, -1, 1.5, Number.NaN]) {
      const make = () => new Maintenance({ log: {} as never, objectStores: [], partitionConcurrency });
      expect(make).toThrow(RangeError);
      expect(make).toThrow(
        new RangeError(`partitionConcurrency must be a positive integer: ${partitionConcurrency}`),
      );
    }
  });
});
