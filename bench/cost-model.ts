/**
 * The full cost of running Sluice for a customer shape, per month and per GiB produced: the requests
 * the code makes (counted by bench/cost-usage.ts, not described), Lambda time from a duration model or
 * measured durations, API Gateway units, and storage for the retention in the replica stores and the
 * segment store. Pure: the same inputs give the same dollars (test/unit/bench/cost-full-model.test.ts).
 *
 * Where time goes, the model follows what the code does: a produce request writes one object to each
 * of the partition's R replica stores (acks=all) and commits in DynamoDB; each member of a consumer
 * group that has caught up waits on the wait socket (the SDK consumer's default: no function held,
 * each wake paid once; webSocketWaitingBill), or where it has none keeps one long poll in flight over
 * all the partitions it owns (POST /v1/fetch: `sluice consume` without a group and a Kafka client's
 * Fetch through the gateway; `longPollPer` prices each way to wait);
 * maintenance runs every minute, rolls closed data into 16 MiB segments in the S3 Standard segment
 * store, retires the replica copies after `local.retention.ms` and expires segments after the retention;
 * one run an hour also scans for orphans (listing every store, reading every index page), which
 * deletes the retired replica copies once their grace has passed.
 */
import type { Prices } from './cost-prices.js';
import { PRICES } from './cost-prices.js';
import { HOURS_PER_MONTH } from './cost-competitors.js';
import type { Counts, MeasuredUsage } from './cost-usage.js';
import { DEFAULT_PACED_FETCH_MS, paces } from '../sdk/fetch-pacing.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
export const SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600;

export interface Shape {
  name: string;
  ingressMiBPerSec: number;
  retentionHours: number;
  consumerGroups: number;
  partitions: number;
  /** Members of each group (heartbeats and offset commits scale with them, not with partitions). */
  membersPerGroup: number;
  recordBytes: number;
}

/**
 * The three customer shapes of docs/cost.md: steady 1, 10 and 100 MiB/s of 1 KiB records, 7-day
 * retention, two consumer groups reading everything. Partitions at about 0.25–1.6 MiB/s each (Kafka's
 * usual sizing is a few MB/s per partition at most); one group member per 8 partitions.
 */
export const SHAPES: readonly Shape[] = [
  { name: '1 MiB/s', ingressMiBPerSec: 1, partitions: 4, membersPerGroup: 1 },
  { name: '10 MiB/s', ingressMiBPerSec: 10, partitions: 16, membersPerGroup: 2 },
  { name: '100 MiB/s', ingressMiBPerSec: 100, partitions: 64, membersPerGroup: 8 },
].map((s) => ({ ...s, retentionHours: 7 * 24, consumerGroups: 2, recordBytes: 1024 }));

export type StoreClass = 'standard' | 'express';

export interface Deployment {
  replicationFactor: number;
  /** Class of the replica stores; the segment store is S3 Standard either way. */
  storeClass: StoreClass;
  architecture: 'arm64' | 'x86_64';
  memoryMb: { produce: number; fetch: number; groups: number; maintenance: number };
  localRetentionHours: number;
  segmentBytes: number;
  /** segment.ms: an open segment older than this rolls however small. */
  segmentHours: number;
  maintenanceIntervalSec: number;
  /**
   * How often a run scans for orphans (functions/environment.ts ORPHAN_SCAN_INTERVAL_MS, env
   * SLUICE_ORPHAN_SCAN_INTERVAL_MS): the first run at least this long after the last scan makes the
   * next, so scans come every whole number of runs at least this long (0: every run).
   */
  orphanScanIntervalSec: number;
  /** The orphan collector keeps retired replica objects this long. */
  orphanGraceHours: number;
  fetchMaxWaitMs: number;
  pollIntervalMs: number;
  /**
   * How a caught-up consumer waits. 'websocket' (as built, the SDK consumer's default): no function
   * while waiting; a connection to an API Gateway WebSocket API on which the member registers once
   * caught up and that a function on the metadata table's stream notifies, then a plain fetch (priced
   * under consume). 'member': the SDK consumer without a wait socket keeps one long poll (POST
   * /v1/fetch) in flight over all its partitions, a fetch function held for its wall time that reads
   * every owned partition's item each pollIntervalMs. 'partition': one long poll per owned partition
   * (the SDK before issue 28). 'member-stream' (what-if, not built): the
   * member's long poll as built, woken by reading the metadata table's stream (GetRecords on each shard
   * every pollIntervalMs) instead of re-reading the partition items; still a function held while it
   * waits.
   */
  longPollPer: 'partition' | 'member' | 'member-stream' | 'websocket';
  /**
   * The SDK consumer's pacedFetchMs (sdk/fetch-pacing.ts): on the socket, a member whose batches come
   * so often that a fetch this long after the last is empty at most 5 % of the time fetches on this
   * interval without registering. 0: it registers after every fetch.
   */
  pacedFetchMs: number;
  heartbeatIntervalMs: number;
  autoCommitIntervalMs: number;
}

