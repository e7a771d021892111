/** Produce, fetch, ListOffsets and InitProducerId routes (API.md "Produce", "Fetch"). */
import { SluiceError, invalidRequest } from '../../../protocol/errors.js';
import { parsePartitionParam } from '../../core/log/context.js';
import type { Fetcher } from '../../core/log/fetch.js';
import { MAX_FETCH_BYTES, MAX_WAIT_MS } from '../../core/log/fetch.js';
import type { Acks, ProduceRecord, Producer } from '../../core/log/produce.js';
import { readJsonObject, rejectUnknownFields } from '../body.js';
import type { Encoding } from '../encoding.js';
import { decodeBytes, decodeValue, encodeBytes, encodeValue, parseEncoding } from '../encoding.js';
import type { HttpRequest, Route } from '../types.js';
import type { BatchResult, FetchResult, ListOffsetsResult, ProducerIdentity } from '../../wire/types.js';
import { json } from '../types.js';

export const RECORD_BATCH_MEDIA_TYPE = 'application/vnd.kafka.record-batch';

export interface LogRoutesOptions {
  producer: Producer;
  fetcher: Fetcher;
  maxRequestBytes: number;
}

export const produceRoutes = ({ producer, maxRequestBytes }: Omit<LogRoutesOptions, 'fetcher'>): Route[] => {
  const checkSize = (request: HttpRequest) => {
    if (request.body.length > maxRequestBytes) {
      throw new SluiceError(
        'RECORD_LIST_TOO_LARGE',
        `request body is ${request.body.length} bytes; this deployment accepts at most ${maxRequestBytes}`,
      );
    }
  };
  return [
    {
      method: 'POST',
      pattern: '/v1/topics/{topic}/records',
      handler: async (request) => {
        checkSize(request);
        const body = readJsonObject(request, maxRequestBytes);
        rejectUnknownFields(body, ['records', 'encoding', 'acks']);
        const encoding = parseEncoding(body['encoding'], 'encoding');
        const acks = parseAcks(body['acks']);
        if (!Array.isArray(body['records']) || body['records'].length === 0) {
          throw invalidRequest('records must be a non-empty array');
        }
        const records = body['records'].map((r: unknown, i: number) => parseRecord(r, i, encoding));
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
    },
    {
      method: 'POST',
      pattern: '/v1/topics/{topic}/partitions/{partition}/batches',
      handler: async (request) => {
        checkSize(request);
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
    },
    {
      method: 'POST',
      pattern: '/v1/producers',
      handler: async (request) => {
        if (request.body.length > 0) rejectUnknownFields(readJsonObject(request), []);
        return json(200, (await producer.initProducerId()) satisfies ProducerIdentity);
      },
    },
  ];
};

export const fetchRoutes = ({ fetcher }: Pick<LogRoutesOptions, 'fetcher'>): Route[] => [
  {
    method: 'GET',
    pattern: '/v1/topics/{topic}/partitions/{partition}/records',
    handler: async (request) => {
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
  },
  {
    method: 'GET',
    pattern: '/v1/topics/{topic}/partitions/{partition}/offsets',
    handler: async (request) => {
      const partition = parsePartitionParam(request.params['partition']);
      const raw = request.query['at'] ?? 'latest';
      const at = raw === 'earliest' || raw === 'latest' ? raw : intParam(raw, 'at', 0, 0);
      return json(
        200,
        (await fetcher.listOffsets(request.params['topic']!, partition, at)) satisfies ListOffsetsResult,
      );
    },
  },
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
