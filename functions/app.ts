/**
 * The whole of Sluice in one process: every service (lib/services.ts), every route, Connect's herder
 * and Streams' interactive queries, and the router of each function or of all of them. The local
 * stack, the Connect runtime (which hosts Sluice in-process) and tests come through here; a deployed
 * HTTP function builds only its own job (functions/<job>.ts). A composition root, so it lives beside
 * them: it wires Connect and Streams into lib/, which imports neither.
 */
import type { LogContext } from '../lib/core/log/context.js';
import type { LogAppender } from '../lib/core/log/produce.js';
import type { Fetcher } from '../lib/core/log/fetch.js';
import type { Maintenance } from '../lib/core/maintenance.js';
import type { TopicCatalog } from '../lib/core/topics/catalog.js';
import type { MetadataStore } from '../lib/ports/metadata-store.js';
import type { Router } from '../lib/http/router.js';
import type { Job } from './route-table.js';
import type { Route } from '../lib/http/types.js';
import { bindRoutes } from '../lib/http/define-route.js';
import { routesOfJob, serve } from '../lib/http/serve.js';
import { ROUTES } from './routes.js';
import type { GroupCoordinator } from '../lib/core/groups/index.js';
import type { TransactionCoordinator } from '../lib/core/transactions/index.js';
import type { ClientQuotaManager } from '../lib/core/quotas/index.js';
import { CONNECT_BODY_CHECKS } from '../connect/access.js';
import { Herder } from '../connect/herder.js';
import { ConnectStateStore } from '../connect/state-store.js';
import { coordinatorGroupAdmin } from './connect-group-admin.js';
import { InteractiveQueries } from '../streams/query/interactive.js';
import type { SluiceDeps } from '../lib/services.js';
import {
  SLUICE_VERSION,
  createFetchWaiters,
  createFetcher,
  createGroups,
  createLogServices,
  createMaintenance,
  createProducer,
  createQuotas,
  createTopicCatalog,
  createTransactions,
  createWaiting,
  serveOptionsOf,
} from '../lib/services.js';
import type { ConnectionNotifier } from '../lib/ports/connections.js';
import type { Waiters } from '../lib/core/log/waiters.js';
import type { WaitSocket } from '../lib/http/wait-socket.js';

export type { SluiceConfig, SluiceDeps } from '../lib/services.js';
export { SLUICE_VERSION } from '../lib/services.js';

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
  /**
   * Waiting consumers and the wait socket, telling connections through `notifier` (built once per
   * notifier); `httpApi` names the HTTP API whose routes grant READ (lib/http/wait-socket.ts).
   */
  waiting(
    notifier: ConnectionNotifier,
    httpApi?: { apiId: string; stage: string; accountId: string },
  ): { waiters: Waiters; socket: WaitSocket };
}

export const createSluice = (deps: SluiceDeps): Sluice => {
  const core = createLogServices(deps, createTopicCatalog(deps));
  const groups = createGroups(deps, core);
  const transactions = createTransactions(deps, core, groups);
  const producer = createProducer(core);
  const fetcher = createFetcher(core);
  const maintenance = createMaintenance(deps, core, groups, transactions);
  const quotas = createQuotas(deps);
  const options = serveOptionsOf(deps, quotas);
  const routeDeps = {
    catalog: core.catalog,
    clusterId: deps.config.clusterId,
    ...(deps.config.waitUrl ? { waitUrl: deps.config.waitUrl } : {}),
    version: SLUICE_VERSION,
    onTopicDeleted: (topic: { topicId: string }) =>
      maintenance.purgeTopic(topic.topicId).then(() => undefined),
    producer,
    fetcher,
    waiters: createFetchWaiters(deps, core),
    maxRequestBytes: core.log.maxRequestBytes,
    log: core.log,
    groups,
    transactions,
    queries: new InteractiveQueries(deps.store),
    herder: new Herder(new ConnectStateStore(deps.store), coordinatorGroupAdmin(groups)),
    quotas,
  };
  const routers = new Map<string, Router>();
  const waiting = new Map<ConnectionNotifier, { waiters: Waiters; socket: WaitSocket }>();
  return {
    ...core,
    producer,
    fetcher,
    groups,
    transactions,
    maintenance,
    quotas,
    routes: bindRoutes(ROUTES, routeDeps, options.quotas),
    waiting: (notifier, httpApi) => {
      let built = waiting.get(notifier);
      if (!built) {
        built = createWaiting(deps, core, notifier, httpApi);
        waiting.set(notifier, built);
      }
      return built;
    },
    router: (job) => {
      const key = job ?? 'all';
      let router = routers.get(key);
      if (!router) {
        router = serve(routesOfJob(ROUTES, job), routeDeps, { ...options, bodyChecks: CONNECT_BODY_CHECKS });
        routers.set(key, router);
      }
      return router;
    },
  };
};
