/**
 * The Telemetry port (lib/ports/telemetry.ts) on Powertools for AWS Lambda: log lines through its
 * Logger (structured JSON carrying the request id and the Kafka resource), metrics through its
 * Metrics as CloudWatch Embedded Metric Format (log lines CloudWatch turns into metrics: no
 * PutMetricData call on the request path), and, when the function runs with active X-Ray tracing,
 * X-Ray subsegments written to the daemon (functions/xray.ts: the invocation, and every S3 and
 * DynamoDB call as a subsegment of it).
 *
 * Each invocation runs in a scope (AsyncLocalStorage): its resource keys go on every line it logs and
 * its metric points are buffered and written once at its end, one EMF document per distinct set of
 * dimension values (EMF gives each dimension one value per document). Scopes keep the concurrent
 * requests of the local stack apart; Lambda runs one at a time.
 *
 * On Lambda the lines go to stdout as Powertools writes them. The local stack gives a sink instead
 * (local/telemetry-sink.ts): the same log records printed readably, and the same EMF documents kept
 * for reading back.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogItem } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { LogLevel, ResourceKeys, Telemetry } from '../lib/ports/telemetry.js';
import type { DimensionsOf, MetricName } from '../lib/telemetry/registry.js';
import { METRICS, METRICS_NAMESPACE, METRICS_SERVICE } from '../lib/telemetry/registry.js';
import { XRayTracer } from './xray.js';

/** Where the local stack sends what Lambda writes to stdout. */
export interface TelemetrySink {
  /** One structured log record, as Powertools' Logger would print it. */
  log(record: Record<string, unknown>): void;
  /** One EMF document, as Powertools' Metrics serialized it (one line of JSON). */
  emf(line: string): void;
}

/** The keys of one invocation's lines: the request id, the function, the Kafka resource. */
export interface InvocationKeys extends ResourceKeys {
  /** API Gateway's request id (the one a client sees in its answer's headers). */
  requestId?: string;
  /** Lambda's request id of the invocation. */
  lambdaRequestId?: string;
  function?: string;
}

interface Point {
  name: MetricName;
  value: number;
  dimensions: Readonly<Record<string, string | number>>;
}

interface Scope {
  keys: InvocationKeys;
  points: Point[];
}

/** Powertools' Logger, printing through a sink when one is given (its documented extension point). */
class SinkLogger extends Logger {
  constructor(
    options: ConstructorParameters<typeof Logger>[0],
    private readonly sink: TelemetrySink,
  ) {
    super(options);
  }

  protected override printLog(_logLevel: number, log: LogItem): void {
    log.prepareForPrint();
    this.sink.log(log.getAttributes() as Record<string, unknown>);
  }
}

/** Powertools' Metrics, writing its EMF documents (including the ones it flushes early) to a sink. */
class SinkMetrics extends Metrics {
  constructor(
    options: ConstructorParameters<typeof Metrics>[0],
    private readonly sink: TelemetrySink,
  ) {
    super(options);
  }

  override publishStoredMetrics(): this {
    try {
      if (this.hasStoredMetrics()) this.sink.emf(JSON.stringify(this.serializeMetrics()));
    } finally {
      this.clearMetrics();
      this.clearDimensions();
      this.clearMetadata();
    }
    return this;
  }
}

/**
 * X-Ray is on when Lambda runs the function with active tracing (it sets the daemon's address) and
 * POWERTOOLS_TRACE_ENABLED does not turn it off (functions/xray.ts; the setting keeps its Powertools
 * name, as the CDK app and operators know it).
 */
const tracingActive = (): boolean =>
  process.env['AWS_XRAY_DAEMON_ADDRESS'] !== undefined &&
  process.env['AWS_LAMBDA_FUNCTION_NAME'] !== undefined &&
  process.env['POWERTOOLS_TRACE_ENABLED'] !== 'false';

/** Made once per container, before the first invocation builds its clients. */
const tracer = tracingActive() ? new XRayTracer(process.env['AWS_XRAY_DAEMON_ADDRESS']!) : undefined;

