/**
 * Lambda entry point and composition root of the produce function: Produce (JSON records and
 * RecordBatch bytes) and InitProducerId (functions/route-table.ts), over the log, within the callers'
 * client quotas. A transactional batch is checked against the transaction log alone (KIP-890's
 * verification, lib/core/transactions/verify.ts): the transaction coordinator, its routes and the
 * consumer groups its TxnOffsetCommit writes into are the groups function's. Nothing of Connect,
 * Streams or the other routes is built here, so none of it is in the bundle (test/infra/bundle.test.ts).
 */
import { PRODUCE_ROUTES } from '../lib/http/routes/produce.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import type { ProduceRoutesOptions } from '../lib/http/routes/produce.js';
import type { Router } from '../lib/http/router.js';
import { routesOfJob, serve } from '../lib/http/serve.js';
import type { SluiceDeps } from '../lib/services.js';
import { createLogServices, createProducer, createQuotas, serveOptionsOf } from '../lib/services.js';
import { authorizerFromEnv } from './authorizer.js';
import { depsFromEnv, httpHandler } from './environment.js';

/** The routes API Gateway sends this function. */
export const PRODUCE_FUNCTION_ROUTES: RouteDefinition<ProduceRoutesOptions>[] =
  routesOfJob<ProduceRoutesOptions>(PRODUCE_ROUTES, 'produce');

export const produceRouter = (deps: SluiceDeps): Router => {
  const core = createLogServices(deps);
  return serve(
    PRODUCE_FUNCTION_ROUTES,
    { producer: createProducer(core), maxRequestBytes: core.log.maxRequestBytes },
    serveOptionsOf(deps, createQuotas(deps)),
  );
};

export const handler = httpHandler('produce', () =>
  produceRouter({ ...depsFromEnv(), ...authorizerFromEnv() }),
);
