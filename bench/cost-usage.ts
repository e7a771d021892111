/**
 * Counts what Sluice's own code does per produce request, per fetch, per group call and per GiB rolled,
 * retired and deleted, in the units AWS bills, so the cost model (bench/cost-model.ts) prices the
 * code as it is rather than a description of it. Sluice runs in-process on the metered in-memory
 * stores (the adapters count S3 requests and DynamoDB units as DynamoDB bills them) under a manual
 * clock: produce rounds of one batch per partition with caught-up consumer groups reading each batch,
 * steady heartbeats and offset commits, then maintenance runs past the roll, local retention, the
 * orphan collector's grace and retention. Exact and repeatable; no emulators, no network.
 */
import { ManualClock } from '../lib/adapters/fault/index.js';
import { MemoryMetadataStore } from '../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import { createSluice } from '../lib/app.js';
import type { Sluice } from '../lib/app.js';
import { keys } from '../lib/core/keys.js';
import { encodeRecordBatch } from '../lib/core/record-batch/index.js';
import { itemSize, StorageMeter } from '../lib/ports/meter.js';
import type { MeterReading } from '../lib/ports/meter.js';
import { fromTopicPartitions } from '../lib/core/groups/partition-map.js';

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

/** S3 requests and DynamoDB units, per the unit named by the field holding them. */
export interface Counts {
  puts: number;
  putBytes: number;
  gets: number;
  getBytes: number;
  lists: number;
  deletes: number;
  writeUnits: number;
  readUnits: number;
}

/** Counts of the replica stores (summed), the segment store and the metadata store. */
export interface ByStore {
  replica: Counts;
  segment: Counts;
  metadata: Counts;
}

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
  /** A maintenance run with nothing to do: a fixed part and a part per partition (fitted on 1 and 9). */
  idleRun: { fixed: ByStore; perPartition: ByStore };
  /**
   * The work of a GiB beyond what its runs would cost with nothing to do (the model prices every
   * scheduled run's walk itself). Per GiB rolled: the roll's GETs of replica objects, segment PUTs.
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
  /** Read units a maintenance run spends per byte of index items held, beyond an idle run. */
  readUnitsPerIndexByte: number;
}

const GiB = 2 ** 30;
const zero = (): Counts => ({
  puts: 0,
  putBytes: 0,
  gets: 0,
  getBytes: 0,
  lists: 0,
  deletes: 0,
  writeUnits: 0,
  readUnits: 0,
});

const toCounts = (m: MeterReading): Counts => ({
  puts: m.objectPuts,
  putBytes: m.objectPutBytes,
  gets: m.objectGets,
  getBytes: m.objectGetBytes,
  lists: m.objectLists,
  deletes: m.objectDeletes,
  writeUnits: m.writeUnits,
  readUnits: m.readUnits,
});

const scale = (c: Counts, by: number): Counts =>
  Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v * by])) as unknown as Counts;

const minus = (a: Counts, b: Counts): Counts =>
  Object.fromEntries(
    Object.entries(a).map(([k, v]) => [k, Math.max(0, v - b[k as keyof Counts])]),
  ) as unknown as Counts;

/** Meters of every store, read and diffed as one. */
class Meters {
  constructor(
    private readonly metadata: MemoryMetadataStore,
    private readonly replicas: MemoryObjectStore[],
    private readonly segments: MemoryObjectStore,
  ) {}

  mark(): () => { metadata: Counts; replica: Counts; segment: Counts } {
    const start = this.read();
    return () => {
      const now = this.read();
      return {
        metadata: minus(now.metadata, start.metadata),
        replica: minus(now.replica, start.replica),
        segment: minus(now.segment, start.segment),
      };
    };
  }

  private read() {
    const replica = new StorageMeter();
    for (const r of this.replicas) replica.add(r.meter.read());
    return {
      metadata: toCounts(this.metadata.meter.read()),
      replica: toCounts(replica.read()),
      segment: toCounts(this.segments.meter.read()),
    };
  }
}

const TOPIC = 'cost';
/** A RecordBatch v2 header, and the most framing one record of a null key and no headers takes. */
const BATCH_HEADER = 61;
const RECORD_FRAMING = 21;
const MAX_BATCH_BYTES = 2 ** 20;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const RETENTION_MS = 8 * DAY;

