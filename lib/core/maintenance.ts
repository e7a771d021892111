/**
 * The scheduled maintenance run (no process holds state between runs): moves partition tails into the
 * batch index, applies retention and compaction, purges deleted topics, collects orphan objects left by
 * produces that failed before their commit, and lets other services (consumer groups) sweep expired state.
 */
import type { ObjectStore } from '../ports/object-store.js';
import { dataObjectPrefix, keys } from './keys.js';
import { queryAll } from './query-all.js';
import type { LogContext } from './log/context.js';
import { compactPartition } from './log/compaction.js';
import { materializeTail } from './log/materialize.js';
import { pageEntries } from './log/batch-index.js';
import { asPartitionState } from './log/partition-state.js';
import { applyRetention } from './log/retention.js';
import { effectiveConfig } from './topics/configs.js';
import { replicatePartition } from './replication/replicator.js';

export interface MaintenanceOptions {
  log: LogContext;
  objectStores: readonly ObjectStore[];
  /** An object younger than this is never an orphan: its produce may still be committing. */
  orphanGraceMs?: number;
  /** How long a deleted topic's id keeps being purged (late writers may still put objects). */
  deletedTopicGraceMs?: number;
  /** Extra sweeps to run, e.g. consumer-group session expiry. */
  sweeps?: Record<string, () => Promise<unknown>>;
}

export interface MaintenanceReport {
  partitions: number;
  entriesIndexed: number;
  batchesExpired: number;
  /** Records the log cleaner removed (superseded, keyless, or expired tombstones). */
  recordsCompacted: number;
  topicsPurged: number;
  orphansDeleted: number;
  /** Replication: objects copied to followers, ISR joins and leaves, leaders elected. */
  replication: ReplicationTotals;
  sweeps: Record<string, unknown>;
  errors: string[];
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

  constructor(private readonly options: MaintenanceOptions) {
    this.orphanGraceMs = options.orphanGraceMs ?? 15 * 60_000;
    this.deletedTopicGraceMs = options.deletedTopicGraceMs ?? 60 * 60_000;
  }

  addSweep(name: string, sweep: () => Promise<unknown>): void {
    this.options.sweeps = { ...this.options.sweeps, [name]: sweep };
  }

  async run(): Promise<MaintenanceReport> {
    const report: MaintenanceReport = {
      partitions: 0,
      entriesIndexed: 0,
      batchesExpired: 0,
      recordsCompacted: 0,
      topicsPurged: 0,
      orphansDeleted: 0,
      replication: { copied: 0, joined: 0, left: 0, elected: 0 },
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
    report.replication = await this.replicate((what, error) =>
      report.errors.push(`${what}: ${error instanceof Error ? error.message : String(error)}`),
    );
    const { catalog, clock, store } = this.options.log;
    for (const topic of await catalog.list()) {
      for (let p = 0; p < topic.partitions; p++) {
        report.partitions++;
        await attempt(`index ${topic.name}-${p}`, async () => {
          report.entriesIndexed += await this.indexTail(topic.topicId, p);
        });
        await attempt(`retention ${topic.name}-${p}`, async () => {
          const config = effectiveConfig(topic.configs);
          report.batchesExpired += (
            await applyRetention(store, topic.topicId, p, config, clock.now())
          ).batchesDeleted;
        });
        await attempt(`compaction ${topic.name}-${p}`, async () => {
          const config = effectiveConfig(topic.configs);
          if (!config['cleanup.policy'].includes('compact')) return;
          const result = await compactPartition(this.options.log, topic.topicId, p, config, clock.now());
          report.recordsCompacted += result.recordsRemoved;
        });
      }
      await attempt(`orphans of ${topic.name}`, async () => {
        report.orphansDeleted += await this.collectOrphans(topic.topicId, topic.partitions);
      });
    }
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
   * One replicator pass over every replicated partition (lib/core/replication/replicator.ts): run by
   * each maintenance run, and on its own timer by the local stack.
   */
  async replicate(onError: (what: string, error: unknown) => void = () => {}): Promise<ReplicationTotals> {
    const totals: ReplicationTotals = { copied: 0, joined: 0, left: 0, elected: 0 };
    for (const topic of await this.options.log.catalog.list()) {
      if (topic.replicationFactor < 2) continue;
      for (let p = 0; p < topic.partitions; p++) {
        try {
          const pass = await replicatePartition(this.options.log, topic, p);
          totals.copied += pass.copied;
          totals.joined += pass.joined.length;
          totals.left += pass.left.length;
          if (pass.elected !== undefined) totals.elected++;
        } catch (error) {
          onError(`replicate ${topic.name}-${p}`, error);
        }
      }
    }
    return totals;
  }

  /** Moves the whole tail of one partition into the index (several passes when it is long). */
  async indexTail(topicId: string, partition: number): Promise<number> {
    const { store, clock, producerExpirationMs } = this.options.log;
    let total = 0;
    for (let pass = 0; pass < 16; pass++) {
      const moved = await materializeTail(store, topicId, partition, {
        now: clock.now(),
        producerExpirationMs,
      });
      total += moved;
      if (moved === 0) break;
    }
    return total;
  }

  /**
   * Deletes objects of a topic that no index or tail entry references and that are older than the
   * grace period (a produce that wrote its object and then failed, or was killed, before committing).
   */
  async collectOrphans(topicId: string, partitions: number): Promise<number> {
    const { store, clock } = this.options.log;
    const referenced = new Set<string>();
    for (let p = 0; p < partitions; p++) {
      // State first: anything that leaves the tail afterwards is already in the index, and entries below
      // its log start stay below (a page can outlive some of its entries until retention retires it).
      const item = await store.get(keys.partitionState(topicId, p), { consistent: true });
      const state = item && asPartitionState(item);
      for (const entry of state?.tail ?? []) referenced.add(entry.o);
      const pages = await queryAll(store, {
        pk: keys.partitionPk(topicId, p),
        sk: { beginsWith: keys.batchPrefix },
        consistent: true,
      });
      for (const { baseOffset, entry } of pages.flatMap(pageEntries))
        if (baseOffset + entry.n > (state?.logStartOffset ?? 0)) referenced.add(entry.o);
    }
    const cutoff = clock.now() - this.orphanGraceMs;
    let deleted = 0;
    for (const objectStore of this.options.objectStores) {
      const orphans: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await objectStore.list(dataObjectPrefix(topicId), cursor ? { cursor } : {});
        for (const o of page.objects)
          if (o.lastModified < cutoff && !referenced.has(o.key)) orphans.push(o.key);
        cursor = page.cursor;
      } while (cursor);
      if (orphans.length > 0) await objectStore.delete(orphans);
      deleted += orphans.length;
    }
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
    for (const objectStore of this.options.objectStores) {
      let cursor: string | undefined;
      do {
        const page = await objectStore.list(dataObjectPrefix(topicId), cursor ? { cursor } : {});
        if (page.objects.length > 0) await objectStore.delete(page.objects.map((o) => o.key));
        cursor = page.cursor;
      } while (cursor);
    }
  }
}
