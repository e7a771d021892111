/**
 * Validation of consumer-group requests at the boundary (API.md "Consumer groups"): every failure is a
 * 400 INVALID_REQUEST that names the field, raised before anything is read or written.
 */
import { invalidRequest } from '../../../protocol/errors.js';
import { OFFSETS_PER_COMMIT } from '../../../protocol/commit-limit.js';
import { fromTopicPartitions } from './partition-map.js';
import type {
  AssignorName,
  ClassicMemberRequest,
  CommitRequest,
  HeartbeatRequest,
  OffsetCommitEntry,
  ResetRequest,
  ResetTarget,
  TopicPartitions,
} from './types.js';
import { ASSIGNORS, JOIN_EPOCH, STATIC_LEAVE_EPOCH } from './types.js';

/** Kafka's default offset.metadata.max.bytes. */
export const MAX_OFFSET_METADATA_CHARS = 4096;

type Body = Record<string, unknown>;

const CONTROL = /\p{Cc}/u;

const isIdentifier = (value: string): boolean =>
  value.length > 0 && [...value].length <= 255 && !CONTROL.test(value);

export const validateGroupId = (groupId: string): void => {
  if (!isIdentifier(groupId)) throw invalidRequest('group id must be 1-255 printable characters');
};

export const isTopicName = (name: string): boolean =>
  /^[a-zA-Z0-9._-]{1,249}$/.test(name) && name !== '.' && name !== '..';

export const validateTopicName = (name: unknown, where: string): string => {
  if (typeof name !== 'string' || !isTopicName(name)) {
    throw invalidRequest(`${where} must be a topic name ([a-zA-Z0-9._-]{1,249}, not . or ..)`);
  }
  return name;
};

const rejectUnknown = (body: Body, allowed: readonly string[], where: string): void => {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw invalidRequest(`${where} has unknown field(s): ${unknown.join(', ')}`);
};

const asObject = (value: unknown, where: string): Body => {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalidRequest(`${where} must be an object`);
  return value as Body;
};

const integer = (value: unknown, where: string, min: number): number => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw invalidRequest(`${where} must be an integer ≥ ${min}`);
  }
  return value;
};

const identifierOrNull = (value: unknown, where: string): string | null => {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !isIdentifier(value))
    throw invalidRequest(`${where} must be 1-255 printable characters or null`);
  return value;
};

const array = (value: unknown, where: string): unknown[] => {
  if (!Array.isArray(value)) throw invalidRequest(`${where} must be an array`);
  return value;
};

const topicPartitionsList = (value: unknown, where: string): TopicPartitions[] =>
  array(value, where).map((entry, i) => {
    const tp = asObject(entry, `${where}[${i}]`);
    rejectUnknown(tp, ['topic', 'partitions'], `${where}[${i}]`);
    return {
      topic: validateTopicName(tp['topic'], `${where}[${i}].topic`),
      partitions: array(tp['partitions'], `${where}[${i}].partitions`).map((p, j) =>
        integer(p, `${where}[${i}].partitions[${j}]`, 0),
      ),
    };
  });

export const parseHeartbeatRequest = (body: Body): HeartbeatRequest => {
  rejectUnknown(
    body,
    [
      'memberId',
      'memberEpoch',
      'instanceId',
      'subscribedTopics',
      'ownedPartitions',
      'rebalanceTimeoutMs',
      'serverAssignor',
    ],
    'heartbeat',
  );
  const memberEpoch = integer(body['memberEpoch'], 'memberEpoch', STATIC_LEAVE_EPOCH);
  const memberId = identifierOrNull(body['memberId'], 'memberId');
  const instanceId = identifierOrNull(body['instanceId'], 'instanceId');
  const subscribed = body['subscribedTopics'];
  const subscribedTopics =
    subscribed === undefined || subscribed === null
      ? null
      : array(subscribed, 'subscribedTopics').map((t, i) => validateTopicName(t, `subscribedTopics[${i}]`));
  const owned = body['ownedPartitions'];
  const ownedPartitions =
    owned === undefined || owned === null
      ? null
      : fromTopicPartitions(topicPartitionsList(owned, 'ownedPartitions'));
  const timeout = body['rebalanceTimeoutMs'];
  const rebalanceTimeoutMs =
    timeout === undefined || timeout === null ? null : integer(timeout, 'rebalanceTimeoutMs', 1);
  const assignor = body['serverAssignor'];
  if (assignor !== undefined && assignor !== null && !ASSIGNORS.includes(assignor as AssignorName)) {
    throw invalidRequest(`serverAssignor must be one of ${ASSIGNORS.join(', ')} or null`);
  }
  const request: HeartbeatRequest = {
    memberId,
    memberEpoch,
    instanceId,
    subscribedTopics,
    ownedPartitions,
    rebalanceTimeoutMs,
    serverAssignor: (assignor ?? null) as AssignorName | null,
  };
  validateHeartbeat(request);
  return request;
};

