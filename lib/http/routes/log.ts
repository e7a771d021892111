/** Produce, fetch, ListOffsets and InitProducerId routes (API.md "Produce", "Fetch"). */
import { invalidRequest } from '../../../protocol/errors.js';
import type { ErrorCode } from '../../../protocol/errors.js';
import { parsePartitionParam } from '../../core/log/context.js';
import type { Fetcher } from '../../core/log/fetch.js';
import { MAX_FETCH_BYTES, MAX_WAIT_MS } from '../../core/log/fetch.js';
import type { Acks, LogAppender, ProduceRecord } from '../../core/log/produce.js';
import { rejectUnknownFields } from '../body.js';
import { defineRoute } from '../define-route.js';
import type { Encoding } from '../encoding.js';
import { decodeBytes, decodeValue, encodeBytes, encodeValue, parseEncoding } from '../encoding.js';
import type { BatchResult, FetchResult, ListOffsetsResult, ProducerIdentity } from '../../wire/types.js';
import { json } from '../types.js';
import { TOPIC_ERRORS, queryParam } from './errors.js';

export const RECORD_BATCH_MEDIA_TYPE = 'application/vnd.kafka.record-batch';

export interface LogRoutesOptions {
  producer: LogAppender;
  fetcher: Fetcher;
  maxRequestBytes: number;
}

const PRODUCE_ERRORS: ErrorCode[] = [
  ...TOPIC_ERRORS,
  'INVALID_RECORD',
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'NOT_ENOUGH_REPLICAS',
  'NOT_LEADER_OR_FOLLOWER',
  'FENCED_LEADER_EPOCH',
];

