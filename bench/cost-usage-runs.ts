/**
 * What a maintenance run with nothing new to do costs, apart from the work data causes: a run that
 * skips the orphan scan, what the scan adds to the run that makes it, and what each reads per byte of
 * index held. bench/cost-usage.ts takes these out of its roll, retire and expire runs; the model
 * prices every scheduled run and every scan on its own.
 */
import { keys } from '../lib/core/keys.js';
import { encodeRecordBatch } from '../protocol/record-batch/index.js';
import { itemSize, writeUnitsFor } from '../lib/ports/meter.js';
import type { ByStore, RunCounts } from './cost-meters.js';
import {
  beat,
  byStore,
  DAY,
  HOUR,
  indexBytes,
  joinGroups,
  maintenance,
  meteredSluice,
  minus,
  MINUTE,
  PAGE_ITEMS,
  scale,
  SEGMENT_ITEMS,
  TOPIC,
} from './cost-meters.js';

/**
 * Two maintenance runs over a topic of `partitions`, after a run that settles it and scans: one a
 * minute later that skips the scan, one an hour later that makes it; `scan` is what the second adds.
 * 'idle': no data and no groups. 'steady': what every run of a topic in use does besides rolling,
 * retiring and expiring: each partition took a produce request since the last run (the followers'
 * catch-up, the tail indexed at the run), and two groups (as the cost shapes have) with a live member
 * and committed offsets (their sweep). DynamoDB bills a write whose condition fails (the skipped claim)
 * by the item it kept, at least one unit (Developer Guide, "DynamoDB read and write operations"); the
 * memory meter counts none, so the run gets it here, and the scan's successful claim then adds nothing
 * over it.
 */
const runOf = async (
  partitions: number,
  replicas: number,
  kind: RunKind,
): Promise<{ run: ByStore; scan: ByStore }> => {
  const { clock, metadata, sluice, meters } = meteredSluice(replicas, HOUR);
  await sluice.catalog.create({ name: TOPIC, partitions, replicationFactor: replicas });
  const steady = kind === 'steady';
  const value = new Uint8Array(1024).fill(5);
  const members = steady ? await joinGroups(sluice, GROUPS) : [];
  // Before each run: a request per partition and a heartbeat per member (their counts are produce's
  // and groups', not the run's).
  const traffic = async () => {
    if (!steady) return;
    for (let p = 0; p < partitions; p++)
      await sluice.producer.produceBatches(
        TOPIC,
        p,
        encodeRecordBatch([{ key: null, value, headers: [], timestamp: clock.now(), offsetDelta: 0 }]),
        'all',
      );
  };
  // Members heartbeat within their 45-second session as the clock moves (groups' counts, not the run's).
  const advance = async (ms: number) => {
    for (let left = ms; left > 0; left -= HEARTBEAT_MS) {
      await clock.advance(Math.min(HEARTBEAT_MS, left));
      for (const m of members) await beat(sluice, m);
    }
  };
  await traffic();
  for (const m of members) {
    const offsets = Array.from({ length: partitions }, (_, partition) => ({
      topic: TOPIC,
      partition,
      offset: 1,
      metadata: '',
    }));
    await sluice.groups.commitOffsets(m.groupId, {
      memberId: m.memberId,
      memberEpoch: m.memberEpoch,
      offsets,
    });
  }
  await maintenance(sluice, true);
  await advance(MINUTE);
  await traffic();
  let done = meters.mark();
  await maintenance(sluice, false);
  const skipped = done();
  const claim = await metadata.get(keys.orphanScan);
  if (!claim) throw new Error('no orphan scan claim');
  const run = {
    ...skipped,
    metadata: {
      ...skipped.metadata,
      writeUnits: skipped.metadata.writeUnits + writeUnitsFor(itemSize(claim)),
    },
  };
  await advance(HOUR);
  await traffic();
  done = meters.mark();
  await maintenance(sluice, true);
  const scanned = done();
  return { run, scan: byStore((k) => minus(scanned[k], run[k])) };
};

export type RunKind = 'idle' | 'steady';
/** Consumer groups of the cost shapes (bench/cost-model.ts SHAPES). */
const GROUPS = 2;
const HEARTBEAT_MS = 30_000;

/** An orphan scan interval no run reaches: only the first run scans. */
export const NEVER = 1000 * DAY;

/**
 * What a run with nothing new to do reads per byte of index it holds (the orphan scan reads every
 * batch page and segment item, retention and local retention read theirs): its read units over two
 * sizes of an index of many small entries and segments, so DynamoDB's rounding of each query to 4 KiB
 * does not swamp the slope. Measured with the scan on every run (interval 0) and never (`NEVER`):
 * the same runs, so the difference is the scan's. `configs`: the topic's (a `retention.bytes` the runs
 * never reach, to price retention by bytes).
 */
export const indexWalk = async (
  replicas: number,
  orphanScanIntervalMs: number,
  configs: Record<string, string> = {},
): Promise<number> => {
  const partitions = 4;
  const { clock, metadata, sluice, meters } = meteredSluice(replicas, orphanScanIntervalMs);
  await sluice.catalog.create({
    name: TOPIC,
    partitions,
    replicationFactor: replicas,
    configs: { 'segment.bytes': String(64 * 1024), ...configs },
  });
  const { topicId } = await sluice.catalog.get(TOPIC);
  const value = new Uint8Array(1024).fill(3);
  const body = () =>
    encodeRecordBatch(
      Array.from({ length: 4 }, (_, i) => ({
        key: null,
        value,
        headers: [],
        timestamp: clock.now(),
        offsetDelta: i,
      })),
    );
  const grow = async () => {
    for (let round = 0; round < 320; round++) {
      for (let p = 0; p < partitions; p++) await sluice.producer.produceBatches(TOPIC, p, body(), 'all');
      await clock.advance(100);
    }
    await clock.advance(MINUTE);
    await maintenance(sluice);
    await clock.advance(MINUTE);
    const index = indexBytes(metadata, topicId, partitions, [...PAGE_ITEMS, ...SEGMENT_ITEMS]);
    const done = meters.mark();
    await maintenance(sluice, orphanScanIntervalMs === 0);
    return { index, readUnits: done().metadata.readUnits };
  };
  const small = await grow();
  const large = await grow();
  return (large.readUnits - small.readUnits) / (large.index - small.index);
};

/** A run of this kind and the scan's part, each fitted as a fixed part and a part per partition. */
export const steadyRuns = async (
  replicas: number,
  kind: RunKind,
): Promise<{ run: RunCounts; scan: RunCounts }> => {
  const one = await runOf(1, replicas, kind);
  const nine = await runOf(9, replicas, kind);
  const fit = (k: 'run' | 'scan'): RunCounts => {
    const perPartition = byStore((s) => scale(minus(nine[k][s], one[k][s]), 1 / 8));
    return { fixed: byStore((s) => minus(one[k][s], perPartition[s])), perPartition };
  };
  return { run: fit('run'), scan: fit('scan') };
};
