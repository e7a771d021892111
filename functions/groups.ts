/**
 * Lambda entry point and composition root of the groups function: consumer groups, their offsets and
 * the classic protocol (lib/http/route-table.ts). With SLUICE_AUTHORIZER=iam (the CDK app sets it) the
 * topics a heartbeat, commit or reset names are checked with IAM's policy simulator.
 */
import { IAMClient } from '@aws-sdk/client-iam';
import { IamSimulationAuthorizer } from '../lib/adapters/aws/iam-authorizer.js';
import type { Authorizer } from '../lib/auth/acl.js';
import { GROUP_ROUTES } from '../lib/http/routes/groups.js';
import type { GroupRoutesOptions } from '../lib/http/routes/groups.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import type { Router } from '../lib/http/router.js';
import { routesOfJob, serve } from '../lib/http/serve.js';
import { systemClock } from '../lib/ports/clock.js';
import type { SluiceDeps } from '../lib/services.js';
import { createGroups, createLogServices } from '../lib/services.js';
import { ENV } from '../infra/config.js';
import { depsFromEnv, httpHandler, required } from './environment.js';

/** The routes API Gateway sends this function. */
export const GROUPS_FUNCTION_ROUTES: RouteDefinition<GroupRoutesOptions>[] = routesOfJob(
  GROUP_ROUTES,
  'groups',
);

export const groupsRouter = (deps: SluiceDeps): Router =>
  serve(GROUPS_FUNCTION_ROUTES, { groups: createGroups(deps, createLogServices(deps)) }, deps);

/** Body-named resources checked by IAM's policy simulator, for the caller API Gateway authenticated. */
const iamAuthorizer = (): Authorizer =>
  new IamSimulationAuthorizer({
    client: new IAMClient({}),
    region: required('AWS_REGION'),
    clock: systemClock,
  });

export const handler = httpHandler(() =>
  groupsRouter({
    ...depsFromEnv(),
    ...(process.env[ENV.authorizer] === 'iam' ? { authorizer: iamAuthorizer() } : {}),
  }),
);
