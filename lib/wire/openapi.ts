/**
 * The API as an OpenAPI 3.1 document (docs/openapi.json is this, written by `npm run openapi`): every
 * route, its bodies, its statuses and the Kafka error codes each status carries. A test holds it to the
 * route table and to live answers, so a route cannot be added without being documented here.
 */
import { ERROR_CODES } from '../../protocol/errors.js';
import type { ErrorCode } from '../../protocol/errors.js';
import { STATUS_BY_CODE } from '../http/status.js';
import { SCHEMAS } from './schemas.js';

export const RECORD_BATCH_MEDIA_TYPE = 'application/vnd.kafka.record-batch';
const JSON_TYPE = 'application/json';

interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete' | 'put';
  path: string;
  id: string;
  summary: string;
  /** A schema name for a JSON body, or `batches` for RecordBatch bytes. */
  body?: string;
  query?: { name: string; schema: Record<string, unknown>; description: string }[];
  headers?: { name: string; description: string }[];
  /** Success status → schema name, `empty`, or `fetch` (JSON or RecordBatch bytes). */
  ok: Record<number, string>;
  /** Error codes this operation answers with (beyond the ones every operation can). */
  errors: ErrorCode[];
}

/** Codes any operation may answer: a bad request, refused credentials, overload, a failed store. */
const COMMON: ErrorCode[] = [
  'INVALID_REQUEST',
  'SASL_AUTHENTICATION_FAILED',
  'THROTTLING_QUOTA_EXCEEDED',
  'UNKNOWN_SERVER_ERROR',
  'KAFKA_STORAGE_ERROR',
  'REQUEST_TIMED_OUT',
];
const TOPIC_ERRORS: ErrorCode[] = ['UNKNOWN_TOPIC_OR_PARTITION', 'TOPIC_AUTHORIZATION_FAILED'];
const GROUP_ERRORS: ErrorCode[] = ['GROUP_AUTHORIZATION_FAILED', 'COORDINATOR_NOT_AVAILABLE'];
const CONNECTOR_ERRORS: ErrorCode[] = ['NOT_FOUND', 'CLUSTER_AUTHORIZATION_FAILED'];
const C = '/v1/connect/connectors/{connector}';
/** Interactive queries (streams/query/): unknown application, store or key. */
const STREAMS_ERRORS: ErrorCode[] = [
  'GROUP_ID_NOT_FOUND',
  'UNKNOWN_STATE_STORE',
  'NOT_FOUND',
  'GROUP_AUTHORIZATION_FAILED',
];
/** One Kafka Connect route (connect/rest.ts; docs/connect.md has the behaviour). */
const connectOp = (
  method: Operation['method'],
  path: string,
  id: string,
  summary: string,
  ok: Record<number, string>,
  extra: Partial<Operation> = {},
): Operation => ({ method, path, id, summary, ok, errors: CONNECTOR_ERRORS, ...extra });

const q = (name: string, type: 'integer' | 'string', description: string) => ({
  name,
  schema: { type },
  description,
});

