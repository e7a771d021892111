/**
 * The command line's HTTP client: JSON in and out over fetch, every non-2xx answer or failed request
 * turned into one ApiError carrying the API's envelope (API.md "Conventions"), and a short jittered
 * retry for requests that are safe to repeat.
 */

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** An error the API answered with, or a request that got no answer (status 0). */
export class ApiError extends Error {
  /** Kafka's error name, e.g. `UNKNOWN_TOPIC_OR_PARTITION`; `NETWORK_EXCEPTION` when nothing answered. */
  readonly code: string;
  readonly retriable: boolean;
  /** HTTP status; 0 when there was no answer, or for one record's error inside a 200 answer. */
  readonly status: number;
  /** Fields of the envelope beside `error`, e.g. `logStartOffset` and `highWatermark` of a 416. */
  readonly details: Record<string, unknown>;
  /** Nothing listens at the URL (connection refused): retrying at once will not help. */
  readonly refused: boolean;
  /** How many times the request was sent. */
  attempts = 1;

  constructor(
    code: string,
    message: string,
    options: {
      retriable: boolean;
      status?: number;
      details?: Record<string, unknown>;
      refused?: boolean;
      cause?: unknown;
    },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.retriable = options.retriable;
    this.status = options.status ?? 0;
    this.details = options.details ?? {};
    this.refused = options.refused ?? false;
  }
}

export const isAborted = (error: unknown): boolean => error instanceof ApiError && error.code === 'ABORTED';

export interface HttpClientOptions {
  /** Base URL, e.g. `http://127.0.0.1:8787`; the `/v1/...` paths are appended. */
  url: string;
  fetch?: FetchLike;
  /** Retries of a retriable failure after the first attempt (default 3). */
  retries?: number;
  /** Delay before the first retry in ms, doubling after each (default 200). */
  retryBackoffMs?: number;
  /** Per-request timeout in ms (default 30000); long polls add their wait. */
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Whether the request may be sent again after a retriable failure (reads, idempotent writes). */
  retry?: boolean;
  signal?: AbortSignal;
  /** Added to the timeout: a long poll's maxWaitMs. */
  extraTimeoutMs?: number;
}

/** Statuses that mean "try again" even when whatever answered sent no envelope (a proxy, API Gateway). */
const RETRIABLE_STATUSES = new Set([429, 502, 503, 504]);

export class HttpClient {
  readonly url: string;
  private readonly fetch: FetchLike;
  private readonly retries: number;
  private readonly backoffMs: number;
  private readonly timeoutMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor({
    url,
    fetch: fetchImpl,
    retries = 3,
    retryBackoffMs = 200,
    timeoutMs = 30_000,
    sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    random = Math.random,
  }: HttpClientOptions) {
    this.url = url.replace(/\/+$/, '');
    this.fetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
    this.retries = retries;
    this.backoffMs = retryBackoffMs;
    this.timeoutMs = timeoutMs;
    this.sleep = sleep;
    this.random = random;
  }

  /** Sends the request and parses the JSON answer (undefined for an empty body, e.g. 204). */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.once(method, path, options)) as T;
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        error.attempts = attempt;
        const again = options.retry === true && error.retriable && !error.refused && attempt <= this.retries;
        if (!again || options.signal?.aborted) throw error;
        // Exponential backoff with ±25 % jitter, so parallel clients do not retry in step.
        const nominal = Math.min(5_000, this.backoffMs * 2 ** (attempt - 1));
        await this.sleep(Math.round(nominal * (0.75 + 0.5 * this.random())));
      }
    }
  }

  private async once(method: string, path: string, options: RequestOptions): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json; charset=utf-8';
    const timeout = AbortSignal.timeout(this.timeoutMs + (options.extraTimeoutMs ?? 0));
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    let status: number;
    let text: string;
    try {
      const response = await this.fetch(this.address(path, options.query), {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal,
      });
      status = response.status;
      text = await response.text();
    } catch (cause) {
      if (options.signal?.aborted) {
        throw new ApiError('ABORTED', 'the request was cancelled', { retriable: false, cause });
      }
      if (timeout.aborted) {
        throw new ApiError('REQUEST_TIMED_OUT', `no answer from ${this.url} in time`, {
          retriable: true,
          cause,
        });
      }
      throw new ApiError('NETWORK_EXCEPTION', `cannot reach ${this.url}: ${describeFailure(cause)}`, {
        retriable: true,
        refused: isConnectionRefused(cause),
        cause,
      });
    }
    if (status < 200 || status > 299) throw errorFromAnswer(status, text);
    if (text.length === 0) return undefined;
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw new ApiError('UNKNOWN_SERVER_ERROR', `the answer is not JSON: ${snippet(text)}`, {
        retriable: false,
        status,
        cause,
      });
    }
  }

  private address(path: string, query: RequestOptions['query'] = {}): string {
    const pairs = Object.entries(query)
      .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
    return `${this.url}${path}${pairs.length > 0 ? `?${pairs.join('&')}` : ''}`;
  }
}

/** A path whose interpolated values are each percent-encoded as one segment. */
export const path = (strings: TemplateStringsArray, ...values: (string | number)[]): string =>
  strings.reduce(
    (out, s, i) => out + s + (i < values.length ? encodeURIComponent(String(values[i])) : ''),
    '',
  );

/** The error a non-2xx answer stands for: the envelope when there is one, else a guess from the status. */
export const errorFromAnswer = (status: number, text: string): ApiError => {
  const envelope = asRecord(parseJson(text));
  const error = asRecord(envelope?.['error']);
  if (envelope && error && typeof error['code'] === 'string') {
    const { error: _envelope, ...details } = envelope;
    return new ApiError(error['code'], typeof error['message'] === 'string' ? error['message'] : '', {
      retriable:
        typeof error['retriable'] === 'boolean' ? error['retriable'] : RETRIABLE_STATUSES.has(status),
      status,
      details,
    });
  }
  const code =
    status === 401 || status === 403
      ? 'SASL_AUTHENTICATION_FAILED'
      : status === 429
        ? 'THROTTLING_QUOTA_EXCEEDED'
        : status === 504
          ? 'REQUEST_TIMED_OUT'
          : 'UNKNOWN_SERVER_ERROR';
  return new ApiError(code, `HTTP ${status}${text ? `: ${snippet(text)}` : ''}`, {
    retriable: RETRIABLE_STATUSES.has(status),
    status,
  });
};

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

const snippet = (text: string): string => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/** Node's fetch hides the socket error in `cause` (an AggregateError when it tried several addresses). */
const socketErrors = (error: unknown): unknown[] => {
  const cause = error instanceof Error ? error.cause : undefined;
  const nested = cause instanceof AggregateError ? cause.errors : [];
  return [error, cause, ...nested];
};

const isConnectionRefused = (error: unknown): boolean =>
  socketErrors(error).some((e) => asRecord(e)?.['code'] === 'ECONNREFUSED');

const describeFailure = (error: unknown): string => {
  const codes = socketErrors(error)
    .map((e) => asRecord(e)?.['code'])
    .filter((c): c is string => typeof c === 'string');
  if (codes.length > 0) return [...new Set(codes)].join(', ');
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return error instanceof Error ? `${error.message}${cause}` : String(error);
};