/** As infra/ and the topic and SDK defaults deploy it (RF and store class chosen per column). */
export const deployment = (replicationFactor: number, storeClass: StoreClass): Deployment => ({
  replicationFactor,
  storeClass,
  architecture: 'arm64',
  // infra/constructs/sluice-functions.ts SIZING, chosen from `npm run bench:function-cpu`.
  memoryMb: { produce: 512, fetch: 256, groups: 256, maintenance: 1024 },
  localRetentionHours: 1,
  segmentBytes: 16 * MiB,
  segmentHours: 7 * 24,
  maintenanceIntervalSec: 60,
  orphanScanIntervalSec: 3600,
  orphanGraceHours: 0.25,
  fetchMaxWaitMs: 5_000,
  pollIntervalMs: 100,
  // The SDK consumer waits on the wait socket (sdk/consumer.ts); 'member' is its fallback.
  longPollPer: 'websocket',
  pacedFetchMs: DEFAULT_PACED_FETCH_MS,
  heartbeatIntervalMs: 5_000,
  autoCommitIntervalMs: 5_000,
});

/**
 * Billed Lambda milliseconds per invocation at DURATION_REFERENCE_MB. `cpuMsPerMiB` / `cpuMs`: the
 * part of it that is the function's own CPU on a whole core (`npm run bench:function-cpu`), which
 * Lambda stretches below 1,769 MB: at another memory size that part is stretched by the ratio of the
 * CPU shares, the rest (waiting on S3 and DynamoDB) stays.
 */
export interface Durations {
  produce: { fixedMs: number; msPerMiB: number; cpuMsPerMiB?: number };
  fetch: { fixedMs: number; msPerMiB: number; cpuMsPerMiB?: number };
  groups: { fixedMs: number; cpuMs?: number };
  maintenance: {
    fixedMsPerRun: number;
    msPerPartition: number;
    msPerMiBRolled: number;
    /** The part of msPerMiBRolled that is the roll's own CPU on a whole core. */
    cpuMsPerMiBRolled?: number;
    msPerListPage: number;
    /** Per MiB of index items read (read units × 4 KiB). */
    msPerMiBIndexRead: number;
    /** The orphan scan's own round trips per partition (its state read and index queries). */
    msPerPartitionScanned: number;
  };
}

/** The dollars of one activity, by what AWS bills. */
export interface Bill {
  s3Requests: number;
  /** S3 Express One Zone's per-GB upload and retrieval charges. */
  s3Transfer: number;
  s3Storage: number;
  dynamodb: number;
  dynamodbStorage: number;
  lambdaRequests: number;
  lambdaCompute: number;
  apiGateway: number;
}

export const BILL_LINES = [
  's3Requests',
  's3Transfer',
  's3Storage',
  'dynamodb',
  'dynamodbStorage',
  'lambdaRequests',
  'lambdaCompute',
  'apiGateway',
] as const satisfies readonly (keyof Bill)[];

export const ACTIVITIES = [
  'produce',
  'consume',
  'consumerWaiting',
  'groups',
  'maintenance',
  'storage',
] as const;
export type Activity = (typeof ACTIVITIES)[number];

export interface MonthlyCost {
  gibPerMonth: number;
  byActivity: Record<Activity, Bill>;
  /**
   * What no design can avoid of each activity, at this deployment's RF and store class: the data's
   * PUTs (and Express's upload charge) and one commit per request; the data's GETs (and retrieval
   * charge) for each group; nothing while consumers wait; the offsets groups commit; nothing of
   * maintenance (S3 lifecycle rules expire objects for free); one copy of the retained data in S3
   * Standard.
   */
  floor: Record<Activity, number>;
  lines: Bill;
  total: number;
  usdPerGiB: number;
}

const emptyBill = (): Bill => ({
  s3Requests: 0,
  s3Transfer: 0,
  s3Storage: 0,
  dynamodb: 0,
  dynamodbStorage: 0,
  lambdaRequests: 0,
  lambdaCompute: 0,
  apiGateway: 0,
});

const bill = (parts: Partial<Bill>): Bill => ({ ...emptyBill(), ...parts });

export const addBills = (...bills: Bill[]): Bill =>
  bills.reduce((a, b) => bill(Object.fromEntries(BILL_LINES.map((k) => [k, a[k] + b[k]]))), emptyBill());

