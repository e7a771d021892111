/**
 * An emulator of AWS Lambda's Invoke API for tests, as s3rver is for S3: LocalStack is not available
 * here, so this server answers `POST /2015-03-31/functions/{name}/invocations` the way Lambda does and
 * runs real handler modules, each function in execution environments of its own (worker threads with
 * the function's environment variables, reused while warm, one event at a time, more started for
 * concurrent invocations up to the reserved concurrency).
 *
 * What it reproduces: RequestResponse (200, the handler's JSON result, `X-Amz-Executed-Version`),
 * Event (202, run in the background, retried twice on error), DryRun (204); a thrown error or a
 * rejected promise as `X-Amz-Function-Error: Unhandled` with Lambda's error object; the payload limits
 * (6 MB synchronous and response, 1 MB asynchronous: 413 RequestTooLargeException,
 * Function.ResponseSizeTooLarge); a body that is not JSON (400 InvalidRequestContentException); an
 * unknown function (404 ResourceNotFoundException); the function timeout (the environment is killed,
 * Sandbox.Timedout); a crashed environment (Runtime.ExitError); throttling beyond the reserved
 * concurrency (429 TooManyRequestsException). It does not check signatures, and it has no versions,
 * aliases or destinations: a qualifier is accepted and ignored.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

export interface EmulatedFunction {
  name: string;
  /** Path of the handler module (TypeScript or JavaScript). */
  module: string;
  /** The exported handler (default `handler`). */
  exportName?: string;
  environment?: Record<string, string>;
  /** Default 3000 ms, Lambda's default timeout. */
  timeoutMs?: number;
  /** Most environments at once; an invocation beyond them is throttled (429). */
  reservedConcurrency?: number;
}

export interface InvocationRecord {
  functionName: string;
  invocationType: string;
  requestId: string;
  /** The status of the answer (202 for Event, whatever the function did later). */
  status: number;
  functionError?: string;
  payloadBytes: number;
}

export interface LambdaEmulator {
  endpoint: string;
  region: string;
  invocations: InvocationRecord[];
  /** Settles once every background (Event) invocation has finished. */
  idle(): Promise<void>;
  /** Execution environments of a function running an event now. */
  busy(functionName: string): number;
  stop(): Promise<void>;
}

export const SYNC_PAYLOAD_LIMIT = 6_291_456;
export const ASYNC_PAYLOAD_LIMIT = 1_048_576;
const RUNTIME = new URL('./lambda-runtime.mjs', import.meta.url);

interface Outcome {
  functionError?: string;
  body: string;
}

interface Environment {
  worker: Worker;
  ready: Promise<void>;
  busy: boolean;
}

class FunctionRuntime {
  private readonly environments: Environment[] = [];

  constructor(
    private readonly fn: EmulatedFunction,
    private readonly arn: string,
  ) {}

