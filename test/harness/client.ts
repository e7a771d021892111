/**
 * A small client of the HTTP API (API.md) for workloads, over a transport: the in-process router of
 * `createSluice` in simulations, or real HTTP against the local stack in the soak test. Errors come back
 * as ApiError with the status and Kafka code; a transport failure throws whatever the transport threw.
 */
import { decodeRecordBatch } from '../../lib/core/record-batch/index.js';
import type { Router } from '../../lib/http/router.js';

export interface ApiRequest {
  method: string;
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Uint8Array | string | object;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON, or raw bytes for record-batch bodies. */
  body: unknown;
}

export type Transport = (request: ApiRequest) => Promise<ApiResponse>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = 'ApiError';
  }
}

export const RECORD_BATCH = 'application/vnd.kafka.record-batch';

const encodeBody = (body: ApiRequest['body']): Uint8Array => {
  if (body === undefined) return new Uint8Array();
  if (body instanceof Uint8Array) return body;
  return new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body));
};

const contentType = (body: ApiRequest['body']): Record<string, string> =>
  body === undefined || body instanceof Uint8Array ? {} : { 'content-type': 'application/json' };

/** Calls the router directly; JSON bodies go through a serialization round trip as they would over HTTP. */
export const routerTransport =
  (router: Router): Transport =>
  async (request) => {
    const response = await router.handle({
      method: request.method,
      path: request.path,
      query: request.query ?? {},
      headers: { ...contentType(request.body), ...lower(request.headers ?? {}) },
      body: encodeBody(request.body),
    });
    const body =
      response.body instanceof Uint8Array || response.body === undefined
        ? response.body
        : (JSON.parse(JSON.stringify(response.body)) as unknown);
    return { status: response.status, headers: lower(response.headers ?? {}), body };
  };

