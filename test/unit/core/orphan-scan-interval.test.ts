/**
 * The orphan collector's interval (orphanScanIntervalMs): a run scans only when the last scan is at
 * least an interval old, the time of the last scan is claimed with a conditional write so two
 * overlapping runs never both scan, and an interval of 0 scans every run.
 */
import { describe, expect, it, vi } from 'vitest';
import { keys } from '../../../lib/core/keys.js';
import { memorySluice } from '../../support/log-support.js';

const HOUR = 60 * 60_000;

/** A Sluice with one orphan object (a produce whose commit failed after its PUT), 16 minutes old. */
const withOrphan = async (orphanScanIntervalMs?: number) => {
  const s = memorySluice(orphanScanIntervalMs === undefined ? {} : { orphanScanIntervalMs });
  await s.http('POST', '/v1/topics', { name: 't', partitions: 1 });
  await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'a', partition: 0 }] });
  const spy = vi.spyOn(s.store, 'update').mockRejectedValueOnce(new Error('network down'));
  expect(
    (await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'x', partition: 0 }] })).status,
  ).toBe(500);
  spy.mockRestore();
  expect(s.objects.keys()).toHaveLength(2);
  s.clock.time += 16 * 60_000;
  return s;
};

describe('orphan scan interval', () => {
  it('scans on every run when no interval is set', async () => {
    const s = await withOrphan();
    const first = await s.sluice.maintenance.run();
    expect([first.orphanScan, first.orphansDeleted]).toEqual([true, 1]);
    const second = await s.sluice.maintenance.run();
    expect([second.orphanScan, second.orphansDeleted]).toEqual([true, 0]);
    expect(await s.store.get(keys.orphanScan)).toBeUndefined();
  });

  it('skips the scan until the last one is an interval old, then scans again', async () => {
    const s = await withOrphan(HOUR);
    const first = await s.sluice.maintenance.run();
    expect([first.orphanScan, first.orphansDeleted, first.errors]).toEqual([true, 1, []]);
    const scannedAt = s.clock.time;
    expect((await s.store.get(keys.orphanScan))?.['at']).toBe(scannedAt);

    // A second orphan, old enough, waits for the next scan.
    const spy = vi.spyOn(s.store, 'update').mockRejectedValueOnce(new Error('network down'));
    await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'y', partition: 0 }] });
    spy.mockRestore();
    s.clock.time += HOUR - 1;
    const early = await s.sluice.maintenance.run();
    expect([early.orphanScan, early.orphansDeleted, early.errors]).toEqual([false, 0, []]);
    expect((await s.store.get(keys.orphanScan))?.['at']).toBe(scannedAt);
    expect(s.objects.keys()).toHaveLength(2);

    s.clock.time += 1;
    const due = await s.sluice.maintenance.run();
    expect([due.orphanScan, due.orphansDeleted]).toEqual([true, 1]);
    expect((await s.store.get(keys.orphanScan))?.['at']).toBe(scannedAt + HOUR);
    expect(s.objects.keys()).toHaveLength(1);
  });

  it('lets only one of two overlapping runs scan', async () => {
    const s = await withOrphan(HOUR);
    const claims = await Promise.all([
      s.sluice.maintenance.claimOrphanScan(),
      s.sluice.maintenance.claimOrphanScan(),
    ]);
    expect(claims.filter(Boolean)).toHaveLength(1);
  });

  it('records a failed claim and skips the scan rather than failing the run', async () => {
    const s = await withOrphan(HOUR);
    const spy = vi.spyOn(s.store, 'put').mockRejectedValueOnce(new Error('throttled'));
    const report = await s.sluice.maintenance.run();
    spy.mockRestore();
    expect(report.orphanScan).toBe(false);
    expect(report.orphansDeleted).toBe(0);
    expect(report.errors).toEqual(['orphan scan claim: throttled']);
  });
});