export const billTotal = (b: Bill): number => BILL_LINES.reduce((s, k) => s + b[k], 0);

/** API Gateway HTTP API units of a call whose larger body is `bytes`. */
export const apiUnits = (bytes: number, prices: Prices = PRICES): number =>
  Math.max(1, Math.ceil(bytes / prices.apiGateway.meteringIncrementBytes));

/** Prices one class of store for these counts (requests, and Express's per-byte charges). */
const storeRequests = (c: Counts, cls: StoreClass, p: Prices): Pick<Bill, 's3Requests' | 's3Transfer'> => {
  if (cls === 'standard')
    return {
      s3Requests: ((c.puts + c.lists) * p.s3.perThousandPuts + c.gets * p.s3.perThousandGets) / 1000,
      s3Transfer: 0,
    };
  const e = p.s3Express;
  return {
    s3Requests: ((c.puts + c.lists) * e.perThousandPuts + c.gets * e.perThousandGets) / 1000,
    s3Transfer: (c.putBytes * e.perGiBUploaded + c.getBytes * e.perGiBRetrieved) / GiB,
  };
};

const dynamo = (c: Pick<Counts, 'writeUnits' | 'readUnits'>, p: Prices): number =>
  (c.writeUnits * p.dynamodb.perMillionWriteUnits + c.readUnits * p.dynamodb.perMillionReadUnits) / 1e6;

const gbSeconds = (memoryMb: number, ms: number): number => (memoryMb / 1024) * (ms / 1000);

const lambdaRate = (d: Deployment, p: Prices): number =>
  d.architecture === 'arm64' ? p.lambda.perGbSecond : p.lambda.perGbSecondX86;

const invocations = (n: number, p: Prices): number => (n * p.lambda.perMillionRequests) / 1e6;

/** Request counts with every field not given at 0. */
export const counts = (c: Partial<Counts> = {}): Counts => ({
  puts: 0,
  putBytes: 0,
  gets: 0,
  getBytes: 0,
  lists: 0,
  deletes: 0,
  writeUnits: 0,
  readUnits: 0,
  ...c,
});

const scaled = (c: Counts, by: number): Counts =>
  Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v * by])) as unknown as Counts;

/** Seconds between orphan scans: the first run at least `orphanScanIntervalSec` after the last. */
export const orphanScanPeriodSec = (d: Deployment): number =>
  Math.max(1, Math.ceil(d.orphanScanIntervalSec / d.maintenanceIntervalSec)) * d.maintenanceIntervalSec;

/** Hours a byte spends in the replica stores and in the segment store. */
export const residencyHours = (shape: Shape, d: Deployment): { replica: number; segment: number } => {
  const perPartitionBytesPerSec = (shape.ingressMiBPerSec * MiB) / shape.partitions;
  const fillHours = Math.min(d.segmentHours, d.segmentBytes / perPartitionBytesPerSec / 3600);
  const intervalHours = d.maintenanceIntervalSec / 3600;
  const scanHours = orphanScanPeriodSec(d) / 3600;
  // A byte waits half a segment's fill and half a maintenance interval for its roll; local retention
  // counts from the write and retires at a run (half an interval later on average); the scan deletes
  // retired copies past its grace, on average half a scan period after the grace ends.
  const rollDelay = fillHours / 2 + intervalHours / 2;
  return {
    replica:
      Math.max(d.localRetentionHours, rollDelay) + intervalHours / 2 + d.orphanGraceHours + scanHours / 2,
    segment: shape.retentionHours + fillHours / 2 + intervalHours,
  };
};

interface Inputs {
  d: Deployment;
  usage: MeasuredUsage;
  durations: Durations;
  prices: Prices;
}

const perMillionApi = (units: number, p: Prices): number => (units * p.apiGateway.perMillionRequests) / 1e6;

const requestsPer = (gib: number, usage: MeasuredUsage): number => (gib * GiB) / usage.requestBytes;

/** The memory size the durations are given at. */
export const DURATION_REFERENCE_MB = 1024;
/** Lambda's CPU share: a whole vCPU at 1,769 MB, in proportion to memory below it. */
const FULL_VCPU_MB = 1769;
const cpuStretch = (memoryMb: number): number => Math.max(1, FULL_VCPU_MB / memoryMb);

/** `cpuMs` of whole-core CPU costs this many more milliseconds at `memoryMb` than at the reference. */
export const cpuExtraMs = (cpuMs: number, memoryMb: number): number =>
  cpuMs * (cpuStretch(memoryMb) - cpuStretch(DURATION_REFERENCE_MB));

