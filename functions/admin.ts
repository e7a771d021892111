/**
 * Lambda entry point and composition root of the admin function: the cluster, topics and their
 * configs, leader election and the transaction listings (lib/http/route-table.ts). Deleting a topic
 * purges its data at once (maintenance would later), so the log's maintenance is built here too.
 */
import { ADMIN_ROUTES } from '../lib/http/routes/admin.js';
import type { AdminRoutesOptions } from '../lib/http/routes/admin.js';
import { REPLICATION_ROUTES } from '../lib/http/routes/replication.js';
import type { ReplicationRoutesOptions } from '../lib/http/routes/replication.js';
import { TRANSACTION_ROUTES } from '../lib/http/routes/transactions.js';
import type { TransactionRoutesOptions } from '../lib/http/routes/transactions.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import type { Router } from '../lib/http/router.js';
import { routesOfJob, serve } from '../lib/http/serve.js';
import type { SluiceDeps } from '../lib/services.js';
import {
  SLUICE_VERSION,
  createGroups,
  createLogServices,
  createMaintenance,
  createTransactions,
} from '../lib/services.js';
import { depsFromEnv, httpHandler } from './environment.js';

type AdminFunctionDeps = AdminRoutesOptions & ReplicationRoutesOptions & TransactionRoutesOptions;

/** The routes API Gateway sends this function. */
export const ADMIN_FUNCTION_ROUTES: RouteDefinition<AdminFunctionDeps>[] = routesOfJob<AdminFunctionDeps>(
  [...ADMIN_ROUTES, ...REPLICATION_ROUTES, ...TRANSACTION_ROUTES],
  'admin',
);

export const adminRouter = (deps: SluiceDeps): Router => {
  const core = createLogServices(deps);
  const groups = createGroups(deps, core);
  const { transactions } = createTransactions(deps, core, groups);
  const maintenance = createMaintenance(deps, core, groups, transactions);
  return serve(
    ADMIN_FUNCTION_ROUTES,
    {
      catalog: core.catalog,
      clusterId: deps.config.clusterId,
      version: SLUICE_VERSION,
      onTopicDeleted: (topic) => maintenance.purgeTopic(topic.topicId).then(() => undefined),
      log: core.log,
      transactions,
    },
    deps,
  );
};

export const handler = httpHandler(() => adminRouter(depsFromEnv()));