/** `POST /v1/groups/{group}/classic`: a classic member's JoinGroup, SyncGroup or Heartbeat. */
export const parseClassicMemberRequest = (body: Body): ClassicMemberRequest => {
  rejectUnknown(
    body,
    [
      'memberId',
      'memberEpoch',
      'instanceId',
      'subscribedTopics',
      'ownedPartitions',
      'rebalanceTimeoutMs',
      'serverAssignor',
    ],
    'classic member request',
  );
  const memberId = identifierOrNull(body['memberId'], 'memberId');
  if (memberId === null) throw invalidRequest('memberId is required (1-255 printable characters)');
  const epoch = body['memberEpoch'];
  const memberEpoch = epoch === undefined || epoch === null ? null : integer(epoch, 'memberEpoch', 0);
  const subscribed = body['subscribedTopics'];
  const owned = body['ownedPartitions'];
  const timeout = body['rebalanceTimeoutMs'];
  const assignor = body['serverAssignor'];
  if (assignor !== undefined && assignor !== null && !ASSIGNORS.includes(assignor as AssignorName)) {
    throw invalidRequest(`serverAssignor must be one of ${ASSIGNORS.join(', ')} or null`);
  }
  const request: ClassicMemberRequest = {
    memberId,
    memberEpoch,
    instanceId: identifierOrNull(body['instanceId'], 'instanceId'),
    subscribedTopics:
      subscribed === undefined || subscribed === null
        ? null
        : array(subscribed, 'subscribedTopics').map((t, i) => validateTopicName(t, `subscribedTopics[${i}]`)),
    ownedPartitions:
      owned === undefined || owned === null
        ? null
        : fromTopicPartitions(topicPartitionsList(owned, 'ownedPartitions')),
    rebalanceTimeoutMs:
      timeout === undefined || timeout === null ? null : integer(timeout, 'rebalanceTimeoutMs', 1),
    serverAssignor: (assignor ?? null) as AssignorName | null,
  };
  validateClassicMember(request);
  return request;
};

export const validateClassicMember = (request: ClassicMemberRequest): void => {
  if (!isIdentifier(request.memberId)) throw invalidRequest('memberId must be 1-255 printable characters');
  if (request.memberEpoch !== null) integer(request.memberEpoch, 'memberEpoch', 0);
  request.subscribedTopics?.forEach((t, i) => validateTopicName(t, `subscribedTopics[${i}]`));
  if (request.memberEpoch === null && request.subscribedTopics === null) {
    throw invalidRequest('subscribedTopics is required when joining (memberEpoch null)');
  }
  if (
    request.memberEpoch !== null &&
    (request.subscribedTopics !== null || request.ownedPartitions !== null)
  ) {
    throw invalidRequest(
      'subscribedTopics and ownedPartitions are sent only when joining (memberEpoch null)',
    );
  }
};

/** The rules that tie fields together; also applied to requests that do not come through HTTP. */
export const validateHeartbeat = (request: HeartbeatRequest): void => {
  integer(request.memberEpoch, 'memberEpoch', STATIC_LEAVE_EPOCH);
  request.subscribedTopics?.forEach((t, i) => validateTopicName(t, `subscribedTopics[${i}]`));
  if (request.memberEpoch === JOIN_EPOCH && request.subscribedTopics === null) {
    throw invalidRequest('subscribedTopics is required when joining (memberEpoch 0)');
  }
  if (request.memberEpoch !== JOIN_EPOCH && request.memberId === null) {
    throw invalidRequest(`memberId is required with memberEpoch ${request.memberEpoch}`);
  }
  if (request.memberEpoch === STATIC_LEAVE_EPOCH && request.instanceId === null) {
    throw invalidRequest('memberEpoch -2 (temporary leave) requires the static member instanceId');
  }
};

