/**
 * The plumbing of bench/cost-usage.ts: counts in the units AWS bills, Sluice on the metered memory
 * stores under a manual clock, and the meters of every store read and diffed as one.
 */
import { ManualClock } from '../lib/adapters/fault/index.js';
import { MemoryMetadataStore } from '../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import { createSluice } from '../functions/app.js';
import type { Sluice } from '../functions/app.js';
import { keys } from '../lib/core/keys.js';
import { itemSize, StorageMeter } from '../lib/ports/meter.js';
import type { MeterReading } from '../lib/ports/meter.js';
import { counts } from './cost-model.js';
import { fromTopicPartitions } from '../lib/core/groups/partition-map.js';

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

export interface RunCounts {
  fixed: ByStore;
  perPartition: ByStore;
}

export const zero = (): Counts => counts();

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

export const scale = (c: Counts, by: number): Counts =>
  Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v * by])) as unknown as Counts;

export const minus = (a: Counts, b: Counts): Counts =>
  Object.fromEntries(
    Object.entries(a).map(([k, v]) => [k, Math.max(0, v - b[k as keyof Counts])]),
  ) as unknown as Counts;

/** Meters of every store, read and diffed as one. */
export class Meters {
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

export const TOPIC = 'cost';
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/**
 * Sluice on metered memory stores: `replicas` replica stores and a segment store, a manual clock, the
 * orphan scan at most every `orphanScanIntervalMs` (0: every run).
 */
export const meteredSluice = (replicas: number, orphanScanIntervalMs: number) => {
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
    config: { clusterId: 'cost', topicCacheTtlMs: 24 * HOUR, orphanScanIntervalMs },
    // Fixed-length ids: item sizes, and so the units, do not depend on the run.
    newId: () => `id${(ids++).toString(36).padStart(10, '0')}`,
    random: () => 0.5,
  });
  return { clock, metadata, sluice, meters: new Meters(metadata, replicaStores, segmentStore) };
};

const STORES = ['replica', 'segment', 'metadata'] as const;
export const byStore = (f: (k: (typeof STORES)[number]) => Counts): ByStore =>
  Object.fromEntries(STORES.map((k) => [k, f(k)])) as unknown as ByStore;

export const sum = (...cs: Counts[]): Counts =>
  cs.reduce(
    (a, c) =>
      Object.fromEntries(
        Object.entries(a).map(([k, v]) => [k, v + c[k as keyof Counts]]),
      ) as unknown as Counts,
    zero(),
  );

/** A maintenance run that must succeed, and scan for orphans or skip the scan when `scans` says. */
export const maintenance = async (sluice: Sluice, scans?: boolean) => {
  const report = await sluice.maintenance.run();
  if (report.errors.length > 0) throw new Error(report.errors.join('; '));
  if (scans !== undefined && report.orphanScan !== scans)
    throw new Error(`a run ${scans ? 'skipped' : 'made'} the orphan scan`);
  return report;
};

export const SEGMENT_ITEMS = [keys.segmentPrefix, keys.timePrefix];
export const PAGE_ITEMS = [keys.batchPrefix];

/** Item bytes of the partitions' index items under these sort-key prefixes. */
export const indexBytes = (
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

export interface Member {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  owned: ReturnType<typeof fromTopicPartitions>;
}

/** One member per group, heartbeating until it owns every partition. */
export const joinGroups = async (sluice: Sluice, groups: number): Promise<Member[]> => {
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

export const beat = async (sluice: Sluice, m: Member) => {
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
