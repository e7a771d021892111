/**
 * The scheduled maintenance run (no process holds state between runs): moves partition tails into the
 * batch index, rolls closed data into segments and retires their local copies, applies retention and
 * compaction, purges deleted topics, collects orphan objects left by produces that failed before their
 * commit (and by rolls and cleaners that lost a race), and lets other services (consumer groups) sweep
 * expired state. Each step is incremental and resumable, and a run stops starting new rolls once its
 * time budget is spent, so it fits the function's timeout; the next run carries on.
 */
import type { Item } from '../ports/metadata-store.js';
import { ConditionFailedError } from '../ports/metadata-store.js';
import type { ObjectStore } from '../ports/object-store.js';
import { dataObjectPrefix, keys, segmentObjectPrefix } from './keys.js';
import { queryAll } from '../ports/query-all.js';
import type { LogContext } from './log/context.js';
import { compactPartition } from './log/compaction.js';
import { materializeTail } from './log/materialize.js';
import { pageEntries } from './log/batch-index.js';
import { decodePartitionState } from './log/partition-codec.js';
import type { PartitionState } from './log/partition-state.js';
import { applyRetention } from './log/retention.js';
import { retireLocalCopies } from './log/segments/local-retention.js';
import { rollSegment } from './log/segments/roll.js';
import { segmentEndOf } from './log/segments/segment-index.js';
import { effectiveConfig } from './topics/configs.js';
import type { Topic } from './topics/model.js';
import { replicatePartition } from './replication/replicator.js';

export interface MaintenanceOptions {
  log: LogContext;
  objectStores: readonly ObjectStore[];
  /** An object younger than this is never an orphan: its produce may still be committing. */
  orphanGraceMs?: number;
  /**
   * How often the orphan collector runs (0: every run). It lists every object and reads every index
   * page of every partition, so at a one-minute schedule it costs more than the data it protects; a
   * run that finds the last scan younger than this skips it. Runs hold no state, so the time of the
   * last scan is an item, claimed with a conditional write (two overlapping runs never both scan).
   */
  orphanScanIntervalMs?: number;
  /** How long a deleted topic's id keeps being purged (late writers may still put objects). */
  deletedTopicGraceMs?: number;
  /** How long one run may keep starting new rolls (the maintenance function times out at 5 minutes). */
  runBudgetMs?: number;
  /**
   * How many partitions a run maintains at once (default 8). A roll mostly waits on S3 (GETs of the
   * data objects, the segment's PUT): one at a time, 64 partitions at 100 MiB/s take ~20 ms per MiB,
   * two minutes for each minute of data. Each partition's own steps stay in order.
   */
  partitionConcurrency?: number;
  /** Extra sweeps to run, e.g. consumer-group session expiry. */
  sweeps?: Record<string, () => Promise<unknown>>;
}

export interface MaintenanceReport {
  partitions: number;
  entriesIndexed: number;
  segmentsRolled: number;
  /** Batch pages whose replica-store copies local retention retired. */
  localPagesRetired: number;
  batchesExpired: number;
  /** Records the log cleaner removed (superseded, keyless, or expired tombstones). */
  recordsCompacted: number;
  topicsPurged: number;
  orphansDeleted: number;
  /** Whether this run scanned for orphans (false: the last scan is younger than orphanScanIntervalMs). */
  orphanScan: boolean;
  /** Replication: objects copied to followers, ISR joins and leaves, leaders elected. */
  replication: ReplicationTotals;
  /** Partition gauges after this run's replication pass (the metrics of the same names). */
  partitionHealth: PartitionHealth;
  sweeps: Record<string, unknown>;
  errors: string[];
}

export interface PartitionHealth {
  /** Partitions whose ISR is smaller than their replicas (UnderReplicatedPartitions). */
  underReplicated: number;
  /** Partitions whose ISR is smaller than min.insync.replicas (UnderMinIsrPartitionCount). */
  underMinIsr: number;
  /** Partitions whose leader store failed with nobody in sync to take over (OfflinePartitionsCount). */
  offline: number;
  /** Per follower store, the most records it is behind a leader (MaxLag). */
  maxLag: Record<string, number>;
}

