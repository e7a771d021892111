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
  const code =
    status === 429
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

/** A request that got no answer: the connection failed, or it was aborted by our timeout. */
export const errorFromFailure = (cause: unknown, timedOut: boolean): SluiceError =>
  timedOut
    ? new SluiceError('REQUEST_TIMED_OUT', 'the request timed out before an answer came', {
        retriable: true,
        cause,
      })
    : new SluiceError('NETWORK_EXCEPTION', `the request failed: ${messageOf(cause)}`, {
        retriable: true,
        cause,
      });

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

const messageOf = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause instanceof Error ? ` (${e.cause.message})` : '';
  return `${e.message}${cause}`;
};
