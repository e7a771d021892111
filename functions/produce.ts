/**
 * Lambda entry point and composition root of the produce function: Produce, InitProducerId and the
 * transaction routes a producer calls (lib/http/route-table.ts), over the log, groups (TxnOffsetCommit)
 * and the transaction coordinator. Nothing of Connect, Streams, IAM or the other routes is built here,
 * so none of it is in the bundle (test/unit/function-bundles.test.ts).
 */
import { PRODUCE_ROUTES } from '../lib/http/routes/log.js';
import { TRANSACTION_ROUTES } from '../lib/http/routes/transactions.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import type { ProduceRoutesOptions } from '../lib/http/routes/log.js';
import type { TransactionRoutesOptions } from '../lib/http/routes/transactions.js';
import type { Router } from '../lib/http/router.js';
import { routesOfJob, serve } from '../lib/http/serve.js';
import type { SluiceDeps } from '../lib/services.js';
import { createGroups, createLogServices, createTransactions } from '../lib/services.js';
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
    deps,
  );
};

export const handler = httpHandler(() => produceRouter(depsFromEnv()));
