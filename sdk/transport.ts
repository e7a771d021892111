/**
 * One HTTP exchange with Sluice over `fetch`: builds the URL, sends JSON or bytes, and turns every
 * non-2xx answer or failed request into a SluiceError. Retrying is the caller's choice (retry.ts).
 */
import { SluiceError, errorFromFailure, errorFromResponse } from './errors.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  /** Base URL of the API, e.g. `http://127.0.0.1:8787` (the `/v1` paths are appended). */
  url: string;
  fetch?: FetchLike;
  /** Sent with every request, e.g. an authorization header. */
  headers?: Record<string, string>;
  /** Per-request timeout in ms (default 30000); long polls add their wait to it. */
  requestTimeoutMs?: number;
  /**
   * How many times one request refused for a client quota (429 with a throttle time) is sent again
   * after waiting as told (default 10); beyond that it fails with THROTTLING_QUOTA_EXCEEDED.
   */
  maxThrottleRetries?: number;
  /**
   * Wait out throttle times and resend quota refusals (default true). A transport shared by many
   * clients (the Kafka gateway) turns it off and hands each client its own throttle time instead.
   */
  honourThrottle?: boolean;
  /** For tests: the wait of a throttled client. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface HttpCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the base URL with segments already encoded (see `path`). */
  path: string;
  query?: Record<string, string | number | undefined>;
  /** A JSON body; or `body` with `contentType` for bytes. */
  json?: unknown;
  body?: Uint8Array;
  contentType?: string;
  accept?: string;
  headers?: Record<string, string>;
  /** Added to the transport's timeout (a long poll's maxWaitMs). */
  extraTimeoutMs?: number;
  /** Cancels the request (then it fails with the non-retriable code ABORTED). */
  signal?: AbortSignal;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

/** A path with each interpolated value percent-encoded as one segment. */
export const path = (strings: TemplateStringsArray, ...values: (string | number)[]): string =>
  strings.reduce(
    (out, s, i) => out + s + (i < values.length ? encodeURIComponent(String(values[i])) : ''),
    '',
  );

export class Transport {
  private readonly base: string;
  private readonly fetch: FetchLike;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly maxThrottleRetries: number;
  private readonly honourThrottle: boolean;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Until when the server asked this client to wait (KIP-219: as a Kafka client mutes a throttled
   * broker, no request leaves before then), from `Sluice-Throttle-Time-Ms` / `Retry-After`.
   */
  private throttledUntil = 0;

  constructor({
    url,
    fetch: fetchImpl,
    headers = {},
    requestTimeoutMs = 30_000,
    maxThrottleRetries = 10,
    honourThrottle = true,
    sleep = abortableSleep,
  }: TransportOptions) {
    this.base = url.replace(/\/+$/, '');
    this.fetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
    this.headers = headers;
    this.timeoutMs = requestTimeoutMs;
    this.maxThrottleRetries = honourThrottle ? maxThrottleRetries : 0;
    this.honourThrottle = honourThrottle;
    this.sleep = sleep;
  }

  /** How long this client still has to wait before its next request (0: none). */
  get throttleTimeMs(): number {
    return Math.max(0, this.throttledUntil - Date.now());
  }

  /**
   * One exchange, honouring client quotas: waits out a throttle the server set, and sends a request
   * refused for a quota (429, which changed nothing) again once the wait it was told has passed.
   */
  async send(call: HttpCall): Promise<HttpAnswer> {
    for (let attempt = 0; ; attempt++) {
      const wait = this.throttleTimeMs;
      if (wait > 0) await this.sleep(wait, call.signal);
      try {
        return await this.exchange(call);
      } catch (error) {
        if (
          !(error instanceof SluiceError) ||
          error.status !== 429 ||
          this.throttleTimeMs === 0 ||
          attempt >= this.maxThrottleRetries
        )
          throw error;
      }
    }
  }

  /** Notes the wait an answer asked for. */
  private noteThrottle(headers: Headers): void {
    if (!this.honourThrottle) return;
    const ms = Number(headers.get('sluice-throttle-time-ms') ?? NaN);
    const seconds = Number(headers.get('retry-after') ?? NaN);
    const wait =
      Number.isFinite(ms) && ms > 0 ? ms : Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
    if (wait > 0)
      this.throttledUntil = Math.max(this.throttledUntil, Date.now() + Math.min(wait, MAX_THROTTLE_MS));
  }

  private async exchange(call: HttpCall): Promise<HttpAnswer> {
    const headers: Record<string, string> = { ...this.headers, ...call.headers };
    let body: Uint8Array | string | undefined;
    if (call.json !== undefined) {
      body = JSON.stringify(call.json);
      headers['content-type'] = 'application/json; charset=utf-8';
    } else if (call.body !== undefined) {
      body = call.body;
      headers['content-type'] = call.contentType ?? 'application/octet-stream';
    }
    if (call.accept) headers['accept'] = call.accept;
    const timeout = AbortSignal.timeout(this.timeoutMs + (call.extraTimeoutMs ?? 0));
    const signal = call.signal ? AbortSignal.any([timeout, call.signal]) : timeout;
    let response: Response;
    let bytes: Uint8Array;
    try {
      response = await this.fetch(this.url(call), {
        method: call.method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal,
      });
      bytes = new Uint8Array(await response.arrayBuffer());
    } catch (cause) {
      if (call.signal?.aborted)
        throw new SluiceError('ABORTED', 'the request was cancelled', { retriable: false, cause });
      throw errorFromFailure(cause, timeout.aborted, this.base);
    }
    this.noteThrottle(response.headers);
    if (response.status < 200 || response.status > 299) {
      throw errorFromResponse(response.status, new TextDecoder().decode(bytes));
    }
    return { status: response.status, headers: response.headers, body: bytes };
  }

  /** `send` and parse the answer as JSON (undefined for an empty body, e.g. 204). */
  async json<T>(call: HttpCall): Promise<T> {
    const answer = await this.send(call);
    return (answer.body.length === 0 ? undefined : JSON.parse(new TextDecoder().decode(answer.body))) as T;
  }

  private url(call: HttpCall): string {
    const query = Object.entries(call.query ?? {})
      .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
      .join('&');
    return `${this.base}${call.path}${query ? `?${query}` : ''}`;
  }
}

/** A wait longer than this from a server is taken as this (a lying or broken server cannot park a client). */
const MAX_THROTTLE_MS = 5 * 60_000;

const abortableSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new SluiceError('ABORTED', 'the request was cancelled', { retriable: false }));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new SluiceError('ABORTED', 'the request was cancelled', { retriable: false }));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
