/**
 * Lambda entry point and composition root of the connect function: Kafka Connect's REST API under
 * /v1/connect (functions/route-table.ts), over the connector state in the metadata table, within the
 * callers' client quotas. With SLUICE_AUTHORIZER=iam (the CDK app sets it) the topics a connector's
 * config names and a delegated caller are checked with IAM's policy simulator. Connector tasks run in
 * the connect-worker function.
 */
import { CONNECT_BODY_CHECKS } from '../connect/access.js';
import { Herder } from '../connect/herder.js';
import { CONNECT_ROUTES } from '../connect/rest.js';
import type { ConnectRoutesOptions } from '../connect/rest.js';
import { ConnectStateStore } from '../connect/state-store.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import type { Router } from '../lib/http/router.js';
import { routesOfJob, serve } from '../lib/http/serve.js';
import type { SluiceDeps } from '../lib/services.js';
import { createGroups, createLogServices, createQuotas, serveOptionsOf } from '../lib/services.js';
import { authorizerFromEnv } from './authorizer.js';
import { coordinatorGroupAdmin } from './connect-group-admin.js';
import { depsFromEnv, httpHandler } from './environment.js';

/** The routes API Gateway sends this function. */
export const CONNECT_FUNCTION_ROUTES: RouteDefinition<ConnectRoutesOptions>[] = routesOfJob(
  CONNECT_ROUTES,
  'connect',
);

export const connectRouter = (deps: SluiceDeps): Router => {
  const groups = createGroups(deps, createLogServices(deps));
  return serve(
    CONNECT_FUNCTION_ROUTES,
    { herder: new Herder(new ConnectStateStore(deps.store), coordinatorGroupAdmin(groups)) },
    { ...serveOptionsOf(deps, createQuotas(deps)), bodyChecks: CONNECT_BODY_CHECKS },
  );
};

export const handler = httpHandler('connect', () =>
  connectRouter({ ...depsFromEnv(), ...authorizerFromEnv() }),
);
