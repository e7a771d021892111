/**
 * The router of one function: its routes bound to their dependencies, behind the authorization guard
 * of the resources request bodies name (lib/auth) when an authorizer is given. The body-named routes
 * and group-topic listings come from the definitions served, so a function built from a few route
 * lists (functions/<job>.ts) imports nothing of the others.
 */
import type { BodyChecks } from '../auth/authorizer.js';
import type { Authorizer } from '../auth/acl.js';
import { impliedAccessGuard } from '../auth/authorizer.js';
import type { Job, RouteDefinition } from './define-route.js';
import { bindRoutes, routeKey } from './define-route.js';
import type { Logger } from './router.js';
import { Router } from './router.js';

export interface ServeOptions {
  log?: Logger;
  authorizer?: Authorizer;
  /** Checks of further resources named by some routes' bodies (Connect's configs). */
  bodyChecks?: Readonly<Record<string, BodyChecks>>;
}

/** The definitions one function serves (all of them when `job` is undefined). */
export const routesOfJob = <D>(
  definitions: readonly RouteDefinition<D>[],
  job: Job | undefined,
): RouteDefinition<D>[] => definitions.filter((d) => job === undefined || d.job === job);

/** A router over these definitions (already narrowed to one function's), bound to `deps`. */
export const serve = <D>(definitions: readonly RouteDefinition<D>[], deps: D, options: ServeOptions = {}) =>
  new Router(
    bindRoutes(definitions, deps),
    options.log,
    options.authorizer
      ? impliedAccessGuard(
          options.authorizer,
          {
            bodyNamed: new Set(definitions.filter((d) => d.bodyNamesResources).map(routeKey)),
            offsetListings: new Set(definitions.filter((d) => d.listsGroupTopics).map(routeKey)),
          },
          options.bodyChecks,
        )
      : undefined,
  );
