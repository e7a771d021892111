/**
 * The API's request and response bodies (docs/api.md), as TypeScript: the one declaration the HTTP
 * edge answers with and the SDK and CLI read. lib/wire/schemas.ts is the same contract as JSON Schema,
 * and the OpenAPI conformance test checks live answers against it.
 */

/** Any value JSON can carry. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface ErrorBody {
  code: string;
  message: string;
  retriable: boolean;
}

/** GET /v1/health. */
export interface HealthStatus {
  status: 'ok';
}

/** `GET /v1/whoami`: who signed the request. */
export interface PrincipalDescription {
  /** The IAM principal's ARN, e.g. `arn:aws:iam::111122223333:user/alice`. */
  principal: string;
}

export interface ClusterDescription {
  clusterId: string;
  version: string;
  stores: StoreDescription[];
  /** Where caught-up consumers wait (docs/api.md "Waiting on a WebSocket"); absent: no wait socket. */
  waitUrl?: string;
}

/** A replica store: S3 Standard (regional) or S3 Express One Zone (a directory bucket in one zone). */
export interface StoreDescription {
  id: string;
  location: string;
  kind: 'standard' | 'express';
  /** The availability zone id of an Express One Zone store. */
  zone?: string;
}

export interface TopicSummary {
  name: string;
  partitions: number;
  replicationFactor: number;
}

export interface PartitionDescription {
  partition: number;
  leader: string;
  leaderEpoch: number;
  replicas: string[];
  isr: string[];
  /** Replicas out of the ISR. */
  osr: string[];
  /** Each replica store's log end offset. */
  logEndOffsets: Record<string, number>;
  logStartOffset: number;
  /** The smallest LEO over the ISR: consumers never see past it. */
  highWatermark: number;
}

/** POST /v1/topics/{topic}/elect-leaders: one result per partition. */
export type ElectionResult =
  | { partition: number; leader: string; leaderEpoch: number; truncatedFrom?: number; truncatedTo?: number }
  | { partition: number; error: ErrorBody };

export interface TopicDescription {
  name: string;
  topicId: string;
  replicationFactor: number;
  configs: Record<string, string>;
  partitions: PartitionDescription[];
}

export type Encoding = 'utf8' | 'base64' | 'json';
export const ENCODINGS: readonly Encoding[] = ['utf8', 'base64', 'json'];

export interface Header {
  key: string;
  value: string | null;
}

/** A record of a JSON produce request. */
export interface ProduceRecord {
  key?: string | null;
  /** Under `json` encoding any JSON value; otherwise text (utf8) or base64 of the bytes. */
  value: unknown;
  headers?: Header[];
  partition?: number;
  timestamp?: number;
}

export type RecordResult =
  { partition: number; offset: number; timestamp: number } | { partition: number; error: ErrorBody };

export interface BatchResult {
  baseOffset: number;
  lastOffset: number;
  logAppendTime: number;
  logStartOffset: number;
}

export interface ProducerIdentity {
  producerId: number;
  producerEpoch: number;
}

/** A record of a JSON fetch answer. */
export interface FetchedRecord {
  offset: number;
  timestamp: number;
  key: string | null;
  value: JsonValue;
  headers: Header[];
}

export interface FetchResult {
  records: FetchedRecord[];
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
  /** Under isolationLevel=read_committed: the last stable offset the read stopped at. */
  lastStableOffset?: number;
}

/** A partition of POST /v1/fetch's answer: whole stored RecordBatches (base64), or its error. */
export interface PartitionFetchAnswer {
  topic: string;
  partition: number;
  /** Absent with an error other than OFFSET_OUT_OF_RANGE. */
  highWatermark?: number;
  logStartOffset?: number;
  /** Where the next fetch of this partition starts (absent with an error). */
  nextOffset?: number;
  /** Under isolationLevel read_committed: the last stable offset the read stopped at. */
  lastStableOffset?: number;
  /** Under read_committed: the aborted transactions in the batches' range, whose records the reader drops. */
  abortedTransactions?: AbortedTransaction[];
  /** Concatenated RecordBatches with their true base offsets, base64; empty when none. */
  recordBatches?: string;
  /**
   * With the request's `wait`: the offset the partition is registered at on the connection (told when
   * its log passes it). Absent: not registered (not caught up, or data arrived meanwhile).
   */
  waitingAt?: number;
  error?: { code: string; message: string; retriable: boolean };
}

/** POST /v1/transactions/{transactionalId}/producer: InitProducerId with a transactional.id. */
export interface InitTransactionalProducerIdRequest {
  transactionTimeoutMs: number;
}

/** POST …/partitions: AddPartitionsToTxn. */
export interface AddPartitionsToTxnRequest extends ProducerIdentity {
  topics: TopicPartitions[];
}

