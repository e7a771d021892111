/**
 * API Gateway HTTP API (payload format 2.0) ⇄ Sluice's HTTP model. The only place that knows the
 * event's shape; structural types so lib stays free of Lambda packages.
 */
import type { HttpRequest, HttpResponse } from './types.js';

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
}

export interface ApiGatewayV2Result {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
}

export const requestFromEvent = (event: ApiGatewayV2Event): Omit<HttpRequest, 'params'> => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {}))
    if (value !== undefined) headers[name.toLowerCase()] = value;
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(event.rawQueryString ?? '')) query[name] ??= value;
  const body =
    event.body === undefined || event.body === null
      ? new Uint8Array(0)
      : // A Buffer is a Uint8Array: no second copy of a body that may be megabytes.
        Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  return {
    method: event.requestContext.http.method.toUpperCase(),
    path: event.rawPath,
    query,
    headers,
    body,
  };
};

export const resultFromResponse = (response: HttpResponse): ApiGatewayV2Result => {
  const headers = { ...(response.headers ?? {}) };
  if (response.body === undefined) return { statusCode: response.status, headers };
  if (response.body instanceof Uint8Array) {
    return {
      statusCode: response.status,
      headers: { 'content-type': 'application/octet-stream', ...headers },
      body: Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength).toString(
        'base64',
      ),
      isBase64Encoded: true,
    };
  }
  return {
    statusCode: response.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(response.body),
    isBase64Encoded: false,
  };
};
