/**
 * API Gateway HTTP API (payload format 2.0) ⇄ Sluice's HTTP model. The only place that knows the
 * event's shape; structural types so lib stays free of Lambda packages.
 */
import type { CallerContext, HttpRequest, HttpResponse } from './types.js';

/**
 * A binary body's bytes beside its base64 text, for a gateway that runs the handler in its own process
 * (local/gateway.ts): it hands over the bytes it holds, and the base64 `body` is only computed if
 * something reads it. A megabyte batch is then not encoded and decoded again on the same two cores,
 * which API Gateway and Lambda do on their own machines. Events from Lambda never carry it.
 */
export const RAW_BODY: unique symbol = Symbol.for('sluice.apigw.rawBody');

/**
 * Defines `RAW_BODY` and a lazy `body` on `target`: the bytes as base64 (or UTF-8 text), computed on
 * first read. The getter is enumerable, so JSON.stringify (Lambda's runtime) still writes the body.
 */
export const attachRawBody = <T extends object>(
  target: T,
  bytes: Uint8Array,
  encoding: 'base64' | 'utf8' = 'base64',
): T => {
  let text: string | undefined;
  Object.defineProperty(target, 'body', {
    enumerable: true,
    configurable: true,
    get: () => (text ??= Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(encoding)),
  });
  Object.defineProperty(target, RAW_BODY, { value: bytes, enumerable: false });
  return target;
};

export interface ApiGatewayV2Event {
  version: '2.0';
  routeKey: string;
  rawPath: string;
  rawQueryString: string;
  headers: Record<string, string | undefined>;
  queryStringParameters?: Record<string, string | undefined>;
  pathParameters?: Record<string, string | undefined>;
  requestContext: {
    http: { method: string; path: string; protocol?: string; sourceIp?: string; userAgent?: string };
    requestId: string;
    timeEpoch?: number;
    [other: string]: unknown;
  };
  body?: string;
  isBase64Encoded: boolean;
  cookies?: string[];
  [RAW_BODY]?: Uint8Array;
}

export interface ApiGatewayV2Result {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
  [RAW_BODY]?: Uint8Array;
}

export const requestFromEvent = (event: ApiGatewayV2Event): Omit<HttpRequest, 'params'> => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {}))
    if (value !== undefined) headers[name.toLowerCase()] = value;
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(event.rawQueryString ?? '')) query[name] ??= value;
  const body =
    event[RAW_BODY] ??
    (event.body === undefined || event.body === null
      ? new Uint8Array(0)
      : // A Buffer is a Uint8Array: no second copy of a body that may be megabytes.
        Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8'));
  const caller = callerFromContext(event.requestContext);
  return {
    method: event.requestContext.http.method.toUpperCase(),
    path: event.rawPath,
    query,
    headers,
    body,
    ...(caller ? { caller } : {}),
  };
};

/** The IAM authorizer's identity (routes with AWS_IAM carry it), undefined on public routes. */
const callerFromContext = (context: ApiGatewayV2Event['requestContext']): CallerContext | undefined => {
  const authorizer = context['authorizer'] as { iam?: { userArn?: unknown } } | undefined;
  const principalArn = authorizer?.iam?.userArn;
  if (typeof principalArn !== 'string' || principalArn === '') return undefined;
  const text = (key: string): string => (typeof context[key] === 'string' ? (context[key] as string) : '');
  return {
    principalArn,
    accountId: text('accountId'),
    apiId: text('apiId'),
    stage: text('stage') || '$default',
  };
};

export const resultFromResponse = (response: HttpResponse): ApiGatewayV2Result => {
  const headers = { ...(response.headers ?? {}) };
  if (response.body === undefined) return { statusCode: response.status, headers };
  if (response.body instanceof Uint8Array) {
    const result: ApiGatewayV2Result = {
      statusCode: response.status,
      headers: { 'content-type': 'application/octet-stream', ...headers },
      isBase64Encoded: true,
    };
    return attachRawBody(result, response.body);
  }
  return {
    statusCode: response.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(response.body),
    isBase64Encoded: false,
  };
};
