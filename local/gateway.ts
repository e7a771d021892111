/**
 * The local API Gateway: turns each HTTP request into an API Gateway HTTP API event (payload format
 * 2.0, binary bodies base64 with isBase64Encoded), calls the handler export of the function that owns
 * the route (functions/route-table.ts) — the very code Lambda runs — and writes its result back.
 * Bodies also travel as bytes beside their lazy base64 text (apigw.ts `RAW_BODY`), so a megabyte batch
 * is not encoded and decoded again on the machine the benchmarks measure.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { ApiGatewayV2Event, ApiGatewayV2Result } from '../lib/http/apigw.js';
import { RAW_BODY, attachRawBody, resultFromResponse } from '../lib/http/apigw.js';
import type { Job } from '../functions/route-table.js';
import { matchRoute, pathExists } from '../functions/route-table.js';
import { canonicalRequestPath } from '../lib/http/request-path.js';
import { errorEnvelope } from '../lib/http/router.js';
import { SluiceError } from '../protocol/errors.js';
import type { GatewayAuth } from './auth/gateway-auth.js';
import { serveConsole } from './console-static.js';
import type { LocalTelemetry } from './telemetry-sink.js';

export type Handlers = Record<Job, (event: ApiGatewayV2Event) => Promise<ApiGatewayV2Result>>;

/** API Gateway's own payload limit. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const TEXT_TYPES = /^(application\/(json|.*\+json|x-www-form-urlencoded)|text\/)/i;

/**
 * `auth` (SLUICE_AUTH=iam) does what API Gateway's AWS_IAM authorizer does between matching a route
 * and invoking its function; without it every request passes, as in open local development.
 */
export const createGateway = (
  handlers: Handlers,
  log: (line: string) => void = () => {},
  auth?: GatewayAuth,
  telemetry?: LocalTelemetry,
): Server =>
  createServer((req, res) => {
    serve(handlers, req, res, auth, log, telemetry).catch((error: unknown) => {
      log(`gateway error: ${error instanceof Error ? error.stack : String(error)}`);
      if (!res.headersSent)
        send(
          res,
          resultFromResponse(errorEnvelope(new SluiceError('UNKNOWN_SERVER_ERROR', 'gateway error'))),
        );
      else res.destroy();
    });
  });

/**
 * The request target as API Gateway sees it: the raw path, never normalised (a WHATWG URL would turn
 * `\` into `/` and resolve `..`, routing `/v1/topics/a\..\b` to topic b), and the raw query string.
 */
const splitTarget = (target: string): { rawPath: string; rawQueryString: string } => {
  const q = target.indexOf('?');
  return q < 0
    ? { rawPath: target, rawQueryString: '' }
    : { rawPath: target.slice(0, q), rawQueryString: target.slice(q + 1) };
};

const serve = async (
  handlers: Handlers,
  req: IncomingMessage,
  res: ServerResponse,
  auth: GatewayAuth | undefined,
  log: (line: string) => void,
  telemetry?: LocalTelemetry,
): Promise<void> => {
  const { rawPath, rawQueryString } = splitTarget(req.url ?? '/');
  const method = (req.method ?? 'GET').toUpperCase();
  // The local stack's own endpoint (no API route lives under /_local): the EMF documents kept.
  if (telemetry && rawPath === LOCAL_METRICS_PATH)
    return serveMetrics(telemetry, method, rawQueryString, res);
  // The web console's static files (no API route lives under /console).
  if (await serveConsole(method, rawPath, res)) return;
  const body = await readBody(req);
  if (body === undefined) {
    return send(
      res,
      resultFromResponse(
        errorEnvelope(
          new SluiceError(
            'RECORD_LIST_TOO_LARGE',
            `request body is over API Gateway's ${MAX_PAYLOAD_BYTES} bytes`,
          ),
        ),
      ),
    );
  }
  // The one canonical path (lib/http/request-path.ts): routed, authorized and handed to the handler,
  // whose router checks it again (on AWS it is the last line: API Gateway routes `/x/` to `GET /x`).
  // A path that is not canonical answers here what the handler would answer: 404, nothing run.
  const canonical = canonicalRequestPath(rawPath);
  const path = 'path' in canonical ? canonical.path : undefined;
  const route = path === undefined ? undefined : matchRoute(method, path);
  if (!route || path === undefined) {
    const error =
      path !== undefined && pathExists(path)
        ? new SluiceError('METHOD_NOT_ALLOWED', `${method} is not allowed on this path`)
        : new SluiceError(
            'NOT_FOUND',
            `no route for ${method} on this path${'reason' in canonical ? `: the path ${canonical.reason}` : ''}`,
          );
    return send(res, resultFromResponse(errorEnvelope(error)));
  }
  let context: Record<string, unknown> = {};
  if (auth) {
    const decision = await auth.check({
      method,
      route,
      path,
      rawPath,
      rawQuery: rawQueryString,
      headers: flatHeaders(req),
      body,
    });
    if ('refusal' in decision) {
      // The caller only learns the code; the operator learns why (which principal, which rule).
      log(`auth: ${method} ${rawPath.slice(0, 200)} refused: ${decision.refusal.code}: ${decision.reason}`);
      return send(res, resultFromResponse(errorEnvelope(decision.refusal)));
    }
    context = decision.context;
  }
  const event = toEvent(
    req,
    method,
    { rawPath, rawQueryString },
    body,
    `${route.method} ${route.pattern}`,
    context,
  );
  send(res, await handlers[route.job](event));
};

