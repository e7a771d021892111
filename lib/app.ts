/**
 * Composition: builds Sluice's services from storage ports and configuration, and the router each
 * function serves. Lambda entry points, the local gateway and tests all come through here.
 */
import type { Clock } from './ports/clock.js';
import type { MetadataStore } from './ports/metadata-store.js';
import type { ObjectStore } from './ports/object-store.js';
import type { StoreInfo } from './core/topics/model.js';
import { TopicCatalog } from './core/topics/catalog.js';
import { createLogContext } from './core/log/context.js';
import type { LogContext } from './core/log/context.js';
import { LogAppender } from './core/log/produce.js';
import { Fetcher } from './core/log/fetch.js';
import { Maintenance } from './core/maintenance.js';
import type { RouteGuard } from './http/router.js';
import type { Telemetry } from './ports/telemetry.js';
import { noTelemetry } from './ports/telemetry.js';
import { reportConsumerLag } from './core/groups/lag.js';
import { Router } from './http/router.js';
import type { Job } from './http/route-table.js';
import { BODY_NAMED_ROUTES, OFFSET_LISTINGS, ROUTE_ACLS, ROUTE_TABLE } from './http/route-table.js';
import type { Route } from './http/types.js';
import { bindRoutes } from './http/define-route.js';
import { ROUTES } from './http/routes/index.js';
import { GroupCoordinator } from './core/groups/index.js';
import { TransactionCoordinator } from './core/transactions/index.js';
import { ClientQuotaManager } from './core/quotas/index.js';
import type { GroupTopics, PartitionOffsets } from './core/groups/index.js';
import { SluiceError, isSluiceError } from '../protocol/errors.js';
import { ON_BEHALF_OF_HEADER } from './auth/delegation.js';
import { CONNECT_BODY_CHECKS } from '../connect/access.js';
import { Herder } from '../connect/herder.js';
import { ConnectStateStore } from '../connect/state-store.js';
import { InteractiveQueries } from '../streams/query/interactive.js';
import type { Authorizer } from './auth/authorizer.js';
import { impliedAccessGuard } from './auth/authorizer.js';

export const SLUICE_VERSION = '0.1.0';