/** POST …/groups: AddOffsetsToTxn. */
export interface AddOffsetsToTxnRequest extends ProducerIdentity {
  groupId: string;
}

/** POST …/offsets: TxnOffsetCommit, with the consumer's group metadata (KIP-447). */
export interface TxnOffsetCommitRequest extends ProducerIdentity {
  groupId: string;
  memberId?: string | null;
  generationId?: number;
  offsets: { topic: string; partition: number; offset: number; metadata?: string }[];
}

/** POST …/end: EndTxn; answers the ProducerIdentity of the next transaction. */
export interface EndTxnRequest extends ProducerIdentity {
  committed: boolean;
  /**
   * KIP-890's transaction.version: 2 (the default) bumps the epoch at every end and answers it; 1, for
   * Kafka clients whose EndTxn is v0-v4 (the Kafka gateway's), keeps the epoch and the producer's sequences.
   */
  transactionVersion?: 1 | 2;
}

/** GET /v1/transactions/{transactionalId}: the coordinator's state of a transactional.id. */
export interface TransactionDescription {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  /** Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit or CompleteAbort (Kafka's names). */
  state: string;
  transactionTimeoutMs: number;
  /** When the open transaction began; -1 when none is open. */
  transactionStartTimeMs: number;
  partitions: TopicPartitions[];
  groups: string[];
}

/** GET /v1/transactions. */
export interface TransactionListing {
  transactions: TransactionDescription[];
}

/** An aborted transaction of a read_committed fetch (Kafka's FetchResponse AbortedTransaction). */
export interface AbortedTransaction {
  producerId: number;
  /** The transaction's first offset in the partition. */
  firstOffset: number;
}

/** POST /v1/fetch's answer: one entry per requested partition, in request order. */
export interface MultiFetchResult {
  partitions: PartitionFetchAnswer[];
}

/** Kafka's isolation.level. */
export type IsolationLevel = 'read_uncommitted' | 'read_committed';

/** `at` of ListOffsets: a timestamp in ms, or the log's ends. */
export type OffsetSpec = 'earliest' | 'latest' | number;

export interface ListOffsetsResult {
  offset: number | null;
  timestamp: number | null;
}

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface HeartbeatRequest {
  memberId: string | null;
  memberEpoch: number;
  instanceId?: string | null;
  subscribedTopics?: string[] | null;
  ownedPartitions?: TopicPartitions[] | null;
  rebalanceTimeoutMs?: number | null;
  serverAssignor?: 'uniform' | 'range' | null;
}

export interface HeartbeatResponse {
  memberId: string;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: TopicPartitions[] } | null;
}

/** `POST /v1/groups/{group}/classic`: a classic member's JoinGroup (memberEpoch null), SyncGroup or Heartbeat. */
export interface ClassicMemberRequest {
  memberId: string;
  memberEpoch: number | null;
  instanceId?: string | null;
  subscribedTopics?: string[] | null;
  ownedPartitions?: TopicPartitions[] | null;
  rebalanceTimeoutMs?: number | null;
  serverAssignor?: 'uniform' | 'range' | null;
}

export interface ClassicMemberResponse {
  memberId: string;
  /** The classic generationId. */
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: TopicPartitions[] };
  /** Heartbeat answers REBALANCE_IN_PROGRESS: the member rejoins. */
  rebalanceInProgress: boolean;
}

/** An offset of an OffsetCommit request (POST /v1/groups/{group}/offsets). */
export interface OffsetToCommit {
  topic: string;
  partition: number;
  offset: number;
  metadata?: string;
}

export interface OffsetCommitResult {
  topic: string;
  partition: number;
  error?: ErrorBody;
}

export interface CommittedOffset {
  topic: string;
  partition: number;
  offset: number;
  metadata: string;
}

export type GroupState = 'EMPTY' | 'ASSIGNING' | 'RECONCILING' | 'STABLE' | 'DEAD';

export interface GroupSummary {
  groupId: string;
  state: GroupState;
  members: number;
}

export interface GroupMemberDescription {
  memberId: string;
  instanceId: string | null;
  memberEpoch: number;
  subscribedTopics: string[];
  assignment: { topicPartitions: TopicPartitions[] };
}

export interface GroupOffset {
  topic: string;
  partition: number;
  committedOffset: number;
  highWatermark: number | null;
  lag: number | null;
}

export interface GroupDescription {
  groupId: string;
  state: GroupState;
  groupEpoch: number;
  assignor: string;
  members: GroupMemberDescription[];
  offsets: GroupOffset[];
}

/** Where `offsets/reset` moves a group: kafka-consumer-groups' --to-earliest, --to-latest, --to-datetime, --to-offset. */
export type ResetTarget = 'earliest' | 'latest' | number | { offset: number };

