/**
 * Sluice's HTTP model: what the router and route handlers see, independent of where they run
 * (API Gateway v2 events in Lambda, the local gateway, or tests calling the app directly).
 */
export interface HttpRequest {
  method: string;
  /** Raw path, e.g. `/v1/topics/orders`. */
  path: string;
  /** Decoded path parameters of the matched route, e.g. `{ topic: 'orders' }`. */
  params: Record<string, string>;
  query: Record<string, string>;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  body: Uint8Array;
  /** Who signed the request and which API it reached (API Gateway's IAM authorizer context). */
  caller?: CallerContext;
}

/** The signer's principal and the API it called: what an execute-api ARN is built from. */
export interface CallerContext {
  /** `requestContext.authorizer.iam.userArn`, e.g. `arn:aws:iam::111122223333:user/alice`. */
  principalArn: string;
  /** The API owner's account (`requestContext.accountId`). */
  accountId: string;
  apiId: string;
  stage: string;
}

export interface HttpResponse {
  status: number;
  headers?: Record<string, string>;
  /** A JSON value (serialized by the edge), raw bytes, or nothing. */
  body?: unknown;
}

export type RouteHandler = (request: HttpRequest) => Promise<HttpResponse>;

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';

export interface Route {
  method: HttpMethod;
  /** Path template with `{name}` segments, e.g. `/v1/topics/{topic}`. */
  pattern: string;
  handler: RouteHandler;
  /** Kafka's name of the API the route serves (the API dimension of the request metrics). */
  api?: string;
  /** Shapes every error of this route, the authorization guard's refusals included (Connect adds `error_code`). */
  mapError?: (error: unknown) => unknown;
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body,
});
