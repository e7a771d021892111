/**
 * Matches requests to routes and turns every thrown error into the API's error envelope. Knows nothing
 * of Lambda: the function entry points and the local gateway both call `handle`.
 */
import { SluiceError, isSluiceError } from '../../protocol/errors.js';
import { checkPathParam } from './limits.js';
import { canonicalRequestPath } from './request-path.js';
import { STATUS_BY_CODE } from './status.js';
import type { HttpRequest, HttpResponse, Route } from './types.js';
import { json } from './types.js';

interface CompiledRoute extends Route {
  regex: RegExp;
  names: string[];
}

export type Logger = (entry: Record<string, unknown>) => void;

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
    private readonly log: Logger = () => {},
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

  async handle(request: Omit<HttpRequest, 'params'>): Promise<HttpResponse> {
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
      this.log({
        level: 'error',
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
