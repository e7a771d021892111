/**
 * Counts what Sluice's own code does per produce request, per fetch, per group call and per GiB rolled,
 * retired and deleted, in the units AWS bills, so the cost model (bench/cost-model.ts) prices the
 * code as it is rather than a description of it. Sluice runs in-process on the metered in-memory
 * stores (the adapters count S3 requests and DynamoDB units as DynamoDB bills them) under a manual
 * clock: produce rounds of one batch per partition with caught-up consumer groups reading each batch,
 * steady heartbeats and offset commits, then maintenance runs past the roll, local retention, the
 * orphan collector's grace and retention. Maintenance is counted twice over: what every scheduled run
 * does, and what the orphan scan adds to the runs that make it (hourly as deployed: the model prices
 * each at its own rate). Exact and repeatable; no emulators, no network.
 */
import type { Sluice } from '../functions/app.js';
import { keys } from '../lib/core/keys.js';
import { encodeRecordBatch } from '../protocol/record-batch/index.js';
import type { ByStore, Counts, Member, Meters, RunCounts } from './cost-meters.js';
import {
  beat,
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
  sum,
  TOPIC,
  zero,
} from './cost-meters.js';
import { indexWalk, NEVER, steadyRuns } from './cost-usage-runs.js';

export type { ByStore, Counts, RunCounts } from './cost-meters.js';

export interface UsageRunOptions {
  partitions: number;
  /** Replica stores the topic is replicated over (its replication factor; acks=all). */
  replicas: number;
  /**
   * Most bytes a produce request (to one partition) may carry, framing included: one RecordBatch, or
   * several of at most 1 MiB each (the topic's max.message.bytes is Kafka's 1 MiB + 12).
   */
  batchBytes: number;
  recordBytes: number;
  requestsPerPartition: number;
  groups: number;
}

export const DEFAULT_USAGE_RUN: UsageRunOptions = {
  partitions: 2,
  replicas: 1,
  batchBytes: 1024 * 1024,
  recordBytes: 1024,
  requestsPerPartition: 40,
  groups: 2,
};

/**
 * The run for a request size: enough requests per partition that more than a 16 MiB segment rolls
 * (entries still in the partition item's tail, up to 16, never roll).
 */
export const usageRunFor = (batchBytes: number, replicas: number): UsageRunOptions => ({
  ...DEFAULT_USAGE_RUN,
  replicas,
  batchBytes,
  requestsPerPartition: Math.ceil((1.5 * 16 * 2 ** 20) / batchBytes) + 17,
});

export interface MeasuredUsage {
  options: UsageRunOptions;
  /** Stored bytes of one produce request's batch (what one PUT to each replica store carries). */
  requestBytes: number;
  /** Records per produce request (in `batches` RecordBatches). */
  records: number;
  batches: number;
  /** Per produce request: replica-store PUTs (one per replica), DynamoDB commit and index passes. */
  produce: Counts;
  /** Per fetch that returns one batch to a caught-up consumer. */
  fetch: Counts;
  /** Read units of one read of the partition item: what a waiting long poll pays every pollIntervalMs. */
  stateReadUnits: number;
  /** Per steady heartbeat of a member owning every partition. */
  heartbeat: Counts;
  /** Per committed partition offset (one commit request carries a member's partitions). */
  commitPerPartition: Counts;
  /**
   * A maintenance run with nothing to do that skips the orphan scan: a fixed part and a part per
   * partition (fitted on 1 and 9). It includes the scan claim's conditional write, which fails.
   */
  idleRun: RunCounts;
  /**
   * What every run of a topic in use does besides its roll, retire and expire work, skipping the
   * scan: the idle run's, plus per partition that took data since the last run the followers'
   * catch-up and the tail indexed at the run, and the sweep of two groups' members and offsets.
   */
  steadyRun: RunCounts;
  /**
   * What the orphan scan adds to a run: one LIST per store listed and nothing per 1,000 objects yet
   * (the model adds a page per 1,000 objects held), the per-partition reads of state and index, and
   * the read units per byte of index held beyond a run that skips it.
   */
  orphanScan: RunCounts & { readUnitsPerIndexByte: number };
  /**
   * The work of a GiB beyond what its runs would cost anyway (the model prices every scheduled run and
   * its walk itself): the difference between two scenarios that differ by whole segments. Per GiB
   * rolled: the roll's GETs of replica objects, segment PUTs, the swap.
   */
  rollPerGiB: { replica: Counts; segment: Counts; metadata: Counts };
  /** Per GiB rolled: local retention retiring it, then the collector deleting the replica objects. */
  retirePerGiB: { replica: Counts; metadata: Counts };
  /** Per GiB rolled: retention deleting the segments (and their index items). */
  expirePerGiB: { segment: Counts; metadata: Counts };
  /** DynamoDB item bytes per GiB held in segments (segment index items and time marks). */
  indexBytesPerGiB: number;
  /** DynamoDB item bytes of batch pages per GiB they index (until local retention retires them). */
  pageBytesPerGiB: number;
  /**
   * Read units a maintenance run that skips the orphan scan spends per byte of index items held,
   * beyond an idle run (retention and local retention reading theirs).
   */
  readUnitsPerIndexByte: number;
}

