/**
 * The router of one function: its routes bound to their dependencies, served within the callers'
 * client quotas when those are enforced, behind the guard of the resources request bodies name and of
 * delegated callers (lib/auth) when an authorizer is given, and refusing delegation when none is. The
 * body-named routes, group-topic listings and route ACLs come from the definitions served, so a
 * function built from a few route lists (functions/<job>.ts) imports nothing of the others.
 */
import { SluiceError } from '../../protocol/errors.js';
import type { BodyChecks } from '../auth/authorizer.js';
import type { Authorizer } from '../auth/acl.js';
import { aclTable } from '../auth/acl.js';
import { impliedAccessGuard } from '../auth/authorizer.js';
import { ON_BEHALF_OF_HEADER } from '../auth/delegation.js';
import type { ClientQuotaManager } from '../core/quotas/index.js';
import type { Telemetry } from '../ports/telemetry.js';
import type { Job, RouteDefinition } from './define-route.js';
import { bindRoutes, routeKey } from './define-route.js';
import type { RouteGuard } from './router.js';
import { Router } from './router.js';

export interface ServeOptions {
  telemetry?: Telemetry;
  authorizer?: Authorizer;
  /** Checks of further resources named by some routes' bodies (Connect's configs). */
  bodyChecks?: Readonly<Record<string, BodyChecks>>;
  /** Serve every signed route within its caller's client quotas (lib/http/quotas.ts). */
  quotas?: ClientQuotaManager;
}

/** The definitions one function serves (all of them when `job` is undefined). */
export const routesOfJob = <D>(
  definitions: readonly RouteDefinition<D>[],
  job: Job | undefined,
): RouteDefinition<D>[] => definitions.filter((d) => job === undefined || d.job === job);

/**
 * Without an authorizer nothing is checked, so nothing can be checked for a delegated principal
 * either: a request that asks to be authorized as another principal is refused rather than served
 * with the signer's rights (a deployment that forgot the authorizer fails closed).
 */
export const refuseDelegation: RouteGuard = (_routeKey, request) => {
  if (request.headers[ON_BEHALF_OF_HEADER] !== undefined)
    return Promise.reject(
      new SluiceError(
        'CLUSTER_AUTHORIZATION_FAILED',
        `this deployment checks no principals, so it cannot act on behalf of one (${ON_BEHALF_OF_HEADER})`,
      ),
    );
  return Promise.resolve(undefined);
};

/** A router over these definitions (already narrowed to one function's), bound to `deps`. */
export const serve = <D>(definitions: readonly RouteDefinition<D>[], deps: D, options: ServeOptions = {}) =>
  new Router(
    bindRoutes(definitions, deps, options.quotas),
    options.telemetry,
    options.authorizer
      ? impliedAccessGuard(
          options.authorizer,
          {
            bodyNamed: new Set(definitions.filter((d) => d.bodyNamesResources).map(routeKey)),
            offsetListings: new Set(definitions.filter((d) => d.listsGroupTopics).map(routeKey)),
            acls: aclTable(definitions),
          },
          options.bodyChecks,
        )
      : refuseDelegation,
  );