const msFor = (
  side: { fixedMs: number; msPerMiB: number; cpuMsPerMiB?: number },
  usage: MeasuredUsage,
  memoryMb: number,
): number => {
  const mib = usage.requestBytes / MiB;
  return side.fixedMs + side.msPerMiB * mib + cpuExtraMs((side.cpuMsPerMiB ?? 0) * mib, memoryMb);
};

/** `gib` produced: one object to each replica store and the commit per request. */
const produceBill = (gib: number, { d, usage, durations, prices }: Inputs): Bill => {
  const n = requestsPer(gib, usage);
  return bill({
    ...storeRequests(scaled(usage.produce, n), d.storeClass, prices),
    dynamodb: dynamo(scaled(usage.produce, n), prices),
    lambdaRequests: invocations(n, prices),
    lambdaCompute:
      n *
      gbSeconds(d.memoryMb.produce, msFor(durations.produce, usage, d.memoryMb.produce)) *
      lambdaRate(d, prices),
    apiGateway: perMillionApi(n * apiUnits(usage.requestBytes, prices), prices),
  });
};

/** `gib` read by each of `groups`: one fetch per batch (as measured), its requests, not its time. */
const consumeBill = (gib: number, groups: number, { d, usage, prices }: Inputs): Bill => {
  const n = requestsPer(gib, usage) * groups;
  return bill({
    ...storeRequests(scaled(usage.fetch, n), d.storeClass, prices),
    dynamodb: dynamo(scaled(usage.fetch, n), prices),
    lambdaRequests: invocations(n, prices),
    apiGateway: perMillionApi(n * apiUnits(usage.requestBytes, prices), prices),
  });
};

/** The maintenance work `gib` causes: the roll, retiring the replica copies, expiring the segments. */
const maintenanceWorkBill = (gib: number, { d, usage, durations, prices }: Inputs): Bill => {
  const replica = storeRequests(
    addCounts(scaled(usage.rollPerGiB.replica, gib), scaled(usage.retirePerGiB.replica, gib)),
    d.storeClass,
    prices,
  );
  const segment = storeRequests(
    addCounts(scaled(usage.rollPerGiB.segment, gib), scaled(usage.expirePerGiB.segment, gib)),
    'standard',
    prices,
  );
  const metadata = addCounts(
    scaled(usage.rollPerGiB.metadata, gib),
    scaled(usage.retirePerGiB.metadata, gib),
    scaled(usage.expirePerGiB.metadata, gib),
  );
  const { msPerMiBRolled, cpuMsPerMiBRolled = 0 } = durations.maintenance;
  const ms = gib * 1024 * (msPerMiBRolled + cpuExtraMs(cpuMsPerMiBRolled, d.memoryMb.maintenance));
  return bill({
    s3Requests: replica.s3Requests + segment.s3Requests,
    s3Transfer: replica.s3Transfer + segment.s3Transfer,
    dynamodb: dynamo(metadata, prices),
    lambdaCompute: gbSeconds(d.memoryMb.maintenance, ms) * lambdaRate(d, prices),
  });
};

/**
 * A month of scheduled maintenance runs beyond the work data causes. Every run probes follower stores
 * per partition, reads every partition's state, claims (or fails to claim) the orphan scan, and walks
 * the index retention and local retention read (read units per byte measured on runs that skip the
 * scan); with data arriving on every partition between runs (every shape here does) it also catches
 * the followers up, indexes the tail left since the last produce-side pass and sweeps the groups
 * (`steadyRun`). One run per scan period also scans: a LIST page per 1,000 objects of each store, and every
 * batch page and segment item read again (the scan's own read units per byte).
 */
