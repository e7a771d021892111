import { beforeAll, describe, expect, it } from 'vitest';
import type { MeasuredUsage } from '../../../bench/cost-usage.js';
import { measureUsage, usageRunFor } from '../../../bench/cost-usage.js';

const GiB = 2 ** 30;
/**
 * Write units of a segment of 256 KiB requests: 8 for its item (2 KiB of chunks) and the raise, 5 for
 * its four time marks merged (four deletes, the merged one put), 8 for its four pages' checks.
 */
const ROLL_256 = 8 + 5 + 4 * 2;

describe('measureUsage: counts of Sluice’s own code on the metered memory stores', () => {
  let rf3: MeasuredUsage;
  let twoBatches: MeasuredUsage;
  beforeAll(async () => {
    rf3 = await measureUsage({ ...usageRunFor(256 * 1024, 3), partitions: 1 });
    twoBatches = await measureUsage({ ...usageRunFor(2 * 2 ** 20, 1), partitions: 1, groups: 1 });
  }, 60_000);

  it('fills a request to its size with 1 KiB records: 250 records, 258,497 bytes for 256 KiB', () => {
    expect([rf3.requestBytes, rf3.records, rf3.batches]).toEqual([258_497, 250, 1]);
    // Past Kafka's 1 MiB max.message.bytes, a request carries several batches.
    expect([twoBatches.requestBytes, twoBatches.records, twoBatches.batches]).toEqual([2_074_198, 2006, 2]);
  });

  it('writes every produce request once to each of the RF replica stores (acks=all)', () => {
    expect(rf3.produce).toMatchObject({ puts: 3, putBytes: 3 * 258_497, gets: 0, lists: 0 });
    expect(twoBatches.produce).toMatchObject({ puts: 1, putBytes: 2_074_198, gets: 0 });
    // One commit UpdateItem on a partition item of 1–2 KB, plus a pass of index writes per 16
    // commits: more than one unit per request, less than two.
    for (const u of [rf3, twoBatches]) {
      expect(u.produce.writeUnits).toBeGreaterThan(1);
      expect(u.produce.writeUnits).toBeLessThan(2);
    }
  });

  it('serves a caught-up consumer one request per fetch with one ranged GET, from the tail', () => {
    expect(rf3.fetch).toMatchObject({ puts: 0, gets: 1, getBytes: 258_497, writeUnits: 0 });
    expect(twoBatches.fetch).toMatchObject({ gets: 1, getBytes: 2_074_198 });
    expect(rf3.stateReadUnits).toBe(1);
  });

  it('rolls by reading each replica object once from the leader and writing 16 MiB segments once', () => {
    const roll = rf3.rollPerGiB;
    expect(roll.replica.getBytes / roll.replica.gets).toBeCloseTo(258_497, 3);
    expect(roll.replica.puts).toBe(0);
    expect(roll.segment.putBytes).toBe(GiB);
    // Segments of 64 requests (16.54 MB, under segment.bytes): 64.89 of them per GiB
    expect(roll.segment.puts).toBeCloseTo(64.89478376742306, 9);
    expect(twoBatches.rollPerGiB.replica.getBytes / twoBatches.rollPerGiB.replica.gets).toBeCloseTo(
      2_074_198,
      3,
    );
  });

  it('retires the replica copies and expires segments in batched requests, and prices their index writes', () => {
    // One DeleteObjects request per store takes up to 1,000 keys, so the requests do not grow with the
    // bytes between the two scenarios (DELETE is free on both classes anyway).
    expect(rf3.retirePerGiB.replica.deletes).toBe(0);
    expect(rf3.retirePerGiB.replica.gets).toBe(0);
    expect(rf3.expirePerGiB.segment.deletes).toBe(0);
    expect(rf3.expirePerGiB.segment.puts).toBe(0);
    // A retired page is rewritten as a marker; an expired segment's item is deleted.
    expect(rf3.retirePerGiB.metadata.writeUnits).toBeGreaterThan(0);
    expect(rf3.expirePerGiB.metadata.writeUnits).toBeGreaterThan(0);
  });

  it('charges a GiB only what grows with its bytes, not what every run does anyway', () => {
    // The swap of each segment: its item put, the partition item's segEnd raised and a check of the
    // batch page it came from, in one transaction (2 units per KiB of each); the runs' own work (the
    // claim, the followers' catch-up, the tail indexed at the run, the groups' sweep) is the same in
    // both scenarios and drops out.
    expect(twoBatches.rollPerGiB.metadata.writeUnits).toBeCloseTo(6 * twoBatches.rollPerGiB.segment.puts, 6);
    // Segments of 256 KiB requests span four pages and four materialization passes: four checks, and
    // the roll merges their four time marks into one (a delete unit each).
    expect(rf3.rollPerGiB.metadata.writeUnits / rf3.rollPerGiB.segment.puts).toBeCloseTo(ROLL_256, 6);
    // That work is priced per run instead: more than an idle run's for a partition that took data.
    expect(rf3.steadyRun.perPartition.metadata.writeUnits).toBeGreaterThan(
      rf3.idleRun.perPartition.metadata.writeUnits,
    );
    expect(rf3.steadyRun.fixed.metadata.readUnits).toBeGreaterThan(rf3.idleRun.fixed.metadata.readUnits);
  });

  it('measures what a run reads per byte of index it holds, and what the orphan scan reads on top', () => {
    for (const u of [rf3, twoBatches]) {
      // Retention and local retention stop at the first unit they keep (issue 28): what a run reads
      // no longer grows with the index held (it read 1.36 units per 4 KiB before). The scan still
      // walks every page and segment item.
      expect(u.readUnitsPerIndexByte * 4096).toBe(0);
      expect(u.orphanScan.readUnitsPerIndexByte * 4096).toBeCloseTo(0.9065289561047583, 9);
      expect(u.pageBytesPerGiB).toBeGreaterThan(0);
    }
  });

  it('counts group calls and idle maintenance runs per unit', () => {
    expect(rf3.heartbeat).toMatchObject({ writeUnits: 1, readUnits: 3, puts: 0 });
    // The offset's put and the check of the member's epoch, each 2 units in the transaction.
    expect(rf3.commitPerPartition).toMatchObject({ writeUnits: 4, readUnits: 2 });
    // A run that skips the scan lists nothing but the follower probe per partition, and pays the
    // failed claim's write unit.
    expect(rf3.idleRun.fixed.replica.lists).toBe(0);
    expect(rf3.idleRun.fixed.segment.lists).toBe(0);
    expect(rf3.idleRun.fixed.metadata.writeUnits).toBe(1);
    expect(rf3.idleRun.perPartition.replica.lists).toBe(1);
    // Measured: the partition item, read once for every step (its byte total and the first unit
    // retention kept say nothing is due), 2 units for RF=3's larger item; 9 when retention walked the
    // index from its start page by page, 8 when it read whole indexes.
    expect(rf3.idleRun.perPartition.metadata.readUnits).toBe(2);
    // The scan lists every store once (a page per 1,000 objects) and reads each partition's state
    // and index; its successful claim costs what the failed one does.
    expect(rf3.orphanScan.fixed.replica.lists).toBe(3);
    expect(rf3.orphanScan.fixed.segment.lists).toBe(1);
    expect(rf3.orphanScan.perPartition.replica.lists).toBe(0);
    expect(rf3.orphanScan.perPartition.metadata.readUnits).toBe(3);
    expect(rf3.orphanScan.fixed.metadata.writeUnits).toBe(0);
  });
});
