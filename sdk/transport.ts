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

  constructor({ url, fetch: fetchImpl, headers = {}, requestTimeoutMs = 30_000 }: TransportOptions) {
    this.base = url.replace(/\/+$/, '');
    this.fetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
    this.headers = headers;
    this.timeoutMs = requestTimeoutMs;
  }

  async send(call: HttpCall): Promise<HttpAnswer> {
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
