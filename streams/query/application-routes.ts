/**
 * GET /v1/streams and GET /v1/streams/{app}: the Streams applications (the groups that registered
 * state stores) and one application's stores and tasks with their owners (streams/query/application.ts).
 */
import { invalidRequest } from '../../protocol/errors.js';
import type { LogContext } from '../../lib/core/log/context.js';
import type { GroupCoordinator } from '../../lib/core/groups/index.js';
import { describeName } from '../../lib/http/limits.js';
import { defineRoute } from '../../lib/http/define-route.js';
import { GROUP_ERRORS, STREAMS_ERRORS } from '../../lib/http/routes/errors.js';
import type { HttpRequest } from '../../lib/http/types.js';
import { json } from '../../lib/http/types.js';
import type { StreamsApplication, StreamsApplicationList } from '../../lib/wire/types.js';
import { describeApplication, listApplications } from './application.js';
import { STREAMS_QUERY_LIMITS } from './rest.js';

export interface StreamsApplicationRoutesOptions {
  log: LogContext;
  groups: GroupCoordinator;
}

const noQuery = (request: HttpRequest): void => {
  const unknown = Object.keys(request.query);
  if (unknown.length > 0)
    throw invalidRequest(`unknown query parameter ${describeName(unknown[0]!)}; this read takes none`);
};

export const STREAMS_APPLICATION_ROUTES = [
  defineRoute<StreamsApplicationRoutesOptions>({
    method: 'GET',
    path: '/v1/streams',
    job: 'groups',
    // As ListGroups: the applications are groups.
    acl: { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
    id: 'listStreamsApplications',
    summary:
      'The Streams applications: the consumer groups whose application has registered its state stores.',
    ok: { 200: 'StreamsApplicationList' },
    errors: [...GROUP_ERRORS, 'CLUSTER_AUTHORIZATION_FAILED'],
    handler:
      ({ log, groups }) =>
      async (request) => {
        noQuery(request);
        return json(200, {
          applications: await listApplications(log.store, groups),
        } satisfies StreamsApplicationList);
      },
  }),
  defineRoute<StreamsApplicationRoutesOptions>({
    method: 'GET',
    path: '/v1/streams/{app}',
    job: 'groups',
    acl: { operation: 'DESCRIBE', resourceType: 'GROUP', param: 'app' },
    id: 'describeStreamsApplication',
    summary:
      "A Streams application: its state stores (kind, serdes, sub-topology) and its tasks (sub-topology × partition) with the member that runs each and the epoch of the task's lease.",
    ok: { 200: 'StreamsApplication' },
    errors: STREAMS_ERRORS,
    handler:
      ({ log, groups }) =>
      async (request) => {
        const app = request.params['app'] ?? '';
        if (!STREAMS_QUERY_LIMITS.applicationId.test(app))
          throw invalidRequest(`application id ${describeName(app)} is invalid: use 1-200 of [a-zA-Z0-9._-]`);
        noQuery(request);
        return json(200, (await describeApplication(log.store, groups, app)) satisfies StreamsApplication);
      },
  }),
];