/** Runs the scenario and returns the counts per unit of work. */
export const measureUsage = async (options: UsageRunOptions = DEFAULT_USAGE_RUN): Promise<MeasuredUsage> => {
  const { partitions, replicas, batchBytes, recordBytes, requestsPerPartition, groups } = options;
  const { clock, metadata, sluice, meters } = meteredSluice(replicas);
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
  const rolled = await maintenance(sluice);
  const roll = done();
  // The index the next runs walk: taken out of their counts with the walk priced per run.
  const indexNow = indexBytes(metadata, topic.topicId, partitions, [...PAGE_ITEMS, ...SEGMENT_ITEMS]);
  const rolledBytes = roll.segment.putBytes;
  if (rolled.segmentsRolled === 0 || rolledBytes === 0) throw new Error('nothing rolled: produce more');
  const perRolledGiB = GiB / rolledBytes;
  const indexBytesPerGiB = indexBytes(metadata, topic.topicId, partitions, SEGMENT_ITEMS) * perRolledGiB;
  const pageBytesPerGiB =
    (indexBytes(metadata, topic.topicId, partitions, PAGE_ITEMS) * GiB) / (produced * requestBytes);

  await clock.advance(HOUR + MINUTE);
  done = meters.mark();
  await maintenance(sluice);
  await clock.advance(16 * MINUTE);
  await maintenance(sluice);
  const retire = done();

  await clock.advance(7 * DAY);
  done = meters.mark();
  await maintenance(sluice);
  const segmentBytes = rolledBytes + done().segment.putBytes;
  await clock.advance(RETENTION_MS - 7 * DAY + HOUR);
  done = meters.mark();
  await maintenance(sluice);
  const expire = done();
  if (expire.segment.deletes === 0) throw new Error('retention deleted nothing');
  const perSegmentGiB = GiB / segmentBytes;

  const idle = await idleRuns(replicas);
  const walk = await indexWalk(replicas);
  const readUnitsPerIndexByte = walk.readUnitsPerIndexByte;
  const idleRun = byStore((k) => sum(idle.fixed[k], scale(idle.perPartition[k], partitions)));
  // What `n` runs cost over an index of `index` bytes without the work itself: taken out of the
  // roll, retire and expire runs, since the model prices every scheduled run's walk on its own.
  const runs = (n: number, index: number, k: keyof ByStore): Counts => {
    const base = scale(idleRun[k], n);
    return k === 'metadata'
      ? { ...base, readUnits: base.readUnits + n * index * readUnitsPerIndexByte }
      : base;
  };
  return {
    options,
    requestBytes,
    records: records * batches,
    batches,
    produce: scale(produce, 1 / produced),
    fetch: scale(fetch, 1 / (produced * groups)),
    stateReadUnits,
    heartbeat,
    commitPerPartition: scale(commits, 1 / partitions),
    idleRun: idle,
    rollPerGiB: {
      replica: scale(minus(roll.replica, runs(1, 0, 'replica')), perRolledGiB),
      segment: scale(minus(roll.segment, runs(1, 0, 'segment')), perRolledGiB),
      metadata: scale(minus(roll.metadata, runs(1, indexNow, 'metadata')), perRolledGiB),
    },
    retirePerGiB: {
      replica: scale(minus(retire.replica, runs(2, 0, 'replica')), perRolledGiB),
      metadata: scale(minus(retire.metadata, runs(2, indexNow, 'metadata')), perRolledGiB),
    },
    expirePerGiB: {
      segment: scale(minus(expire.segment, runs(1, 0, 'segment')), perSegmentGiB),
      metadata: scale(minus(expire.metadata, runs(1, indexNow, 'metadata')), perSegmentGiB),
    },
    indexBytesPerGiB,
    pageBytesPerGiB,
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

/** Sluice on metered memory stores: `replicas` replica stores and a segment store, a manual clock. */
const meteredSluice = (replicas: number) => {
  const clock = new ManualClock(Date.UTC(2026, 11, 1));
  const metadata = new MemoryMetadataStore();
  const replicaStores = Array.from(
    { length: replicas },
    (_, i) => new MemoryObjectStore(`s${i}`, undefined, clock),
  );
  const segmentStore = new MemoryObjectStore('segments', undefined, clock);
  let ids = 0;
  const sluice = createSluice({
    store: metadata,
    objectStores: replicaStores,
    segmentStore,
    clock,
    config: { clusterId: 'cost', topicCacheTtlMs: 24 * HOUR },
    // Fixed-length ids: item sizes, and so the units, do not depend on the run.
    newId: () => `id${(ids++).toString(36).padStart(10, '0')}`,
    random: () => 0.5,
  });
  return { clock, metadata, sluice, meters: new Meters(metadata, replicaStores, segmentStore) };
};

const STORES = ['replica', 'segment', 'metadata'] as const;
const byStore = (f: (k: (typeof STORES)[number]) => Counts): ByStore =>
  Object.fromEntries(STORES.map((k) => [k, f(k)])) as unknown as ByStore;

/** One maintenance run over a topic of `partitions` with no data, after a run that settles it. */
const idleRunOf = async (partitions: number, replicas: number): Promise<ByStore> => {
  const { sluice, meters } = meteredSluice(replicas);
  await sluice.catalog.create({ name: TOPIC, partitions, replicationFactor: replicas });
  await maintenance(sluice);
  const done = meters.mark();
  await maintenance(sluice);
  return done();
};

/**
 * What a run with nothing new to do reads per byte of index it holds (the orphan collector reads every
 * batch page and segment item each run, retention and local retention read theirs): its read units
 * over two sizes of an index of many small entries and segments, so DynamoDB's rounding of each query
 * to 4 KiB does not swamp the slope.
 */
const indexWalk = async (replicas: number): Promise<{ readUnitsPerIndexByte: number }> => {
  const partitions = 4;
  const { clock, metadata, sluice, meters } = meteredSluice(replicas);
  await sluice.catalog.create({
    name: TOPIC,
    partitions,
    replicationFactor: replicas,
    configs: { 'segment.bytes': String(64 * 1024) },
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
    await maintenance(sluice);
    return { index, readUnits: done().metadata.readUnits };
  };
  const small = await grow();
  const large = await grow();
  return { readUnitsPerIndexByte: (large.readUnits - small.readUnits) / (large.index - small.index) };
};

const idleRuns = async (replicas: number): Promise<{ fixed: ByStore; perPartition: ByStore }> => {
  const one = await idleRunOf(1, replicas);
  const nine = await idleRunOf(9, replicas);
  const perPartition = byStore((k) => scale(minus(nine[k], one[k]), 1 / 8));
  return { fixed: byStore((k) => minus(one[k], perPartition[k])), perPartition };
};

const sum = (...cs: Counts[]): Counts =>
  cs.reduce(
    (a, c) =>
      Object.fromEntries(
        Object.entries(a).map(([k, v]) => [k, v + c[k as keyof Counts]]),
      ) as unknown as Counts,
    zero(),
  );

const maintenance = async (sluice: Sluice) => {
  const report = await sluice.maintenance.run();
  if (report.errors.length > 0) throw new Error(report.errors.join('; '));
  return report;
};

const SEGMENT_ITEMS = [keys.segmentPrefix, keys.timePrefix];
const PAGE_ITEMS = [keys.batchPrefix];

/** Item bytes of the partitions' index items under these sort-key prefixes. */
const indexBytes = (
  metadata: MemoryMetadataStore,
  topicId: string,
  partitions: number,
  prefixes: readonly string[],
): number => {
  const pks = new Set(Array.from({ length: partitions }, (_, p) => keys.partitionPk(topicId, p)));
  return metadata
    .dump()
    .filter((i) => pks.has(i.pk) && prefixes.some((prefix) => i.sk.startsWith(prefix)))
    .reduce((n, i) => n + itemSize(i), 0);
};

interface Member {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  owned: ReturnType<typeof fromTopicPartitions>;
}

/** One member per group, heartbeating until it owns every partition. */
const joinGroups = async (sluice: Sluice, groups: number): Promise<Member[]> => {
  const members: Member[] = [];
  for (let g = 0; g < groups; g++) {
    const groupId = `group-${g}`;
    let r = await sluice.groups.heartbeat(groupId, {
      memberId: null,
      memberEpoch: 0,
      instanceId: null,
      subscribedTopics: [TOPIC],
      ownedPartitions: null,
      rebalanceTimeoutMs: null,
      serverAssignor: null,
    });
    const member: Member = { groupId, memberId: r.memberId, memberEpoch: r.memberEpoch, owned: {} };
    for (let i = 0; i < 5 && r.assignment; i++) {
      member.owned = fromTopicPartitions(r.assignment.topicPartitions);
      r = await beat(sluice, member);
    }
    members.push(member);
  }
  return members;
};

const beat = async (sluice: Sluice, m: Member) => {
  const r = await sluice.groups.heartbeat(m.groupId, {
    memberId: m.memberId,
    memberEpoch: m.memberEpoch,
    instanceId: null,
    subscribedTopics: null,
    ownedPartitions: m.owned,
    rebalanceTimeoutMs: null,
    serverAssignor: null,
  });
  m.memberEpoch = r.memberEpoch;
  if (r.assignment) m.owned = fromTopicPartitions(r.assignment.topicPartitions);
  return r;
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