/** Where the local gateway serves the EMF documents the functions emitted (local/telemetry-sink.ts). */
export const LOCAL_METRICS_PATH = '/_local/metrics';

/** `GET /_local/metrics?after=<seq>` → `{"last": seq, "documents": [{"seq", "document"}]}`. */
const serveMetrics = (
  telemetry: LocalTelemetry,
  method: string,
  query: string,
  res: ServerResponse,
): void => {
  const after = new URLSearchParams(query).get('after') ?? '0';
  const error =
    method !== 'GET'
      ? new SluiceError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${LOCAL_METRICS_PATH}; use GET`)
      : /^\d{1,15}$/.test(after)
        ? undefined
        : new SluiceError('INVALID_REQUEST', 'after must be a sequence number (a non-negative integer)');
  if (error) return send(res, resultFromResponse(errorEnvelope(error)));
  const documents = telemetry.read(Number(after));
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ last: telemetry.last(), documents }));
};

const toEvent = (
  req: IncomingMessage,
  method: string,
  target: { rawPath: string; rawQueryString: string },
  body: Buffer,
  routeKey: string,
  context: Record<string, unknown> = {},
): ApiGatewayV2Event => {
  const headers = flatHeaders(req);
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(target.rawQueryString))
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  const text = TEXT_TYPES.test(headers['content-type'] ?? '');
  const now = Date.now();
  const event: ApiGatewayV2Event = {
    version: '2.0',
    routeKey,
    rawPath: target.rawPath,
    rawQueryString: target.rawQueryString,
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    requestContext: {
      http: {
        method,
        path: target.rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
      ...context,
    },
    isBase64Encoded: body.length > 0 && !text,
  };
  // The handler runs in this process: it gets the bytes, and the event's body text only if it asks.
  return body.length > 0 ? attachRawBody(event, body, text ? 'utf8' : 'base64') : event;
};

const flatHeaders = (req: IncomingMessage): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  return headers;
};

const readBody = async (req: IncomingMessage): Promise<Buffer | undefined> => {
  const declared = Number(req.headers['content-length']);
  if (declared > MAX_PAYLOAD_BYTES) {
    // Read to the end before answering: an answer ahead of an unread body closes the connection.
    for await (const chunk of req) void chunk;
    return undefined;
  }
  // With a Content-Length the chunks go straight into one buffer: no second copy of a 1 MiB body.
  if (Number.isSafeInteger(declared) && declared >= 0) {
    const body = Buffer.allocUnsafe(declared);
    let size = 0;
    // Node's parser frames the body by Content-Length, so it never brings more than declared.
    for await (const chunk of req) size += (chunk as Buffer).copy(body, size);
    return body.subarray(0, size);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    // Past the limit the rest is read and dropped, not left unread: leaving the loop would destroy
    // the request and leave a keep-alive connection that never answers its next request.
    if (size <= MAX_PAYLOAD_BYTES) chunks.push(chunk as Buffer);
  }
  return size > MAX_PAYLOAD_BYTES ? undefined : Buffer.concat(chunks);
};

const send = (res: ServerResponse, result: ApiGatewayV2Result): void => {
  const raw = result[RAW_BODY];
  const body =
    raw !== undefined
      ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
      : result.body === undefined
        ? undefined
        : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  res.writeHead(result.statusCode, {
    ...(result.headers ?? {}),
    ...(body ? { 'content-length': String(body.length) } : {}),
  });
  res.end(body);
};