export interface ReplicationTotals {
  copied: number;
  joined: number;
  left: number;
  elected: number;
}

export class Maintenance {
  private readonly orphanGraceMs: number;
  private readonly deletedTopicGraceMs: number;
  private readonly orphanScanIntervalMs: number;

  constructor(private readonly options: MaintenanceOptions) {
    this.orphanGraceMs = options.orphanGraceMs ?? 15 * 60_000;
    this.deletedTopicGraceMs = options.deletedTopicGraceMs ?? 60 * 60_000;
    this.orphanScanIntervalMs = options.orphanScanIntervalMs ?? 0;
    this.runBudgetMs = options.runBudgetMs ?? 4 * 60_000;
    this.partitionConcurrency = options.partitionConcurrency ?? 8;
    if (!Number.isInteger(this.partitionConcurrency) || this.partitionConcurrency < 1)
      throw new RangeError(`partitionConcurrency must be a positive integer: ${this.partitionConcurrency}`);
  }

  private readonly runBudgetMs: number;
  private readonly partitionConcurrency: number;

  addSweep(name: string, sweep: () => Promise<unknown>): void {
    this.options.sweeps = { ...this.options.sweeps, [name]: sweep };
  }

  async run(): Promise<MaintenanceReport> {
    const report: MaintenanceReport = {
      partitions: 0,
      entriesIndexed: 0,
      segmentsRolled: 0,
      localPagesRetired: 0,
      batchesExpired: 0,
      recordsCompacted: 0,
      topicsPurged: 0,
      orphansDeleted: 0,
      orphanScan: false,
      replication: { copied: 0, joined: 0, left: 0, elected: 0 },
      partitionHealth: { underReplicated: 0, underMinIsr: 0, offline: 0, maxLag: {} },
      sweeps: {},
      errors: [],
    };
    const attempt = async (what: string, work: () => Promise<void>) => {
      try {
        await work();
      } catch (error) {
        report.errors.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      }
    };
    // Followers first: the index step moves only what is below the HW, which replication raises.
    report.replication = await this.replicate(
      (what, error) =>
        report.errors.push(`${what}: ${error instanceof Error ? error.message : String(error)}`),
      report.partitionHealth,
    );
    this.reportHealth(report.partitionHealth);
    const { catalog, clock, store } = this.options.log;
    const deadline = clock.now() + this.runBudgetMs;
    await attempt('orphan scan claim', async () => {
      report.orphanScan = await this.claimOrphanScan();
    });
    const topics = await catalog.list();
    const orphansOf = async (topic: Topic) => {
      if (!report.orphanScan) return;
      await attempt(`orphans of ${topic.name}`, async () => {
        const deleted = await this.collectOrphans(topic.topicId, topic.partitions);
        report.orphansDeleted += deleted;
      });
    };
    // A topic's orphans are collected once its last partition is done (what they reference is final for
    // this run); the other topics' partitions go on meanwhile (the collector reads this topic's alone).
    const partitionsLeft = new Map(topics.map((topic) => [topic.topicId, topic.partitions]));
    for (const topic of topics) if (topic.partitions === 0) await orphansOf(topic);
    const work = topics.flatMap((topic) =>
      Array.from({ length: topic.partitions }, (_, p) => ({ topic, p })),
    );
    // A small pool: each worker takes the next partition and does its steps in order, so one partition's
    // S3 and DynamoDB waits overlap other partitions' work (the CPU is the same, only the waits overlap).
    // Memory: a 16 MiB segment's roll holds 32-48 MiB, so 8 at once hold 256-384 MiB over Node's 51 MiB,
    // within the function's 1,024 MB (infra/constructs/sluice-functions.ts). The deadline is unchanged:
    // rollSegments starts no roll past it, whichever worker asks.
    let next = 0;
    const worker = async () => {
      for (let item = work[next++]; item; item = work[next++]) {
        await this.maintainPartition(item.topic, item.p, deadline, report, attempt);
        const left = partitionsLeft.get(item.topic.topicId)! - 1;
        partitionsLeft.set(item.topic.topicId, left);
        if (left === 0) await orphansOf(item.topic);
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(this.partitionConcurrency, work.length) }, () => worker()),
    );
    const deleted = await store.query({ pk: keys.deletedTopicsPk, consistent: true });
    for (const item of deleted.items) {
      await attempt(`purge ${item.sk}`, async () => {
        await this.purgeTopic(item.sk);
        if (clock.now() - (item['deletedAt'] as number) > this.deletedTopicGraceMs) {
          await store.delete(keys.deletedTopic(item.sk));
          report.topicsPurged++;
        }
      });
    }
    for (const [name, sweep] of Object.entries(this.options.sweeps ?? {})) {
      await attempt(`sweep ${name}`, async () => {
        report.sweeps[name] = await sweep();
      });
    }
    return report;
  }

  /**
   * One partition's steps, in order: read its item, index its tail, roll its closed segments (none once
   * the run's deadline has passed) and retire their local copies, apply retention, compact. Counts go to
   * `report`, each added after its await (`report.x += await ...` would read the count before the await
   * and write back over what other partitions added meanwhile).
   */
  protected async maintainPartition(
    topic: Topic,
    p: number,
    deadline: number,
    report: MaintenanceReport,
    attempt: (what: string, work: () => Promise<void>) => Promise<void>,
  ): Promise<void> {
    const { clock, store } = this.options.log;
    report.partitions++;
    const config = effectiveConfig(topic.configs);
    // One read of the partition item serves every step until one of them changes what the next
    // decides on; a partition with nothing to do costs that read alone.
    let state: PartitionState | undefined;
    await attempt(`read ${topic.name}-${p}`, async () => {
      const item = await store.get(keys.partitionState(topic.topicId, p), { consistent: true });
      state = item && decodePartitionState(item);
    });
    if (!state) return;
    await attempt(`index ${topic.name}-${p}`, async () => {
      const indexed = await this.indexTail(topic.topicId, p, state, (after) => {
        state = after;
      });
      report.entriesIndexed += indexed;
    });
    await attempt(`roll ${topic.name}-${p}`, async () => {
      const rolled = await this.rollSegments(topic.topicId, p, config, deadline, state);
      report.segmentsRolled += rolled;
      if (rolled > 0) state = undefined;
      const retired = await retireLocalCopies(store, topic.topicId, p, config, clock.now(), state);
      report.localPagesRetired += retired;
    });
    await attempt(`retention ${topic.name}-${p}`, async () => {
      const { batchesDeleted } = await applyRetention(store, topic.topicId, p, config, clock.now(), state);
      report.batchesExpired += batchesDeleted;
    });
    await attempt(`compaction ${topic.name}-${p}`, async () => {
      if (!config['cleanup.policy'].includes('compact')) return;
      const result = await compactPartition(this.options.log, topic.topicId, p, config, clock.now());
      report.recordsCompacted += result.recordsRemoved;
    });
  }

  /**
   * One replicator pass over every replicated partition (lib/core/replication/replicator.ts): run by
   * each maintenance run, and on its own timer by the local stack.
   */
  async replicate(
    onError: (what: string, error: unknown) => void = () => {},
    health?: PartitionHealth,
  ): Promise<ReplicationTotals> {
    const totals: ReplicationTotals = { copied: 0, joined: 0, left: 0, elected: 0 };
    for (const topic of await this.options.log.catalog.list()) {
      const minIsr = effectiveConfig(topic.configs)['min.insync.replicas'];
      if (topic.replicationFactor < 2) {
        // One store: always fully replicated, but under a min.insync.replicas it can never meet.
        if (health && minIsr > 1) health.underMinIsr += topic.partitions;
        continue;
      }
      for (let p = 0; p < topic.partitions; p++) {
        try {
          const pass = await replicatePartition(this.options.log, topic, p);
          totals.copied += pass.copied;
          totals.joined += pass.joined.length;
          totals.left += pass.left.length;
          if (pass.elected !== undefined) totals.elected++;
          if (health && pass.after) {
            const { replicas, isr, logEndOffsets: leo, nextOffset } = pass.after;
            if (isr.length < replicas.length) health.underReplicated++;
            if (isr.length < minIsr) health.underMinIsr++;
            if (pass.offline) health.offline++;
            for (const store of replicas) {
              const lag = Math.max(0, nextOffset - (leo[store] ?? 0));
              health.maxLag[store] = Math.max(health.maxLag[store] ?? 0, lag);
            }
          }
        } catch (error) {
          onError(`replicate ${topic.name}-${p}`, error);
        }
      }
    }
    return totals;
  }

  /** The partition gauges, once per run: a value every run, so a healthy cluster reads 0, not "no data". */
  private reportHealth(health: PartitionHealth): void {
    const { telemetry } = this.options.log;
    telemetry.metric('UnderReplicatedPartitions', health.underReplicated, {});
    telemetry.metric('UnderMinIsrPartitionCount', health.underMinIsr, {});
    telemetry.metric('OfflinePartitionsCount', health.offline, {});
    for (const [store, lag] of Object.entries(health.maxLag)) telemetry.metric('MaxLag', lag, { store });
  }

  /**
   * Moves the whole tail of one partition into the index (several passes when it is long). `state`: the
   * partition item as just read, for the first pass; `trimmed` hears of the item as each trim left it.
   */
  async indexTail(
    topicId: string,
    partition: number,
    state?: PartitionState,
    trimmed?: (state: PartitionState) => void,
  ): Promise<number> {
    const { store, clock, producerExpirationMs, maxProducersPerPartition } = this.options.log;
    let total = 0;
    // Each pass starts from the item as the last trim left it (commits since then only add to the tail).
    let read = state;
    for (let pass = 0; pass < 16; pass++) {
      const moved = await materializeTail(store, topicId, partition, {
        now: clock.now(),
        producerExpirationMs,
        maxProducers: maxProducersPerPartition,
        ...(read ? { state: read } : {}),
        trimmed: (after) => {
          read = after;
          trimmed?.(after);
        },
      });
      total += moved;
      if (moved === 0) break;
    }
    return total;
  }

  /**
   * Rolls every closed segment of one partition, until none is closed or the run's budget is spent.
   * `state`: the partition item as just read; nothing is read when it shows the segment index reaching
   * the tail already.
   */
  async rollSegments(
    topicId: string,
    partition: number,
    config: Parameters<typeof rollSegment>[3],
    deadline = this.options.log.clock.now() + this.runBudgetMs,
    state?: PartitionState,
  ): Promise<number> {
    const { log } = this.options;
    const segmentStore = log.segmentStore;
    if (!segmentStore) return 0;
    if (state && Math.max(segmentEndOf(state), state.logStartOffset) >= state.tailBase) return 0;
    let rolled = 0;
    while (log.clock.now() < deadline) {
      const result = await rollSegment({ ...log, segmentStore }, topicId, partition, config, { deadline });
      if (!result.rolled) break;
      rolled++;
    }
    return rolled;
  }

  /**
   * Whether this run scans for orphans: always with no interval; otherwise only when it moves the time
   * of the last scan forward from one at least an interval old (a run that loses the race skips).
   */
  async claimOrphanScan(): Promise<boolean> {
    if (this.orphanScanIntervalMs <= 0) return true;
    const { store, clock } = this.options.log;
    const now = clock.now();
    try {
      await store.put(
        { ...keys.orphanScan, at: now },
        {
          condition: {
            or: [{ notExists: 'at' }, { path: 'at', op: '<=', value: now - this.orphanScanIntervalMs }],
          },
        },
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionFailedError) return false;
      throw error;
    }
  }

  /**
   * Deletes objects of a topic that no index or tail entry references and that are older than the
   * grace period (a produce that wrote its object and then failed, or was killed, before committing; a
   * roll or a cleaner whose swap did not happen). Objects of pages that local retention retired stay
   * for the grace period after their retirement, for readers still holding the page.
   */
  async collectOrphans(topicId: string, partitions: number): Promise<number> {
    const { store, clock } = this.options.log;
    const cutoff = clock.now() - this.orphanGraceMs;
    const referenced = new Set<string>();
    for (let p = 0; p < partitions; p++) {
      // State first: anything that leaves the tail afterwards is already in the index, and entries below
      // its log start stay below (a page can outlive some of its entries until retention retires it).
      const item = await store.get(keys.partitionState(topicId, p), { consistent: true });
      const state = item && decodePartitionState(item);
      for (const entry of state?.tail ?? []) referenced.add(entry.objectKey);
      const pages: Item[] = [];
      for (const prefix of [keys.batchPrefix, keys.segmentPrefix]) {
        pages.push(
          ...(await queryAll(store, {
            pk: keys.partitionPk(topicId, p),
            sk: { beginsWith: prefix },
            consistent: true,
          })),
        );
      }
      for (const { baseOffset, entry } of pages.flatMap(pageEntries))
        if (baseOffset + entry.offsetCount > (state?.logStartOffset ?? 0)) referenced.add(entry.objectKey);
      for (const page of pages) {
        const objs = page['objs'];
        if (Array.isArray(objs) && (page['retiredAt'] as number) >= cutoff)
          for (const o of objs) referenced.add(String(o));
      }
    }
    let deleted = 0;
    const sweep = async (objectStore: ObjectStore, prefix: string) => {
      const orphans: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await objectStore.list(prefix, cursor ? { cursor } : {});
        for (const o of page.objects)
          if (o.lastModified < cutoff && !referenced.has(o.key)) orphans.push(o.key);
        cursor = page.cursor;
      } while (cursor);
      if (orphans.length > 0) await objectStore.delete(orphans);
      deleted += orphans.length;
    };
    for (const objectStore of this.options.objectStores) await sweep(objectStore, dataObjectPrefix(topicId));
    const segmentStore = this.options.log.segmentStore;
    if (segmentStore) await sweep(segmentStore, segmentObjectPrefix(topicId));
    return deleted;
  }

  /** Removes every item and object of a deleted topic id. Idempotent. */
  async purgeTopic(topicId: string): Promise<void> {
    const { store } = this.options.log;
    const marker = await store.get(keys.deletedTopic(topicId), { consistent: true });
    const partitions = (marker?.['partitions'] as number | undefined) ?? 0;
    for (let p = 0; p < partitions; p++) {
      let cursor: string | undefined;
      do {
        const page = await store.query({
          pk: keys.partitionPk(topicId, p),
          consistent: true,
          ...(cursor ? { cursor } : {}),
        });
        if (page.items.length > 0)
          await store.batchWrite({ deletes: page.items.map(({ pk, sk }) => ({ pk, sk })) });
        cursor = page.cursor;
      } while (cursor);
    }
    const stores = this.options.objectStores.map((s) => [s, dataObjectPrefix(topicId)] as const);
    const segmentStore = this.options.log.segmentStore;
    if (segmentStore) stores.push([segmentStore, segmentObjectPrefix(topicId)]);
    for (const [objectStore, prefix] of stores) {
      let cursor: string | undefined;
      do {
        const page = await objectStore.list(prefix, cursor ? { cursor } : {});
        if (page.objects.length > 0) await objectStore.delete(page.objects.map((o) => o.key));
        cursor = page.cursor;
      } while (cursor);
    }
  }
}
