/**
 * The CDK context keys that tune a deployment, and how they are read. The environment variables the
 * functions read, the store ids and the table's key attributes are the runtime's contract too, so
 * they live in lib/config/environment.ts, which both sides import.
 */

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