export const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/v1/health',
    id: 'health',
    summary: 'Liveness (no signature needed).',
    ok: { 200: 'Health' },
    errors: [],
  },
  {
    method: 'get',
    path: '/v1/cluster',
    id: 'describeCluster',
    summary: 'Cluster id, version and stores.',
    ok: { 200: 'Cluster' },
    errors: [],
  },
  {
    method: 'post',
    path: '/v1/topics',
    id: 'createTopic',
    summary: 'CreateTopics.',
    body: 'CreateTopic',
    ok: { 201: 'TopicDescription' },
    errors: [
      'CLUSTER_AUTHORIZATION_FAILED',
      'INVALID_TOPIC_EXCEPTION',
      'INVALID_PARTITIONS',
      'INVALID_REPLICATION_FACTOR',
      'INVALID_CONFIG',
      'TOPIC_ALREADY_EXISTS',
      'TOPIC_AUTHORIZATION_FAILED',
    ],
  },
  {
    method: 'get',
    path: '/v1/topics',
    id: 'listTopics',
    summary: 'The topics.',
    ok: { 200: 'TopicList' },
    errors: ['CLUSTER_AUTHORIZATION_FAILED'],
  },
  {
    method: 'get',
    path: '/v1/topics/{topic}',
    id: 'describeTopic',
    summary: 'A topic: configs, partitions, offsets.',
    ok: { 200: 'TopicDescription' },
    errors: TOPIC_ERRORS,
  },
  {
    method: 'patch',
    path: '/v1/topics/{topic}',
    id: 'alterTopic',
    summary: 'CreatePartitions / IncrementalAlterConfigs.',
    body: 'AlterTopic',
    ok: { 200: 'TopicDescription' },
    errors: [...TOPIC_ERRORS, 'INVALID_PARTITIONS', 'INVALID_CONFIG'],
  },
  {
    method: 'delete',
    path: '/v1/topics/{topic}',
    id: 'deleteTopic',
    summary: 'DeleteTopics: data and index go.',
    ok: { 204: 'empty' },
    errors: TOPIC_ERRORS,
  },
  {
    method: 'post',
    path: '/v1/topics/{topic}/elect-leaders',
    id: 'electLeaders',
    summary:
      "ElectLeaders: PREFERRED moves leadership back to each partition's first replica; UNCLEAN lets an out-of-sync replica lead (unclean.leader.election.enable).",
    body: 'ElectLeaders',
    ok: { 200: 'ElectionResults' },
    errors: [...TOPIC_ERRORS, 'CLUSTER_AUTHORIZATION_FAILED'],
  },
  {
    method: 'post',
    path: '/v1/topics/{topic}/records',
    id: 'produce',
    summary: 'Produce JSON records; one result per record, in order.',
    body: 'Produce',
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          '1-128 characters: a retry with the same key writes nothing and answers the original offsets',
      },
    ],
    ok: { 200: 'ProduceResults' },
    errors: [
      'IDEMPOTENCY_KEY_REUSED',
      ...TOPIC_ERRORS,
      'INVALID_RECORD',
      'MESSAGE_TOO_LARGE',
      'RECORD_LIST_TOO_LARGE',
      'NOT_ENOUGH_REPLICAS',
      'NOT_LEADER_OR_FOLLOWER',
      'FENCED_LEADER_EPOCH',
    ],
  },
  {
    method: 'post',
    path: '/v1/topics/{topic}/partitions/{partition}/batches',
    id: 'produceBatches',
    summary:
      "Produce Kafka RecordBatch v2 bytes; idempotent by the batch header's producer id, epoch and sequence.",
    body: 'batches',
    query: [q('acks', 'string', 'all (default) or 1')],
    ok: { 200: 'BatchResult' },
    errors: [
      'UNKNOWN_PRODUCER_ID',
      ...TOPIC_ERRORS,
      'CORRUPT_MESSAGE',
      'INVALID_RECORD',
      'UNSUPPORTED_COMPRESSION_TYPE',
      'MESSAGE_TOO_LARGE',
      'RECORD_LIST_TOO_LARGE',
      'INVALID_PRODUCER_EPOCH',
      'OUT_OF_ORDER_SEQUENCE_NUMBER',
      'NOT_ENOUGH_REPLICAS',
      'NOT_LEADER_OR_FOLLOWER',
      'FENCED_LEADER_EPOCH',
    ],
  },
  {
    method: 'post',
    path: '/v1/producers',
    id: 'initProducerId',
    summary: 'InitProducerId.',
    ok: { 200: 'ProducerId' },
    errors: [],
  },
  {
    method: 'get',
    path: '/v1/topics/{topic}/partitions/{partition}/records',
    id: 'fetch',
    summary:
      'Fetch records below the high watermark from an offset; with Accept: application/vnd.kafka.record-batch, whole stored batches.',
    query: [
      q('offset', 'integer', 'default 0'),
      q('maxBytes', 'integer', 'default 1048576, at most 4194304; at least one record comes back'),
      q('maxWaitMs', 'integer', 'long poll, at most 20000 (default 0)'),
      q('encoding', 'string', 'utf8 (default), base64 or json'),
      q('replica', 'string', 'read from this in-sync replica store'),
    ],
    ok: { 200: 'fetch' },
    errors: [...TOPIC_ERRORS, 'OFFSET_OUT_OF_RANGE', 'NOT_LEADER_OR_FOLLOWER'],
  },
  {
    method: 'get',
    path: '/v1/topics/{topic}/partitions/{partition}/offsets',
    id: 'listOffsets',
    summary: 'ListOffsets: earliest, latest, or the first offset at or after a timestamp.',
    query: [q('at', 'string', 'earliest | latest (default) | a timestamp in ms')],
    ok: { 200: 'ListOffsets' },
    errors: TOPIC_ERRORS,
  },
  {
    method: 'get',
    path: '/v1/streams/{app}/stores/{store}/keys/{key}',
    id: 'queryStoreKey',
    summary:
      "Interactive query of a Streams application's store: a key-value store's committed value of the key (ReadOnlyKeyValueStore.get), or a window or session store's windows of the key (ReadOnlyWindowStore.fetch(key, from, to), ReadOnlySessionStore.findSessions). The key is written as the store's key serde writes it: text (String), JSON text (JSON), base64 (bytes).",
    query: [
      q(
        'windowStart',
        'integer',
        'window and session stores: windows starting (sessions ending) at or after this time, ms',
      ),
      q(
        'windowEnd',
        'integer',
        'window and session stores: windows (sessions) starting at or before this time, ms',
      ),
    ],
    ok: { 200: 'StoreKeyOrWindows' },
    errors: STREAMS_ERRORS,
  },
  {
    method: 'get',
    path: '/v1/streams/{app}/stores/{store}/keys',
    id: 'queryStoreRange',
    summary:
      "Interactive query of a key-value store's range (ReadOnlyKeyValueStore.range(from, to), or all()), in key-byte order, one page at a time.",
    query: [
      q('from', 'string', 'first key, inclusive (default: the first)'),
      q('to', 'string', 'last key, inclusive (default: the last)'),
      q('limit', 'integer', 'entries per page, 1-10000 (default 1000); `next` starts the next page'),
    ],
    ok: { 200: 'StoreRange' },
    errors: STREAMS_ERRORS,
  },
  {
    method: 'post',
    path: '/v1/groups/{group}/heartbeat',
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
  },
  {
    method: 'post',
    path: '/v1/groups/{group}/classic',
    id: 'classicMember',
    summary:
      "A classic member's JoinGroup (memberEpoch null), SyncGroup or Heartbeat (memberEpoch = generationId) in the same server-assigned group.",
    body: 'ClassicMember',
    ok: { 200: 'ClassicMemberResult' },
    errors: [...GROUP_ERRORS, 'UNKNOWN_MEMBER_ID', 'FENCED_MEMBER_EPOCH', 'TOPIC_AUTHORIZATION_FAILED'],
  },
  {
    method: 'post',
    path: '/v1/groups/{group}/offsets',
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
  },
  {
    method: 'get',
    path: '/v1/groups/{group}/offsets',
    id: 'fetchOffsets',
    summary: 'OffsetFetch (an unknown group has none).',
    query: [q('topic', 'string', 'only this topic')],
    ok: { 200: 'CommittedOffsets' },
    errors: GROUP_ERRORS,
  },
  {
    method: 'delete',
    path: '/v1/groups/{group}/offsets',
    id: 'deleteOffsets',
    summary:
      "OffsetDelete (kafka-consumer-groups --delete-offsets): one topic's committed offsets, in one transaction. Answers every asked partition (all of the topic's without `partitions`): no error once its offset is gone, UNKNOWN_TOPIC_OR_PARTITION for a partition the topic does not have, GROUP_SUBSCRIBED_TO_TOPIC for each while a live member subscribes to the topic (nothing deleted).",
    query: [
      q('topic', 'string', 'the topic (required)'),
      q(
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
  },
  {
    method: 'post',
    path: '/v1/groups/{group}/offsets/reset',
    id: 'resetOffsets',
    summary: 'kafka-consumer-groups --reset-offsets, only while the group has no members.',
    body: 'ResetOffsets',
    ok: { 200: 'CommittedOffsets' },
    errors: [...GROUP_ERRORS, ...TOPIC_ERRORS, 'NON_EMPTY_GROUP'],
  },
  {
    method: 'get',
    path: '/v1/groups',
    id: 'listGroups',
    summary: 'ListGroups.',
    ok: { 200: 'GroupList' },
    errors: [...GROUP_ERRORS, 'CLUSTER_AUTHORIZATION_FAILED'],
  },
  {
    method: 'get',
    path: '/v1/groups/{group}',
    id: 'describeGroup',
    summary: 'ConsumerGroupDescribe with per-partition lag.',
    ok: { 200: 'GroupDescription' },
    errors: [...GROUP_ERRORS, 'GROUP_ID_NOT_FOUND'],
  },
  {
    method: 'delete',
    path: '/v1/groups/{group}',
    id: 'deleteGroup',
    summary: 'DeleteGroups, only without members.',
    ok: { 204: 'empty' },
    errors: [...GROUP_ERRORS, 'GROUP_ID_NOT_FOUND', 'NON_EMPTY_GROUP'],
  },
  connectOp(
    'get',
    '/v1/connect/connectors',
    'listConnectors',
    'Connect: the connectors.',
    { 200: 'ConnectorList' },
    {
      query: [q('expand', 'string', 'status and/or info')],
      errors: ['CLUSTER_AUTHORIZATION_FAILED'],
    },
  ),
  connectOp(
    'post',
    '/v1/connect/connectors',
    'createConnector',
    'Connect: create a connector.',
    { 201: 'ConnectorInfo' },
    {
      body: 'CreateConnector',
      errors: ['ALREADY_EXISTS', 'INVALID_CONFIG', 'CLUSTER_AUTHORIZATION_FAILED'],
    },
  ),
  connectOp('get', C, 'describeConnector', 'Connect: a connector, its config and tasks.', {
    200: 'ConnectorInfo',
  }),
  connectOp('delete', C, 'deleteConnector', 'Connect: delete a connector.', { 204: 'empty' }),
  connectOp('get', `${C}/config`, 'connectorConfig', "Connect: a connector's config.", {
    200: 'ConnectorConfig',
  }),
  connectOp(
    'put',
    `${C}/config`,
    'putConnectorConfig',
    'Connect: create or replace a config.',
    {
      200: 'ConnectorInfo',
      201: 'ConnectorInfo',
    },
    { body: 'ConnectorConfig', errors: [...CONNECTOR_ERRORS, 'INVALID_CONFIG'] },
  ),
  connectOp('get', `${C}/status`, 'connectorStatus', "Connect: a connector's and its tasks' states.", {
    200: 'ConnectorStatus',
  }),
  connectOp('get', `${C}/tasks`, 'connectorTasks', "Connect: a connector's tasks and their configs.", {
    200: 'ConnectTaskList',
  }),
  connectOp('get', `${C}/tasks/{task}/status`, 'taskStatus', "Connect: one task's state.", {
    200: 'ConnectTaskStatus',
  }),
  connectOp('post', `${C}/tasks/{task}/restart`, 'restartTask', 'Connect: restart one task.', {
    204: 'empty',
  }),
  connectOp('put', `${C}/pause`, 'pauseConnector', 'Connect: pause (202).', { 202: 'empty' }),
  connectOp('put', `${C}/resume`, 'resumeConnector', 'Connect: resume (202).', { 202: 'empty' }),
  connectOp('put', `${C}/stop`, 'stopConnector', 'Connect: stop (KIP-875).', { 204: 'empty' }),
  connectOp(
    'post',
    `${C}/restart`,
    'restartConnector',
    'Connect: restart, with includeTasks and onlyFailed.',
    {
      202: 'ConnectorStatus',
      204: 'empty',
    },
    {
      query: [
        q('includeTasks', 'string', 'true: restart the tasks too'),
        q('onlyFailed', 'string', 'true: only what is FAILED'),
      ],
    },
  ),
  connectOp('get', `${C}/offsets`, 'connectorOffsets', "Connect: a connector's offsets (KIP-875).", {
    200: 'ConnectorOffsets',
  }),
  connectOp(
    'patch',
    `${C}/offsets`,
    'alterConnectorOffsets',
    'Connect: alter offsets, only while STOPPED.',
    {
      200: 'ConnectMessage',
    },
    { body: 'ConnectorOffsets' },
  ),
  connectOp(
    'delete',
    `${C}/offsets`,
    'resetConnectorOffsets',
    'Connect: reset offsets, only while STOPPED.',
    {
      200: 'ConnectMessage',
    },
  ),
  connectOp(
    'get',
    '/v1/connect/connector-plugins',
    'connectorPlugins',
    'Connect: the plugins.',
    {
      200: 'ConnectorPlugins',
    },
    {
      query: [q('connectorsOnly', 'string', 'false: transforms and predicates too')],
      errors: ['CLUSTER_AUTHORIZATION_FAILED'],
    },
  ),
  connectOp(
    'put',
    '/v1/connect/connector-plugins/{plugin}/config/validate',
    'validateConnectorConfig',
    "Connect: validate a config, in Connect's error_count / configs shape.",
    {
      200: 'ConfigValidation',
    },
    { body: 'ConnectorConfig' },
  ),
];

const PATH_PARAMS: Record<string, { schema: Record<string, unknown>; description: string }> = {
  topic: { schema: { type: 'string', pattern: '^[a-zA-Z0-9._-]{1,249}$' }, description: 'topic name' },
  partition: { schema: { type: 'integer', minimum: 0 }, description: 'partition number' },
  group: { schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'group id' },
  connector: { schema: { type: 'string', minLength: 1 }, description: 'connector name' },
  task: { schema: { type: 'integer', minimum: 0 }, description: 'task id' },
  plugin: { schema: { type: 'string', minLength: 1 }, description: 'connector class, full or short name' },
};

const jsonContent = (schema: string) => ({
  [JSON_TYPE]: { schema: { $ref: `#/components/schemas/${schema}` } },
});

const successResponse = (status: number, kind: string) => {
  if (kind === 'empty') return { description: 'done; no body' };
  if (kind === 'fetch') {
    const header = (description: string) => ({ description, schema: { type: 'integer' } });
    return {
      description: 'records (JSON), or whole RecordBatches (bytes) with the numbers in headers',
      headers: {
        'Sluice-High-Watermark': header('with record-batch bodies'),
        'Sluice-Log-Start-Offset': header('with record-batch bodies'),
        'Sluice-Next-Offset': header('with record-batch bodies'),
      },
      content: {
        ...jsonContent('FetchResult'),
        [RECORD_BATCH_MEDIA_TYPE]: { schema: { type: 'string', contentMediaType: RECORD_BATCH_MEDIA_TYPE } },
      },
    };
  }
  return { description: status === 201 ? 'created' : 'ok', content: jsonContent(kind) };
};

/** Error responses by status, each listing the Kafka codes it carries. */
const errorResponses = (codes: readonly ErrorCode[]): Record<string, unknown> => {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...COMMON, ...codes])) {
    const status = STATUS_BY_CODE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [
        String(status),
        {
          description: list.sort().join(', '),
          'x-kafka-error-codes': list,
          content: jsonContent('Error'),
        },
      ]),
  );
};

