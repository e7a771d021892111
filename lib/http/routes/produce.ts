/**
 * Produce and InitProducerId routes (API.md "Produce"): the produce function's. Their own module, with
 * their own generated validators (lib/http/validators/produce.js), so that function carries none of
 * the fetch routes' (routes/fetch.ts).
 */
import { invalidRequest } from '../../../protocol/errors.js';
import type { ErrorCode } from '../../../protocol/errors.js';
import { parsePartitionParam } from '../../core/log/context.js';
import type { Acks, LogAppender, ProduceRecord } from '../../core/log/produce.js';
import { rejectUnknownFields } from '../body.js';
import { defineRoute } from '../define-route.js';
import type { Encoding } from '../encoding.js';
import { RECORD_BATCH_MEDIA_TYPE, decodeBytes, decodeValue, parseEncoding } from '../encoding.js';
import type { BatchResult, ProducerIdentity } from '../../wire/types.js';
import { json } from '../types.js';
import { TOPIC_ERRORS, queryParam } from './errors.js';
import '../validators/produce.js';

/** What the produce function's log routes are built from. */
export interface ProduceRoutesOptions {
  producer: LogAppender;
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

/** Produce and InitProducerId (the produce function). */
export const PRODUCE_ROUTES = [
  defineRoute<ProduceRoutesOptions>({
    method: 'POST',
    path: '/v1/topics/{topic}/records',
    quota: () => ({ type: 'producer_byte_rate' }),
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
  defineRoute<ProduceRoutesOptions>({
    method: 'POST',
    path: '/v1/topics/{topic}/partitions/{partition}/batches',
    quota: () => ({ type: 'producer_byte_rate' }),
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
  defineRoute<ProduceRoutesOptions>({
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
];

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
