/**
 * Sluice's core services built from storage ports and configuration: the topic catalog, the log, its
 * fetcher, consumer groups, transactions, the producer and maintenance. Every composition root builds
 * from here: each Lambda function (functions/<job>.ts) the services its routes need, functions/app.ts all of
 * them. Nothing here imports Connect, Streams or an AWS SDK, so a function bundle holds only its job.
 */
import type { ConnectionNotifier } from './ports/connections.js';
import { Waiters } from './core/log/waiters.js';
import { WaitSocket } from './http/wait-socket.js';
import type { Clock } from './ports/clock.js';
import type { MetadataStore } from './ports/metadata-store.js';
import type { ObjectStore } from './ports/object-store.js';
import type { StoreInfo } from './core/topics/model.js';
import { TopicCatalog } from './core/topics/catalog.js';
import { TopicRegistry } from './core/topics/registry.js';
import { createLogContext } from './core/log/context.js';
import type { LogContext } from './core/log/context.js';
import { LogAppender } from './core/log/produce.js';
import { Fetcher } from './core/log/fetch.js';
import { Maintenance } from './core/maintenance.js';
import type { Telemetry } from './ports/telemetry.js';
import { noTelemetry } from './ports/telemetry.js';
import { reportConsumerLag } from './core/groups/lag.js';
import { ClientQuotaManager } from './core/quotas/index.js';
import { GroupCoordinator } from './core/groups/index.js';
import { TransactionCoordinator } from './core/transactions/index.js';
import { transactionVerifier } from './core/transactions/verify.js';
import type { GroupTopics, PartitionOffsets } from './core/groups/index.js';
import { isSluiceError } from '../protocol/errors.js';
import type { Authorizer } from './auth/authorizer.js';

export const SLUICE_VERSION = '0.1.0';

export interface SluiceConfig {
  clusterId: string;
  /** The wait socket's URL, reported by GET /v1/cluster (docs/api.md "Waiting on a WebSocket"). */
  waitUrl?: string;
  maxRequestBytes?: number;
  /** How long a topic registry entry may be served from memory on the produce/fetch path. */
  topicCacheTtlMs?: number;
  tailFlushEntries?: number;
  /** Move the tail after answering the produce that triggers it (LogOptions.materializeAfterAck). */
  materializeAfterAck?: boolean;
  pollIntervalMs?: number;
  /** Kafka's group.consumer.session.timeout.ms (default 45 s). */
  sessionTimeoutMs?: number;
  /** Kafka's group.consumer.heartbeat.interval.ms (default 5 s). */
  heartbeatIntervalMs?: number;
  /** Kafka's replica.lag.time.max.ms (default 30 s). */
  replicaLagTimeMaxMs?: number;
  /** How long a commit ahead of its producer's sequence waits for the batches before it (default 0). */
  sequenceGapWaitMs?: number;
  /** How often maintenance scans for orphan objects (default 0: every run). */
  orphanScanIntervalMs?: number;
  /** Kafka's transaction.max.timeout.ms (default 15 minutes). */
  transactionMaxTimeoutMs?: number;
  /**
   * Enforce client quotas on every signed route (docs/quotas.md). Off unless set: the Lambda functions
   * and the local stack turn it on (functions/environment.ts); the quota routes work either way.
   */
  clientQuotas?: { windowMs?: number; configCacheTtlMs?: number };
}

export interface SluiceDeps {
  store: MetadataStore;
  objectStores: readonly ObjectStore[];
  /** The segment store (KIP-405's remote tier); without one, segments are not rolled. */
  segmentStore?: ObjectStore;
  clock: Clock;
  config: SluiceConfig;
  /** Log lines and metrics (functions/telemetry.ts on Lambda and locally; default: nowhere). */
  telemetry?: Telemetry;
  newId?: () => string;
  /** Jitter source of retries (seeded in simulations). */
  random?: () => number;
  /** Checks the resources a request names beyond its path (lib/auth); none: not checked. */
  authorizer?: Authorizer;
}

/**
 * The topic catalog and the log over it: what every data-path service is built on. The reads
 * (createFetcher) are built apart, by the services that read, so the produce function carries none.
 */
export interface LogServices<C extends TopicRegistry = TopicRegistry> {
  store: MetadataStore;
  catalog: C;
  log: LogContext;
}

