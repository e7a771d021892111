/**
 * The local API Gateway: turns each HTTP request into an API Gateway HTTP API event (payload format
 * 2.0, binary bodies base64 with isBase64Encoded), calls the handler export of the function that owns
 * the route (lib/http/route-table.ts) — the very code Lambda runs — and writes its result back.
 * Bodies also travel as bytes beside their lazy base64 text (apigw.ts `RAW_BODY`), so a megabyte batch
 * is not encoded and decoded again on the machine the benchmarks measure.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { ApiGatewayV2Event, ApiGatewayV2Result } from '../lib/http/apigw.js';
import { RAW_BODY, attachRawBody, resultFromResponse } from '../lib/http/apigw.js';
import type { Job } from '../lib/http/route-table.js';
import { matchRoute, pathExists } from '../lib/http/route-table.js';
import { errorEnvelope } from '../lib/http/router.js';
import { SluiceError } from '../lib/errors.js';
import type { GatewayAuth } from './auth/gateway-auth.js';

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
): Server =>
  createServer((req, res) => {
    serve(handlers, req, res, auth, log).catch((error: unknown) => {
      log(`gateway error: ${error instanceof Error ? error.stack : String(error)}`);
      if (!res.headersSent)
        send(
          res,
          resultFromResponse(errorEnvelope(new SluiceError('UNKNOWN_SERVER_ERROR', 'gateway error'))),
        );
      else res.destroy();
    });
  });

const serve = async (
  handlers: Handlers,
  req: IncomingMessage,
  res: ServerResponse,
  auth: GatewayAuth | undefined,
  log: (line: string) => void,
): Promise<void> => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const method = (req.method ?? 'GET').toUpperCase();
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
  const route = matchRoute(method, url.pathname);
  if (!route) {
    const error = pathExists(url.pathname)
      ? new SluiceError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${url.pathname}`)
      : new SluiceError('NOT_FOUND', `no route for ${method} ${url.pathname}`);
    return send(res, resultFromResponse(errorEnvelope(error)));
  }
  let context: Record<string, unknown> = {};
  if (auth) {
    const target = req.url ?? '/';
    const query = target.indexOf('?');
    const decision = await auth.check({
      method,
      route,
      path: url.pathname,
      rawPath: query < 0 ? target : target.slice(0, query),
      rawQuery: query < 0 ? '' : target.slice(query + 1),
      headers: flatHeaders(req),
      body,
    });
    if ('refusal' in decision) {
      // The caller only learns the code; the operator learns why (which principal, which rule).
      log(`auth: ${method} ${url.pathname} refused: ${decision.refusal.code}: ${decision.reason}`);
      return send(res, resultFromResponse(errorEnvelope(decision.refusal)));
    }
    context = decision.context;
  }
  const event = toEvent(req, method, url, body, `${route.method} ${route.pattern}`, context);
  send(res, await handlers[route.job](event));
};

const toEvent = (
  req: IncomingMessage,
  method: string,
  url: URL,
  body: Buffer,
  routeKey: string,
  context: Record<string, unknown> = {},
): ApiGatewayV2Event => {
  const headers = flatHeaders(req);
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams)
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  const text = TEXT_TYPES.test(headers['content-type'] ?? '');
  const now = Date.now();
  const event: ApiGatewayV2Event = {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    requestContext: {
      http: {
        method,
        path: url.pathname,
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
    req.resume();
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
    if (size > MAX_PAYLOAD_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
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
