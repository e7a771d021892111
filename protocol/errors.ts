/**
 * Sluice's one error type. Codes are Apache Kafka's error names; the HTTP edge maps each code to a
 * status once (lib/http/status.ts), and every adapter translates its platform's failures into these.
 */
export const ERROR_CODES = {
  INVALID_REQUEST: { retriable: false },
  INVALID_TOPIC_EXCEPTION: { retriable: false },
  INVALID_PARTITIONS: { retriable: false },
  INVALID_REPLICATION_FACTOR: { retriable: false },
  INVALID_CONFIG: { retriable: false },
  CORRUPT_MESSAGE: { retriable: false },
  INVALID_RECORD: { retriable: false },
  UNSUPPORTED_COMPRESSION_TYPE: { retriable: false },
  SASL_AUTHENTICATION_FAILED: { retriable: false },
  TOPIC_AUTHORIZATION_FAILED: { retriable: false },
  GROUP_AUTHORIZATION_FAILED: { retriable: false },
  CLUSTER_AUTHORIZATION_FAILED: { retriable: false },
  UNKNOWN_TOPIC_OR_PARTITION: { retriable: false },
  GROUP_ID_NOT_FOUND: { retriable: false },
  UNKNOWN_MEMBER_ID: { retriable: false },
  NOT_FOUND: { retriable: false },
  /** Kafka Streams' UnknownStateStoreException: an interactive query names a store the app lacks. */
  UNKNOWN_STATE_STORE: { retriable: false },
  METHOD_NOT_ALLOWED: { retriable: false },
  TOPIC_ALREADY_EXISTS: { retriable: false },
  /** Kafka Connect's AlreadyExistsException (a connector name in use). */
  ALREADY_EXISTS: { retriable: false },
  FENCED_MEMBER_EPOCH: { retriable: false },
  STALE_MEMBER_EPOCH: { retriable: false },
  UNRELEASED_INSTANCE_ID: { retriable: false },
  NON_EMPTY_GROUP: { retriable: false },
  /** OffsetDelete on a topic a member of the group subscribes to. */
  GROUP_SUBSCRIBED_TO_TOPIC: { retriable: false },
  INVALID_PRODUCER_EPOCH: { retriable: false },
  /** A producer id this cluster never issued (ids come from POST /v1/producers, InitProducerId). */
  UNKNOWN_PRODUCER_ID: { retriable: false },
  OUT_OF_ORDER_SEQUENCE_NUMBER: { retriable: false },
  /** A newer instance of the transactional.id bumped the epoch (KIP-98; Kafka 2.7+ names it so). */
  PRODUCER_FENCED: { retriable: false },
  /** The transactional.id's previous transaction is still being completed. */
  CONCURRENT_TRANSACTIONS: { retriable: true },
  /** The request does not fit the transaction's state (EndTxn with none open, say). */
  INVALID_TXN_STATE: { retriable: false },
  /** transaction.timeout.ms above transaction.max.timeout.ms, or not positive. */
  INVALID_TRANSACTION_TIMEOUT: { retriable: false },
  /** The producer id is not the one the transactional.id holds. */
  INVALID_PRODUCER_ID_MAPPING: { retriable: false },
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: { retriable: false },
  /** KIP-447: TxnOffsetCommit with a generation or member the group no longer has. */
  ILLEGAL_GENERATION: { retriable: false },
  /** An Idempotency-Key sent again with a different request (IETF Idempotency-Key draft: 422). */
  IDEMPOTENCY_KEY_REUSED: { retriable: false },
  FENCED_LEADER_EPOCH: { retriable: true },
  MESSAGE_TOO_LARGE: { retriable: false },
  RECORD_LIST_TOO_LARGE: { retriable: false },
  OFFSET_OUT_OF_RANGE: { retriable: false },
  THROTTLING_QUOTA_EXCEEDED: { retriable: true },
  UNKNOWN_SERVER_ERROR: { retriable: false },
  KAFKA_STORAGE_ERROR: { retriable: true },
  NOT_ENOUGH_REPLICAS: { retriable: true },
  NOT_LEADER_OR_FOLLOWER: { retriable: true },
  ELECTION_NOT_NEEDED: { retriable: false },
  PREFERRED_LEADER_NOT_AVAILABLE: { retriable: true },
  ELIGIBLE_LEADERS_NOT_AVAILABLE: { retriable: true },
  COORDINATOR_NOT_AVAILABLE: { retriable: true },
  REQUEST_TIMED_OUT: { retriable: true },
} as const satisfies Record<string, { retriable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface SluiceErrorOptions {
  cause?: unknown;
  /** Extra fields the HTTP envelope carries beside code/message (e.g. offset bounds). */
  details?: Record<string, unknown>;
  retriable?: boolean;
}

export class SluiceError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: SluiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SluiceError';
    this.code = code;
    this.retriable = options.retriable ?? ERROR_CODES[code].retriable;
    this.details = options.details;
  }
}

export const isSluiceError = (e: unknown): e is SluiceError => e instanceof SluiceError;

export const invalidRequest = (message: string, details?: Record<string, unknown>): SluiceError =>
  new SluiceError('INVALID_REQUEST', message, details ? { details } : {});
