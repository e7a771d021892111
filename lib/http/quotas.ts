/**
 * Client quotas at the HTTP edge (docs/quotas.md). A route's definition names the quota it spends
 * (`quota` in define-route.ts); every signed route also spends request time (request_percentage).
 * Over its quota a client is told how long to wait, never dropped silently: the answer that takes it
 * over is served with `throttle_time_ms` in the body and `Retry-After` / `Sluice-Throttle-Time-Ms`
 * headers (KIP-219: answer at once, the client backs off), and any request it sends before the delay
 * has passed is refused with 429 THROTTLING_QUOTA_EXCEEDED carrying the same, having changed nothing
 * (a fetch's records are held back, as Kafka answers a throttled fetch empty).
 */
import { SluiceError } from '../../protocol/errors.js';
import type { ClientQuotaManager, QuotaPrincipal } from '../core/quotas/index.js';
import { ANONYMOUS_USER, MAX_ENTITY_NAME_LENGTH } from '../core/quotas/index.js';
import type { HttpRequest, HttpResponse } from './types.js';
import { json } from './types.js';

/** The header that carries Kafka's client.id (the SDK, the CLI and the Kafka gateway send it). */
export const CLIENT_ID_HEADER = 'kafka-client-id';
/** The throttle time in ms, on every answer that has one (Retry-After has whole seconds only). */
export const THROTTLE_TIME_HEADER = 'sluice-throttle-time-ms';

/** The quota a route spends, beside request time. */
export type QuotaUse =
  /** The request body's bytes, counted before the request is served. */
  | { type: 'producer_byte_rate' }
  /** The answer's bytes, counted once served; a throttled fetch's answer is held back. */
  | { type: 'consumer_byte_rate' }
  /** Partitions created or deleted (KIP-599), counted before the request is served. */
  | {
      type: 'controller_mutation_rate';
      partitions: (request: HttpRequest, body: Record<string, unknown> | undefined) => Promise<number>;
    };

/** Who a request counts against: the IAM principal that signed it and its Kafka-Client-Id. */
export const quotaPrincipal = (request: HttpRequest): QuotaPrincipal => {
  const clientId = request.headers[CLIENT_ID_HEADER] ?? '';
  if (clientId.length > MAX_ENTITY_NAME_LENGTH)
    throw new SluiceError(
      'INVALID_REQUEST',
      `Kafka-Client-Id is longer than ${MAX_ENTITY_NAME_LENGTH} characters`,
    );
  return { user: request.caller?.principalArn ?? ANONYMOUS_USER, clientId };
};

/** The 429 a throttled client gets: the wait in the body and in both headers. */
export const throttledResponse = (throttleTimeMs: number, what: string): HttpResponse =>
  json(
    429,
    {
      error: {
        code: 'THROTTLING_QUOTA_EXCEEDED',
        message: `${what} quota exceeded; retry after ${throttleTimeMs} ms`,
        retriable: true,
      },
      throttle_time_ms: throttleTimeMs,
    },
    throttleHeaders(throttleTimeMs),
  );

const throttleHeaders = (ms: number): Record<string, string> => ({
  'retry-after': String(Math.ceil(ms / 1000)),
  [THROTTLE_TIME_HEADER]: String(ms),
});

/** A served answer that took its client over a quota: the wait added, the answer otherwise kept. */
const withThrottle = (response: HttpResponse, ms: number): HttpResponse => {
  if (ms <= 0 || response.status < 200 || response.status > 299) return response;
  const body =
    response.body !== null &&
    typeof response.body === 'object' &&
    !(response.body instanceof Uint8Array) &&
    !Array.isArray(response.body)
      ? { ...(response.body as Record<string, unknown>), throttle_time_ms: ms }
      : response.body;
  return { ...response, headers: { ...(response.headers ?? {}), ...throttleHeaders(ms) }, body };
};

const answerBytes = (response: HttpResponse): number =>
  response.body === undefined
    ? 0
    : response.body instanceof Uint8Array
      ? response.body.length
      : Buffer.byteLength(JSON.stringify(response.body));

/** Serves a request within its principal's quotas (`use` undefined: request time only). */
export const serveWithinQuotas = async (
  quotas: ClientQuotaManager,
  use: QuotaUse | undefined,
  request: HttpRequest,
  body: Record<string, unknown> | undefined,
  serve: () => Promise<HttpResponse>,
): Promise<HttpResponse> => {
  const principal = quotaPrincipal(request);
  const gate = await quotas.requestTime(principal);
  if (gate && gate.throttleTimeMs > 0) return throttledResponse(gate.throttleTimeMs, 'request_percentage');
  let throttleTimeMs = 0;
  if (use?.type === 'producer_byte_rate' || use?.type === 'controller_mutation_rate') {
    const cost =
      use.type === 'producer_byte_rate' ? request.body.length : () => use.partitions(request, body);
    const decision = await quotas.admit(principal, use.type, cost);
    if (!decision.admitted) return throttledResponse(decision.throttleTimeMs, use.type);
    throttleTimeMs = decision.throttleTimeMs;
  }
  const started = quotas.now();
  let response = await serve();
  if (use?.type === 'consumer_byte_rate' && response.status === 200) {
    const served = response;
    const decision = await quotas.admit(principal, use.type, () => answerBytes(served));
    if (!decision.admitted) response = throttledResponse(decision.throttleTimeMs, use.type);
    else throttleTimeMs = Math.max(throttleTimeMs, decision.throttleTimeMs);
  }
  if (gate) throttleTimeMs = Math.max(throttleTimeMs, await gate.record(Math.max(0, quotas.now() - started)));
  return withThrottle(response, throttleTimeMs);
};