const maintenanceRunsBill = (
  shape: Shape,
  gibPerMonth: number,
  { d, usage, durations, prices }: Inputs,
): Bill => {
  const runs = SECONDS_PER_MONTH / d.maintenanceIntervalSec;
  const scans = SECONDS_PER_MONTH / orphanScanPeriodSec(d);
  const P = shape.partitions;
  const held = heldGiB(shape, gibPerMonth, d);
  const indexBytes = held.segment * usage.indexBytesPerGiB + held.replicaPerStore * usage.pageBytesPerGiB;
  const objectsPerStore = (held.replicaPerStore * GiB) / usage.requestBytes;
  const segments = held.segment * usage.rollPerGiB.segment.puts;
  const pages = (n: number) => Math.max(1, Math.ceil(n / 1000));
  const run = usage.steadyRun;
  const scan = usage.orphanScan;
  // Per run and per scan: LISTs of the replica stores and of the segment store, DynamoDB units.
  const each = {
    run: {
      replicaLists: run.fixed.replica.lists + run.perPartition.replica.lists * P,
      segmentLists: run.fixed.segment.lists + run.perPartition.segment.lists * P,
      readUnits:
        run.fixed.metadata.readUnits +
        run.perPartition.metadata.readUnits * P +
        indexBytes * usage.readUnitsPerIndexByte,
      writeUnits: run.fixed.metadata.writeUnits + run.perPartition.metadata.writeUnits * P,
    },
    scan: {
      replicaLists: scan.fixed.replica.lists * pages(objectsPerStore) + scan.perPartition.replica.lists * P,
      segmentLists: scan.fixed.segment.lists * pages(segments) + scan.perPartition.segment.lists * P,
      readUnits:
        scan.fixed.metadata.readUnits +
        scan.perPartition.metadata.readUnits * P +
        indexBytes * scan.readUnitsPerIndexByte,
      writeUnits: scan.fixed.metadata.writeUnits + scan.perPartition.metadata.writeUnits * P,
    },
  };
  const m = durations.maintenance;
  const readMs = (units: number) => m.msPerMiBIndexRead * ((units * 4096) / MiB);
  const ms =
    runs *
      (m.fixedMsPerRun +
        m.msPerPartition * P +
        m.msPerListPage * (each.run.replicaLists + each.run.segmentLists) +
        readMs(each.run.readUnits)) +
    scans *
      (m.msPerPartitionScanned * P +
        m.msPerListPage * (each.scan.replicaLists + each.scan.segmentLists) +
        readMs(each.scan.readUnits));
  const total = (k: keyof (typeof each)['run']) => each.run[k] * runs + each.scan[k] * scans;
  const replica = storeRequests(counts({ lists: total('replicaLists') }), d.storeClass, prices);
  const segment = storeRequests(counts({ lists: total('segmentLists') }), 'standard', prices);
  return bill({
    s3Requests: replica.s3Requests + segment.s3Requests,
    dynamodb: dynamo({ writeUnits: total('writeUnits'), readUnits: total('readUnits') }, prices),
    lambdaRequests: invocations(runs, prices),
    lambdaCompute: gbSeconds(d.memoryMb.maintenance, ms) * lambdaRate(d, prices),
  });
};

/**
 * A month of caught-up consumers: one long poll in flight per member (or per partition, as before
 * issue 28) in each group, billed for its wall time (at least the fetches' own time), reading its
 * partitions' items every pollIntervalMs while it waits; a poll that times out before the next batch
 * arrives is one more request.
 */
const consumerWaitingBill = (
  shape: Shape,
  gibPerMonth: number,
  { d, usage, durations, prices }: Inputs,
): Bill => {
  const fetches = requestsPer(gibPerMonth, usage) * shape.consumerGroups;
  const arrivalsPerSec = requestsPer(gibPerMonth, usage) / SECONDS_PER_MONTH / shape.partitions;
  const pollsPerArrival = Math.max(1, Math.ceil(1 / (arrivalsPerSec * (d.fetchMaxWaitMs / 1000))));
  const emptyPolls = fetches * (pollsPerArrival - 1);
  const busySec = (fetches * msFor(durations.fetch, usage, d.memoryMb.fetch)) / 1000;
  if (d.longPollPer === 'websocket')
    return webSocketWaitingBill(shape, gibPerMonth, { d, usage, durations, prices });
  const pollers = d.longPollPer === 'partition' ? shape.partitions : shape.membersPerGroup;
  const heldSec = Math.max(shape.consumerGroups * pollers * SECONDS_PER_MONTH, busySec);
  const rounds = ((heldSec - busySec) * 1000) / d.pollIntervalMs;
  // Each wait round of a poll reads the item of every partition it covers, or (woken by the stream)
  // every shard of the table's stream: one shard per 1,000 writes a second, at least one.
  const itemsPerRound = d.longPollPer === 'partition' ? 1 : shape.partitions / shape.membersPerGroup;
  const shards = Math.max(1, Math.ceil(requestsPer(gibPerMonth, usage) / SECONDS_PER_MONTH / 1000));
  const streamReads =
    d.longPollPer === 'member-stream'
      ? (rounds * shards * prices.dynamodbStreams.perMillionReadRequests) / 1e6
      : 0;
  const stateReads = d.longPollPer === 'member-stream' ? 0 : rounds * itemsPerRound;
  return bill({
    dynamodb: streamReads + dynamo({ writeUnits: 0, readUnits: stateReads * usage.stateReadUnits }, prices),
    lambdaRequests: invocations(emptyPolls, prices),
    lambdaCompute: gbSeconds(d.memoryMb.fetch, heldSec * 1000) * lambdaRate(d, prices),
    apiGateway: perMillionApi(emptyPolls, prices),
  });
};

