/**
 * Lambda entry point and composition root of the groups function, Sluice's coordinator: consumer
 * groups, their offsets, the classic protocol, the Streams applications listing and the transaction
 * coordinator's routes (InitProducerId with a transactional.id, AddPartitionsToTxn, AddOffsetsToTxn,
 * TxnOffsetCommit, EndTxn; functions/route-table.ts), within the callers' client quotas. As in Kafka,
 * where FindCoordinator answers for groups and transactions alike, the transaction coordinator lives
 * beside the group coordinator its TxnOffsetCommit and EndTxn write into; ending a transaction writes
 * its markers into the partitions' logs. With SLUICE_AUTHORIZER=iam (the CDK app sets it) the topics a
 * heartbeat, commit, reset or transaction names, a transaction's group and a delegated caller are
 * checked with IAM's policy simulator.
 */
import { GROUP_ROUTES } from '../lib/http/routes/groups.js';
import type { GroupRoutesOptions } from '../lib/http/routes/groups.js';
import { TRANSACTION_ROUTES } from '../lib/http/routes/transactions.js';
import type { TransactionRoutesOptions } from '../lib/http/routes/transactions.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import type { Router } from '../lib/http/router.js';
import { routesOfJob, serve } from '../lib/http/serve.js';
import type { SluiceDeps } from '../lib/services.js';
import {
  createGroups,
  createLogServices,
  createQuotas,
  createTransactions,
  serveOptionsOf,
} from '../lib/services.js';
import { STREAMS_APPLICATION_ROUTES } from '../streams/query/application-routes.js';
import type { StreamsApplicationRoutesOptions } from '../streams/query/application-routes.js';
import { authorizerFromEnv } from './authorizer.js';
import { depsFromEnv, httpHandler } from './environment.js';

type GroupsFunctionDeps = GroupRoutesOptions & StreamsApplicationRoutesOptions & TransactionRoutesOptions;

/** The routes API Gateway sends this function. */
export const GROUPS_FUNCTION_ROUTES: RouteDefinition<GroupsFunctionDeps>[] = routesOfJob<GroupsFunctionDeps>(
  [...TRANSACTION_ROUTES, ...STREAMS_APPLICATION_ROUTES, ...GROUP_ROUTES],
  'groups',
);

export const groupsRouter = (deps: SluiceDeps): Router => {
  const core = createLogServices(deps);
  const groups = createGroups(deps, core);
  return serve(
    GROUPS_FUNCTION_ROUTES,
    { groups, log: core.log, transactions: createTransactions(deps, core, groups) },
    serveOptionsOf(deps, createQuotas(deps)),
  );
};

export const handler = httpHandler('groups', () =>
  groupsRouter({ ...depsFromEnv(), ...authorizerFromEnv() }),
);
