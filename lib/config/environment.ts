/**
 * The contract between a deployment and the code it runs: the environment variables the functions
 * read, the store ids, the table's key attributes. The CDK app (infra/) sets them and the runtime
 * (functions/, local/, streams/lambda through functions/) reads them; both import this leaf, so the
 * runtime never imports infra/ and the CDK is never pulled into a Lambda bundle.
 */

/** Environment variables set on every Sluice function. */
export const ENV = {
  /** Name of the DynamoDB metadata table. */
  tableName: 'SLUICE_TABLE_NAME',
  /** Comma-separated bucket names; store ids are s0, s1, … in this order. */
  buckets: 'SLUICE_BUCKETS',
  /** Bucket of the segment store, where maintenance tiers rolled segments (unset: no rolling). */
  segmentBucket: 'SLUICE_SEGMENT_BUCKET',
  /** Stable id of this deployment, reported by `GET /v1/cluster`. */
  clusterId: 'SLUICE_CLUSTER_ID',
  /**
   * The wait socket's URL (the WebSocket API's stage, `wss://…`), reported by `GET /v1/cluster` as
   * `waitUrl` so consumers find it (docs/api.md "Waiting on a WebSocket").
   */
  waitUrl: 'SLUICE_WAIT_URL',
  /**
   * The WebSocket API stage's connection endpoint (`https://…/{stage}`), where the wait function and
   * the notifier post to connections.
   */
  waitEndpoint: 'SLUICE_WAIT_ENDPOINT',
  /** The HTTP API's id: registrations are checked against its fetch route (the caller's READ grant). */
  httpApiId: 'SLUICE_HTTP_API_ID',
  /** Largest accepted request body in bytes after decoding (RECORD_LIST_TOO_LARGE above it). */
  maxRequestBytes: 'SLUICE_MAX_REQUEST_BYTES',
  /** Kafka's replica.lag.time.max.ms for this deployment (default 30000). */
  replicaLagTimeMaxMs: 'SLUICE_REPLICA_LAG_TIME_MAX_MS',
  /**
   * Local stack only: comma-separated S3 endpoints, one per bucket, when each store is its own
   * emulator process. Unset on AWS (every bucket is reached through the regional endpoint).
   */
  storeEndpoints: 'SLUICE_STORE_ENDPOINTS',
  /** Local stack only: the segment store's S3 endpoint when it is an emulator process of its own. */
  segmentEndpoint: 'SLUICE_SEGMENT_ENDPOINT',
  /** Kafka's group.consumer.session.timeout.ms: a member silent this long is removed (default 45000). */
  groupSessionTimeoutMs: 'SLUICE_GROUP_SESSION_TIMEOUT_MS',
  /** Kafka's group.consumer.heartbeat.interval.ms: how often members are told to heartbeat (default 5000). */
  groupHeartbeatIntervalMs: 'SLUICE_GROUP_HEARTBEAT_INTERVAL_MS',
  /** How often maintenance scans every store for orphan objects (default 3600000). */
  orphanScanIntervalMs: 'SLUICE_ORPHAN_SCAN_INTERVAL_MS',
  /**
   * `iam`: check resources named in request bodies (heartbeat subscriptions, committed topics …) with
   * IAM's policy simulator for the caller (lib/adapters/aws/iam-authorizer.ts). Set on the groups
   * function, the one whose routes name resources in bodies.
   */
  authorizer: 'SLUICE_AUTHORIZER',
  /** Client quotas: how long an instance serves the quota configs from memory (default 5000 ms). */
  quotaConfigTtlMs: 'SLUICE_QUOTA_CONFIG_TTL_MS',
  /** Client quotas: Kafka's quota.window.size.seconds, in ms (default 1000). */
  quotaWindowMs: 'SLUICE_QUOTA_WINDOW_MS',
  /** Node's own options; set to `--enable-source-maps` so stack traces point into the TypeScript. */
  nodeOptions: 'NODE_OPTIONS',
  /** How long one Connect task runs per scheduled invocation of the connect-worker function (ms). */
  connectBudgetMs: 'SLUICE_CONNECT_BUDGET_MS',
  /** Length of a Connect task's lease (ms); a dead invocation's tasks move on within it. */
  connectLeaseMs: 'SLUICE_CONNECT_LEASE_MS',
  /** How long a sink woken by new data keeps reading after the last record before it returns (ms). */
  connectSinkIdleMs: 'SLUICE_CONNECT_SINK_IDLE_MS',
  /**
   * A Streams app's function (streams/lambda): its StreamsConfig as a JSON object of Kafka Streams'
   * config names (`application.id`, `bootstrap.servers` = the API URL, `processing.guarantee` …).
   */
  streamsConfig: 'SLUICE_STREAMS_CONFIG',
  /** A Streams app's function: sign its API calls with SigV4 for this region (unset: unsigned, local). */
  streamsSigningRegion: 'SLUICE_STREAMS_SIGV4_REGION',
} as const;

export const DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024;
export const NODE_OPTIONS_VALUE = '--enable-source-maps';

/** Id of the segment store (not a replica store: reported apart, never in a topic's replicas). */
export const SEGMENT_STORE_ID = 'segments';

/** Store ids in bucket order: s0, s1, … */
export function storeId(index: number): string {
  return `s${index}`;
}

/** Key schema and TTL attribute of the metadata table. */
export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAt',
} as const;

/** Objects under this prefix in a store bucket are scratch data that a lifecycle rule expires. */
export const TMP_PREFIX = 'tmp/';