/** DynamoDB Streams' Lambda trigger polls each shard about four times a second. */
const STREAM_POLLS_PER_SEC = 4;
/** The notifier: a 128 MB function of about 20 ms per stream batch, plus a Query per changed partition. */
const NOTIFIER = { memoryMb: 128, ms: 20, msPerQuery: 5 };
/** The wait function: a 128 MB function of about 20 ms per call ($connect, hello, $disconnect). */
const WAIT_FUNCTION = { memoryMb: 128, ms: 20 };
/**
 * What a fetch that names its wait connection adds to the fetch function's time: the registrations'
 * batch write, then their check reads in parallel (the token is remembered): two round trips of ~5 ms.
 */
const REGISTRATION_MS = 10;
/** The SDK consumer's re-check while it waits on the socket (sdk/consumer.ts socketRecheckMs). */
const SOCKET_RECHECK_SEC = 300;
/** API Gateway closes a WebSocket after 2 hours; the SDK opens another. */
const SOCKET_LIFETIME_SEC = 2 * 3600;

/**
 * Waiting on a WebSocket, as built (lib/core/log/waiters.ts, sdk/consumer.ts): no function while a
 * member waits, and no frame in per wake. Each produce request is one batch to one partition, so a
 * member's batches arrive at λ = requests a second / members per group, and the member does what the
 * SDK consumer decides from that rate (sdk/fetch-pacing.ts `paces`, the same rule):
 *
 * - **Registering** (λ·pacedFetchMs < ln 20): every fetch names its connection; the fetch function
 *   checks its token (half a read unit the first time a warm instance sees the connection, priced once
 *   per connection), writes a registration item (a write unit) for each partition it moved to the high
 *   watermark, and re-reads those partitions' items (consistent) for the check, in REGISTRATION_MS more
 *   of the fetch function. The notifier tells a registration by the one stream record whose
 *   high-watermark range holds it: one frame out per wake, no write. A member is told about min(λ,
 *   stream batches a second) times a second less its busy time (one fetch, whose records consume
 *   prices): wakes = 1 / (1/min(λ, 4) + busy). The partitions a wake's fetch moves are those that got a
 *   record since the last one (at least the one that woke it). A fetch whose check finds a record that
 *   raced it is followed by another (e^(λ·REGISTRATION_MS)). Every 5 minutes a re-check (an empty fetch
 *   that registers every owned partition anew).
 * - **Paced** (λ·pacedFetchMs ≥ ln 20): the member fetches every max(pacedFetchMs, a fetch) without
 *   naming its connection; those that bring records are consuming (priced under consume). One that
 *   brings nothing (e^(−λ·interval) of them) is a lull: it and the registering fetch after it (both
 *   empty: a request, an invocation and the fixed time each, a read of every owned partition's item),
 *   the registrations of every owned partition with their checks, and up to one frame per owned
 *   partition (the wake, and the registrations left behind told once each). No re-check: a wait ends
 *   in about 1/λ.
 *
 * Either way: the connection minutes; every 2 hours a new connection ($connect, hello in and out,
 * $disconnect: the wait function thrice, the caller and token item written thrice); and the notifier on
 * the table's stream (one invocation per stream batch, a consistent Query per partition whose high
 * watermark moved; the trigger's own stream reads are free), which runs whether anyone is registered or
 * not.
 */