const checkCommitSize = (partitions: number): void => {
  if (partitions > OFFSETS_PER_COMMIT) {
    throw invalidRequest(
      `offsets lists ${partitions} partitions; one commit is atomic and takes at most ${OFFSETS_PER_COMMIT}: commit in several requests`,
    );
  }
};

export const parseCommitRequest = (body: Body): CommitRequest => {
  rejectUnknown(body, ['memberId', 'memberEpoch', 'offsets'], 'offset commit');
  const memberId = identifierOrNull(body['memberId'], 'memberId');
  const epoch = body['memberEpoch'];
  let memberEpoch: number | null = null;
  if (memberId !== null) memberEpoch = integer(epoch, 'memberEpoch', 0);
  else if (epoch !== undefined && epoch !== null && epoch !== -1) {
    throw invalidRequest(
      'memberEpoch needs a memberId (omit both, or use -1, to commit outside the group protocol)',
    );
  }
  const seen = new Set<string>();
  checkCommitSize(array(body['offsets'], 'offsets').length);
  const offsets = array(body['offsets'], 'offsets').map((entry, i): OffsetCommitEntry => {
    const where = `offsets[${i}]`;
    const o = asObject(entry, where);
    rejectUnknown(o, ['topic', 'partition', 'offset', 'metadata'], where);
    const topic = validateTopicName(o['topic'], `${where}.topic`);
    const partition = integer(o['partition'], `${where}.partition`, 0);
    const offset = integer(o['offset'], `${where}.offset`, 0);
    const metadata = o['metadata'] ?? '';
    if (typeof metadata !== 'string' || metadata.length > MAX_OFFSET_METADATA_CHARS) {
      throw invalidRequest(
        `${where}.metadata must be a string of at most ${MAX_OFFSET_METADATA_CHARS} characters`,
      );
    }
    const key = `${topic}#${partition}`;
    if (seen.has(key)) throw invalidRequest(`${where}: ${topic}/${partition} is listed twice`);
    seen.add(key);
    return { topic, partition, offset, metadata };
  });
  return { memberId, memberEpoch, offsets };
};

/** The commit rules, for requests that do not come through HTTP (parseCommitRequest applies them too). */
export const validateCommit = (request: CommitRequest): void => {
  checkCommitSize(request.offsets.length);
  if ((request.memberId === null) !== (request.memberEpoch === null)) {
    throw invalidRequest(
      'memberId and memberEpoch go together (omit both to commit outside the group protocol)',
    );
  }
  const seen = new Set<string>();
  for (const [i, { topic, partition, offset, metadata }] of request.offsets.entries()) {
    validateTopicName(topic, `offsets[${i}].topic`);
    integer(partition, `offsets[${i}].partition`, 0);
    integer(offset, `offsets[${i}].offset`, 0);
    if (metadata.length > MAX_OFFSET_METADATA_CHARS) {
      throw invalidRequest(`offsets[${i}].metadata is longer than ${MAX_OFFSET_METADATA_CHARS} characters`);
    }
    if (seen.has(`${topic}#${partition}`))
      throw invalidRequest(`offsets[${i}]: ${topic}/${partition} is listed twice`);
    seen.add(`${topic}#${partition}`);
  }
};

export const validateReset = ({ topic, to }: ResetRequest): void => {
  validateTopicName(topic, 'topic');
  if (typeof to === 'object' && 'offset' in to) integer(to.offset, 'to.offset', 0);
  else if (typeof to === 'object') integer(to.timestamp, 'to (a timestamp in ms)', 0);
  else if (to !== 'earliest' && to !== 'latest')
    throw invalidRequest('to must be earliest, latest, a timestamp or an offset');
};

export const parseResetRequest = (body: Body): ResetRequest => {
  rejectUnknown(body, ['topic', 'to'], 'offset reset');
  const topic = validateTopicName(body['topic'], 'topic');
  const to = body['to'];
  let target: ResetTarget;
  if (to === 'earliest' || to === 'latest') target = to;
  else if (typeof to === 'number') target = { timestamp: integer(to, 'to (a timestamp in ms)', 0) };
  else if (to !== null && typeof to === 'object' && !Array.isArray(to)) {
    rejectUnknown(to as Body, ['offset'], 'to');
    target = { offset: integer((to as Body)['offset'], 'to.offset', 0) };
  } else throw invalidRequest('to must be "earliest", "latest", a timestamp in ms or {"offset": n}');
  return { topic, to: target };
};