  /** An idle environment, a new one, or undefined when the reserved concurrency is used up. */
  private take(): Environment | undefined {
    const idle = this.environments.find((e) => !e.busy);
    if (idle) return idle;
    if (this.environments.length >= (this.fn.reservedConcurrency ?? Infinity)) return undefined;
    const worker = new Worker(RUNTIME, {
      env: { ...this.fn.environment, AWS_LAMBDA_FUNCTION_NAME: this.fn.name },
      workerData: {
        handlerUrl: pathToFileURL(this.fn.module).href,
        exportName: this.fn.exportName ?? 'handler',
        handlerName: `${this.fn.module}.${this.fn.exportName ?? 'handler'}`,
        functionName: this.fn.name,
        functionArn: this.arn,
        memoryMb: 128,
      },
    });
    const ready = new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    });
    const env: Environment = { worker, ready, busy: false };
    // An idle environment that dies is dropped; a busy one is answered by invoke's own listeners.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      if (!env.busy && this.environments.includes(env))
        this.environments.splice(this.environments.indexOf(env), 1);
    });
    this.environments.push(env);
    return env;
  }

  private discard(env: Environment): void {
    if (this.environments.includes(env)) this.environments.splice(this.environments.indexOf(env), 1);
    void env.worker.terminate();
  }

  /** Runs one event; undefined when throttled. */
  async invoke(requestId: string, body: string): Promise<Outcome | undefined> {
    const env = this.take();
    if (!env) return undefined;
    env.busy = true;
    const timeoutMs = this.fn.timeoutMs ?? 3_000;
    const crashed = (detail: string): Outcome => {
      this.discard(env);
      return unhandled(
        'Runtime.ExitError',
        `RequestId: ${requestId} Error: Runtime exited with error: ${detail}`,
      );
    };
    try {
      await env.ready;
    } catch (error) {
      return crashed((error as Error).message);
    }
    return new Promise<Outcome>((resolve) => {
      const cleanup = () => {
        clearTimeout(timer);
        env.worker.off('message', onMessage);
        env.worker.off('error', onError);
        env.worker.off('exit', onExit);
      };
      const onMessage = (m: { requestId: string; ok: boolean; body?: string; error?: unknown }) => {
        if (m.requestId !== requestId) return;
        cleanup();
        env.busy = false;
        if (!m.ok) return resolve({ functionError: 'Unhandled', body: JSON.stringify(m.error) });
        const out = m.body ?? 'null';
        if (Buffer.byteLength(out) > SYNC_PAYLOAD_LIMIT)
          return resolve(
            unhandled(
              'Function.ResponseSizeTooLarge',
              `Response payload size exceeded maximum allowed payload size (${SYNC_PAYLOAD_LIMIT} bytes).`,
            ),
          );
        resolve({ body: out });
      };
      const onError = (error: Error) => {
        cleanup();
        resolve(crashed(error.message));
      };
      const onExit = (code: number) => {
        cleanup();
        resolve(crashed(`exit status ${code}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        this.discard(env);
        resolve(
          unhandled(
            'Sandbox.Timedout',
            `RequestId: ${requestId} Error: Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`,
          ),
        );
      }, timeoutMs);
      env.worker.on('message', onMessage);
      env.worker.once('error', onError);
      env.worker.once('exit', onExit);
      env.worker.postMessage({ requestId, body, deadline: Date.now() + timeoutMs });
    });
  }

  get busy(): number {
    return this.environments.filter((e) => e.busy).length;
  }

  async stop(): Promise<void> {
    await Promise.all(this.environments.splice(0).map((e) => e.worker.terminate()));
  }
}

const unhandled = (errorType: string, errorMessage: string): Outcome => ({
  functionError: 'Unhandled',
  body: JSON.stringify({ errorType, errorMessage }),
});

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

/** `name`, `name:qualifier`, `123456789012:function:name` or a full ARN → the function's name. */
const functionNameOf = (raw: string): string => {
  const parts = raw.split(':');
  const at = parts.indexOf('function');
  if (at >= 0) return parts[at + 1] ?? '';
  return parts[0] ?? '';
};

export const startLambdaEmulator = async (
  functions: readonly EmulatedFunction[],
  options: { region?: string; accountId?: string } = {},
): Promise<LambdaEmulator> => {
  const region = options.region ?? 'us-east-1';
  const account = options.accountId ?? '000000000000';
  const arnOf = (name: string) => `arn:aws:lambda:${region}:${account}:function:${name}`;
  const runtimes = new Map(functions.map((f) => [f.name, new FunctionRuntime(f, arnOf(f.name))]));
  const invocations: InvocationRecord[] = [];
  const background = new Set<Promise<void>>();

  const error = (res: ServerResponse, status: number, type: string, message: string, extra = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
    res.end(JSON.stringify({ Type: 'User', message, ...extra }));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(url.pathname);
    const body = await readBody(req);
    if (req.method !== 'POST' || !match)
      return error(res, 404, 'UnknownOperationException', `Unknown operation ${req.method} ${url.pathname}`);
    const name = functionNameOf(decodeURIComponent(match[1]!));
    const runtime = runtimes.get(name);
    const type = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    const requestId = randomUUID();
    const record = (status: number, functionError?: string) =>
      invocations.push({
        functionName: name,
        invocationType: type,
        requestId,
        status,
        ...(functionError ? { functionError } : {}),
        payloadBytes: body.length,
      });
    if (!runtime) return error(res, 404, 'ResourceNotFoundException', `Function not found: ${arnOf(name)}`);
    const limit = type === 'Event' ? ASYNC_PAYLOAD_LIMIT : SYNC_PAYLOAD_LIMIT;
    if (body.length > limit) {
      record(413);
      return error(
        res,
        413,
        'RequestTooLargeException',
        `Request must be smaller than ${limit} bytes for the InvokeFunction operation`,
      );
    }
    const text = body.length === 0 ? '{}' : body.toString('utf8');
    try {
      JSON.parse(text);
    } catch (e) {
      record(400);
      return error(
        res,
        400,
        'InvalidRequestContentException',
        `Could not parse request body into json: ${(e as Error).message}`,
      );
    }
    if (type === 'DryRun') {
      record(204);
      res.writeHead(204).end();
      return;
    }
    if (type === 'Event') {
      record(202);
      res.writeHead(202, { 'x-amzn-requestid': requestId }).end();
      // Lambda retries a failed asynchronous invocation twice.
      const run = (async () => {
        for (let attempt = 0; attempt < 3; attempt++) {
          const outcome = await runtime.invoke(requestId, text);
          if (outcome && !outcome.functionError) return;
        }
      })();
      background.add(run);
      void run.finally(() => background.delete(run));
      return;
    }
    const outcome = await runtime.invoke(requestId, text);
    if (!outcome) {
      record(429);
      return error(res, 429, 'TooManyRequestsException', 'Rate Exceeded.', {
        Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded',
      });
    }
    record(200, outcome.functionError);
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-amzn-requestid': requestId,
      'x-amz-executed-version': '$LATEST',
      ...(outcome.functionError ? { 'x-amz-function-error': outcome.functionError } : {}),
    });
    res.end(outcome.body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) error(res, 500, 'ServiceException', (e as Error).message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region,
    invocations,
    busy: (name) => runtimes.get(name)?.busy ?? 0,
    idle: async () => {
      while (background.size > 0) await Promise.all([...background]);
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...runtimes.values()].map((r) => r.stop()));
    },
  };
};