const webSocketWaitingBill = (
  shape: Shape,
  gibPerMonth: number,
  { d, usage, durations, prices }: Inputs,
): Bill => {
  const requestsPerSec = requestsPer(gibPerMonth, usage) / SECONDS_PER_MONTH;
  const members = shape.consumerGroups * shape.membersPerGroup;
  const owned = shape.partitions / shape.membersPerGroup;
  const arrivalsPerMemberSec = requestsPerSec / shape.membersPerGroup;
  const fetchMs = msFor(durations.fetch, usage, d.memoryMb.fetch);
  let wakes: number;
  let registrations: number;
  let fetchesNamingConnection: number;
  /** Fetches that bring nothing (a request and the fixed time each, a read of every owned item). */
  let emptyFetches: number;
  if (paces(arrivalsPerMemberSec, d.pacedFetchMs)) {
    const cycleSec = Math.max(d.pacedFetchMs, fetchMs) / 1000;
    const lulls = ((members * Math.exp(-arrivalsPerMemberSec * cycleSec)) / cycleSec) * SECONDS_PER_MONTH;
    // A lull: the paced fetch that found nothing, then the registering one (as empty).
    emptyFetches = 2 * lulls;
    fetchesNamingConnection = lulls;
    registrations = lulls * owned;
    wakes = lulls * owned;
  } else {
    const busySec = (fetchMs + REGISTRATION_MS) / 1000;
    const toldPerSec = Math.min(arrivalsPerMemberSec, STREAM_POLLS_PER_SEC);
    const wakesPerMemberSec = toldPerSec > 0 ? 1 / (1 / toldPerSec + busySec) : 0;
    wakes = members * wakesPerMemberSec * SECONDS_PER_MONTH;
    const registeringFetches = wakes * Math.exp((arrivalsPerMemberSec * REGISTRATION_MS) / 1000);
    // Partitions moved by a wake's fetch: those with a record since the last (a Poisson share of λ each).
    const perPartitionSec = arrivalsPerMemberSec / owned;
    const moved =
      wakesPerMemberSec > 0 ? Math.max(1, owned * (1 - Math.exp(-perPartitionSec / wakesPerMemberSec))) : 0;
    // A re-check is an empty fetch of its own; a wake's registering fetch is the one that reads its records.
    const rechecks = (members * SECONDS_PER_MONTH) / SOCKET_RECHECK_SEC;
    emptyFetches = rechecks;
    registrations = registeringFetches * moved + rechecks * owned;
    fetchesNamingConnection = registeringFetches + rechecks;
  }
  const connects = (members * SECONDS_PER_MONTH) / SOCKET_LIFETIME_SEC;
  // Frames: a ready out per wake; hello in and out per connection.
  const messages = wakes + 2 * connects;
  const connectionMinutes = (members * SECONDS_PER_MONTH) / 60;
  const batchesPerSec = Math.min(requestsPerSec, STREAM_POLLS_PER_SEC);
  const notifierRuns = batchesPerSec * SECONDS_PER_MONTH;
  const queries = Math.min(requestsPerSec, STREAM_POLLS_PER_SEC * shape.partitions) * SECONDS_PER_MONTH;
  const units = {
    // A registration item per partition registered (well under 1 KiB); the connection's item on
    // $connect, hello and $disconnect.
    writeUnits: registrations + 3 * connects,
    // The token read once per connection; the check's consistent read per registration;
    // an empty fetch reads every owned item; the notifier's Query per changed partition.
    readUnits:
      connects * 0.5 +
      registrations * usage.stateReadUnits +
      emptyFetches * owned * usage.stateReadUnits +
      queries,
  };
  return bill({
    dynamodb: dynamo(units, prices),
    lambdaRequests: invocations(notifierRuns + connects * 3 + emptyFetches, prices),
    lambdaCompute:
      (notifierRuns * gbSeconds(NOTIFIER.memoryMb, NOTIFIER.ms) +
        queries * gbSeconds(NOTIFIER.memoryMb, NOTIFIER.msPerQuery) +
        connects * 3 * gbSeconds(WAIT_FUNCTION.memoryMb, WAIT_FUNCTION.ms)) *
        lambdaRate(d, prices) +
      (fetchesNamingConnection * gbSeconds(d.memoryMb.fetch, REGISTRATION_MS) +
        emptyFetches * gbSeconds(d.memoryMb.fetch, durations.fetch.fixedMs)) *
        lambdaRate(d, prices),
    apiGateway:
      perMillionApi(emptyFetches, prices) +
      (messages * prices.webSocket.perMillionMessages) / 1e6 +
      (connectionMinutes * prices.webSocket.perMillionConnectionMinutes) / 1e6,
  });
};

/** A month of heartbeats and auto-commits of every member (one commit carries its partitions). */
const groupsBill = (shape: Shape, { d, usage, durations, prices }: Inputs): Bill => {
  const memberSec = shape.consumerGroups * shape.membersPerGroup * SECONDS_PER_MONTH;
  const heartbeats = memberSec / (d.heartbeatIntervalMs / 1000);
  const commits = memberSec / (d.autoCommitIntervalMs / 1000);
  const committed = commits * (shape.partitions / shape.membersPerGroup);
  const calls = heartbeats + commits;
  return bill({
    dynamodb:
      dynamo(scaled(usage.heartbeat, heartbeats), prices) +
      dynamo(scaled(usage.commitPerPartition, committed), prices),
    lambdaRequests: invocations(calls, prices),
    lambdaCompute:
      calls *
      gbSeconds(
        d.memoryMb.groups,
        durations.groups.fixedMs + cpuExtraMs(durations.groups.cpuMs ?? 0, d.memoryMb.groups),
      ) *
      lambdaRate(d, prices),
    apiGateway: perMillionApi(calls, prices),
  });
};

