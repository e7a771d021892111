/**
 * The workloads' view of the HTTP API (API.md), a thin layer over the SDK's Transport: the in-process
 * router (test/support/router-fetch.ts) in simulations, or real HTTP against the local stack in the soak
 * test. Every failure is the SDK's SluiceError with the status and Kafka code. There is no retrying
 * here: the workloads see, and record, every outcome themselves.
 */
import { decodeRecordBatch, splitBatches } from '../../protocol/record-batch/index.js';
import type { Router } from '../../lib/http/router.js';
import type * as wire from '../../lib/wire/types.js';
import { nodeHttpFetch } from '../../sdk/node-http.js';
import { RECORD_BATCH_MEDIA_TYPE } from '../../sdk/producer.js';
import { Transport, path } from '../../sdk/transport.js';
import { routerFetch } from './router-fetch.js';

/** A record as bytes, which is how the workloads write and compare them (the wire carries base64). */
export interface BytesRecord {
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: { key: string; value: Uint8Array | null }[];
}

export interface FetchedBytes {
  records: (BytesRecord & { offset: number })[];
  nextOffset: number;
  highWatermark: number;
  logStartOffset: number;
}

const b64 = (bytes: Uint8Array | null): string | null =>
  bytes === null ? null : Buffer.from(bytes).toString('base64');
const unb64 = (text: unknown): Uint8Array | null =>
  text === null || text === undefined ? null : new Uint8Array(Buffer.from(String(text), 'base64'));
const copy = (bytes: Uint8Array | null): Uint8Array | null => (bytes === null ? null : new Uint8Array(bytes));

export class SluiceClient {
  constructor(readonly transport: Transport) {}

  async createTopic(
    name: string,
    partitions: number,
    options: { configs?: Record<string, string>; replicationFactor?: number } = {},
  ): Promise<void> {
    const json = {
      name,
      partitions,
      configs: options.configs ?? {},
      replicationFactor: options.replicationFactor ?? 1,
    };
    await this.transport.send({ method: 'POST', path: '/v1/topics', json });
  }

  initProducerId(): Promise<wire.ProducerIdentity> {
    return this.transport.json({ method: 'POST', path: '/v1/producers' });
  }

  /** JSON produce with base64 encoding (so any bytes round-trip). */
  async produce(
    topic: string,
    records: (BytesRecord & { partition?: number })[],
    options: { idempotencyKey?: string; acks?: 'all' | '1' } = {},
  ): Promise<wire.RecordResult[]> {
    const json = {
      encoding: 'base64',
      acks: options.acks ?? 'all',
      records: records.map((r): wire.ProduceRecord => ({
        key: b64(r.key),
        value: b64(r.value),
        headers: r.headers.map((h) => ({ key: h.key, value: b64(h.value) })),
        ...(r.partition !== undefined ? { partition: r.partition } : {}),
      })),
    };
    const headers: Record<string, string> = options.idempotencyKey
      ? { 'idempotency-key': options.idempotencyKey }
      : {};
    const answer = await this.transport.json<{ results: wire.RecordResult[] }>({
      method: 'POST',
      path: path`/v1/topics/${topic}/records`,
      headers,
      json,
    });
    return answer.results;
  }

  produceBatches(topic: string, partition: number, bytes: Uint8Array): Promise<wire.BatchResult> {
    return this.transport.json({
      method: 'POST',
      path: path`/v1/topics/${topic}/partitions/${partition}/batches`,
      body: bytes,
      contentType: RECORD_BATCH_MEDIA_TYPE,
    });
  }

  async fetch(
    topic: string,
    partition: number,
    offset: number,
    options: { maxBytes?: number; maxWaitMs?: number; binary?: boolean } = {},
  ): Promise<FetchedBytes> {
    const query = { offset, maxBytes: options.maxBytes ?? 1_048_576, maxWaitMs: options.maxWaitMs ?? 0 };
    const at = path`/v1/topics/${topic}/partitions/${partition}/records`;
    if (options.binary) {
      const answer = await this.transport.send({
        method: 'GET',
        path: at,
        query,
        accept: RECORD_BATCH_MEDIA_TYPE,
      });
      const records: FetchedBytes['records'] = [];
      for (const { start, end } of splitBatches(answer.body)) {
        for (const r of decodeRecordBatch(answer.body.subarray(start, end)).records) {
          // Batch granularity: records below the requested offset come along; the consumer skips them.
          if (r.offset < offset) continue;
          records.push({
            offset: r.offset,
            key: copy(r.key),
            value: copy(r.value),
            headers: r.headers.map((h) => ({ key: h.key, value: copy(h.value) })),
          });
        }
      }
      return {
        records,
        nextOffset: Number(answer.headers.get('sluice-next-offset')),
        highWatermark: Number(answer.headers.get('sluice-high-watermark')),
        logStartOffset: Number(answer.headers.get('sluice-log-start-offset')),
      };
    }
    const body = await this.transport.json<wire.FetchResult>({
      method: 'GET',
      path: at,
      query: { ...query, encoding: 'base64' },
    });
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
    const answer = await this.transport.json<wire.ListOffsetsResult>({
      method: 'GET',
      path: path`/v1/topics/${topic}/partitions/${partition}/offsets`,
      query: { at },
    });
    if (answer.offset === null) throw new Error(`no ${at} offset in the ListOffsets answer`);
    return answer.offset;
  }

  heartbeat(group: string, json: wire.HeartbeatRequest): Promise<wire.HeartbeatResponse> {
    return this.transport.json({ method: 'POST', path: path`/v1/groups/${group}/heartbeat`, json });
  }

  commitOffsets(
    group: string,
    json: Record<string, unknown>,
  ): Promise<{ results: wire.OffsetCommitResult[] }> {
    return this.transport.json({ method: 'POST', path: path`/v1/groups/${group}/offsets`, json });
  }

  fetchOffsets(group: string): Promise<{ offsets: wire.CommittedOffset[] }> {
    return this.transport.json({ method: 'GET', path: path`/v1/groups/${group}/offsets` });
  }
}

/**
 * Against the router in this process (simulations). The timeout is the longest a timer takes: a
 * request that waits on simulated time must not fail on the wall clock, as no real network is there.
 */
export const routerClient = (router: Router): SluiceClient =>
  new SluiceClient(
    new Transport({
      url: 'http://sluice.invalid',
      fetch: routerFetch(router),
      requestTimeoutMs: 2 ** 31 - 1,
    }),
  );

/** Real HTTP with a per-request timeout (a timeout is an ambiguous outcome, like a 5xx). */
export const httpClient = (url: string, requestTimeoutMs = 10_000): SluiceClient =>
  new SluiceClient(new Transport({ url, fetch: nodeHttpFetch(), requestTimeoutMs }));

/** The record as one string (key, value, headers as base64), so equal strings mean byte-identical records. */
export const renderRecord = (r: BytesRecord): string =>
  JSON.stringify([b64(r.key), b64(r.value), r.headers.map((h) => [h.key, b64(h.value)])]);