export interface SluiceConfig {
  clusterId: string;
  maxRequestBytes?: number;
  /** How long a topic registry entry may be served from memory on the produce/fetch path. */
  topicCacheTtlMs?: number;
  tailFlushEntries?: number;
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
   * and the local stack turn it on (functions/runtime.ts); the quota routes work either way.
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

export interface Sluice {
  /** The metadata store everything is built on (the Connect runtime keeps its state there too). */
  store: MetadataStore;
  catalog: TopicCatalog;
  log: LogContext;
  producer: LogAppender;
  fetcher: Fetcher;
  groups: GroupCoordinator;
  transactions: TransactionCoordinator;
  maintenance: Maintenance;
  /** Client quotas: the stored configs and the shared rates. */
  quotas: ClientQuotaManager;
  routes: Route[];
  /** The router of one function (API Gateway sends it only its routes), or of all of them. */
  router(job?: Job): Router;
}

export const createSluice = (deps: SluiceDeps): Sluice => {
  const { store, clock, config } = deps;
  const telemetry = deps.telemetry ?? noTelemetry;
  const catalog = new TopicCatalog({
    store,
    clock,
    stores: deps.objectStores.map(storeInfo),
    cacheTtlMs: config.topicCacheTtlMs ?? 5_000,
    ...(deps.newId ? { newId: deps.newId } : {}),
  });
  const log = createLogContext({
    store,
    objectStores: deps.objectStores,
    ...(deps.segmentStore ? { segmentStore: deps.segmentStore } : {}),
    catalog,
    clock,
    ...(config.maxRequestBytes !== undefined ? { maxRequestBytes: config.maxRequestBytes } : {}),
    ...(config.tailFlushEntries !== undefined ? { tailFlushEntries: config.tailFlushEntries } : {}),
    ...(config.pollIntervalMs !== undefined ? { pollIntervalMs: config.pollIntervalMs } : {}),
    ...(config.replicaLagTimeMaxMs !== undefined ? { replicaLagTimeMaxMs: config.replicaLagTimeMaxMs } : {}),
    ...(config.sequenceGapWaitMs !== undefined ? { sequenceGapWaitMs: config.sequenceGapWaitMs } : {}),
    ...(deps.random ? { random: deps.random } : {}),
    ...(deps.newId ? { newId: deps.newId } : {}),
    telemetry,
  });
  const fetcher = new Fetcher(log);
  const groups = new GroupCoordinator({
    store,
    clock,
    topics: groupTopics(catalog),
    offsets: partitionOffsets(fetcher),
    telemetry,
    ...(config.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: config.sessionTimeoutMs } : {}),
    ...(config.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: config.heartbeatIntervalMs } : {}),
  });
  const transactions = new TransactionCoordinator(log, groups, {
    ...(config.transactionMaxTimeoutMs !== undefined ? { maxTimeoutMs: config.transactionMaxTimeoutMs } : {}),
  });
  const producer = new LogAppender(log, (id, epoch, topic, partition) =>
    transactions.verifyPartition(id, epoch, topic, partition),
  );
  const maintenance = new Maintenance({
    log,
    objectStores: deps.objectStores,
    ...(config.orphanScanIntervalMs !== undefined
      ? { orphanScanIntervalMs: config.orphanScanIntervalMs }
      : {}),
    sweeps: {
      groups: () => groups.expireMembers(),
      transactions: () => transactions.expire(),
      consumerLag: () => reportConsumerLag(groups, telemetry),
    },
  });
  const quotas = new ClientQuotaManager({
    store,
    clock,
    ...(config.clientQuotas?.windowMs !== undefined ? { windowMs: config.clientQuotas.windowMs } : {}),
    ...(config.clientQuotas?.configCacheTtlMs !== undefined
      ? { configCacheTtlMs: config.clientQuotas.configCacheTtlMs }
      : {}),
  });
  const routes: Route[] = bindRoutes(
    ROUTES,
    {
      catalog,
      clusterId: config.clusterId,
      version: SLUICE_VERSION,
      onTopicDeleted: (topic) => maintenance.purgeTopic(topic.topicId).then(() => undefined),
      producer,
      fetcher,
      maxRequestBytes: log.maxRequestBytes,
      log,
      groups,
      transactions,
      queries: new InteractiveQueries(store),
      herder: new Herder(new ConnectStateStore(store), groups),
      quotas,
    },
    config.clientQuotas ? quotas : undefined,
  );
  const routers = new Map<string, Router>();
  return {
    store,
    catalog,
    log,
    producer,
    fetcher,
    groups,
    transactions,
    maintenance,
    quotas,
    routes,
    router: (job) => {
      const key = job ?? 'all';
      let router = routers.get(key);
      if (!router) {
        router = new Router(
          job === undefined ? routes : routes.filter((r) => jobOf(r) === job),
          telemetry,
          deps.authorizer
            ? impliedAccessGuard(
                deps.authorizer,
                { bodyNamed: BODY_NAMED_ROUTES, offsetListings: OFFSET_LISTINGS, acls: ROUTE_ACLS },
                CONNECT_BODY_CHECKS,
              )
            : refuseDelegation,
        );
        routers.set(key, router);
      }
      return router;
    },
  };
};

/**
 * Without an authorizer nothing is checked, so nothing can be checked for a delegated principal
 * either: a request that asks to be authorized as another principal is refused rather than served
 * with the signer's rights (a deployment that forgot the authorizer fails closed).
 */
const refuseDelegation: RouteGuard = (_routeKey, request) => {
  if (request.headers[ON_BEHALF_OF_HEADER] !== undefined)
    return Promise.reject(
      new SluiceError(
        'CLUSTER_AUTHORIZATION_FAILED',
        `this deployment checks no principals, so it cannot act on behalf of one (${ON_BEHALF_OF_HEADER})`,
      ),
    );
  return Promise.resolve(undefined);
};

/** What `GET /v1/cluster` says about a store. */
const storeInfo = (s: ObjectStore): StoreInfo => ({
  id: s.id,
  location: s.location,
  kind: s.kind ?? 'standard',
  ...(s.zone !== undefined ? { zone: s.zone } : {}),
});

const jobOf = (route: Route): Job | undefined =>
  ROUTE_TABLE.find((spec) => spec.method === route.method && spec.pattern === route.pattern)?.job;

/** Consumer groups see topics through the registry (fresh reads: subscriptions must not lag). */
const groupTopics = (catalog: TopicCatalog): GroupTopics => ({
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