/** GiB held on average: in each replica store, and in the segment store. */
const heldGiB = (
  shape: Shape,
  gibPerMonth: number,
  d: Deployment,
): { replicaPerStore: number; segment: number } => {
  const stay = residencyHours(shape, d);
  const gibPerHour = gibPerMonth / HOURS_PER_MONTH;
  return { replicaPerStore: gibPerHour * stay.replica, segment: gibPerHour * stay.segment };
};

/** A month of storage: RF copies in the replica stores, one in the segment store, its index items. */
const storageBill = (shape: Shape, gibPerMonth: number, { d, usage, prices }: Inputs): Bill => {
  const held = heldGiB(shape, gibPerMonth, d);
  const replicaPrice =
    d.storeClass === 'standard' ? prices.s3.standardPerGiBMonth : prices.s3Express.perGiBMonth;
  return bill({
    s3Storage:
      held.replicaPerStore * d.replicationFactor * replicaPrice +
      held.segment * prices.s3.standardPerGiBMonth,
    dynamodbStorage:
      ((held.segment * usage.indexBytesPerGiB + held.replicaPerStore * usage.pageBytesPerGiB) / GiB) *
      prices.dynamodb.perGiBMonth,
  });
};

const inputs = (d: Deployment, usage: MeasuredUsage, durations: Durations, prices: Prices): Inputs => {
  if (usage.options.replicas !== d.replicationFactor)
    throw new RangeError(
      `counts measured at RF=${usage.options.replicas}, priced at RF=${d.replicationFactor}`,
    );
  return { d, usage, durations, prices };
};

/** Sluice's monthly bill for the shape, from the counts of its own code (`usage`, measured at RF). */
export const sluiceMonthly = (
  shape: Shape,
  d: Deployment,
  usage: MeasuredUsage,
  durations: Durations,
  prices: Prices = PRICES,
): MonthlyCost => {
  const i = inputs(d, usage, durations, prices);
  const gibPerMonth = (shape.ingressMiBPerSec * SECONDS_PER_MONTH) / 1024;
  const byActivity: Record<Activity, Bill> = {
    produce: produceBill(gibPerMonth, i),
    consume: consumeBill(gibPerMonth, shape.consumerGroups, i),
    consumerWaiting: consumerWaitingBill(shape, gibPerMonth, i),
    groups: groupsBill(shape, i),
    maintenance: addBills(maintenanceWorkBill(gibPerMonth, i), maintenanceRunsBill(shape, gibPerMonth, i)),
    storage: storageBill(shape, gibPerMonth, i),
  };
  const lines = addBills(...Object.values(byActivity));
  const total = billTotal(lines);
  const p = byActivity.produce;
  const c = byActivity.consume;
  const memberSec = shape.consumerGroups * shape.membersPerGroup * SECONDS_PER_MONTH;
  const committed =
    (memberSec / (d.autoCommitIntervalMs / 1000)) * (shape.partitions / shape.membersPerGroup);
  const floor: Record<Activity, number> = {
    produce:
      p.s3Requests +
      p.s3Transfer +
      dynamo({ writeUnits: requestsPer(gibPerMonth, usage), readUnits: 0 }, prices),
    consume: c.s3Requests + c.s3Transfer,
    consumerWaiting: 0,
    groups: dynamo(scaled(usage.commitPerPartition, committed), prices),
    maintenance: 0,
    storage: heldGiB(shape, gibPerMonth, d).segment * prices.s3.standardPerGiBMonth,
  };
  return { gibPerMonth, byActivity, floor, lines, total, usdPerGiB: total / gibPerMonth };
};

/**
 * The bench JSON's `usdPerGiB`: dollars per GiB written once and read once — the produce and fetch
 * requests, their Lambda time, and the maintenance work the GiB causes (roll, retire, expire) — without
 * storage and without the time-based costs (long polls waiting, heartbeats, scheduled runs), which do
 * not scale with bytes.
 */
export const usdPerGiBWrittenAndReadOnce = (
  d: Deployment,
  usage: MeasuredUsage,
  durations: Durations,
  prices: Prices = PRICES,
): Bill => {
  const i = inputs(d, usage, durations, prices);
  const fetchMs = requestsPer(1, usage) * msFor(durations.fetch, usage, d.memoryMb.fetch);
  return addBills(
    produceBill(1, i),
    consumeBill(1, 1, i),
    bill({ lambdaCompute: gbSeconds(d.memoryMb.fetch, fetchMs) * lambdaRate(d, prices) }),
    maintenanceWorkBill(1, i),
  );
};

const addCounts = (...cs: Counts[]): Counts =>
  cs.reduce(
    (a, c) =>
      Object.fromEntries(
        Object.entries(a).map(([k, v]) => [k, v + c[k as keyof Counts]]),
      ) as unknown as Counts,
    scaled(cs[0]!, 0),
  );
