/**
 * X-Ray tracing for the functions, written to the X-Ray daemon directly: each invocation a subsegment
 * (`## <function>`, annotated with the Kafka resource) of the segment Lambda opens for it, and each
 * AWS SDK call a subsegment of that one (namespace `aws`: service, operation, region, request id,
 * retries, HTTP status, error/throttle/fault flags and the failure's cause), as Powertools' Tracer
 * recorded them before. Why not the Tracer: it loads aws-xray-sdk-core and cls-hooked, ~95 KiB of
 * every bundle (the produce bundle's budget is 450 KiB; issue 28), to produce what these ~150 lines
 * produce. See docs/observability.md.
 *
 * The daemon's protocol: one UDP datagram per document, `{"format": "json", "version": 1}\n` and the
 * segment document's JSON, to AWS_XRAY_DAEMON_ADDRESS (`host:port`, or `udp:host:port tcp:host:port`).
 * The trace id and the parent come from the invocation's trace header (`_X_AMZN_TRACE_ID`, or the
 * runtime's InvokeStore); an unsampled invocation (`Sampled=0`) sends nothing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';

export interface TraceHeader {
  root: string;
  parent: string;
  sampled: boolean;
}

/** `Root=1-…;Parent=…;Sampled=1` → its parts; undefined when it names no root or parent. */
export const parseTraceHeader = (value: string | undefined): TraceHeader | undefined => {
  if (!value) return undefined;
  const fields = new Map(
    value.split(';').map((f) => {
      const at = f.indexOf('=');
      return [f.slice(0, at).trim(), f.slice(at + 1).trim()] as const;
    }),
  );
  const root = fields.get('Root');
  const parent = fields.get('Parent');
  if (!root || !parent) return undefined;
  return { root, parent, sampled: fields.get('Sampled') === '1' };
};

/** `udp:127.0.0.1:2000 tcp:127.0.0.1:2000` or `127.0.0.1:2000` → the UDP host and port. */
export const daemonAddressOf = (value: string): { host: string; port: number } => {
  const udp = value.split(/\s+/).find((a) => a.startsWith('udp:')) ?? value.split(/\s+/)[0]!;
  const [host, port] = udp.replace(/^udp:/, '').split(':');
  if (!host || !port || !Number.isInteger(Number(port)))
    throw new Error(`bad X-Ray daemon address: ${value}`);
  return { host, port: Number(port) };
};

const newId = () => randomBytes(8).toString('hex');
const seconds = (ms: number) => ms / 1000;

/** A subsegment document as the daemon takes it (sent on its own: `type` and `parent_id` set). */
export interface SubsegmentDocument {
  name: string;
  id: string;
  trace_id: string;
  parent_id: string;
  type: 'subsegment';
  start_time: number;
  end_time: number;
  namespace?: 'aws' | 'remote';
  annotations?: Record<string, string | number | boolean>;
  aws?: Record<string, unknown>;
  http?: { response: { status: number } };
  error?: true;
  throttle?: true;
  fault?: true;
  cause?: { exceptions: { id: string; type: string; message: string; remote: boolean }[] };
}

interface Current {
  traceId: string;
  id: string;
}

/** The minimal shape of an AWS SDK v3 client this module instruments. */
interface SdkClient {
  config: { region?: unknown };
  middlewareStack: {
    add(
      middleware: (
        next: (args: SdkArgs) => Promise<SdkOutput>,
        context: SdkContext,
      ) => (args: SdkArgs) => Promise<SdkOutput>,
      options: { step: 'build'; name: string; priority?: 'high' | 'normal' | 'low' },
    ): void;
  };
}
interface SdkArgs {
  input: Record<string, unknown>;
  request?: unknown;
}
interface SdkOutput {
  output: { $metadata?: SdkMetadata };
}
interface SdkMetadata {
  httpStatusCode?: number;
  requestId?: string;
  attempts?: number;
}
interface SdkContext {
  clientName?: string;
  commandName?: string;
}

export class XRayTracer {
  private readonly current = new AsyncLocalStorage<Current>();
  private socket: Socket | undefined;
  private readonly daemon: { host: string; port: number };

  constructor(
    daemonAddress: string,
    /** The invocation's trace header: the runtime's InvokeStore, else _X_AMZN_TRACE_ID. */
    private readonly traceHeader: () => string | undefined = () =>
      (
        globalThis as { awslambda?: { InvokeStore?: { getXRayTraceId(): string | undefined } } }
      ).awslambda?.InvokeStore?.getXRayTraceId() ?? process.env['_X_AMZN_TRACE_ID'],
  ) {
    this.daemon = daemonAddressOf(daemonAddress);
  }