export const LOG_ROUTES = [
  defineRoute<LogRoutesOptions>({
    method: 'POST',
    path: '/v1/topics/{topic}/records',
    job: 'produce',
    acl: { operation: 'WRITE', resourceType: 'TOPIC', param: 'topic' },
    id: 'produce',
    summary: 'Produce JSON records; one result per record, in order.',
    body: 'Produce',
    maxRecordBytes: ({ maxRequestBytes }) => maxRequestBytes,
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          '1-128 characters: a retry with the same key writes nothing and answers the original offsets',
      },
    ],
    ok: { 200: 'ProduceResults' },
    errors: ['IDEMPOTENCY_KEY_REUSED', ...PRODUCE_ERRORS],
    handler:
      ({ producer }) =>
      async (request, body = {}) => {
        const encoding = parseEncoding(body['encoding'], 'encoding');
        const acks = parseAcks(body['acks']);
        const records = (body['records'] as unknown[]).map((r: unknown, i: number) =>
          parseRecord(r, i, encoding),
        );
        const idempotencyKey = request.headers['idempotency-key'];
        if (idempotencyKey !== undefined && (idempotencyKey.length < 1 || idempotencyKey.length > 128)) {
          throw invalidRequest('Idempotency-Key must be 1-128 characters');
        }
        const results = await producer.produce(request.params['topic']!, {
          records,
          acks,
          ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
        });
        return json(200, { results });
      },
  }),
  defineRoute<LogRoutesOptions>({
    method: 'POST',
    path: '/v1/topics/{topic}/partitions/{partition}/batches',
    job: 'produce',
    acl: { operation: 'WRITE', resourceType: 'TOPIC', param: 'topic' },
    id: 'produceBatches',
    summary:
      "Produce Kafka RecordBatch v2 bytes; idempotent by the batch header's producer id, epoch and sequence.",
    body: 'batches',
    maxRecordBytes: ({ maxRequestBytes }) => maxRequestBytes,
    query: [queryParam('acks', 'string', 'all (default) or 1')],
    ok: { 200: 'BatchResult' },
    errors: [
      'UNKNOWN_PRODUCER_ID',
      ...TOPIC_ERRORS,
      'CORRUPT_MESSAGE',
      'INVALID_RECORD',
      'UNSUPPORTED_COMPRESSION_TYPE',
      'MESSAGE_TOO_LARGE',
      'RECORD_LIST_TOO_LARGE',
      'INVALID_PRODUCER_EPOCH',
      'OUT_OF_ORDER_SEQUENCE_NUMBER',
      'NOT_ENOUGH_REPLICAS',
      'NOT_LEADER_OR_FOLLOWER',
      'FENCED_LEADER_EPOCH',
    ],
    handler:
      ({ producer }) =>
      async (request) => {
        const type = request.headers['content-type'] ?? '';
        if (!type.toLowerCase().startsWith(RECORD_BATCH_MEDIA_TYPE)) {
          throw invalidRequest(`content-type must be ${RECORD_BATCH_MEDIA_TYPE}, got ${type || 'none'}`);
        }
        const partition = parsePartitionParam(request.params['partition']);
        const acks = parseAcks(request.query['acks']);
        return json(
          200,
          (await producer.produceBatches(
            request.params['topic']!,
            partition,
            request.body,
            acks,
          )) satisfies BatchResult,
        );
      },
  }),
  defineRoute<LogRoutesOptions>({
    method: 'POST',
    path: '/v1/producers',
    job: 'produce',
    acl: { operation: 'IDEMPOTENT_WRITE', resourceType: 'CLUSTER' },
    id: 'initProducerId',
    summary: 'InitProducerId.',
    body: 'InitProducerId',
    bodyOptional: true,
    ok: { 200: 'ProducerId' },
    errors: [],
    handler:
      ({ producer }) =>
      async () =>
        json(200, (await producer.initProducerId()) satisfies ProducerIdentity),
  }),
  defineRoute<LogRoutesOptions>({
    method: 'GET',
    path: '/v1/topics/{topic}/partitions/{partition}/records',
    job: 'fetch',
    acl: { operation: 'READ', resourceType: 'TOPIC', param: 'topic' },
    id: 'fetch',
    summary:
      'Fetch records below the high watermark from an offset; with Accept: application/vnd.kafka.record-batch, whole stored batches.',
    query: [
      queryParam('offset', 'integer', 'default 0'),
      queryParam('maxBytes', 'integer', 'default 1048576, at most 4194304; at least one record comes back'),
      queryParam('maxWaitMs', 'integer', 'long poll, at most 20000 (default 0)'),
      queryParam('encoding', 'string', 'utf8 (default), base64 or json'),
      queryParam('replica', 'string', 'read from this in-sync replica store'),
    ],
    ok: { 200: 'fetch' },
    errors: [...TOPIC_ERRORS, 'OFFSET_OUT_OF_RANGE', 'NOT_LEADER_OR_FOLLOWER'],
    handler:
      ({ fetcher }) =>
      async (request) => {
        const partition = parsePartitionParam(request.params['partition']);
        const { query } = request;
        const fetch = {
          offset: intParam(query['offset'], 'offset', 0, 0),
          maxBytes: Math.min(intParam(query['maxBytes'], 'maxBytes', 1_048_576, 1), MAX_FETCH_BYTES),
          maxWaitMs: intParam(query['maxWaitMs'], 'maxWaitMs', 0, 0, MAX_WAIT_MS),
          ...(query['replica'] !== undefined ? { replica: query['replica'] } : {}),
        };
        const topic = request.params['topic']!;
        if ((request.headers['accept'] ?? '').toLowerCase().includes(RECORD_BATCH_MEDIA_TYPE)) {
          const result = await fetcher.fetchBatches(topic, partition, fetch);
          return {
            status: 200,
            headers: {
              'content-type': RECORD_BATCH_MEDIA_TYPE,
              'sluice-high-watermark': String(result.highWatermark),
              'sluice-log-start-offset': String(result.logStartOffset),
              'sluice-next-offset': String(result.nextOffset),
            },
            body: Buffer.concat(result.batches),
          };
        }
        const encoding = parseEncoding(query['encoding'], 'encoding');
        const result = await fetcher.fetchRecords(topic, partition, fetch);
        return json(200, {
          records: result.records.map((r) => renderRecord(r, encoding)),
          nextOffset: result.nextOffset,
          highWatermark: result.highWatermark,
          logStartOffset: result.logStartOffset,
        } satisfies FetchResult);
      },
  }),
  defineRoute<LogRoutesOptions>({
    method: 'GET',
    path: '/v1/topics/{topic}/partitions/{partition}/offsets',
    job: 'fetch',
    acl: { operation: 'DESCRIBE', resourceType: 'TOPIC', param: 'topic' },
    id: 'listOffsets',
    summary: 'ListOffsets: earliest, latest, or the first offset at or after a timestamp.',
    query: [queryParam('at', 'string', 'earliest | latest (default) | a timestamp in ms')],
    ok: { 200: 'ListOffsets' },
    errors: TOPIC_ERRORS,
    handler:
      ({ fetcher }) =>
      async (request) => {
        const partition = parsePartitionParam(request.params['partition']);
        const raw = request.query['at'] ?? 'latest';
        const at = raw === 'earliest' || raw === 'latest' ? raw : intParam(raw, 'at', 0, 0);
        return json(
          200,
          (await fetcher.listOffsets(request.params['topic']!, partition, at)) satisfies ListOffsetsResult,
        );
      },
  }),
];