/**
 * Interactive queries (GET /v1/streams/{app}/stores/{store}/…). Keys and values are rendered by the
 * store's serdes: String as text, JSON as the JSON value, anything else as base64 of the bytes.
 */
export interface StoreKeyValue {
  key: JsonValue;
  value: JsonValue;
  /** Event time of the value (Kafka's timestamped stores). */
  timestamp: number;
}

/** A key-value store's range: `next` is the `from` of the next page (the first key left out), or null. */
export interface StoreRange {
  entries: StoreKeyValue[];
  next: string | null;
}

export interface StoreWindow {
  windowStart: number;
  /** Session windows only. */
  windowEnd?: number;
  value: JsonValue;
  timestamp: number;
}

/** A window or session store's windows of one key, in start-time order. */
export interface StoreWindows {
  key: JsonValue;
  windows: StoreWindow[];
}

/** Kafka's client quota configs (docs/quotas.md). */
export type ClientQuotaType =
  'producer_byte_rate' | 'consumer_byte_rate' | 'request_percentage' | 'controller_mutation_rate';

/** A quota entity: `user` and/or `client-id`, each a name or null for the default. */
export interface ClientQuotaEntity {
  user?: string | null;
  'client-id'?: string | null;
}

/** `GET /v1/client-quotas`: DescribeClientQuotas. */
export interface ClientQuotaEntry {
  entity: ClientQuotaEntity;
  values: Partial<Record<ClientQuotaType, number>>;
}

/** `POST /v1/client-quotas`: AlterClientQuotas (a null value removes the quota). */
export interface AlterClientQuotasRequest {
  entries: { entity: ClientQuotaEntity; ops: { key: ClientQuotaType; value: number | null }[] }[];
  validateOnly?: boolean;
}

/** A log segment of a partition (GET /v1/topics/{topic}/segments). */
export interface LogSegment {
  baseOffset: number;
  /** The offset after its last batch. */
  endOffset: number;
  /** Bytes of its RecordBatches. */
  sizeBytes: number;
  batches: number;
  records: number;
  /** -1 when unknown. */
  firstTimestamp: number;
  maxTimestamp: number;
  /** `remote`: rolled into the segment store; `local`: the active segment, in the replica stores. */
  tier: 'remote' | 'local';
  rolledAt?: number;
}

export interface PartitionSegments {
  partition: number;
  logStartOffset: number;
  logEndOffset: number;
  /** The partition's size: the sum of its segments' (Kafka's DescribeLogDirs size). */
  sizeBytes: number;
  segments: LogSegment[];
}

export interface TopicSegments {
  topic: string;
  partitions: PartitionSegments[];
}

/** GET /v1/streams/{app}: a Streams application's state stores and tasks. */
export interface StreamsApplication {
  applicationId: string;
  /** Its consumer group's state (DEAD without a group). */
  state: string;
  members: number;
  /** Tasks per sub-topology. */
  partitions: number;
  stores: {
    name: string;
    kind: 'key-value' | 'window' | 'session';
    subTopology: number;
    keyFormat: 'string' | 'json' | 'bytes';
    valueFormat: 'string' | 'json' | 'bytes';
  }[];
  tasks: {
    taskId: string;
    subTopology: number;
    partition: number;
    /** The member running the task, or null. */
    owner: string | null;
    leaseEpoch: number | null;
  }[];
}

export interface StreamsApplicationList {
  applications: {
    applicationId: string;
    state: string;
    members: number;
    partitions: number;
    stores: number;
  }[];
}

/**
 * The wait socket (docs/api.md "Waiting on a WebSocket"): what a caught-up consumer sends over its
 * WebSocket, and the frames it is sent back.
 */
export interface WaitFrame {
  action: 'wait';
  partitions: { topic: string; partition: number; fetchOffset: number }[];
  isolationLevel?: 'read_uncommitted' | 'read_committed';
}

/** Registered partitions whose log has passed their fetchOffset (at least once per registration, twice only when a record races its check). */
export interface ReadyFrame {
  type: 'ready';
  /** `fetchOffset`: the offset the partition was registered at (a client past it ignores the frame). */
  partitions: { topic: string; partition: number; fetchOffset?: number }[];
}

/** What a connection is asked for first: its id and the token its fetches register waits with. */
export interface HelloRequest {
  action: 'hello';
}

/** The answer to `hello`. */
export interface HelloFrame {
  type: 'hello';
  connectionId: string;
  token: string;
}

/** A frame refused whole (nothing registered). */
export interface ErrorFrame {
  type: 'error';
  error: ErrorBody;
}

export type WaitSocketFrame = ReadyFrame | HelloFrame | ErrorFrame;

/** The largest frame the wait socket reads (API Gateway's WebSocket message limit). */
export const MAX_WAIT_FRAME_BYTES = 128 * 1024;
