/**
 * The deployment's configuration contract, in one place: the environment variables the Lambda
 * functions read, the table's key attributes, and the CDK context keys that tune a deployment.
 *
 * This module imports nothing from aws-cdk-lib so that runtime code (functions/, lib/adapters/aws)
 * may import the names without pulling the CDK into a Lambda bundle.
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

/** CDK context keys (`cdk.json` or `cdk synth -c key=value`). */
export const CONTEXT = {
  /** boolean, default true: DynamoDB deletion protection on the metadata table. */
  deletionProtection: 'sluice:deletionProtection',
  /** integer ≥ 1, default 1: number of store buckets (replica stores). */
  storeCount: 'sluice:storeCount',
  /**
   * Comma-separated availability zone ids (e.g. "use1-az4,use1-az5,use1-az6"): the stores are S3
   * Express One Zone directory buckets, one per zone, instead of S3 Standard buckets.
   */
  expressZones: 'sluice:expressZones',
  /** string, default: the CloudFormation stack's GUID (stable for the stack's lifetime). */
  clusterId: 'sluice:clusterId',
  /** integer, default 4194304. */
  maxRequestBytes: 'sluice:maxRequestBytes',
  /** string, default "Sluice": the CloudFormation stack name used by infra/app.ts. */
  stackName: 'sluice:stackName',
  /** boolean, default false: also deploy the Kafka gateway (ECS Fargate behind an NLB). */
  kafkaGateway: 'sluice:kafkaGateway',
  /** string: an email address subscribed to the alarms' SNS topic (it must confirm); default none. */
  alarmEmail: 'sluice:alarmEmail',
  /**
   * Consumer lag alarms, `group=records,group=records` (e.g. "billing=10000,audit=500000"): an alarm
   * per group when its records-lag-max stays above the threshold; default none.
   */
  lagAlarms: 'sluice:lagAlarms',
  /** integer ms, default 1000: the produce p99 (RequestLatencyMs, API=Produce) alarm's threshold. */
  produceP99Ms: 'sluice:produceP99Ms',
  /** boolean, default true: X-Ray active tracing on the functions (functions/xray.ts). */
  tracing: 'sluice:tracing',
  /** boolean, default false: also serve the web console at `<api url>/console/` (ConsoleSite). */
  console: 'sluice:console',
} as const;

/** What the app reads from context; every field optional, defaults applied by the stack. */
export interface SluiceContextSettings {
  readonly deletionProtection?: boolean;
  readonly storeCount?: number;
  readonly expressZones?: readonly string[];
  readonly clusterId?: string;
  readonly maxRequestBytes?: number;
  readonly stackName?: string;
  readonly kafkaGateway?: boolean;
  readonly alarmEmail?: string;
  readonly lagAlarms?: Readonly<Record<string, number>>;
  readonly produceP99Ms?: number;
  readonly tracing?: boolean;
  readonly console?: boolean;
}

/** Reads and validates the `sluice:*` context values; values given with `-c` arrive as strings. */
export function readContextSettings(node: { tryGetContext(key: string): unknown }): SluiceContextSettings {
  return {
    deletionProtection: parseBoolean(
      CONTEXT.deletionProtection,
      node.tryGetContext(CONTEXT.deletionProtection),
    ),
    storeCount: parsePositiveInteger(CONTEXT.storeCount, node.tryGetContext(CONTEXT.storeCount)),
    expressZones: parseList(CONTEXT.expressZones, node.tryGetContext(CONTEXT.expressZones)),
    clusterId: parseString(CONTEXT.clusterId, node.tryGetContext(CONTEXT.clusterId)),
    maxRequestBytes: parsePositiveInteger(
      CONTEXT.maxRequestBytes,
      node.tryGetContext(CONTEXT.maxRequestBytes),
    ),
    stackName: parseString(CONTEXT.stackName, node.tryGetContext(CONTEXT.stackName)),
    kafkaGateway: parseBoolean(CONTEXT.kafkaGateway, node.tryGetContext(CONTEXT.kafkaGateway)),
    alarmEmail: parseEmail(CONTEXT.alarmEmail, node.tryGetContext(CONTEXT.alarmEmail)),
    lagAlarms: parseThresholds(CONTEXT.lagAlarms, node.tryGetContext(CONTEXT.lagAlarms)),
    produceP99Ms: parsePositiveInteger(CONTEXT.produceP99Ms, node.tryGetContext(CONTEXT.produceP99Ms)),
    tracing: parseBoolean(CONTEXT.tracing, node.tryGetContext(CONTEXT.tracing)),
    console: parseBoolean(CONTEXT.console, node.tryGetContext(CONTEXT.console)),
  };
}

function parseEmail(key: string, value: unknown): string | undefined {
  const text = parseString(key, value);
  if (text !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(text))
    throw new Error(`Context ${key} must be an email address, got ${JSON.stringify(value)}`);
  return text;
}

/** `group=threshold,…` (or an object of the same) → thresholds by group id. */
function parseThresholds(key: string, value: unknown): Record<string, number> | undefined {
  if (value === undefined) return undefined;
  const pairs =
    typeof value === 'string'
      ? value.split(',').map((pair) => {
          const at = pair.lastIndexOf('=');
          return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()] as const;
        })
      : typeof value === 'object' && value !== null && !Array.isArray(value)
        ? Object.entries(value).map(([group, n]) => [group, String(n)] as const)
        : undefined;
  const thresholds: Record<string, number> = {};
  for (const [group, n] of pairs ?? []) {
    const threshold = Number(n);
    if (group === '' || n === '' || !Number.isSafeInteger(threshold) || threshold < 0)
      throw new Error(
        `Context ${key} must be group=records pairs, comma-separated, got ${JSON.stringify(value)}`,
      );
    thresholds[group] = threshold;
  }
  if (!pairs || pairs.length === 0)
    throw new Error(
      `Context ${key} must be group=records pairs, comma-separated, got ${JSON.stringify(value)}`,
    );
  return thresholds;
}

function parseList(key: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : undefined;
  if (!items || !items.every((x) => typeof x === 'string' && x.trim() !== ''))
    throw new Error(`Context ${key} must be a comma-separated list, got ${JSON.stringify(value)}`);
  return items.map((x: string) => x.trim());
}

function parseBoolean(key: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`Context ${key} must be true or false, got ${JSON.stringify(value)}`);
}

function parsePositiveInteger(key: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new Error(`Context ${key} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return n;
}

function parseString(key: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new Error(`Context ${key} must be a non-empty string, got ${JSON.stringify(value)}`);
  }
  return value;
}
