/** Replication admin routes (API.md "Replication (additions)"): POST /v1/topics/{topic}/elect-leaders. */
import type { LogContext } from '../../core/log/context.js';
import type { AdminElectionType } from '../../core/replication/elect-leaders.js';
import { electLeaders } from '../../core/replication/elect-leaders.js';
import { defineRoute } from '../define-route.js';
import { json } from '../types.js';
import { TOPIC_ERRORS } from './errors.js';
import '../validators/replication.js';

export interface ReplicationRoutesOptions {
  log: LogContext;
}

export const REPLICATION_ROUTES = [
  defineRoute<ReplicationRoutesOptions>({
    method: 'POST',
    path: '/v1/topics/{topic}/elect-leaders',
    job: 'admin',
    // Kafka's ElectLeaders needs ALTER on the cluster.
    acl: { operation: 'ALTER', resourceType: 'CLUSTER' },
    id: 'electLeaders',
    summary:
      "ElectLeaders: PREFERRED moves leadership back to each partition's first replica; UNCLEAN lets an out-of-sync replica lead (unclean.leader.election.enable).",
    body: 'ElectLeaders',
    ok: { 200: 'ElectionResults' },
    errors: [...TOPIC_ERRORS, 'CLUSTER_AUTHORIZATION_FAILED'],
    handler:
      ({ log }) =>
      async (request, body = {}) => {
        // The schema has checked the election type and that partitions are distinct numbers ≥ 0.
        const topic = await log.catalog.get(request.params['topic']!, { fresh: true });
        const results = await electLeaders(
          log,
          topic,
          body['electionType'] as AdminElectionType,
          body['partitions'] as number[] | undefined,
        );
        return json(200, { results });
      },
  }),
];