const GiB = 2 ** 30;
/** A RecordBatch v2 header, and the most framing one record of a null key and no headers takes. */
const BATCH_HEADER = 61;
const RECORD_FRAMING = 21;
const MAX_BATCH_BYTES = 2 ** 20;
const RETENTION_MS = 8 * DAY;

/** What one scenario counted: totals of each phase, before anything is taken out or divided. */
interface Scenario {
  requestBytes: number;
  records: number;
  batches: number;
  produced: number;
  produce: Counts;
  fetch: Counts;
  stateReadUnits: number;
  heartbeat: Counts;
  commits: Counts;
  /** The run that rolls, the two that retire and collect, the one that expires. */
  roll: ByStore;
  retire: ByStore;
  expire: ByStore;
  /** Index item bytes the runs after the roll walk. */
  indexNow: number;
  rolledBytes: number;
  segmentBytes: number;
  segmentIndexBytes: number;
  pageIndexBytes: number;
}

/**
 * Produces, reads and commits, then runs maintenance past the roll, local retention, the collector's
 * grace and retention, counting each phase whole.
 */
const scenario = async (options: UsageRunOptions): Promise<Scenario> => {
  const { partitions, replicas, batchBytes, recordBytes, requestsPerPartition, groups } = options;
  // Every measured run below is at least an hour after the last, so each makes the hourly scan.
  const { clock, metadata, sluice, meters } = meteredSluice(replicas, HOUR);
  // Retention a day past segment.ms (7 days), so the run that rolls the last, partial segments is
  // not the run that expires them.
  await sluice.catalog.create({
    name: TOPIC,
    partitions,
    replicationFactor: replicas,
    configs: { 'retention.ms': String(RETENTION_MS) },
  });
  const topic = await sluice.catalog.get(TOPIC);

  let done: ReturnType<Meters['mark']>;
  const { producerId, producerEpoch } = await sluice.producer.initProducerId();
  const batches = Math.ceil(batchBytes / MAX_BATCH_BYTES);
  const records = Math.max(
    1,
    Math.floor((batchBytes / batches - BATCH_HEADER) / (recordBytes + RECORD_FRAMING)),
  );
  const value = new Uint8Array(recordBytes).fill(7);
  const sequences = new Array<number>(partitions).fill(0);
  const request = (partition: number) =>
    concat(
      Array.from({ length: batches }, () => {
        const batch = encodeRecordBatch(
          Array.from({ length: records }, (_, i) => ({
            key: null,
            value,
            headers: [],
            timestamp: clock.now(),
            offsetDelta: i,
          })),
          { producerId, producerEpoch, baseSequence: sequences[partition]! },
        );
        sequences[partition]! += records;
        return batch;
      }),
    );
  const positions = Array.from({ length: groups }, () => new Array<number>(partitions).fill(0));
  let produce = zero();
  let fetch = zero();
  let requestBytes = 0;
  for (let round = 0; round < requestsPerPartition; round++) {
    for (let p = 0; p < partitions; p++) {
      const body = request(p);
      requestBytes = body.length;
      done = meters.mark();
      await sluice.producer.produceBatches(TOPIC, p, body, 'all');
      const used = done();
      produce = sum(produce, used.metadata, used.replica, used.segment);
      for (const position of positions) {
        done = meters.mark();
        const r = await sluice.fetcher.fetchBatches(TOPIC, p, {
          offset: position[p]!,
          maxBytes: 4 * 2 ** 20,
          maxWaitMs: 0,
        });
        const read = done();
        fetch = sum(fetch, read.metadata, read.replica, read.segment);
        if (r.batches.length !== batches)
          throw new Error(`a caught-up fetch read ${r.batches.length} batches, not one request's ${batches}`);
        position[p] = r.nextOffset;
      }
    }
    await clock.advance(1000);
  }
  const produced = partitions * requestsPerPartition;

  done = meters.mark();
  await sluice.store.get(keys.partitionState(topic.topicId, 0), { consistent: true });
  const stateReadUnits = done().metadata.readUnits;

  // Members join after the produce rounds: the simulated minutes would have timed their sessions out.
  const members = await joinGroups(sluice, groups);
  const heartbeat = await measureHeartbeats(sluice, members, meters);
  const commits = await measureCommits(sluice, members, positions, meters);

  // Roll (segment.bytes reached), then local retention and the collector, then retention.
  await clock.advance(MINUTE);
  done = meters.mark();
  const rolled = await maintenance(sluice, true);
  const roll = done();
  // The index the next runs walk: taken out of their counts with the walk priced per run.
  const indexNow = indexBytes(metadata, topic.topicId, partitions, [...PAGE_ITEMS, ...SEGMENT_ITEMS]);
  const rolledBytes = roll.segment.putBytes;
  if (rolled.segmentsRolled === 0 || rolledBytes === 0) throw new Error('nothing rolled: produce more');
  const segmentIndexBytes = indexBytes(metadata, topic.topicId, partitions, SEGMENT_ITEMS);
  const pageIndexBytes = indexBytes(metadata, topic.topicId, partitions, PAGE_ITEMS);

  // Local retention retires the copies; the next scan, past the grace, deletes them.
  await clock.advance(HOUR + MINUTE);
  done = meters.mark();
  await maintenance(sluice, true);
  await clock.advance(HOUR);
  await maintenance(sluice, true);
  const retire = done();

  await clock.advance(7 * DAY);
  done = meters.mark();
  await maintenance(sluice, true);
  const segmentBytes = rolledBytes + done().segment.putBytes;
  await clock.advance(RETENTION_MS - 7 * DAY + HOUR);
  done = meters.mark();
  await maintenance(sluice, true);
  const expire = done();
  if (expire.segment.deletes === 0) throw new Error('retention deleted nothing');
  return {
    requestBytes,
    records: records * batches,
    batches,
    produced,
    produce,
    fetch,
    stateReadUnits,
    heartbeat,
    commits,
    roll,
    retire,
    expire,
    indexNow,
    rolledBytes,
    segmentBytes,
    segmentIndexBytes,
    pageIndexBytes,
  };
};

