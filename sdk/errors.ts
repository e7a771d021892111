/**
 * The SDK's one error type. Server errors carry the API's envelope (`{"error": {code, message,
 * retriable}}`, API.md "Conventions") plus the HTTP status; failures that never got an answer are
 * Kafka's NETWORK_EXCEPTION or REQUEST_TIMED_OUT, both retriable.
 */
export class SluiceError extends Error {
  /** Kafka's error name, e.g. `UNKNOWN_TOPIC_OR_PARTITION`. */
  readonly code: string;
  readonly retriable: boolean;
  /** HTTP status of the answer; 0 when there was none. */
  readonly status: number;
  /** Extra fields of the envelope beside `error` (e.g. `logStartOffset`, `highWatermark`). */
  readonly details: Record<string, unknown>;
  /** How many times the call was sent: set by the retrier when it gives up (1 without one). */
  attempts = 1;

  constructor(
    code: string,
    message: string,
    options: { retriable: boolean; status?: number; details?: Record<string, unknown>; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SluiceError';
    this.code = code;
    this.retriable = options.retriable;
    this.status = options.status ?? 0;
    this.details = options.details ?? {};
  }

  /**
   * Whether the request may have taken effect: no answer, or a 5xx (API.md: "A 5xx or a timeout may or
   * may not have taken effect"). A 4xx is definite and changed nothing.
   */
  get ambiguous(): boolean {
    return this.status === 0 || this.status >= 500;
  }

  /** Nothing listens at the URL (the connection was refused): the request never reached a server. */
  get refused(): boolean {
    return this.details['refused'] === true;
  }
}

export const isSluiceError = (e: unknown): e is SluiceError => e instanceof SluiceError;

/** Statuses whose answers are retriable even when a proxy in between sent no envelope. */
const RETRIABLE_STATUSES = new Set([429, 502, 503, 504]);

/** The error an answer with a non-2xx status stands for. */
export const errorFromResponse = (status: number, bodyText: string): SluiceError => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    parsed = undefined;
  }
  const envelope = asRecord(parsed);
  const error = asRecord(envelope?.['error']);
  if (envelope && error && typeof error['code'] === 'string') {
    const { error: _ignored, ...details } = envelope;
    return new SluiceError(
      error['code'],
      typeof error['message'] === 'string' ? error['message'] : error['code'],
      {
        retriable:
          typeof error['retriable'] === 'boolean' ? error['retriable'] : RETRIABLE_STATUSES.has(status),
        status,
        details,
      },
    );
  }
  // An answer without the envelope comes from something in front of Sluice (a proxy, API Gateway).
  // API Gateway answers a missing, invalid or refused signature with a bare 401/403.
  const code =
    status === 401 || status === 403
      ? 'SASL_AUTHENTICATION_FAILED'
      : status === 429
        ? 'THROTTLING_QUOTA_EXCEEDED'
        : status === 504
          ? 'REQUEST_TIMED_OUT'
          : 'UNKNOWN_SERVER_ERROR';
  const snippet = bodyText.length > 200 ? `${bodyText.slice(0, 200)}…` : bodyText;
  return new SluiceError(code, `HTTP ${status}${snippet ? `: ${snippet}` : ''}`, {
    retriable: RETRIABLE_STATUSES.has(status),
    status,
  });
};

/**
 * A request that got no answer: the connection failed, or it was aborted by our timeout. `details.refused`
 * says nothing listens at the address (connection refused), where retrying at once will not help.
 */
export const errorFromFailure = (cause: unknown, timedOut: boolean, base?: string): SluiceError => {
  if (timedOut) {
    return new SluiceError(
      'REQUEST_TIMED_OUT',
      base ? `no answer from ${base} in time` : 'the request timed out before an answer came',
      { retriable: true, cause },
    );
  }
  const refused = socketErrors(cause).some((e) => asRecord(e)?.['code'] === 'ECONNREFUSED');
  return new SluiceError(
    'NETWORK_EXCEPTION',
    base
      ? `cannot reach ${base}: ${describeFailure(cause)}`
      : `the request failed: ${describeFailure(cause)}`,
    { retriable: true, cause, ...(refused ? { details: { refused: true } } : {}) },
  );
};

/** Node's fetch hides the socket error in `cause` (an AggregateError when it tried several addresses). */
const socketErrors = (error: unknown): unknown[] => {
  const cause = error instanceof Error ? error.cause : undefined;
  const nested = cause instanceof AggregateError ? cause.errors : [];
  return [error, cause, ...nested];
};

const describeFailure = (error: unknown): string => {
  const codes = socketErrors(error)
    .map((e) => asRecord(e)?.['code'])
    .filter((c): c is string => typeof c === 'string');
  return codes.length > 0 ? [...new Set(codes)].join(', ') : messageOf(error);
};

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

const messageOf = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause instanceof Error ? ` (${e.cause.message})` : '';
  return `${e.message}${cause}`;
};
