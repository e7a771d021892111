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
import { bindRoutes, defineRoute } from '../define-route.js';
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
import { GROUP_ERRORS, TOPIC_ERRORS, queryParam } from './errors.js';
import '../validators/groups.js';

export interface GroupRoutesOptions {
  groups: GroupCoordinator;
}

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

export const GROUP_ROUTES = [
  defineRoute<GroupRoutesOptions>({
    method: 'POST',
    path: '/v1/groups/{group}/heartbeat',
    job: 'groups',
    acl: { operation: 'READ', resourceType: 'GROUP', param: 'group' },
    bodyNamesResources: true,
    id: 'heartbeat',
    summary: 'KIP-848 ConsumerGroupHeartbeat: join, heartbeat, leave; the server assigns.',
    body: 'Heartbeat',
    ok: { 200: 'HeartbeatResult' },
    errors: [
      ...GROUP_ERRORS,
      'UNKNOWN_MEMBER_ID',
      'FENCED_MEMBER_EPOCH',
      'UNRELEASED_INSTANCE_ID',
      'TOPIC_AUTHORIZATION_FAILED',
    ],
    handler:
      ({ groups }) =>
      async (request, body = {}) => {
        rejectQuery(request);
        const heartbeat = parseHeartbeatRequest(body);
        checkSubscription(heartbeat.subscribedTopics);
        return json(200, (await groups.heartbeat(group(request), heartbeat)) satisfies HeartbeatResponse);
      },
  }),
  defineRoute<GroupRoutesOptions>({
    method: 'POST',
    path: '/v1/groups/{group}/classic',
    job: 'groups',
    acl: { operation: 'READ', resourceType: 'GROUP', param: 'group' },
    bodyNamesResources: true,
    id: 'classicMember',
    summary:
      "A classic member's JoinGroup (memberEpoch null), SyncGroup or Heartbeat (memberEpoch = generationId) in the same server-assigned group.",
    body: 'ClassicMember',
    ok: { 200: 'ClassicMemberResult' },
    errors: [...GROUP_ERRORS, 'UNKNOWN_MEMBER_ID', 'FENCED_MEMBER_EPOCH', 'TOPIC_AUTHORIZATION_FAILED'],
    handler:
      ({ groups }) =>
      async (request, body = {}) => {
        rejectQuery(request);
        const classic = parseClassicMemberRequest(body);
        checkSubscription(classic.subscribedTopics);
        return json(
          200,
          (await groups.classicMember(group(request), classic)) satisfies ClassicMemberResponse,
        );
      },
  }),
  defineRoute<GroupRoutesOptions>({
    method: 'POST',
    path: '/v1/groups/{group}/offsets',
    job: 'groups',
    acl: { operation: 'READ', resourceType: 'GROUP', param: 'group' },
    bodyNamesResources: true,
    id: 'commitOffsets',
    summary: "OffsetCommit under the member's epoch (or, with no member, while the group is empty).",
    body: 'CommitOffsets',
    ok: { 200: 'CommitResults' },
    errors: [
      ...GROUP_ERRORS,
      'STALE_MEMBER_EPOCH',
      'UNKNOWN_MEMBER_ID',
      'FENCED_MEMBER_EPOCH',
      'TOPIC_AUTHORIZATION_FAILED',
    ],
    handler:
      ({ groups }) =>
      async (request, body = {}) => {
        rejectQuery(request);
        return json(200, await groups.commitOffsets(group(request), parseCommitRequest(body)));
      },
  }),
  defineRoute<GroupRoutesOptions>({
    method: 'GET',
    path: '/v1/groups/{group}/offsets',
    job: 'groups',
    acl: { operation: 'DESCRIBE', resourceType: 'GROUP', param: 'group' },
    listsGroupTopics: true,
    id: 'fetchOffsets',
    summary: 'OffsetFetch (an unknown group has none).',
    query: [queryParam('topic', 'string', 'only this topic')],
    ok: { 200: 'CommittedOffsets' },
    errors: GROUP_ERRORS,
    handler:
      ({ groups }) =>
      async (request) => {
        rejectQuery(request, ['topic']);
        return json(
          200,
          (await groups.fetchOffsets(group(request), request.query['topic'])) satisfies {
            offsets: CommittedOffset[];
          },
        );
      },
  }),
  defineRoute<GroupRoutesOptions>({
    method: 'DELETE',
    path: '/v1/groups/{group}/offsets',
    job: 'groups',
    acl: { operation: 'DELETE', resourceType: 'GROUP', param: 'group' },
    id: 'deleteOffsets',
    summary:
      "OffsetDelete (kafka-consumer-groups --delete-offsets): one topic's committed offsets, in one transaction. Answers every asked partition (all of the topic's without `partitions`): no error once its offset is gone, UNKNOWN_TOPIC_OR_PARTITION for a partition the topic does not have, GROUP_SUBSCRIBED_TO_TOPIC for each while a live member subscribes to the topic (nothing deleted).",
    query: [
      queryParam('topic', 'string', 'the topic (required)'),
      queryParam(
        'partitions',
        'string',
        'comma-separated partitions (default: all committed ones of the topic), at most 99',
      ),
    ],
    ok: { 200: 'CommitResults' },
    errors: [
      ...GROUP_ERRORS,
      'GROUP_ID_NOT_FOUND',
      'UNKNOWN_TOPIC_OR_PARTITION',
      'TOPIC_AUTHORIZATION_FAILED',
    ],
    handler:
      ({ groups }) =>
      async (request) => {
        rejectQuery(request, ['topic', 'partitions']);
        return json(200, await groups.deleteOffsets(group(request), parseDeleteOffsetsQuery(request.query)));
      },
  }),
  defineRoute<GroupRoutesOptions>({
    method: 'POST',
    path: '/v1/groups/{group}/offsets/reset',
    job: 'groups',
    acl: { operation: 'READ', resourceType: 'GROUP', param: 'group' },
    bodyNamesResources: true,
    id: 'resetOffsets',
    summary: 'kafka-consumer-groups --reset-offsets, only while the group has no members.',
    body: 'ResetOffsets',
    ok: { 200: 'CommittedOffsets' },
    errors: [...GROUP_ERRORS, ...TOPIC_ERRORS, 'NON_EMPTY_GROUP'],
    handler:
      ({ groups }) =>
      async (request, body = {}) => {
        rejectQuery(request);
        return json(200, await groups.resetOffsets(group(request), parseResetRequest(body)));
      },
  }),
  defineRoute<GroupRoutesOptions>({
    method: 'GET',
    path: '/v1/groups',
    job: 'groups',
    acl: { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
    id: 'listGroups',
    summary: 'ListGroups.',
    ok: { 200: 'GroupList' },
    errors: [...GROUP_ERRORS, 'CLUSTER_AUTHORIZATION_FAILED'],
    handler:
      ({ groups }) =>
      async (request) => {
        rejectQuery(request);
        return json(200, (await groups.listGroups()) satisfies { groups: GroupSummary[] });
      },
  }),
  defineRoute<GroupRoutesOptions>({
    method: 'GET',
    path: '/v1/groups/{group}',
    job: 'groups',
    acl: { operation: 'DESCRIBE', resourceType: 'GROUP', param: 'group' },
    listsGroupTopics: true,
    id: 'describeGroup',
    summary: 'ConsumerGroupDescribe with per-partition lag.',
    ok: { 200: 'GroupDescription' },
    errors: [...GROUP_ERRORS, 'GROUP_ID_NOT_FOUND'],
    handler:
      ({ groups }) =>
      async (request) => {
        rejectQuery(request);
        return json(200, (await groups.describeGroup(group(request))) satisfies GroupDescription);
      },
  }),
  defineRoute<GroupRoutesOptions>({
    method: 'DELETE',
    path: '/v1/groups/{group}',
    job: 'groups',
    acl: { operation: 'DELETE', resourceType: 'GROUP', param: 'group' },
    id: 'deleteGroup',
    summary: 'DeleteGroups, only without members.',
    ok: { 204: 'empty' },
    errors: [...GROUP_ERRORS, 'GROUP_ID_NOT_FOUND', 'NON_EMPTY_GROUP'],
    handler:
      ({ groups }) =>
      async (request) => {
        rejectQuery(request);
        await groups.deleteGroup(group(request));
        return { status: 204 };
      },
  }),
];

/** The group routes alone over one coordinator (the simulation and the group tests serve only these). */
export const groupRoutes = (groups: GroupCoordinator): Route[] => bindRoutes(GROUP_ROUTES, { groups });