/**
 * The log over the topic registry's reads; `catalog` in its place where topics are also administered
 * (createTopicCatalog: the admin function and the whole app), so that the other bundles carry no topic
 * administration.
 */
export function createLogServices(deps: SluiceDeps): LogServices;
export function createLogServices<C extends TopicRegistry>(deps: SluiceDeps, catalog: C): LogServices<C>;
export function createLogServices(deps: SluiceDeps, catalog?: TopicRegistry): LogServices {
  const { store, clock, config } = deps;
  const topics = catalog ?? new TopicRegistry(registryOptions(deps));
  const log = createLogContext({
    store,
    objectStores: deps.objectStores,
    ...(deps.segmentStore ? { segmentStore: deps.segmentStore } : {}),
    catalog: topics,
    clock,
    ...(config.maxRequestBytes !== undefined ? { maxRequestBytes: config.maxRequestBytes } : {}),
    ...(config.tailFlushEntries !== undefined ? { tailFlushEntries: config.tailFlushEntries } : {}),
    ...(config.materializeAfterAck !== undefined ? { materializeAfterAck: config.materializeAfterAck } : {}),
    ...(config.pollIntervalMs !== undefined ? { pollIntervalMs: config.pollIntervalMs } : {}),
    ...(config.replicaLagTimeMaxMs !== undefined ? { replicaLagTimeMaxMs: config.replicaLagTimeMaxMs } : {}),
    ...(config.sequenceGapWaitMs !== undefined ? { sequenceGapWaitMs: config.sequenceGapWaitMs } : {}),
    ...(deps.random ? { random: deps.random } : {}),
    ...(deps.newId ? { newId: deps.newId } : {}),
    telemetry: deps.telemetry ?? noTelemetry,
  });
  return { store, catalog: topics, log };
}

const registryOptions = (deps: SluiceDeps) => ({
  store: deps.store,
  clock: deps.clock,
  stores: deps.objectStores.map(storeInfo),
  cacheTtlMs: deps.config.topicCacheTtlMs ?? 5_000,
});

/** The topic catalog: the registry's reads and topic administration (create, grow, reconfigure, delete). */
export const createTopicCatalog = (deps: SluiceDeps): TopicCatalog =>
  new TopicCatalog({ ...registryOptions(deps), ...(deps.newId ? { newId: deps.newId } : {}) });

/** Fetch and ListOffsets over the log. */
export const createFetcher = (core: LogServices): Fetcher => new Fetcher(core.log);

/**
 * The waits a fetch registers on a wait socket connection (it tells nobody: the notifier does): the
 * fetch function's and the whole app's, beside their Fetcher.
 */
export const createFetchWaiters = (deps: SluiceDeps, core: LogServices): Waiters =>
  new Waiters({ store: deps.store, catalog: core.catalog, clock: deps.clock });

/** Consumer groups over the catalog and the log's offsets. */
export const createGroups = (deps: SluiceDeps, core: LogServices): GroupCoordinator =>
  new GroupCoordinator({
    store: deps.store,
    clock: deps.clock,
    topics: groupTopics(core.catalog),
    offsets: partitionOffsets(createFetcher(core)),
    telemetry: deps.telemetry ?? noTelemetry,
    ...(deps.config.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: deps.config.sessionTimeoutMs } : {}),
    ...(deps.config.heartbeatIntervalMs !== undefined
      ? { heartbeatIntervalMs: deps.config.heartbeatIntervalMs }
      : {}),
  });

/**
 * The producer: appends to the log, checking a transactional batch's partition with the transaction
 * log alone (KIP-890's verification, lib/core/transactions/verify.ts), so the produce function carries
 * no transaction coordinator and no consumer groups.
 */
export const createProducer = (core: LogServices): LogAppender =>
  new LogAppender(core.log, transactionVerifier(core.store));

/** The transaction coordinator (served beside the group coordinator, as Kafka's FindCoordinator answers both). */
export const createTransactions = (
  deps: SluiceDeps,
  core: LogServices,
  groups: GroupCoordinator,
): TransactionCoordinator =>
  new TransactionCoordinator(core.log, groups, {
    ...(deps.config.transactionMaxTimeoutMs !== undefined
      ? { maxTimeoutMs: deps.config.transactionMaxTimeoutMs }
      : {}),
  });