/** The invocation subsegment's annotations: the Kafka resource it served. */
const annotationsOf = (keys: InvocationKeys) => ({
  API: keys.API,
  topic: keys.topic,
  partition: keys.partition,
  group: keys.group,
  connector: keys.connector,
});

const LOG_METHODS = { debug: 'debug', info: 'info', warn: 'warn', error: 'error' } as const;

export class PowertoolsTelemetry implements Telemetry {
  private readonly logger: Logger;
  private readonly metrics: Metrics;
  private readonly scopes = new AsyncLocalStorage<Scope>();

  constructor(options: { sink?: TelemetrySink; logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' } = {}) {
    const loggerOptions = {
      serviceName: METRICS_SERVICE,
      logLevel: options.logLevel ?? (process.env['POWERTOOLS_LOG_LEVEL'] as 'INFO' | undefined) ?? 'INFO',
    };
    const metricsOptions = { namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE };
    this.logger = options.sink ? new SinkLogger(loggerOptions, options.sink) : new Logger(loggerOptions);
    this.metrics = options.sink ? new SinkMetrics(metricsOptions, options.sink) : new Metrics(metricsOptions);
  }

  /** The S3 or DynamoDB client, with its calls as X-Ray subsegments when tracing is active. */
  traced<T>(client: T): T {
    return tracer ? tracer.instrument(client) : client;
  }

  /**
   * Runs one invocation in its own scope: its lines carry `keys` (and whatever `annotate` adds), its
   * metric points are written when it ends, whether it returned or threw.
   */
  async run<T>(keys: InvocationKeys, invocation: () => Promise<T>): Promise<T> {
    const scope: Scope = { keys: { ...keys }, points: [] };
    try {
      const inScope = () => this.scopes.run(scope, invocation);
      return await (tracer
        ? tracer.run(`## ${keys.function ?? 'invocation'}`, () => annotationsOf(scope.keys), inScope)
        : inScope());
    } finally {
      this.publish(scope.points);
    }
  }

  log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
    const keys = this.scopes.getStore()?.keys ?? {};
    this.logger[LOG_METHODS[level]](message, { ...keys, ...fields });
  }

  metric<N extends MetricName>(name: N, value: number, dimensions: DimensionsOf<N>): void {
    const point: Point = { name, value, dimensions };
    const scope = this.scopes.getStore();
    // Outside an invocation (a timer of the local stack) a point is written at once.
    if (scope) scope.points.push(point);
    else this.publish([point]);
  }

  annotate(keys: ResourceKeys): void {
    const scope = this.scopes.getStore();
    if (scope) Object.assign(scope.keys, keys);
  }

  /**
   * One EMF document per distinct dimension values. Counters are summed within a document (their
   * statistic is Sum); timings keep every value, at most 100 per document as EMF allows.
   */
  private publish(points: readonly Point[]): void {
    const groups = new Map<string, Point[]>();
    for (const point of points) {
      const key = JSON.stringify(Object.entries(point.dimensions).sort(([a], [b]) => (a < b ? -1 : 1)));
      const group = groups.get(key);
      if (group) group.push(point);
      else groups.set(key, [point]);
    }
    for (const group of groups.values()) {
      const dimensions = Object.fromEntries(
        Object.entries(group[0]!.dimensions).map(([k, v]) => [k, String(v)]),
      );
      const values = new Map<MetricName, number[]>();
      for (const { name, value } of group) {
        const list = values.get(name) ?? [];
        if (METRICS[name].statistic === 'Sum' && list.length > 0) list[0]! += value;
        else list.push(value);
        values.set(name, list);
      }
      for (let chunk = 0; ; chunk++) {
        const slice = [...values].filter(([, list]) => list.length > chunk * MAX_VALUES);
        if (slice.length === 0) break;
        if (Object.keys(dimensions).length > 0) this.metrics.addDimensions(dimensions);
        for (const [name, list] of slice)
          for (const value of list.slice(chunk * MAX_VALUES, (chunk + 1) * MAX_VALUES))
            this.metrics.addMetric(name, METRICS[name].unit, value);
        this.metrics.publishStoredMetrics();
      }
    }
  }
}

/** Values of one metric per EMF document, one short of the 100 at which Powertools flushes early. */
const MAX_VALUES = 99;