/** Real HTTP with a per-request timeout (a timeout is an ambiguous outcome, like a 5xx). */
export const httpTransport =
  (baseUrl: string, timeoutMs = 10_000): Transport =>
  async (request) => {
    const url = new URL(request.path, baseUrl);
    for (const [k, v] of Object.entries(request.query ?? {})) url.searchParams.set(k, v);
    const body = request.body === undefined ? undefined : encodeBody(request.body);
    const response = await fetch(url, {
      method: request.method,
      headers: { ...contentType(request.body), ...(request.headers ?? {}) },
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const headers: Record<string, string> = {};
    response.headers.forEach((v, k) => (headers[k] = v));
    const bytes = new Uint8Array(await response.arrayBuffer());
    const parsed =
      bytes.length === 0
        ? undefined
        : (headers['content-type'] ?? '').includes('json')
          ? (JSON.parse(new TextDecoder().decode(bytes)) as unknown)
          : bytes;
    return { status: response.status, headers, body: parsed };
  };

const lower = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

export interface WireRecord {
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: { key: string; value: Uint8Array | null }[];
}

export interface FetchedRecord extends WireRecord {
  offset: number;
}

export interface FetchResult {
  records: FetchedRecord[];
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
}

export type ProduceResult =
  { partition: number; offset: number } | { partition: number; error: { code: string; retriable: boolean } };

const b64 = (bytes: Uint8Array | null): string | null =>
  bytes === null ? null : Buffer.from(bytes).toString('base64');
const unb64 = (text: unknown): Uint8Array | null =>
  text === null || text === undefined ? null : new Uint8Array(Buffer.from(String(text), 'base64'));

export class SluiceClient {
  constructor(readonly transport: Transport) {}

  async call(request: ApiRequest): Promise<ApiResponse> {
    const response = await this.transport(request);
    if (response.status >= 400) {
      const err = (response.body as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new ApiError(response.status, err?.code ?? `HTTP_${response.status}`, err?.message ?? '');
    }
    return response;
  }

  async createTopic(
    name: string,
    partitions: number,
    options: { configs?: Record<string, string>; replicationFactor?: number } = {},
  ): Promise<void> {
    const body = {
      name,
      partitions,
      configs: options.configs ?? {},
      replicationFactor: options.replicationFactor ?? 1,
    };
    await this.call({ method: 'POST', path: '/v1/topics', body });
  }

  async initProducerId(): Promise<{ producerId: number; producerEpoch: number }> {
    return (await this.call({ method: 'POST', path: '/v1/producers' })).body as {
      producerId: number;
      producerEpoch: number;
    };
  }

  /** JSON produce with base64 encoding (so any bytes round-trip). */
  async produce(
    topic: string,
    records: (WireRecord & { partition?: number })[],
    options: { idempotencyKey?: string; acks?: 'all' | '1' } = {},
  ): Promise<ProduceResult[]> {
    const body = {
      encoding: 'base64',
      acks: options.acks ?? 'all',
      records: records.map((r) => ({
        key: b64(r.key),
        value: b64(r.value),
        headers: r.headers.map((h) => ({ key: h.key, value: b64(h.value) })),
        ...(r.partition !== undefined ? { partition: r.partition } : {}),
      })),
    };
    const headers: Record<string, string> = options.idempotencyKey
      ? { 'idempotency-key': options.idempotencyKey }
      : {};
    const response = await this.call({ method: 'POST', path: `/v1/topics/${topic}/records`, headers, body });
    return (response.body as { results: ProduceResult[] }).results;
  }

  async produceBatches(
    topic: string,
    partition: number,
    bytes: Uint8Array,
  ): Promise<{ baseOffset: number; lastOffset: number }> {
    const response = await this.call({
      method: 'POST',
      path: `/v1/topics/${topic}/partitions/${partition}/batches`,
      headers: { 'content-type': RECORD_BATCH },
      body: bytes,
    });
    return response.body as { baseOffset: number; lastOffset: number };
  }

  async fetch(
    topic: string,
    partition: number,
    offset: number,
    options: { maxBytes?: number; maxWaitMs?: number; binary?: boolean } = {},
  ): Promise<FetchResult> {
    const query: Record<string, string> = {
      offset: String(offset),
      maxBytes: String(options.maxBytes ?? 1_048_576),
      maxWaitMs: String(options.maxWaitMs ?? 0),
    };
    const path = `/v1/topics/${topic}/partitions/${partition}/records`;
    if (options.binary) {
      const response = await this.call({ method: 'GET', path, query, headers: { accept: RECORD_BATCH } });
      const bytes = response.body instanceof Uint8Array ? response.body : new Uint8Array();
      const records: FetchedRecord[] = [];
      for (let at = 0; at < bytes.length;) {
        const length = 12 + new DataView(bytes.buffer, bytes.byteOffset + at + 8, 4).getInt32(0);
        const batch = decodeRecordBatch(bytes.subarray(at, at + length));
        for (const r of batch.records) {
          records.push({
            offset: r.offset,
            key: copy(r.key),
            value: copy(r.value),
            headers: r.headers.map((h) => ({ key: h.key, value: copy(h.value) })),
          });
        }
        at += length;
      }
      // Batch granularity: records below the requested offset come along; the consumer skips them.
      return {
        records: records.filter((r) => r.offset >= offset),
        nextOffset: Number(response.headers['sluice-next-offset']),
        highWatermark: Number(response.headers['sluice-high-watermark']),
        logStartOffset: Number(response.headers['sluice-log-start-offset']),
      };
    }
    query['encoding'] = 'base64';
    const response = await this.call({ method: 'GET', path, query });
    const body = response.body as {
      records: {
        offset: number;
        key: string | null;
        value: string | null;
        headers: { key: string; value: string | null }[];
      }[];
      nextOffset: number;
      highWatermark: number;
      logStartOffset: number;
    };
    return {
      records: body.records.map((r) => ({
        offset: r.offset,
        key: unb64(r.key),
        value: unb64(r.value),
        headers: r.headers.map((h) => ({ key: h.key, value: unb64(h.value) })),
      })),
      nextOffset: body.nextOffset,
      highWatermark: body.highWatermark,
      logStartOffset: body.logStartOffset,
    };
  }

  async offsets(topic: string, partition: number, at: 'earliest' | 'latest'): Promise<number> {
    const response = await this.call({
      method: 'GET',
      path: `/v1/topics/${topic}/partitions/${partition}/offsets`,
      query: { at },
    });
    return (response.body as { offset: number }).offset;
  }

  async heartbeat(
    group: string,
    body: Record<string, unknown>,
  ): Promise<{
    memberId: string;
    memberEpoch: number;
    assignment: { topicPartitions: { topic: string; partitions: number[] }[] } | null;
  }> {
    return (await this.call({ method: 'POST', path: `/v1/groups/${group}/heartbeat`, body })).body as never;
  }

  async commitOffsets(
    group: string,
    body: Record<string, unknown>,
  ): Promise<{ results: { topic: string; partition: number; error?: { code: string } }[] }> {
    return (await this.call({ method: 'POST', path: `/v1/groups/${group}/offsets`, body })).body as never;
  }

  async fetchOffsets(
    group: string,
  ): Promise<{ offsets: { topic: string; partition: number; offset: number }[] }> {
    return (await this.call({ method: 'GET', path: `/v1/groups/${group}/offsets` })).body as never;
  }
}

const copy = (bytes: Uint8Array | null): Uint8Array | null => (bytes === null ? null : new Uint8Array(bytes));

/** The record as one string (key, value, headers as base64), so equal strings mean byte-identical records. */
export const renderRecord = (r: WireRecord): string =>
  JSON.stringify([b64(r.key), b64(r.value), r.headers.map((h) => [h.key, b64(h.value)])]);
