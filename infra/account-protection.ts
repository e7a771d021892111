/**
 * Account-level protection (docs/quotas.md): what stops a flood on one job from taking the account's
 * Lambda concurrency, the API's request rate or the table's capacity from every other job, beside the
 * per-client quotas Sluice enforces itself. All of it is configurable through `sluice:*` context or
 * stack props, and off or generous by default: reserved concurrency in particular is off, because a
 * new account has 1,000 concurrent executions of which 100 must stay unreserved, and a deployment
 * that reserved more could not be created there.
 */
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { ROUTE_TABLE } from '../functions/route-table.js';

/** CDK context keys of the account-level protection. */
export const PROTECTION_CONTEXT = {
  /** number: the API stage's steady requests per second (default 1000, API Gateway's own default is higher). */
  apiThrottleRateLimit: 'sluice:apiThrottleRateLimit',
  /** integer: the API stage's burst (default 2000). */
  apiThrottleBurstLimit: 'sluice:apiThrottleBurstLimit',
  /** JSON object: route key (`POST /v1/topics/{topic}/records`) → `{rateLimit, burstLimit}`. */
  routeThrottles: 'sluice:routeThrottles',
  /** JSON object: function job (`produce`, `fetch`, …) → reserved concurrent executions; default none. */
  reservedConcurrency: 'sluice:reservedConcurrency',
  /** integer: the account's concurrency limit, against which reservations are checked (default 1000). */
  accountConcurrency: 'sluice:accountConcurrency',
  /** integer: the table's on-demand maximum read request units per second (default none: unbounded). */
  tableMaxReadRequestUnits: 'sluice:tableMaxReadRequestUnits',
  /** integer: the table's on-demand maximum write request units per second (default none). */
  tableMaxWriteRequestUnits: 'sluice:tableMaxWriteRequestUnits',
} as const;

export interface RouteThrottle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

export interface AccountProtection {
  readonly apiThrottleRateLimit?: number;
  readonly apiThrottleBurstLimit?: number;
  readonly routeThrottles?: Readonly<Record<string, RouteThrottle>>;
  readonly reservedConcurrency?: Readonly<Record<string, number>>;
  /** @default 1000 */
  readonly accountConcurrency?: number;
  readonly tableMaxReadRequestUnits?: number;
  readonly tableMaxWriteRequestUnits?: number;
}

/** Lambda keeps this many executions of an account unreserved. */
export const UNRESERVED_MINIMUM = 100;
const DEFAULT_ACCOUNT_CONCURRENCY = 1000;

/** Reads and validates the context values (strings when given with `-c`). */
export function readProtectionContext(node: { tryGetContext(key: string): unknown }): AccountProtection {
  const get = (key: string) => node.tryGetContext(key);
  const out: Record<string, unknown> = {
    apiThrottleRateLimit: positive(
      PROTECTION_CONTEXT.apiThrottleRateLimit,
      get(PROTECTION_CONTEXT.apiThrottleRateLimit),
    ),
    apiThrottleBurstLimit: positive(
      PROTECTION_CONTEXT.apiThrottleBurstLimit,
      get(PROTECTION_CONTEXT.apiThrottleBurstLimit),
      true,
    ),
    routeThrottles: json(PROTECTION_CONTEXT.routeThrottles, get(PROTECTION_CONTEXT.routeThrottles)),
    reservedConcurrency: json(
      PROTECTION_CONTEXT.reservedConcurrency,
      get(PROTECTION_CONTEXT.reservedConcurrency),
    ),
    accountConcurrency: positive(
      PROTECTION_CONTEXT.accountConcurrency,
      get(PROTECTION_CONTEXT.accountConcurrency),
      true,
    ),
    tableMaxReadRequestUnits: positive(
      PROTECTION_CONTEXT.tableMaxReadRequestUnits,
      get(PROTECTION_CONTEXT.tableMaxReadRequestUnits),
      true,
    ),
    tableMaxWriteRequestUnits: positive(
      PROTECTION_CONTEXT.tableMaxWriteRequestUnits,
      get(PROTECTION_CONTEXT.tableMaxWriteRequestUnits),
      true,
    ),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as AccountProtection;
}

/** Applies the protection to the API stage, the functions and the table; throws on a bad setting. */
export function applyAccountProtection(
  targets: {
    stage: apigw.HttpStage;
    functions: Readonly<Record<string, lambda.Function>>;
    table: dynamodb.Table;
  },
  protection: AccountProtection,
): void {
  const routeKeys = new Set(ROUTE_TABLE.map((r) => `${r.method} ${r.pattern}`));
  const routes = protection.routeThrottles ?? {};
  for (const [key, throttle] of Object.entries(routes)) {
    if (!routeKeys.has(key)) throw new Error(`${PROTECTION_CONTEXT.routeThrottles}: no route ${key}`);
    positive(`${PROTECTION_CONTEXT.routeThrottles} ${key} rateLimit`, throttle?.rateLimit);
    positive(`${PROTECTION_CONTEXT.routeThrottles} ${key} burstLimit`, throttle?.burstLimit, true);
  }
  if (Object.keys(routes).length > 0) {
    // RouteSettings is a JSON map in CloudFormation: the CDK passes it through as written.
    (targets.stage.node.defaultChild as apigw.CfnStage).routeSettings = Object.fromEntries(
      Object.entries(routes).map(([key, t]) => [
        key,
        { ThrottlingRateLimit: t.rateLimit, ThrottlingBurstLimit: t.burstLimit },
      ]),
    );
  }

  const reserved = protection.reservedConcurrency ?? {};
  let total = 0;
  for (const [job, count] of Object.entries(reserved)) {
    const fn = targets.functions[job];
    if (!fn)
      throw new Error(
        `${PROTECTION_CONTEXT.reservedConcurrency}: no function ${job}; use one of ${Object.keys(targets.functions).join(', ')}`,
      );
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0)
      throw new Error(
        `${PROTECTION_CONTEXT.reservedConcurrency}: ${job} must be an integer ≥ 0, got ${JSON.stringify(count)}`,
      );
    total += count;
    (fn.node.defaultChild as lambda.CfnFunction).reservedConcurrentExecutions = count;
  }
  const account = protection.accountConcurrency ?? DEFAULT_ACCOUNT_CONCURRENCY;
  if (total > account - UNRESERVED_MINIMUM)
    throw new Error(
      `${PROTECTION_CONTEXT.reservedConcurrency} reserves ${total} executions; an account of ${account} must keep ${UNRESERVED_MINIMUM} unreserved (raise ${PROTECTION_CONTEXT.accountConcurrency} if the account's limit is higher)`,
    );

  const read = protection.tableMaxReadRequestUnits;
  const write = protection.tableMaxWriteRequestUnits;
  if (read !== undefined || write !== undefined) {
    (targets.table.node.defaultChild as dynamodb.CfnTable).onDemandThroughput = {
      ...(read !== undefined ? { maxReadRequestUnits: read } : {}),
      ...(write !== undefined ? { maxWriteRequestUnits: write } : {}),
    };
  }
}

function positive(key: string, value: unknown, integer = false): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0 || (integer && !Number.isSafeInteger(n)))
    throw new Error(
      `Context ${key} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(value)}`,
    );
  return n;
}

function json(key: string, value: unknown): Record<string, never> | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new Error(`Context ${key} must be a JSON object, got ${JSON.stringify(value)}`);
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error(`Context ${key} must be a JSON object, got ${JSON.stringify(value)}`);
  return parsed as Record<string, never>;
}