/** Scheduled maintenance, with the sweeps of expired group members and timed-out transactions and the consumer lag report. */
export const createMaintenance = (
  deps: SluiceDeps,
  core: LogServices,
  groups: GroupCoordinator,
  transactions: TransactionCoordinator,
): Maintenance =>
  new Maintenance({
    log: core.log,
    objectStores: deps.objectStores,
    ...(deps.config.orphanScanIntervalMs !== undefined
      ? { orphanScanIntervalMs: deps.config.orphanScanIntervalMs }
      : {}),
    sweeps: {
      groups: () => groups.expireMembers(),
      transactions: () => transactions.expire(),
      consumerLag: () => reportConsumerLag(groups, deps.telemetry ?? noTelemetry),
    },
  });

/**
 * Client quotas: the stored configs and the shared rates (lib/core/quotas). Every function that serves
 * signed routes builds them, since every such route spends its caller's request-time quota.
 */
export const createQuotas = (deps: SluiceDeps): ClientQuotaManager => {
  const settings = deps.config.clientQuotas;
  return new ClientQuotaManager({
    store: deps.store,
    clock: deps.clock,
    ...(settings?.windowMs !== undefined ? { windowMs: settings.windowMs } : {}),
    ...(settings?.configCacheTtlMs !== undefined ? { configCacheTtlMs: settings.configCacheTtlMs } : {}),
  });
};

/**
 * What a router is served with (lib/http/serve.ts): telemetry, the authorizer, and the quotas it
 * enforces when the configuration turns client quotas on.
 */
export const serveOptionsOf = (
  deps: SluiceDeps,
  quotas: ClientQuotaManager,
): { telemetry?: Telemetry; authorizer?: Authorizer; quotas?: ClientQuotaManager } => ({
  ...(deps.telemetry ? { telemetry: deps.telemetry } : {}),
  ...(deps.authorizer ? { authorizer: deps.authorizer } : {}),
  ...(deps.config.clientQuotas ? { quotas } : {}),
});

/** What `GET /v1/cluster` says about a store. */
const storeInfo = (s: ObjectStore): StoreInfo => ({
  id: s.id,
  location: s.location,
  kind: s.kind ?? 'standard',
  ...(s.zone !== undefined ? { zone: s.zone } : {}),
});

/** Consumer groups see topics through the registry (fresh reads: subscriptions must not lag). */
const groupTopics = (catalog: TopicRegistry): GroupTopics => ({
  describe: async (name) => {
    try {
      const topic = await catalog.get(name, { fresh: true });
      return { topicId: topic.topicId, partitions: topic.partitions };
    } catch (error) {
      if (isSluiceError(error) && error.code === 'UNKNOWN_TOPIC_OR_PARTITION') return undefined;
      throw error;
    }
  },
});

const partitionOffsets = (fetcher: Fetcher): PartitionOffsets => ({
  earliest: async (topic, partition) => (await fetcher.listOffsets(topic, partition, 'earliest')).offset!,
  latest: async (topic, partition) => (await fetcher.listOffsets(topic, partition, 'latest')).offset!,
  forTimestamp: async (topic, partition, timestampMs) =>
    (await fetcher.listOffsets(topic, partition, timestampMs)).offset,
});

/**
 * Waiting consumers (lib/core/log/waiters.ts) and the wait socket's edge over them, sending through
 * `notifier`: the wait function and the notifier on the table's stream build this, and nothing else.
 */
export const createWaiting = (
  deps: Pick<SluiceDeps, 'store' | 'clock' | 'newId' | 'authorizer'>,
  core: Pick<LogServices, 'catalog'>,
  notifier: ConnectionNotifier,
  httpApi?: { apiId: string; stage: string; accountId: string },
): { waiters: Waiters; socket: WaitSocket } => {
  const waiters = new Waiters({ store: deps.store, catalog: core.catalog, clock: deps.clock, notifier });
  const socket = new WaitSocket({
    waiters,
    notifier,
    store: deps.store,
    clock: deps.clock,
    ...(deps.authorizer ? { authorizer: deps.authorizer } : {}),
    ...(httpApi ? { httpApi } : {}),
  });
  return { waiters, socket };
};