/**
 * More requests per partition for the second scenario: at least a 16 MiB segment's worth, and a
 * multiple of the 16 commits after which a produce materializes, so both scenarios leave the same tail
 * and index it in the same passes. The counts are divided by the bytes each phase rolled or expired
 * more, so the extra need not be whole segments.
 */
const extraRequests = (batchBytes: number): number => {
  const perSegment = Math.ceil(SEGMENT_BYTES / batchBytes);
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  return (perSegment * 16) / gcd(perSegment, 16);
};
const SEGMENT_BYTES = 16 * 2 ** 20;

/**
 * Runs the scenario twice, the second with whole segments more per partition, and returns the counts
 * per unit of work. The work of a GiB (roll, retire, expire) is the difference between the two over
 * the difference in bytes: everything a run does whatever it rolls (the follower catch-up, the tail
 * indexed at the run, the groups' sweep, the claim) is the same in both and drops out, so it is not
 * charged per GiB; the model prices it per run (`steadyRun`).
 */
export const measureUsage = async (options: UsageRunOptions = DEFAULT_USAGE_RUN): Promise<MeasuredUsage> => {
  const { partitions, replicas } = options;
  const small = await scenario(options);
  const large = await scenario({
    ...options,
    requestsPerPartition: options.requestsPerPartition + extraRequests(options.batchBytes),
  });
  const rolledGiB = (large.rolledBytes - small.rolledBytes) / GiB;
  const segmentGiB = (large.segmentBytes - small.segmentBytes) / GiB;
  if (!(rolledGiB > 0) || !(segmentGiB > 0)) throw new Error('the larger scenario rolled no more');
  const { produced, requestBytes } = small;

  const idle = await steadyRuns(replicas, 'idle');
  const steady = await steadyRuns(replicas, 'steady');
  const walk = { run: await indexWalk(replicas, NEVER), scan: await indexWalk(replicas, 0) };
  const readUnitsPerIndexByte = walk.run;
  const scanReadUnitsPerIndexByte = walk.scan - walk.run;
  // The larger index the larger scenario's `n` runs walk after its roll: priced per run by the model.
  const walked = (n: number, k: keyof ByStore): Counts =>
    k === 'metadata'
      ? {
          ...zero(),
          readUnits:
            n * (large.indexNow - small.indexNow) * (readUnitsPerIndexByte + scanReadUnitsPerIndexByte),
        }
      : zero();
  const per = (a: Counts, b: Counts, n: number, k: keyof ByStore, gib: number): Counts =>
    scale(minus(minus(a, b), walked(n, k)), 1 / gib);
  const perGiB = (phase: 'roll' | 'retire' | 'expire', n: number, k: keyof ByStore, gib: number) =>
    per(large[phase][k], small[phase][k], n, k, gib);
  return {
    options,
    requestBytes,
    records: small.records,
    batches: small.batches,
    produce: scale(small.produce, 1 / produced),
    fetch: scale(small.fetch, 1 / (produced * options.groups)),
    stateReadUnits: small.stateReadUnits,
    heartbeat: small.heartbeat,
    commitPerPartition: scale(small.commits, 1 / partitions),
    idleRun: idle.run,
    steadyRun: steady.run,
    orphanScan: { ...idle.scan, readUnitsPerIndexByte: scanReadUnitsPerIndexByte },
    rollPerGiB: {
      replica: perGiB('roll', 1, 'replica', rolledGiB),
      segment: perGiB('roll', 1, 'segment', rolledGiB),
      metadata: perGiB('roll', 1, 'metadata', rolledGiB),
    },
    retirePerGiB: {
      replica: perGiB('retire', 2, 'replica', rolledGiB),
      metadata: perGiB('retire', 2, 'metadata', rolledGiB),
    },
    expirePerGiB: {
      segment: perGiB('expire', 1, 'segment', segmentGiB),
      metadata: perGiB('expire', 1, 'metadata', segmentGiB),
    },
    indexBytesPerGiB: (small.segmentIndexBytes * GiB) / small.rolledBytes,
    pageBytesPerGiB: (small.pageIndexBytes * GiB) / (produced * requestBytes),
    readUnitsPerIndexByte,
  };
};

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const BEATS = 8;

const measureHeartbeats = async (sluice: Sluice, members: Member[], meters: Meters): Promise<Counts> => {
  const done = meters.mark();
  for (let i = 0; i < BEATS; i++) for (const m of members) await beat(sluice, m);
  const used = done();
  return scale(used.metadata, 1 / (BEATS * members.length));
};

const measureCommits = async (
  sluice: Sluice,
  members: Member[],
  positions: number[][],
  meters: Meters,
): Promise<Counts> => {
  const done = meters.mark();
  for (const [g, m] of members.entries()) {
    const offsets = positions[g]!.map((offset, partition) => ({
      topic: TOPIC,
      partition,
      offset,
      metadata: '',
    }));
    const r = await sluice.groups.commitOffsets(m.groupId, {
      memberId: m.memberId,
      memberEpoch: m.memberEpoch,
      offsets,
    });
    if (r.results.some((x) => 'error' in x)) throw new Error(`commit refused: ${JSON.stringify(r.results)}`);
  }
  return scale(done().metadata, 1 / members.length);
};
