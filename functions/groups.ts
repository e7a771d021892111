/**
 * Lambda entry point and composition root of the groups function: consumer groups, their offsets, the
 * classic protocol and the Streams applications listing (functions/route-table.ts), within the callers'
 * client quotas. With SLUICE_AUTHORIZER=iam (the CDK app sets it) the topics a heartbeat, commit or
 * reset names and a delegated caller are checked with IAM's policy simulator.
 */
import { GROUP_ROUTES } from '../lib/http/routes/groups.js';
import type { GroupRoutesOptions } from '../lib/http/routes/groups.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import type { Router } from '../lib/http/router.js';
import { routesOfJob, serve } from '../lib/http/serve.js';
import type { SluiceDeps } from '../lib/services.js';
import { createGroups, createLogServices, createQuotas, serveOptionsOf } from '../lib/services.js';
import { STREAMS_APPLICATION_ROUTES } from '../streams/query/application-routes.js';
import type { StreamsApplicationRoutesOptions } from '../streams/query/application-routes.js';
import { authorizerFromEnv } from './authorizer.js';
import { depsFromEnv, httpHandler } from './environment.js';

/** The routes API Gateway sends this function. */
export const GROUPS_FUNCTION_ROUTES: RouteDefinition<GroupRoutesOptions & StreamsApplicationRoutesOptions>[] =
  routesOfJob<GroupRoutesOptions & StreamsApplicationRoutesOptions>(
    [...STREAMS_APPLICATION_ROUTES, ...GROUP_ROUTES],
    'groups',
  );

export const groupsRouter = (deps: SluiceDeps): Router => {
  const core = createLogServices(deps);
  return serve(
    GROUPS_FUNCTION_ROUTES,
    { groups: createGroups(deps, core), log: core.log },
    serveOptionsOf(deps, createQuotas(deps)),
  );
};

export const handler = httpHandler('groups', () =>
  groupsRouter({ ...depsFromEnv(), ...authorizerFromEnv() }),
);
