/**
 * A simulated Sluice deployment for one seed: the in-memory stores wrapped in the seeded fault
 * injector, a manual clock, the whole HTTP API in-process, and a history recorder. Everything that
 * could vary between runs (faults, workload choices, object and topic ids, interleavings) derives from
 * the seed, so a failure replays with SLUICE_SEED=<n>.
 */
import type { Sluice } from '../../functions/app.js';
import { createSluice } from '../../functions/app.js';
import { Maintenance } from '../../lib/core/maintenance.js';
import { GroupCoordinator } from '../../lib/core/groups/index.js';
import { isSluiceError } from '../../protocol/errors.js';
import { Router } from '../../lib/http/router.js';
import { groupRoutes } from '../../lib/http/routes/groups.js';
import type { FaultCounts, FaultSpec } from '../../lib/adapters/fault/index.js';
import {
  FaultInjector,
  FaultyObjectStore,
  ManualClock,
  drive,
  seededRandom,
  withFaults,
  zeroCounts,
} from '../../lib/adapters/fault/index.js';
import type { Random } from '../../lib/adapters/fault/random.js';
import { randomInt } from '../../lib/adapters/fault/random.js';
import { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import type { MetadataStore } from '../../lib/ports/metadata-store.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import type { CheckReport } from './checker.js';
import { check, describeReport } from './checker.js';
import type { SluiceClient } from './client.js';
import { routerClient } from './client.js';
import { HistoryRecorder } from './history.js';
import type { StorageReport } from './storage.js';
import { listOffsetsViolations } from './list-offsets.js';
import { checkStorage, storageViolations } from './storage.js';
import type { ProducerKind, WorkloadContext } from './workload.js';
import { finalRead, runConsumer, runProducer } from './workload.js';
import { runGroup } from './group-workload.js';

/**
 * The simulation's orphan grace period. Short, so that collection races produces within a run of a few
 * virtual seconds; still far above any in-flight produce (injected delays are tens of milliseconds).
 */
export const SIM_ORPHAN_GRACE_MS = 3_000;

export interface SimWorldOptions {
  seed: number;
  /** Fault spec over every store (seed defaults to the world's); false for none. */
  faults?: Omit<FaultSpec, 'seed'> | false;
  storeCount?: number;
  tailFlushEntries?: number;
  /** The tail's move runs after the produce's answer, as deployed (LogOptions.materializeAfterAck). */
  materializeAfterAck?: boolean;
  /** Decorators between Sluice and the faulty stores (mutation tests plant bugs here). */
  wrapStore?: (store: MetadataStore) => MetadataStore;
  wrapObjectStore?: (store: ObjectStore) => ObjectStore;
  orphanGraceMs?: number;
  /** A segment store (its own fault injector, seeded seed + 100), so maintenance rolls segments. */
  segmentStore?: boolean;
  /** Consumer-group session timeout (default 3 s of virtual time). */
  sessionTimeoutMs?: number;
}

export interface SimWorld {
  seed: number;
  clock: ManualClock;
  random: Random;
  memory: { store: MemoryMetadataStore; objectStores: MemoryObjectStore[]; segmentStore?: MemoryObjectStore };
  injectors: FaultInjector[];
  sluice: Sluice;
  /** Maintenance over the same stores with the simulation's grace period. */
  maintenance: Maintenance;
  /** The group coordinator the world's router serves (seeded, unlike the app's default). */
  groups: GroupCoordinator;
  sessionTimeoutMs: number;
  client: SluiceClient;
  recorder: HistoryRecorder;
  setFaults(on: boolean): void;
  faultCounts(): FaultCounts;
  /** Runs work to completion under the manual clock. */
  run<T>(work: Promise<T>): Promise<T>;
  topicId(name: string): Promise<string>;
  dispose(): void;
}

export const createSimWorld = (options: SimWorldOptions): SimWorld => {
  const { seed } = options;
  const clock = new ManualClock();
  const random = seededRandom(seed * 7919 + 1);
  const memory = {
    store: new MemoryMetadataStore(),
    objectStores: Array.from(
      { length: options.storeCount ?? 1 },
      (_, i) => new MemoryObjectStore(`s${i}`, undefined, clock),
    ),
  };
  const faulty = withFaults({ seed, ...(options.faults || { rate: 0 }) }, memory, clock);
  const segmentMemory = options.segmentStore
    ? new MemoryObjectStore('segments', undefined, clock)
    : undefined;
  const segmentInjector = segmentMemory
    ? new FaultInjector({ seed: seed + 100, ...(options.faults || { rate: 0 }) }, clock)
    : undefined;
  if (segmentInjector) faulty.injectors.push(segmentInjector);
  const segmentStore =
    segmentMemory && segmentInjector ? new FaultyObjectStore(segmentMemory, segmentInjector) : undefined;
  const store = options.wrapStore ? options.wrapStore(faulty.store) : faulty.store;
  const objectStores = options.wrapObjectStore
    ? faulty.objectStores.map(options.wrapObjectStore)
    : faulty.objectStores;
  let ids = 0;
  const sluice = createSluice({
    store,
    objectStores,
    ...(segmentStore ? { segmentStore } : {}),
    clock,
    config: {
      clusterId: `sim-${seed}`,
      tailFlushEntries: options.tailFlushEntries ?? 4,
      ...(options.materializeAfterAck ? { materializeAfterAck: true } : {}),
      topicCacheTtlMs: 1_000,
      pollIntervalMs: 100,
    },
    newId: () => `id${seed}-${++ids}`,
  });
  // Commits must come well within the grace period (see LogOptions.commitDeadlineMs).
  const orphanGraceMs = options.orphanGraceMs ?? SIM_ORPHAN_GRACE_MS;
  sluice.log.commitDeadlineMs = Math.floor(orphanGraceMs / 3);
  const sessionTimeoutMs = options.sessionTimeoutMs ?? 3_000;
  const groups = new GroupCoordinator({
    store,
    clock,
    topics: {
      describe: async (name) => {
        try {
          const topic = await sluice.catalog.get(name, { fresh: true });
          return { topicId: topic.topicId, partitions: topic.partitions };
        } catch (error) {
          if (isSluiceError(error) && error.code === 'UNKNOWN_TOPIC_OR_PARTITION') return undefined;
          throw error;
        }
      },
    },
    offsets: {
      earliest: async (topic, p) => (await sluice.fetcher.listOffsets(topic, p, 'earliest')).offset!,
      latest: async (topic, p) => (await sluice.fetcher.listOffsets(topic, p, 'latest')).offset!,
      forTimestamp: async (topic, p, ts) => (await sluice.fetcher.listOffsets(topic, p, ts)).offset,
    },
    sessionTimeoutMs,
    heartbeatIntervalMs: Math.floor(sessionTimeoutMs / 6),
    random: seededRandom(seed * 31 + 7),
  });
  const maintenance = new Maintenance({
    log: sluice.log,
    objectStores,
    orphanGraceMs,
    sweeps: { groups: () => groups.expireMembers() },
  });
  const routes = [
    ...sluice.routes.filter((r) => !r.pattern.startsWith('/v1/groups')),
    ...groupRoutes(groups),
  ];
  const setFaults = (on: boolean) =>
    faulty.injectors.forEach((i) => (i.enabled = on && options.faults !== false));
  return {
    seed,
    clock,
    random,
    memory: { ...memory, ...(segmentMemory ? { segmentStore: segmentMemory } : {}) },
    injectors: faulty.injectors,
    sluice,
    maintenance,
    groups,
    sessionTimeoutMs,
    client: routerClient(new Router(routes)),
    recorder: new HistoryRecorder(() => clock.now()),
    setFaults,
    faultCounts: () => {
      const total = zeroCounts();
      for (const i of faulty.injectors)
        for (const k of Object.keys(total) as (keyof FaultCounts)[]) total[k] += i.counts[k];
      return total;
    },
    run: (work) => drive(clock, work),
    topicId: async (name) => (await sluice.catalog.get(name)).topicId,
    dispose: () => faulty.injectors.forEach((i) => i.dispose()),
  };
};

export interface LogSimulationOptions {
  seed: number;
  partitions?: number;
  producers?: Partial<Record<ProducerKind, number>>;
  writesPerProducer?: number;
  maxRecordsPerWrite?: number;
  consumers?: number;
  faults?: Omit<FaultSpec, 'seed'> | false;
  /** Run maintenance (index, orphans) concurrently with the workload. Default true. */
  maintenance?: boolean;
  /** Topic configs, e.g. a short `retention.ms` (then the checker allows records below the log start to go). */
  topicConfigs?: Record<string, string>;
  /** Keys drawn from this many distinct keys (compacted topics). */
  keySpace?: number;
  /** All producers write to partition 0 (the hot-partition case). */
  onePartition?: boolean;
  tailFlushEntries?: number;
  world?: Omit<SimWorldOptions, 'seed' | 'faults' | 'tailFlushEntries'>;
  /** A consumer group following the topic while it is written. */
  group?: { members: number; heartbeatMs?: number; crashChance?: number };
  /** Called with the running world once the topic exists (mutation tests start their sabotage here). */
  during?: (world: SimWorld, ctx: WorkloadContext) => Promise<void>;
}

export interface LogSimulationResult {
  seed: number;
  report: CheckReport;
  storage: StorageReport;
  /** Storage invariant violations (dangling, corrupt, holes, overlaps) and ListOffsets answers the log contradicts. */
  storageViolations: string[];
  unexpected: string[];
  faults: FaultCounts;
  orphansDeleted: number;
  maintenanceRuns: number;
  virtualMs: number;
  world: SimWorld;
}

const TOPIC = 'sim';

/**
 * One seeded run: a topic, concurrent producers of each kind, consumers polling, maintenance running
 * (with time passing the orphan grace period now and then), all under faults; then faults off, a
 * final maintenance pass past the grace period, a full read of every partition, and the checks.
 */
export const runLogSimulation = async (options: LogSimulationOptions): Promise<LogSimulationResult> => {
  const world = createSimWorld({
    seed: options.seed,
    faults: options.faults ?? { rate: 0.08, maxDelayMs: 30 },
    tailFlushEntries: options.tailFlushEntries ?? 4,
    ...options.world,
  });
  const { random, clock } = world;
  const partitions = options.onePartition ? 1 : (options.partitions ?? 3);
  const startedAt = clock.now();
  world.setFaults(false);
  await world.run(world.client.createTopic(TOPIC, partitions, { configs: options.topicConfigs ?? {} }));
  const topicId = await world.topicId(TOPIC);
  world.setFaults(true);

  let producing = 0;
  const ctx: WorkloadContext = {
    client: world.client,
    recorder: world.recorder,
    random,
    sleep: (ms) => clock.sleep(ms),
    topic: TOPIC,
    partitions,
    stopped: () => false,
    now: () => clock.now(),
    unexpected: [],
  };
  const kinds = options.producers ?? { idempotent: 2, keyed: 2, plain: 1 };
  const producers: Promise<void>[] = [];
  for (const [kind, count] of Object.entries(kinds) as [ProducerKind, number][]) {
    for (let i = 0; i < count; i++) {
      producing++;
      producers.push(
        runProducer(ctx, {
          kind,
          name: `${kind}-${i}`,
          writes: options.writesPerProducer ?? 8,
          maxRecordsPerWrite: options.maxRecordsPerWrite ?? 4,
          ...(options.keySpace !== undefined ? { keySpace: options.keySpace } : {}),
          longPause: { chance: 0.1, ms: randomInt(random, 1, 3) * SIM_ORPHAN_GRACE_MS },
          ...(options.onePartition ? { partition: 0 } : {}),
        }).finally(() => producing--),
      );
    }
  }
  const consumers = Array.from({ length: options.consumers ?? 2 }, (_, i) =>
    runConsumer(ctx, { name: `consumer-${i}`, until: () => producing === 0 }),
  );
  let maintenanceRuns = 0;
  const maintenance = async () => {
    while (producing > 0) {
      await clock.sleep(randomInt(random, 100, 1_500));
      // A run whose listing fails throws as a whole, like a failed scheduled invocation; the next one retries.
      await world.maintenance.run().catch(() => undefined);
      maintenanceRuns++;
    }
  };
  await world.run(
    Promise.all([
      ...producers,
      ...consumers,
      ...(options.maintenance === false ? [] : [maintenance()]),
      ...(options.group
        ? [
            runGroup(ctx, {
              group: 'g',
              members: options.group.members,
              heartbeatMs: options.group.heartbeatMs ?? Math.floor(world.sessionTimeoutMs / 6),
              until: () => producing === 0,
              random,
              ...(options.group.crashChance !== undefined ? { crashChance: options.group.crashChance } : {}),
            }),
          ]
        : []),
      ...(options.during ? [options.during(world, ctx)] : []),
    ]),
  );

  // Quiesce: faults off, index everything, let orphans age past the grace period and collect them.
  world.setFaults(false);
  const faults = world.faultCounts();
  let orphansDeleted = 0;
  let listOffsets: string[] = [];
  await world.run(
    (async () => {
      for (let p = 0; p < partitions; p++) await world.maintenance.indexTail(topicId, p);
      // One whole run with faults off finishes what failed runs left (retention deletes, expiry).
      await world.maintenance.run();
      await clock.advance(SIM_ORPHAN_GRACE_MS + 1);
      orphansDeleted = await world.maintenance.collectOrphans(topicId, partitions);
      await finalRead(ctx);
      listOffsets = await listOffsetsViolations(world.sluice.fetcher, TOPIC, partitions);
    })(),
  );
  const report = check(world.recorder.history(), {
    sessionTimeoutMs: world.sessionTimeoutMs,
    ...(options.topicConfigs?.['cleanup.policy']?.includes('compact')
      ? { compaction: { keyOf: keyOfRendered } }
      : {}),
    allowRetention:
      options.topicConfigs?.['retention.ms'] !== undefined ||
      options.topicConfigs?.['retention.bytes'] !== undefined,
  });
  const storage = await checkStorage(
    world.memory.store,
    world.memory.objectStores,
    topicId,
    partitions,
    world.memory.segmentStore,
  );
  world.dispose();
  return {
    seed: options.seed,
    report,
    storage,
    storageViolations: [
      ...storageViolations(storage),
      ...listOffsets,
      ...storage.unreferenced.map((o) => `unreferenced object left after the grace period: ${o}`),
    ],
    unexpected: ctx.unexpected,
    faults,
    orphansDeleted,
    maintenanceRuns,
    virtualMs: clock.now() - startedAt,
    world,
  };
};

/** The key of a record rendered by `renderRecord` (base64, or null). */
export const keyOfRendered = (value: string): string | null => (JSON.parse(value) as [string | null])[0];

/** A readable failure message that names the seed and how to replay it. */
export const failureMessage = (result: LogSimulationResult, test: string): string =>
  [
    `seed ${result.seed} failed (replay: SLUICE_SEED=${result.seed} npx vitest run --project sim ${test})`,
    describeReport(result.report),
    ...result.storageViolations.slice(0, 5),
    ...result.unexpected.slice(0, 5).map((u) => `unexpected: ${u}`),
  ].join('\n');

/**
 * Seeds to run: SLUICE_SEED=<n> replays one; otherwise `count` seeds from `base`, at most
 * SLUICE_SIM_SEEDS of them when that is set (the mutation run reruns the sims per mutant).
 */
export const seedsFor = (base: number, count: number): number[] => {
  const forced = process.env['SLUICE_SEED'];
  if (forced !== undefined && forced !== '') return [Number(forced)];
  const cap = Number(process.env['SLUICE_SIM_SEEDS'] || count);
  return Array.from({ length: Math.min(count, cap) }, (_, i) => base + i);
};

/** Whether seedsFor runs fewer seeds than asked: totals over a run ("exercised the cases…") do not hold. */
export const seedSubset = (): boolean =>
  Boolean(process.env['SLUICE_SEED'] || process.env['SLUICE_SIM_SEEDS']);