const operation = (op: Operation) => {
  const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    ...PATH_PARAMS[name!],
  }));
  const parameters = [
    ...pathParams,
    ...(op.query ?? []).map((p) => ({ ...p, in: 'query', required: false })),
    ...(op.headers ?? []).map((h) => ({
      ...h,
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 128 },
    })),
  ];
  const body =
    op.body === undefined
      ? {}
      : op.body === 'batches'
        ? {
            requestBody: {
              required: true,
              content: {
                [RECORD_BATCH_MEDIA_TYPE]: {
                  schema: { type: 'string', contentMediaType: RECORD_BATCH_MEDIA_TYPE },
                },
              },
            },
          }
        : { requestBody: { required: true, content: jsonContent(op.body) } };
  return {
    operationId: op.id,
    summary: op.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...body,
    ...(op.path === '/v1/health' ? { security: [] } : {}),
    responses: {
      ...Object.fromEntries(
        Object.entries(op.ok).map(([status, kind]) => [status, successResponse(Number(status), kind)]),
      ),
      ...errorResponses(op.errors),
    },
  };
};

/** The OpenAPI 3.1 document of the API. */
export const openApiDocument = (version: string): Record<string, unknown> => {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) (paths[op.path] ??= {})[op.method] = operation(op);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sluice HTTP API',
      version,
      description:
        'Apache Kafka\'s model over HTTP. Errors are `{"error": {code, message, retriable}}` with Kafka\'s error names; see docs/api.md.',
    },
    servers: [{ url: 'http://127.0.0.1:8787', description: 'npm start' }],
    security: [{ sigv4: [] }],
    paths,
    components: {
      securitySchemes: {
        sigv4: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'AWS SigV4, service execute-api (IAM authorization)',
        },
      },
      schemas: SCHEMAS,
    },
    'x-kafka-error-codes': Object.fromEntries(
      (Object.keys(ERROR_CODES) as ErrorCode[])
        .sort()
        .map((code) => [code, { status: STATUS_BY_CODE[code], retriable: ERROR_CODES[code].retriable }]),
    ),
  };
};
