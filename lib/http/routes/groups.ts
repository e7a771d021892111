/** Consumer-group routes (API.md "Consumer groups"): parse, delegate to the coordinator, shape the answer. */
import { invalidRequest } from '../../../protocol/errors.js';
import type { GroupCoordinator } from '../../core/groups/coordinator.js';
import { parseDeleteOffsetsQuery } from '../../core/groups/offset-delete.js';
import {
  parseClassicMemberRequest,
  parseCommitRequest,
  parseHeartbeatRequest,
  parseResetRequest,
} from '../../core/groups/requests.js';
import { readJsonObject } from '../body.js';
import { EDGE_LIMITS } from '../limits.js';
import type { HttpRequest, Route } from '../types.js';
import { json } from '../types.js';
import type {
  ClassicMemberResponse,
  CommittedOffset,
  GroupDescription,
  GroupSummary,
  HeartbeatResponse,
} from '../../wire/types.js';

/** The member's subscription is stored in its item: bound it so that item always fits. */
const checkSubscription = (topics: readonly string[] | null): void => {
  if (topics === null) return;
  const chars = topics.reduce((n, t) => n + t.length, 0);
  if (topics.length > EDGE_LIMITS.maxSubscribedTopics || chars > EDGE_LIMITS.maxSubscriptionChars) {
    throw invalidRequest(
      `subscribedTopics lists ${topics.length} topics (${chars} characters); at most ${EDGE_LIMITS.maxSubscribedTopics} topics of ${EDGE_LIMITS.maxSubscriptionChars} characters in all`,
    );
  }
};

const group = (request: HttpRequest): string => request.params['group'] ?? '';

const rejectQuery = (request: HttpRequest, allowed: readonly string[] = []): void => {
  const unknown = Object.keys(request.query).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw invalidRequest(`unknown query parameter(s): ${unknown.join(', ')}`);
};

export function groupRoutes(coordinator: GroupCoordinator): Route[] {
  return [
    {
      method: 'POST',
      pattern: '/v1/groups/{group}/heartbeat',
      handler: async (request) => {
        rejectQuery(request);
        const body = parseHeartbeatRequest(readJsonObject(request));
        checkSubscription(body.subscribedTopics);
        return json(200, (await coordinator.heartbeat(group(request), body)) satisfies HeartbeatResponse);
      },
    },
    {
      method: 'POST',
      pattern: '/v1/groups/{group}/classic',
      handler: async (request) => {
        rejectQuery(request);
        const body = parseClassicMemberRequest(readJsonObject(request));
        checkSubscription(body.subscribedTopics);
        return json(
          200,
          (await coordinator.classicMember(group(request), body)) satisfies ClassicMemberResponse,
        );
      },
    },
    {
      method: 'POST',
      pattern: '/v1/groups/{group}/offsets',
      handler: async (request) => {
        rejectQuery(request);
        const body = parseCommitRequest(readJsonObject(request));
        return json(200, await coordinator.commitOffsets(group(request), body));
      },
    },
    {
      method: 'GET',
      pattern: '/v1/groups/{group}/offsets',
      handler: async (request) => {
        rejectQuery(request, ['topic']);
        return json(
          200,
          (await coordinator.fetchOffsets(group(request), request.query['topic'])) satisfies {
            offsets: CommittedOffset[];
          },
        );
      },
    },
    {
      method: 'DELETE',
      pattern: '/v1/groups/{group}/offsets',
      handler: async (request) => {
        rejectQuery(request, ['topic', 'partitions']);
        const query = parseDeleteOffsetsQuery(request.query);
        return json(200, await coordinator.deleteOffsets(group(request), query));
      },
    },
    {
      method: 'POST',
      pattern: '/v1/groups/{group}/offsets/reset',
      handler: async (request) => {
        rejectQuery(request);
        const body = parseResetRequest(readJsonObject(request));
        return json(200, await coordinator.resetOffsets(group(request), body));
      },
    },
    {
      method: 'GET',
      pattern: '/v1/groups',
      handler: async (request) => {
        rejectQuery(request);
        return json(200, (await coordinator.listGroups()) satisfies { groups: GroupSummary[] });
      },
    },
    {
      method: 'GET',
      pattern: '/v1/groups/{group}',
      handler: async (request) => {
        rejectQuery(request);
        return json(200, (await coordinator.describeGroup(group(request))) satisfies GroupDescription);
      },
    },
    {
      method: 'DELETE',
      pattern: '/v1/groups/{group}',
      handler: async (request) => {
        rejectQuery(request);
        await coordinator.deleteGroup(group(request));
        return { status: 204 };
      },
    },
  ];
}
