/**
 * Lambda entry point and composition root of the admin function: the cluster, topics and their
 * configs, segments, leader election, client quotas and the transaction listings
 * (functions/route-table.ts), within the callers' client quotas. Deleting a topic purges its data at
 * once (maintenance would later), so the log's maintenance is built here too. With
 * SLUICE_AUTHORIZER=iam (the CDK app sets it) a delegated caller is checked with IAM's policy simulator.
 */
import { ADMIN_ROUTES } from '../lib/http/routes/admin.js';
import type { AdminRoutesOptions } from '../lib/http/routes/admin.js';
import { QUOTA_ROUTES } from '../lib/http/routes/quotas.js';
import type { QuotaRoutesOptions } from '../lib/http/routes/quotas.js';
import { REPLICATION_ROUTES } from '../lib/http/routes/replication.js';
import type { ReplicationRoutesOptions } from '../lib/http/routes/replication.js';
import { SEGMENT_ROUTES } from '../lib/http/routes/segments.js';
import type { SegmentRoutesOptions } from '../lib/http/routes/segments.js';
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
  createQuotas,
  createTopicCatalog,
  createTransactions,
  serveOptionsOf,
} from '../lib/services.js';
import { authorizerFromEnv } from './authorizer.js';
import { depsFromEnv, httpHandler } from './environment.js';

type AdminFunctionDeps = AdminRoutesOptions &
  ReplicationRoutesOptions &
  SegmentRoutesOptions &
  TransactionRoutesOptions &
  QuotaRoutesOptions;

/** The routes API Gateway sends this function. */
export const ADMIN_FUNCTION_ROUTES: RouteDefinition<AdminFunctionDeps>[] = routesOfJob<AdminFunctionDeps>(
  [...ADMIN_ROUTES, ...REPLICATION_ROUTES, ...SEGMENT_ROUTES, ...TRANSACTION_ROUTES, ...QUOTA_ROUTES],
  'admin',
);

export const adminRouter = (deps: SluiceDeps): Router => {
  const core = createLogServices(deps, createTopicCatalog(deps));
  const groups = createGroups(deps, core);
  const transactions = createTransactions(deps, core, groups);
  const maintenance = createMaintenance(deps, core, groups, transactions);
  const quotas = createQuotas(deps);
  return serve(
    ADMIN_FUNCTION_ROUTES,
    {
      catalog: core.catalog,
      clusterId: deps.config.clusterId,
      version: SLUICE_VERSION,
      onTopicDeleted: (topic) => maintenance.purgeTopic(topic.topicId).then(() => undefined),
      log: core.log,
      transactions,
      quotas,
    },
    serveOptionsOf(deps, quotas),
  );
};

export const handler = httpHandler('admin', () => adminRouter({ ...depsFromEnv(), ...authorizerFromEnv() }));
