/**
 * Lambda entry point and composition root of the produce function: Produce, InitProducerId and the
 * transaction routes a producer calls (functions/route-table.ts), over the log, groups (TxnOffsetCommit)
 * and the transaction coordinator, within the callers' client quotas. With SLUICE_AUTHORIZER=iam (the
 * CDK app sets it) a transaction's body-named topics and group and a delegated caller are checked with
 * IAM's policy simulator. Nothing of Connect, Streams or the other routes is built here, so none of it
 * is in the bundle (test/infra/bundle.test.ts).
 */
import { PRODUCE_ROUTES } from '../lib/http/routes/log.js';
import { TRANSACTION_ROUTES } from '../lib/http/routes/transactions.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import type { ProduceRoutesOptions } from '../lib/http/routes/log.js';
import type { TransactionRoutesOptions } from '../lib/http/routes/transactions.js';
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
import { authorizerFromEnv } from './authorizer.js';
import { depsFromEnv, httpHandler } from './environment.js';

/** The routes API Gateway sends this function. */
export const PRODUCE_FUNCTION_ROUTES: RouteDefinition<ProduceRoutesOptions & TransactionRoutesOptions>[] =
  routesOfJob<ProduceRoutesOptions & TransactionRoutesOptions>(
    [...PRODUCE_ROUTES, ...TRANSACTION_ROUTES],
    'produce',
  );

export const produceRouter = (deps: SluiceDeps): Router => {
  const core = createLogServices(deps);
  const { transactions, producer } = createTransactions(deps, core, createGroups(deps, core));
  return serve(
    PRODUCE_FUNCTION_ROUTES,
    { producer, maxRequestBytes: core.log.maxRequestBytes, transactions },
    serveOptionsOf(deps, createQuotas(deps)),
  );
};

export const handler = httpHandler('produce', () =>
  produceRouter({ ...depsFromEnv(), ...authorizerFromEnv() }),
);
