/**
 * Lambda entry point and composition root of the fetch function: Fetch (one partition or many, with
 * the long poll), ListOffsets and Streams' interactive queries (functions/route-table.ts), over the log
 * and the metadata table, within the callers' client quotas. With SLUICE_AUTHORIZER=iam (the CDK app
 * sets it) the topics POST /v1/fetch names in its body and a delegated caller are checked with IAM's
 * policy simulator. It writes only the registrations of a fetch that names its wait socket connection
 * (lib/core/log/waiters.ts).
 */
import { FETCH_ROUTES } from '../lib/http/routes/fetch.js';
import type { FetchRoutesOptions } from '../lib/http/routes/fetch.js';
import type { RouteDefinition } from '../lib/http/define-route.js';
import type { Router } from '../lib/http/router.js';
import { routesOfJob, serve } from '../lib/http/serve.js';
import type { SluiceDeps } from '../lib/services.js';
import {
  createFetchWaiters,
  createFetcher,
  createLogServices,
  createQuotas,
  serveOptionsOf,
} from '../lib/services.js';
import { InteractiveQueries } from '../streams/query/interactive.js';
import { STREAMS_QUERY_ROUTES } from '../streams/query/rest.js';
import type { StreamsQueryRoutesOptions } from '../streams/query/rest.js';
import { authorizerFromEnv } from './authorizer.js';
import { depsFromEnv, httpHandler } from './environment.js';

/** The routes API Gateway sends this function. */
export const FETCH_FUNCTION_ROUTES: RouteDefinition<FetchRoutesOptions & StreamsQueryRoutesOptions>[] =
  routesOfJob<FetchRoutesOptions & StreamsQueryRoutesOptions>(
    [...FETCH_ROUTES, ...STREAMS_QUERY_ROUTES],
    'fetch',
  );

export const fetchRouter = (deps: SluiceDeps): Router => {
  const core = createLogServices(deps);
  return serve(
    FETCH_FUNCTION_ROUTES,
    {
      fetcher: createFetcher(core),
      waiters: createFetchWaiters(deps, core),
      queries: new InteractiveQueries(deps.store),
    },
    serveOptionsOf(deps, createQuotas(deps)),
  );
};

export const handler = httpHandler('fetch', () => fetchRouter({ ...depsFromEnv(), ...authorizerFromEnv() }));
