/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 takes them) of the API's bodies: the wire contract that
 * docs/openapi.json publishes and the conformance test checks live answers against. Answers may gain
 * optional fields (API.md: not a breaking change), so response objects allow extra properties;
 * requests are strict, as the edge rejects unknown fields.
 */
import { ERROR_CODES } from '../../protocol/errors.js';

/** Kafka's client quota config names (lib/core/quotas/entity.ts enforces them). */
const QUOTA_CONFIG_NAMES = [
  'producer_byte_rate',
  'consumer_byte_rate',
  'request_percentage',
  'controller_mutation_rate',
] as const;

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const int = (description?: string, minimum?: number): Schema => ({
  type: 'integer',
  ...(minimum === undefined ? {} : { minimum }),
  ...(description ? { description } : {}),
});
const str = (description?: string): Schema => ({ type: 'string', ...(description ? { description } : {}) });
const nullable = (schema: Schema): Schema => ({ oneOf: [schema, { type: 'null' }] });
const array = (items: Schema): Schema => ({ type: 'array', items });
/** An answer object: every listed field required, extra fields allowed. */
const answer = (properties: Record<string, Schema>, description?: string): Schema => ({
  type: 'object',
  ...(description ? { description } : {}),
  required: Object.keys(properties),
  properties,
});
/** An answer with optional fields besides its required ones. */
const withOptional = (schema: Schema, optional: Record<string, Schema>): Schema => ({
  ...schema,
  properties: { ...(schema as { properties: Record<string, Schema> }).properties, ...optional },
});
/** A request object: unknown fields rejected. */
const request = (properties: Record<string, Schema>, required: string[]): Schema => ({
  type: 'object',
  required,
  additionalProperties: false,
  properties,
});

const topicPartitions = answer({ topic: str(), partitions: array(int(undefined, 0)) });
const errorBody = answer({
  code: ref('ErrorCode'),
  message: str(),
  retriable: { type: 'boolean' },
});

// Kafka Connect's REST bodies (connect/rest.ts), in Connect's own field names.
const connectState = {
  type: 'string',
  enum: ['UNASSIGNED', 'RUNNING', 'PAUSED', 'FAILED', 'RESTARTING', 'STOPPED'],
};
const connectorConfig: Schema = {
  type: 'object',
  description:
    "Connect's config map: every value a string (connector.class, tasks.max, …); a number or boolean is taken as its text.",
  additionalProperties: { type: ['string', 'number', 'boolean'] },
};
const connectTaskId = answer({ connector: str(), task: int(undefined, 0) });
const connectTaskStatus = answer({ id: int(undefined, 0), state: connectState, worker_id: str() });
const connectorStatus = answer({
  name: str(),
  connector: answer({ state: connectState, worker_id: str() }),
  tasks: array(connectTaskStatus),
  type: { type: 'string', enum: ['source', 'sink'] },
});
const connectorInfo = answer({
  name: str(),
  config: connectorConfig,
  tasks: array(connectTaskId),
  type: { type: 'string', enum: ['source', 'sink'] },
});
const connectSchemas: Record<string, Schema> = {
  ConnectorConfig: connectorConfig,
  CreateConnector: request(
    {
      name: { type: 'string', minLength: 1 },
      config: connectorConfig,
      initial_state: { type: 'string', description: 'RUNNING (default), PAUSED or STOPPED' },
    },
    ['name'],
  ),
  ConnectorList: {
    description: 'names, or with ?expand=status|info a map of name → {status, info}',
    oneOf: [array(str()), { type: 'object', additionalProperties: { type: 'object' } }],
  },
  ConnectorInfo: connectorInfo,
  ConnectorStatus: connectorStatus,
  ConnectTaskStatus: connectTaskStatus,
  ConnectTaskList: array(answer({ id: connectTaskId, config: connectorConfig })),
  ConnectorOffsets: answer({
    offsets: array(answer({ partition: { type: 'object' }, offset: nullable({ type: 'object' }) })),
  }),
  ConnectMessage: answer({ message: str() }),
  ConnectorPlugins: array(answer({ class: str(), type: str() })),
  ConfigValidation: answer({
    name: str(),
    error_count: int(undefined, 0),
    groups: array(str()),
    configs: array(
      answer({ definition: { type: 'object' }, value: answer({ name: str(), errors: array(str()) }) }),
    ),
  }),
};

