/**
 * Matches requests to routes and turns every thrown error into the API's error envelope. Knows nothing
 * of Lambda: the function entry points and the local gateway both call `handle`.
 */
import { SluiceError, isSluiceError } from '../../protocol/errors.js';
import type { Telemetry } from '../ports/telemetry.js';
import { noTelemetry } from '../ports/telemetry.js';
import { checkPathParam } from './limits.js';
import { canonicalRequestPath } from './request-path.js';
import { STATUS_BY_CODE } from './status.js';
import type { HttpRequest, HttpResponse, Route } from './types.js';
import { json } from './types.js';

interface CompiledRoute extends Route {
  regex: RegExp;
  names: string[];
}

/**
 * Runs before a route's handler (route key `METHOD pattern`): throws to refuse the request, or returns
 * a step that the handler's response passes through (authorization filters what a caller may see).
 * It may set the request's `caller` (a delegated request is served as the principal it names,
 * lib/auth/delegation.ts); the request object is the router's own copy for this one call.
 */
export type RouteGuard = (
  routeKey: string,
  request: HttpRequest,
) => Promise<((response: HttpResponse) => Promise<HttpResponse>) | undefined>;

export class Router {
  private readonly routes: CompiledRoute[];

  constructor(
    routes: readonly Route[],
    private readonly telemetry: Telemetry = noTelemetry,
    private readonly guard?: RouteGuard,
  ) {
    this.routes = routes.map((route) => {
      const names: string[] = [];
      const source = route.pattern.replace(/\{([a-zA-Z]+)\}/g, (_, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      return { ...route, regex: new RegExp(`^${source}$`), names };
    });
  }

  /**
   * Answers one request, and reports it: RequestLatencyMs per Kafka API (the time in this function,
   * Kafka's TotalTimeMs), ErrorsPerSec per API and error code, and the request's resource (topic,
   * partition, group …) for every later log line.
   */
  async handle(request: Omit<HttpRequest, 'params'>): Promise<HttpResponse> {
    const started = performance.now();
    let api = 'unknown';
    const response = await this.route(request, (name) => (api = name));
    this.telemetry.metric('RequestLatencyMs', performance.now() - started, { API: api });
    const code = response.status >= 400 ? errorCodeOf(response) : undefined;
    if (code !== undefined) this.telemetry.metric('ErrorsPerSec', 1, { API: api, error: code });
    return response;
  }

  private async route(
    request: Omit<HttpRequest, 'params'>,
    named: (api: string) => void,
  ): Promise<HttpResponse> {
    try {
      // One canonical path for routing and every authorization check (lib/http/request-path.ts).
      const canonical = canonicalRequestPath(request.path);
      if ('reason' in canonical)
        throw new SluiceError('NOT_FOUND', `no route for ${request.method}: the path ${canonical.reason}`);
      const path = canonical.path;
      const matches = this.routes.flatMap((route) => {
        const m = route.regex.exec(path);
        return m ? [{ route, m }] : [];
      });
      if (matches.length === 0) throw new SluiceError('NOT_FOUND', `no route for ${request.method} ${path}`);
      const found = matches.find(({ route }) => route.method === request.method);
      if (!found) {
        const allowed = [...new Set(matches.map(({ route }) => route.method))].join(', ');
        throw new SluiceError(
          'METHOD_NOT_ALLOWED',
          `${request.method} is not allowed on ${path}; use ${allowed}`,
        );
      }
      const params: Record<string, string> = {};
      for (const [i, name] of found.route.names.entries()) {
        params[name] = decodeSegment(found.m[i + 1] ?? '');
        checkPathParam(name, params[name]);
      }
      const api = found.route.api ?? found.route.pattern;
      named(api);
      this.telemetry.annotate({
        API: api,
        ...(params['topic'] !== undefined ? { topic: params['topic'] } : {}),
        ...(params['partition'] !== undefined ? { partition: Number(params['partition']) } : {}),
        ...(params['group'] !== undefined ? { group: params['group'] } : {}),
        ...(params['connector'] !== undefined ? { connector: params['connector'] } : {}),
      });
      const routed = { ...request, path, params };
      const after = await this.guardRoute(found.route, routed);
      const response = await found.route.handler(routed);
      return after ? await after(response) : response;
    } catch (error) {
      return this.errorResponse(error, request);
    }
  }

  /** The guard's refusal is an answer of the route, shaped as the route shapes its own errors. */
  private async guardRoute(
    route: CompiledRoute,
    request: HttpRequest,
  ): Promise<((response: HttpResponse) => Promise<HttpResponse>) | undefined> {
    try {
      return await this.guard?.(`${route.method} ${route.pattern}`, request);
    } catch (error) {
      throw route.mapError ? route.mapError(error) : error;
    }
  }

  private errorResponse(error: unknown, request: Omit<HttpRequest, 'params'>): HttpResponse {
    const e = isSluiceError(error)
      ? error
      : new SluiceError('UNKNOWN_SERVER_ERROR', 'internal error; see the server log', { cause: error });
    const status = STATUS_BY_CODE[e.code];
    if (status >= 500) {
      this.telemetry.log('error', 'request failed', {
        method: request.method,
        path: request.path,
        code: e.code,
        error: describe(error),
      });
    }
    // A 500 is a bug or a misconfiguration: its words are for the log, never for the client.
    if (e.code === 'UNKNOWN_SERVER_ERROR') {
      return json(status, {
        error: { code: e.code, message: 'internal error; see the server log', retriable: e.retriable },
      });
    }
    return errorEnvelope(e, status);
  }
}

export const errorEnvelope = (e: SluiceError, status = STATUS_BY_CODE[e.code]): HttpResponse =>
  json(status, { error: { code: e.code, message: e.message, retriable: e.retriable }, ...(e.details ?? {}) });

/** The Kafka error code of an error answer (the envelope's), or its status when it has none. */
const errorCodeOf = (response: HttpResponse): string => {
  const code = (response.body as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === 'string' ? code : String(response.status);
};

const decodeSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new SluiceError('INVALID_REQUEST', `path segment ${segment} is not valid percent-encoding`);
  }
};

const describe = (error: unknown): string =>
  error instanceof Error
    ? `${error.name}: ${error.message}${error.cause ? ` (cause: ${describe(error.cause)})` : ''}`
    : String(error);