  /**
   * Runs one invocation inside its subsegment `name` (when the invocation is sampled); `annotations`
   * is read when it ends, so what the invocation learns on the way (the topic) is recorded.
   */
  async run<T>(
    name: string,
    annotations: () => Record<string, string | number | undefined>,
    invocation: () => Promise<T>,
  ): Promise<T> {
    const header = parseTraceHeader(this.traceHeader());
    if (!header?.sampled) return invocation();
    const segment = { traceId: header.root, id: newId() };
    const start = Date.now();
    let failed = false;
    try {
      return await this.current.run(segment, invocation);
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      const kept = Object.entries(annotations()).filter(
        (e): e is [string, string | number] => e[1] !== undefined,
      );
      this.send({
        name,
        id: segment.id,
        trace_id: segment.traceId,
        parent_id: header.parent,
        type: 'subsegment',
        start_time: seconds(start),
        end_time: seconds(Date.now()),
        ...(kept.length > 0 ? { annotations: Object.fromEntries(kept) } : {}),
        ...(failed ? { fault: true as const } : {}),
      });
    }
  }

  /** Adds the middleware that makes each of the client's calls a subsegment; the client back. */
  instrument<T>(client: T): T {
    const sdk = client as unknown as SdkClient;
    sdk.middlewareStack.add(
      (next, context) => async (args) => {
        const parent = this.current.getStore();
        if (!parent) return next(args);
        const id = newId();
        setTraceHeader(args.request, `Root=${parent.traceId};Parent=${id};Sampled=1`);
        const start = Date.now();
        let metadata: SdkMetadata | undefined;
        let failure: { name?: string; message?: string; $metadata?: SdkMetadata } | undefined;
        try {
          const result = await next(args);
          metadata = result.output.$metadata;
          return result;
        } catch (error) {
          failure = (typeof error === 'object' && error !== null ? error : {}) as typeof failure;
          metadata = failure!.$metadata;
          throw error;
        } finally {
          const region = await regionOf(sdk);
          const status = metadata?.httpStatusCode;
          const table = args.input['TableName'];
          this.send({
            name: (context.clientName ?? 'AWS').replace(/Client$/, ''),
            id,
            trace_id: parent.traceId,
            parent_id: parent.id,
            type: 'subsegment',
            namespace: 'aws',
            start_time: seconds(start),
            end_time: seconds(Date.now()),
            aws: {
              operation: (context.commandName ?? '').replace(/Command$/, ''),
              ...(region ? { region } : {}),
              ...(metadata?.requestId ? { request_id: metadata.requestId } : {}),
              retries: Math.max(0, (metadata?.attempts ?? 1) - 1),
              ...(typeof table === 'string' ? { table_name: table } : {}),
            },
            ...(status === undefined ? {} : { http: { response: { status } } }),
            ...(failure ? flagsOf(status, failure.name) : {}),
            ...(failure
              ? {
                  cause: {
                    exceptions: [
                      {
                        id: newId(),
                        type: failure.name ?? 'Error',
                        message: failure.message ?? '',
                        remote: status !== undefined,
                      },
                    ],
                  },
                }
              : {}),
          });
        }
      },
      { step: 'build', name: 'SluiceXRaySubsegment', priority: 'low' },
    );
    return client;
  }

  /** One document to the daemon; a lost datagram loses a trace, never a request. */
  send(document: SubsegmentDocument): void {
    if (!this.socket) {
      this.socket = createSocket('udp4');
      this.socket.on('error', () => {});
      this.socket.unref();
    }
    const message = Buffer.from(`{"format": "json", "version": 1}\n${JSON.stringify(document)}`);
    this.socket.send(message, this.daemon.port, this.daemon.host, () => {});
  }

  /** Closes the socket (tests; Lambda freezes and ends the process itself). */
  close(): void {
    this.socket?.close();
    this.socket = undefined;
  }
}

const THROTTLING = new Set([
  'ThrottlingException',
  'Throttling',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'SlowDown',
]);

/**
 * X-Ray's flags for a failed call: a 4xx is an error, a 5xx or no answer at all a fault, and a
 * throttling answer (429, or a throttling error code such as DynamoDB's 400 or S3's 503) also throttle.
 */
export const flagsOf = (
  status: number | undefined,
  name = '',
): Pick<SubsegmentDocument, 'error' | 'throttle' | 'fault'> => ({
  ...(status !== undefined && status >= 400 && status < 500
    ? { error: true as const }
    : { fault: true as const }),
  ...(status === 429 || THROTTLING.has(name) ? { throttle: true as const } : {}),
});

const setTraceHeader = (request: unknown, value: string): void => {
  const headers = (request as { headers?: Record<string, string> } | undefined)?.headers;
  if (headers) headers['x-amzn-trace-id'] = value;
};

const regionOf = async (client: SdkClient): Promise<string | undefined> => {
  const region = client.config.region;
  try {
    const value: unknown = typeof region === 'function' ? await (region as () => unknown)() : region;
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
};