const storeValue = { description: "rendered by the store's serde: text, a JSON value, or base64" };
const storeKeyValue = answer({ key: storeValue, value: storeValue, timestamp: int() });
const storeWindows = answer({
  key: storeValue,
  windows: array({
    ...answer({ windowStart: int(undefined, 0), value: storeValue, timestamp: int() }),
    properties: {
      windowStart: int(undefined, 0),
      windowEnd: int('session windows only', 0),
      value: storeValue,
      timestamp: int(),
    },
  }),
});
const streamsSchemas: Record<string, Schema> = {
  StoreKeyValue: storeKeyValue,
  StoreWindows: storeWindows,
  StoreKeyOrWindows: { oneOf: [ref('StoreKeyValue'), ref('StoreWindows')] },
  StreamsApplication: answer({
    applicationId: str(),
    state: str("its consumer group's state; DEAD without a group"),
    members: int(undefined, 0),
    partitions: int('tasks per sub-topology', 0),
    stores: array(
      answer({
        name: str(),
        kind: { enum: ['key-value', 'window', 'session'] },
        subTopology: int(undefined, 0),
        keyFormat: { enum: ['string', 'json', 'bytes'] },
        valueFormat: { enum: ['string', 'json', 'bytes'] },
      }),
    ),
    tasks: array(
      answer({
        taskId: str('<sub-topology>_<partition>'),
        subTopology: int(undefined, 0),
        partition: int(undefined, 0),
        owner: nullable(str('the member running the task')),
        leaseEpoch: nullable(int("the task lease's epoch", 0)),
      }),
    ),
  }),
  StreamsApplicationList: answer({
    applications: array(
      answer({
        applicationId: str(),
        state: str(),
        members: int(undefined, 0),
        partitions: int(undefined, 0),
        stores: int('state stores', 0),
      }),
    ),
  }),
  StoreRange: answer({ entries: array(ref('StoreKeyValue')), next: nullable(str("the next page's from")) }),
};

