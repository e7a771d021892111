/**
 * Issue 24, "tests that miss real bugs": fixtures that write one record per batch cannot tell a
 * batch's first timestamp from its largest, and ListOffsets asserted with one replica cannot tell the
 * high watermark from the leader's log end. These fixtures write multi-record batches with spread
 * timestamps (a batch's first timestamp far older than its largest) and read offsets on three
 * replicas with a follower behind. Each test below failed against a hand-planted bug (see the report
 * of issue 24): retention aging a batch by its first timestamp, compaction expiring a tombstone by
 * its batch's first timestamp, ListOffsets latest answering the leader's log end, and a timestamp
 * lookup reading past the high watermark.
 */
import { describe, expect, it } from 'vitest';
import { replicatePartition } from '../../../../lib/core/replication/replicator.js';
import { setup } from '../../../support/compaction-support.js';
import { memorySluice } from '../../../support/log-support.js';
import { replicationCluster } from './replication-support.js';

const HOUR = 3_600_000;

describe('multi-record batches with spread timestamps', () => {
  it('retention ages a batch not yet rolled by its largest timestamp, never its first', async () => {
    const s = memorySluice();
    const now = s.clock.now();
    expect(
      (
        await s.http('POST', '/v1/topics', {
          name: 'r',
          partitions: 1,
          configs: { 'retention.ms': String(HOUR) },
        })
      ).status,
    ).toBe(201);
    const batch = async (timestamps: number[]) => {
      const r = await s.http('POST', '/v1/topics/r/records', {
        records: timestamps.map((timestamp, i) => ({ value: `v${i}`, partition: 0, timestamp })),
      });
      expect(r.status).toBe(200);
      return r.body.results.map((x: { offset: number }) => x.offset);
    };
    expect(await batch([now - 10 * HOUR, now - 9 * HOUR])).toEqual([0, 1]); // wholly expired
    expect(await batch([now - 10 * HOUR, now - 60_000])).toEqual([2, 3]); // first expired, largest not
    expect(await batch([now - 20 * HOUR, now])).toEqual([4, 5]);
    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    const earliest = await s.http('GET', '/v1/topics/r/partitions/0/offsets?at=earliest');
    expect(earliest.body.offset).toBe(2);
    expect((await s.http('GET', '/v1/topics/r/partitions/0/records?offset=0')).body.error.code).toBe(
      'OFFSET_OUT_OF_RANGE',
    );
    const read = await s.http('GET', '/v1/topics/r/partitions/0/records?offset=2');
    expect(read.body.records.map((r: { offset: number }) => r.offset)).toEqual([2, 3, 4, 5]);

    // Once the largest timestamp is past retention.ms too, the batch goes, and only it.
    s.clock.time += HOUR;
    await s.sluice.maintenance.run();
    expect((await s.http('GET', '/v1/topics/r/partitions/0/offsets?at=earliest')).body.offset).toBe(4);
  });

  it('compaction keeps a tombstone whose batch is newer than delete.retention.ms, even when its first record is older', async () => {
    const s = await setup({ 'delete.retention.ms': String(HOUR), 'min.cleanable.dirty.ratio': '0.01' });
    const now = s.clock.now();
    await s.produce([
      ['a', 'a0', now - 30 * HOUR],
      ['b', 'b0', now - 30 * HOUR],
    ]);
    // One batch: a's tombstone stamped 10 hours ago, c's value stamped now.
    await s.produce([
      ['a', null, now - 10 * HOUR],
      ['c', 'c0', now],
    ]);
    await s.produce([['b', 'b1', now]]);
    const report = await s.sluice.maintenance.run();
    expect(report.errors).toEqual([]);
    expect((await s.fetchRows()).rows).toEqual([
      [2, 'a', null],
      [3, 'c', 'c0'],
      [4, 'b', 'b1'],
    ]);
    expect((await s.cleaner()).oldestTombstone).toBe(now);

    // delete.retention.ms after the batch's largest timestamp, the tombstone goes.
    s.clock.time += HOUR + 1_000;
    await s.produce([['c', 'c1', s.clock.now()]]);
    await s.sluice.maintenance.run();
    expect((await s.fetchRows()).rows).toEqual([
      [4, 'b', 'b1'],
      [5, 'c', 'c1'],
    ]);
  });
});

describe('ListOffsets on three replicas with a follower behind', () => {
  it('answers latest with the high watermark, not the leader log end, until the follower has the records', async () => {
    const c = replicationCluster(3);
    const { topic, state } = await c.create({ 'min.insync.replicas': '1' });
    const t0 = c.clock.now();
    await c.send('a', 'all');
    await c.send('b', 'all');
    // acks=1: only the leader holds c and d; the high watermark stays at 2.
    await c.http('POST', '/v1/topics/t/records', {
      records: [
        { value: 'c', partition: 0, timestamp: t0 + 5_000 },
        { value: 'd', partition: 0, timestamp: t0 + 6_000 },
      ],
      acks: '1',
    });
    const before = await state();
    expect([before.nextOffset, before.highWatermark]).toEqual([4, 2]);
    const latest = async () => (await c.http('GET', '/v1/topics/t/partitions/0/offsets?at=latest')).body;
    expect(await latest()).toEqual({ offset: 2, timestamp: -1 });
    // A timestamp only records above the high watermark reach finds nothing yet.
    const byTime = async () =>
      (await c.http('GET', `/v1/topics/t/partitions/0/offsets?at=${t0 + 5_000}`)).body;
    expect(await byTime()).toEqual({ offset: null, timestamp: null });

    await replicatePartition(c.sluice.log, topic, 0);
    const after = await state();
    expect(after.highWatermark).toBe(4);
    expect(await latest()).toEqual({ offset: 4, timestamp: -1 });
    expect(await byTime()).toEqual({ offset: 2, timestamp: t0 + 5_000 });
  });
});
