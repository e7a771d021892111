/** Replication admin routes (API.md "Replication (additions)"): POST /v1/topics/{topic}/elect-leaders. */
import type { LogContext } from '../../core/log/context.js';
import type { AdminElectionType } from '../../core/replication/elect-leaders.js';
import { electLeaders } from '../../core/replication/elect-leaders.js';
import { invalidRequest } from '../../../protocol/errors.js';
import { readJsonObject, rejectUnknownFields } from '../body.js';
import type { Route } from '../types.js';
import { json } from '../types.js';

const ELECTION_TYPES: readonly AdminElectionType[] = ['PREFERRED', 'UNCLEAN'];

export const replicationRoutes = ({ log }: { log: LogContext }): Route[] => [
  {
    method: 'POST',
    pattern: '/v1/topics/{topic}/elect-leaders',
    handler: async (request) => {
      const body = readJsonObject(request);
      rejectUnknownFields(body, ['electionType', 'partitions']);
      const type = body['electionType'];
      if (!ELECTION_TYPES.includes(type as AdminElectionType))
        throw invalidRequest(`electionType must be PREFERRED or UNCLEAN, got ${JSON.stringify(type)}`);
      const partitions = body['partitions'];
      if (
        partitions !== undefined &&
        (!Array.isArray(partitions) ||
          partitions.length === 0 ||
          partitions.length > 10_000 ||
          !partitions.every((p) => Number.isSafeInteger(p) && (p as number) >= 0) ||
          new Set(partitions).size !== partitions.length)
      )
        throw invalidRequest('partitions must be a non-empty list of distinct partition numbers');
      const topic = await log.catalog.get(request.params['topic']!, { fresh: true });
      const results = await electLeaders(
        log,
        topic,
        type as AdminElectionType,
        partitions as number[] | undefined,
      );
      return json(200, { results });
    },
  },
];