export const SCHEMAS: Record<string, Schema> = {
  ...connectSchemas,
  ...streamsSchemas,
  ErrorCode: {
    type: 'string',
    description: "Apache Kafka's error name; the status of each is in the description of API.md's table.",
    enum: Object.keys(ERROR_CODES).sort(),
  },
  ErrorBody: errorBody,
  Error: answer(
    { error: ref('ErrorBody') },
    'Every error. Some carry more fields beside `error`, e.g. a 416 carries logStartOffset and highWatermark.',
  ),
  Health: answer({ status: { const: 'ok' } }),
  Principal: answer({ principal: str("the caller's IAM principal ARN") }),
  Cluster: withOptional(
    answer({
      clusterId: str(),
      version: str(),
      stores: array(
        answer({
          id: str('store id, e.g. s0'),
          location: str(),
          kind: { type: 'string', enum: ['standard', 'express'] },
        }),
      ),
    }),
    { waitUrl: str('the wait socket (wss://…) where caught-up consumers wait, when the deployment has one') },
  ),
  // Kafka's own codes answer a bad name, count or config (INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS,
  // INVALID_REPLICATION_FACTOR, INVALID_CONFIG), whatever the value's type: the schema leaves them to those.
  CreateTopic: request(
    {
      name: { description: 'a string of 1-249 of a-z A-Z 0-9 . _ - (else INVALID_TOPIC_EXCEPTION)' },
      partitions: { description: 'an integer ≥ 1, default 1 (else INVALID_PARTITIONS)' },
      replicationFactor: {
        description: 'an integer from 1 to the number of stores, default 1 (else INVALID_REPLICATION_FACTOR)',
      },
      configs: { description: 'an object of config name → string value (else INVALID_CONFIG)' },
    },
    ['name'],
  ),
  AlterTopic: request(
    {
      partitions: { description: 'an integer; only grows (else INVALID_PARTITIONS)' },
      configs: { description: 'an object of config name → string value, null resets (else INVALID_CONFIG)' },
    },
    [],
  ),
  TopicSummary: answer({ name: str(), partitions: int(undefined, 1), replicationFactor: int(undefined, 1) }),
  TopicList: answer({ topics: array(ref('TopicSummary')) }),
  PartitionDescription: answer({
    partition: int(undefined, 0),
    leader: str('the leader store'),
    leaderEpoch: int(undefined, 0),
    replicas: array(str()),
    isr: array(str()),
    osr: array(str('replicas out of the ISR')),
    logEndOffsets: {
      type: 'object',
      description: "each replica store's log end offset",
      additionalProperties: int(undefined, 0),
    },
    logStartOffset: int(undefined, 0),
    highWatermark: int('the smallest LEO over the ISR', 0),
  }),
  ElectLeaders: request(
    {
      electionType: { type: 'string', enum: ['PREFERRED', 'UNCLEAN'] },
      partitions: { ...array(int(undefined, 0)), minItems: 1, maxItems: 10_000, uniqueItems: true },
    },
    ['electionType'],
  ),
  ElectionResults: answer({
    results: array({
      oneOf: [
        answer({
          partition: int(undefined, 0),
          leader: str(),
          leaderEpoch: int(undefined, 0),
        }),
        answer({ partition: int(undefined, 0), error: errorBody }),
      ],
    }),
  }),
  TopicDescription: answer({
    name: str(),
    topicId: str(),
    replicationFactor: int(undefined, 1),
    configs: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'every config, defaults filled in',
    },
    partitions: array(ref('PartitionDescription')),
  }),
  Header: answer({ key: str(), value: nullable(str()) }),
  RecordHeader: request({ key: str(), value: nullable(str('absent or null: no value')) }, ['key']),
  ProduceRecord: request(
    {
      key: nullable(str()),
      value: {
        description: 'text, base64 or (encoding json) any JSON value; null (or absent) is a tombstone',
      },
      headers: array(ref('RecordHeader')),
      partition: nullable(int(undefined, 0)),
      timestamp: nullable(int('ms since the epoch', 0)),
    },
    [],
  ),
  Produce: request(
    {
      records: { ...array(ref('ProduceRecord')), minItems: 1 },
      encoding: { enum: ['utf8', 'base64', 'json'] },
      acks: { enum: ['all', '-1', -1, '1', 1], description: 'all (or -1, the default) or 1' },
    },
    ['records'],
  ),
  InitProducerId: request({}, []),
  ProduceResult: {
    oneOf: [
      answer({ partition: int(undefined, 0), offset: int(undefined, 0), timestamp: int() }),
      answer({ partition: int(undefined, 0), error: ref('ErrorBody') }),
    ],
  },
  ProduceResults: answer({ results: array(ref('ProduceResult')) }),
  BatchResult: answer({
    baseOffset: int(undefined, 0),
    lastOffset: int(undefined, 0),
    logAppendTime: int('-1 unless the topic uses LogAppendTime'),
    logStartOffset: int(undefined, 0),
  }),
  ProducerId: answer({ producerId: int(undefined, 0), producerEpoch: int(undefined, 0) }),
  InitTransactionalProducerId: request(
    { transactionTimeoutMs: int("Kafka's transaction.timeout.ms, at most transaction.max.timeout.ms", 1) },
    ['transactionTimeoutMs'],
  ),
  AddPartitionsToTxn: request(
    {
      producerId: int(undefined, 0),
      producerEpoch: int(undefined, 0),
      topics: array(ref('TopicPartitions')),
    },
    ['producerId', 'producerEpoch', 'topics'],
  ),
  AddOffsetsToTxn: request(
    { producerId: int(undefined, 0), producerEpoch: int(undefined, 0), groupId: str() },
    ['producerId', 'producerEpoch', 'groupId'],
  ),
  TxnOffsetCommit: request(
    {
      producerId: int(undefined, 0),
      producerEpoch: int(undefined, 0),
      groupId: str(),
      memberId: nullable(str('the consumer group member (KIP-447); null outside the group protocol')),
      generationId: int('the member epoch (KIP-447); -1 outside the group protocol', -1),
      offsets: array(
        request({ topic: str(), partition: int(undefined, 0), offset: int(undefined, 0), metadata: str() }, [
          'topic',
          'partition',
          'offset',
        ]),
      ),
    },
    ['producerId', 'producerEpoch', 'groupId', 'offsets'],
  ),
  EndTxn: request(
    {
      producerId: int(undefined, 0),
      producerEpoch: int(undefined, 0),
      committed: { type: 'boolean', description: 'true commits, false aborts' },
      transactionVersion: {
        enum: [1, 2],
        description:
          "KIP-890's transaction.version: 2 (default) bumps the epoch at every end and answers it; 1, for Kafka clients whose EndTxn is v0-v4, keeps the epoch and the producer's sequences",
      },
    },
    ['producerId', 'producerEpoch', 'committed'],
  ),
  TransactionDescription: answer({
    transactionalId: str(),
    producerId: int(undefined, 0),
    producerEpoch: int(undefined, 0),
    state: str('Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit or CompleteAbort'),
    transactionTimeoutMs: int(undefined, 1),
    transactionStartTimeMs: int('-1 when no transaction is open'),
    partitions: array(ref('TopicPartitions')),
    groups: array(str()),
  }),
  TransactionListing: answer({ transactions: array(ref('TransactionDescription')) }),
  QuotaEntity: {
    ...request(
      {
        user: nullable(str('an IAM principal ARN (ANONYMOUS when unsigned); null: the default user')),
        'client-id': nullable(str('a Kafka-Client-Id; null: the default client id')),
      },
      [],
    ),
    minProperties: 1,
  },
  AlterClientQuotas: request(
    {
      entries: {
        ...array(
          request(
            {
              entity: ref('QuotaEntity'),
              ops: {
                ...array(
                  request(
                    {
                      key: { enum: [...QUOTA_CONFIG_NAMES] },
                      value: nullable({
                        type: 'number',
                        exclusiveMinimum: 0,
                        description: 'null removes the quota',
                      }),
                    },
                    ['key', 'value'],
                  ),
                ),
                maxItems: QUOTA_CONFIG_NAMES.length,
              },
            },
            ['entity', 'ops'],
          ),
        ),
        minItems: 1,
        maxItems: 1000,
      },
      validateOnly: { type: 'boolean' },
    },
    ['entries'],
  ),
  ClientQuotaEntry: answer({
    entity: {
      type: 'object',
      description: 'user and/or client-id: a name, or null for the default',
      additionalProperties: nullable(str()),
    },
    values: {
      type: 'object',
      description: 'producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate',
      additionalProperties: { type: 'number' },
    },
  }),
  ClientQuotas: answer({ entries: array(ref('ClientQuotaEntry')) }),
  FetchedRecord: answer({
    offset: int(undefined, 0),
    timestamp: int(),
    key: nullable(str()),
    value: { description: 'text, base64 or (encoding json) the JSON value; null for a tombstone' },
    headers: array(ref('Header')),
  }),
  FetchResult: answer({
    records: array(ref('FetchedRecord')),
    nextOffset: int(undefined, 0),
    highWatermark: int(undefined, 0),
    logStartOffset: int(undefined, 0),
  }),
  MultiFetch: request(
    {
      partitions: {
        ...array(
          request(
            {
              topic: str(),
              partition: int(undefined, 0),
              offset: int(undefined, 0),
              maxBytes: int('max.partition.fetch.bytes: default 1048576, at most 4194304', 1),
              waitingAt: int(
                'with wait: the offset an earlier answer registered this partition at; equal to offset, and the partition not moved, it is kept as it is (not written again)',
                0,
              ),
            },
            ['topic', 'partition', 'offset'],
          ),
        ),
        minItems: 1,
        maxItems: 1000,
      },
      maxBytes: int('fetch.max.bytes over the answer: default and at most 4194304', 1),
      maxWaitMs: int('fetch.max.wait.ms: long poll, at most 20000 (default 0)', 0),
      isolationLevel: {
        enum: ['read_uncommitted', 'read_committed'],
        description:
          'isolation.level: read_committed stops at each partition’s last stable offset and lists its aborted transactions (default read_uncommitted)',
      },
      wait: {
        ...request(
          {
            connectionId: str('the wait socket connection’s id, from its hello frame'),
            token: str('the token the hello frame handed the connection'),
          },
          ['connectionId', 'token'],
        ),
        description:
          'register each partition this fetch leaves at its high watermark (LSO for read_committed) on this wait socket connection (docs/api.md "Waiting on a WebSocket")',
      },
    },
    ['partitions'],
  ),
  PartitionFetch: {
    type: 'object',
    required: ['topic', 'partition'],
    properties: {
      topic: str(),
      partition: int(undefined, 0),
      highWatermark: int('absent with an error other than OFFSET_OUT_OF_RANGE', 0),
      logStartOffset: int('absent with an error other than OFFSET_OUT_OF_RANGE', 0),
      nextOffset: int('where the next fetch of the partition starts; absent with an error', 0),
      lastStableOffset: int('read_committed: the last stable offset the read stopped at', 0),
      waitingAt: int(
        'with wait: the offset the partition is registered at on the connection (told when its log passes it); absent: not registered (not caught up, or data arrived meanwhile: fetch again)',
        0,
      ),
      abortedTransactions: {
        ...array(
          answer({
            producerId: int(undefined, 0),
            firstOffset: int('the transaction’s first offset in the partition', 0),
          }),
        ),
        description: 'read_committed: aborted transactions in the range; drop their records',
      },
      recordBatches: str('whole stored RecordBatches with their true base offsets, base64; empty when none'),
      error: errorBody,
    },
  },
  MultiFetchResult: answer({ partitions: array(ref('PartitionFetch')) }),
  LogSegment: answer({
    baseOffset: int(undefined, 0),
    endOffset: int('the offset after its last batch', 0),
    sizeBytes: int('bytes of its RecordBatches', 0),
    batches: int(undefined, 0),
    records: int(undefined, 0),
    firstTimestamp: int('-1 when unknown'),
    maxTimestamp: int('-1 when unknown'),
    tier: {
      enum: ['remote', 'local'],
      description: 'remote: rolled into the segment store; local: the active segment',
    },
  }),
  PartitionSegments: answer({
    partition: int(undefined, 0),
    logStartOffset: int(undefined, 0),
    logEndOffset: int(undefined, 0),
    sizeBytes: int("the sum of its segments' sizes", 0),
    segments: array(ref('LogSegment')),
  }),
  TopicSegments: answer({ topic: str(), partitions: array(ref('PartitionSegments')) }),
  ListOffsets: answer({
    offset: nullable(int(undefined, 0)),
    timestamp: nullable(int('-1 for earliest and latest, as Kafka answers')),
  }),
  TopicPartitions: topicPartitions,
  Heartbeat: request(
    {
      memberId: nullable(str()),
      memberEpoch: int('0 joins, -1 leaves, -2 leaves a static member for now', -2),
      instanceId: nullable(str()),
      subscribedTopics: nullable(array(str())),
      ownedPartitions: nullable(array(ref('TopicPartitions'))),
      rebalanceTimeoutMs: nullable(int(undefined, 0)),
      serverAssignor: nullable({ enum: ['uniform', 'range'] }),
    },
    ['memberEpoch'],
  ),
  HeartbeatResult: answer({
    memberId: str(),
    memberEpoch: int(),
    heartbeatIntervalMs: int(undefined, 0),
    assignment: nullable(answer({ topicPartitions: array(ref('TopicPartitions')) })),
  }),
  ClassicMember: request(
    {
      memberId: str(),
      memberEpoch: nullable(int('null joins (JoinGroup); the generationId syncs or heartbeats', 0)),
      instanceId: nullable(str()),
      subscribedTopics: nullable(array(str())),
      ownedPartitions: nullable(array(ref('TopicPartitions'))),
      rebalanceTimeoutMs: nullable(int(undefined, 0)),
      serverAssignor: nullable({ enum: ['uniform', 'range'] }),
    },
    ['memberId'],
  ),
  ClassicMemberResult: answer({
    memberId: str(),
    memberEpoch: int(),
    heartbeatIntervalMs: int(undefined, 0),
    assignment: answer({ topicPartitions: array(ref('TopicPartitions')) }),
    rebalanceInProgress: { type: 'boolean' },
  }),
  CommitOffsets: request(
    {
      memberId: nullable(str()),
      memberEpoch: nullable(int()),
      offsets: array(
        request({ topic: str(), partition: int(undefined, 0), offset: int(undefined, 0), metadata: str() }, [
          'topic',
          'partition',
          'offset',
        ]),
      ),
    },
    ['offsets'],
  ),
  CommitResults: answer({
    results: array({
      oneOf: [
        { ...answer({ topic: str(), partition: int(undefined, 0) }), not: { required: ['error'] } },
        answer({ topic: str(), partition: int(undefined, 0), error: ref('ErrorBody') }),
      ],
    }),
  }),
  CommittedOffset: answer({
    topic: str(),
    partition: int(undefined, 0),
    offset: int(undefined, 0),
    metadata: str(),
  }),
  CommittedOffsets: answer({ offsets: array(ref('CommittedOffset')) }),
  ResetOffsets: request(
    {
      topic: str(),
      to: {
        oneOf: [
          { enum: ['earliest', 'latest'] },
          int('a timestamp in ms', 0),
          request({ offset: int(undefined, 0) }, ['offset']),
        ],
      },
    },
    ['topic', 'to'],
  ),
  GroupState: { enum: ['EMPTY', 'ASSIGNING', 'RECONCILING', 'STABLE', 'DEAD'] },
  GroupList: answer({
    groups: array(answer({ groupId: str(), state: ref('GroupState'), members: int(undefined, 0) })),
  }),
  GroupDescription: answer({
    groupId: str(),
    state: ref('GroupState'),
    groupEpoch: int(undefined, 0),
    assignor: { enum: ['uniform', 'range'] },
    members: array(
      answer({
        memberId: str(),
        instanceId: nullable(str()),
        memberEpoch: int(),
        subscribedTopics: array(str()),
        assignment: answer({ topicPartitions: array(ref('TopicPartitions')) }),
      }),
    ),
    offsets: array(
      answer({
        topic: str(),
        partition: int(undefined, 0),
        committedOffset: int(undefined, 0),
        highWatermark: nullable(int(undefined, 0)),
        lag: nullable(int(undefined, 0)),
      }),
    ),
  }),
};