const renderRecord = (
  r: {
    offset: number;
    timestamp: number;
    key: Uint8Array | null;
    value: Uint8Array | null;
    headers: { key: string; value: Uint8Array | null }[];
  },
  encoding: Encoding,
) => ({
  offset: r.offset,
  timestamp: r.timestamp,
  key: encodeBytes(r.key, encoding === 'base64' ? 'base64' : 'utf8'),
  value: encodeValue(r.value, encoding),
  headers: r.headers.map((h) => ({
    key: h.key,
    value: encodeBytes(h.value, encoding === 'base64' ? 'base64' : 'utf8'),
  })),
});

const parseAcks = (raw: unknown): Acks => {
  if (raw === undefined || raw === 'all' || raw === '-1' || raw === -1) return 'all';
  if (raw === '1' || raw === 1) return '1';
  throw invalidRequest(
    `acks must be "all" or "1" (acks=0 is not offered over HTTP), got ${JSON.stringify(raw)}`,
  );
};

const parseRecord = (raw: unknown, i: number, encoding: Encoding): ProduceRecord => {
  const where = `records[${i}]`;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw invalidRequest(`${where} must be an object`);
  const r = raw as Record<string, unknown>;
  rejectUnknownFields(r, ['key', 'value', 'headers', 'partition', 'timestamp'], where);
  const keyEncoding = encoding === 'base64' ? 'base64' : 'utf8';
  const headers = r['headers'] ?? [];
  if (!Array.isArray(headers)) throw invalidRequest(`${where}.headers must be an array`);
  const record: ProduceRecord = {
    key: decodeBytes(r['key'], keyEncoding, `${where}.key`),
    value: decodeValue(r['value'], encoding, `${where}.value`),
    headers: headers.map((h: unknown, j: number) => {
      const hw = `${where}.headers[${j}]`;
      if (h === null || typeof h !== 'object' || Array.isArray(h))
        throw invalidRequest(`${hw} must be an object`);
      const header = h as Record<string, unknown>;
      rejectUnknownFields(header, ['key', 'value'], hw);
      if (typeof header['key'] !== 'string') throw invalidRequest(`${hw}.key must be a string`);
      return { key: header['key'], value: decodeBytes(header['value'], keyEncoding, `${hw}.value`) };
    }),
  };
  if (r['partition'] !== undefined && r['partition'] !== null) {
    const p = r['partition'];
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 0)
      throw invalidRequest(`${where}.partition must be an integer ≥ 0`);
    record.partition = p;
  }
  if (r['timestamp'] !== undefined && r['timestamp'] !== null) {
    const t = r['timestamp'];
    if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 0)
      throw invalidRequest(`${where}.timestamp must be ms since the epoch`);
    record.timestamp = t;
  }
  return record;
};

const intParam = (
  raw: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number => {
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max || !Number.isSafeInteger(Number(raw))) {
    throw invalidRequest(`${name} must be an integer in [${min}, ${max}], got ${raw}`);
  }
  return Number(raw);
};
