/**
 * Fetch and ListOffsets routes (API.md "Fetch"): the fetch function's. Their own module, with their own
 * generated validators (lib/http/validators/fetch.js), so that function carries none of the produce
 * routes' (routes/produce.ts).
 */
import { invalidRequest } from '../../../protocol/errors.js';
import { parsePartitionParam } from '../../core/log/context.js';
import type { Fetcher } from '../../core/log/fetch.js';
import type { Waiters } from '../../core/log/waiters.js';
import type {
  MultiFetchRequest,
  PartitionFetch,
  PartitionFetchResult,
  WaitConnection,
} from '../../core/log/fetch-request.js';
import { MAX_FETCH_BYTES, MAX_FETCH_PARTITIONS, MAX_WAIT_MS } from '../../core/log/fetch-request.js';
import type { IsolationLevel } from '../../core/transactions/index.js';
import { rejectUnknownFields } from '../body.js';
import { defineRoute } from '../define-route.js';
import type { Encoding } from '../encoding.js';
import { RECORD_BATCH_MEDIA_TYPE, encodeBytes, encodeValue, parseEncoding } from '../encoding.js';
import type {
  FetchResult,
  ListOffsetsResult,
  MultiFetchResult,
  PartitionFetchAnswer,
} from '../../wire/types.js';
import { json } from '../types.js';
import { TOPIC_ERRORS, queryParam } from './errors.js';
import '../validators/fetch.js';

/** What the fetch function's log routes are built from. */
export interface FetchRoutesOptions {
  fetcher: Fetcher;
  /** Where POST /v1/fetch's `wait` registers (absent: a fetch naming a connection is refused). */
  waiters?: Waiters;
}

/** Fetch and ListOffsets (the fetch function). */
export const FETCH_ROUTES = [
  defineRoute<FetchRoutesOptions>({
    method: 'POST',
    path: '/v1/fetch',
    quota: () => ({ type: 'consumer_byte_rate' }),
    job: 'fetch',
    // Kafka's Fetch names its topics in the body: READ on each is checked (lib/auth/acl.ts impliedChecks).
    acl: { operation: 'DESCRIBE', resourceType: 'CLUSTER' },
    bodyNamesResources: true,
    id: 'fetchMany',
    summary:
      "Kafka's Fetch over many partitions: one long poll that answers as soon as any partition has data past its offset or an error, else when maxWaitMs ends; whole stored batches per partition, each partition's error its own.",
    body: 'MultiFetch',
    ok: { 200: 'MultiFetchResult' },
    errors: ['TOPIC_AUTHORIZATION_FAILED'],
    handler:
      ({ fetcher, waiters }) =>
      async (request, body = {}) => {
        const fetch = parseMultiFetch(body);
        const { wait } = fetch;
        // A connection the caller may not register on refuses the whole fetch, before anything is read.
        if (wait) {
          if (!waiters) throw invalidRequest('this deployment has no wait socket; leave wait out');
          await waiters.verify(wait.connectionId, wait.token, request.caller?.principalArn);
        }
        const results = await fetcher.fetchMany(fetch);
        const waitingAt = wait
          ? await waiters!.registerFetched(wait.connectionId, fetch.partitions, results, fetch.isolationLevel)
          : [];
        return json(200, {
          partitions: results.map((r, i) => {
            const at = waitingAt[i];
            return at === undefined ? renderPartitionFetch(r) : { ...renderPartitionFetch(r), waitingAt: at };
          }),
        } satisfies MultiFetchResult);
      },
  }),
  defineRoute<FetchRoutesOptions>({
    method: 'GET',
    path: '/v1/topics/{topic}/partitions/{partition}/records',
    quota: () => ({ type: 'consumer_byte_rate' }),
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
      queryParam(
        'isolationLevel',
        'string',
        'read_uncommitted (default) or read_committed: stop at the last stable offset; JSON answers leave out aborted records, batch answers list the aborted transactions in the sluice-aborted-transactions header',
      ),
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
          isolationLevel: parseIsolation(query['isolationLevel']),
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
              ...(result.lastStableOffset !== undefined
                ? {
                    'sluice-last-stable-offset': String(result.lastStableOffset),
                    'sluice-aborted-transactions': JSON.stringify(result.abortedTransactions ?? []),
                  }
                : {}),
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
          ...(result.lastStableOffset !== undefined ? { lastStableOffset: result.lastStableOffset } : {}),
        } satisfies FetchResult);
      },
  }),
  defineRoute<FetchRoutesOptions>({
    method: 'GET',
    path: '/v1/topics/{topic}/partitions/{partition}/offsets',
    job: 'fetch',
    acl: { operation: 'DESCRIBE', resourceType: 'TOPIC', param: 'topic' },
    id: 'listOffsets',
    summary: 'ListOffsets: earliest, latest, or the first offset at or after a timestamp.',
    query: [
      queryParam('at', 'string', 'earliest | latest (default) | a timestamp in ms'),
      queryParam('isolationLevel', 'string', 'read_committed: latest answers the last stable offset'),
    ],
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
          (await fetcher.listOffsets(
            request.params['topic']!,
            partition,
            at,
            parseIsolation(request.query['isolationLevel']),
          )) satisfies ListOffsetsResult,
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

const parseIsolation = (raw: string | undefined): IsolationLevel => {
  if (raw === undefined || raw === 'read_uncommitted') return 'read_uncommitted';
  if (raw === 'read_committed') return raw;
  throw invalidRequest(
    `isolationLevel must be read_uncommitted or read_committed, got ${JSON.stringify(raw)}`,
  );
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

const DEFAULT_PARTITION_MAX_BYTES = 1_048_576;

const integerField = (
  value: unknown,
  name: string,
  fallback: number | undefined,
  min: number,
  max: number,
) => {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidRequest(`${name} must be an integer in [${min}, ${max}]`);
  }
  return value;
};

/** The body of POST /v1/fetch (docs/api.md "Fetch many partitions"); anything else is a 400. */
const parseMultiFetch = (body: Record<string, unknown>): MultiFetchRequest => {
  rejectUnknownFields(body, ['partitions', 'maxBytes', 'maxWaitMs', 'isolationLevel', 'wait']);
  const wait = parseWaitConnection(body['wait']);
  const raw = body['isolationLevel'];
  if (raw !== undefined && typeof raw !== 'string')
    throw invalidRequest('isolationLevel must be read_uncommitted or read_committed');
  const isolationLevel = parseIsolation(raw);
  const maxWaitMs = integerField(body['maxWaitMs'], 'maxWaitMs', 0, 0, MAX_WAIT_MS);
  const maxBytes = Math.min(
    integerField(body['maxBytes'], 'maxBytes', MAX_FETCH_BYTES, 1, Number.MAX_SAFE_INTEGER),
    MAX_FETCH_BYTES,
  );
  const list = body['partitions'];
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_FETCH_PARTITIONS) {
    throw invalidRequest(`partitions must be an array of 1 to ${MAX_FETCH_PARTITIONS} partitions`);
  }
  const seen = new Set<string>();
  const partitions = list.map((raw: unknown, i): PartitionFetch => {
    const where = `partitions[${i}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw invalidRequest(`${where} must be an object`);
    }
    const p = raw as Record<string, unknown>;
    rejectUnknownFields(p, ['topic', 'partition', 'offset', 'maxBytes', 'waitingAt'], where);
    const topic = p['topic'];
    if (typeof topic !== 'string' || topic.length === 0 || topic.length > 249) {
      throw invalidRequest(`${where}.topic must be a topic name`);
    }
    const partition = integerField(p['partition'], `${where}.partition`, undefined, 0, 2 ** 31 - 1);
    const offset = integerField(p['offset'], `${where}.offset`, undefined, 0, Number.MAX_SAFE_INTEGER);
    const partitionMaxBytes = Math.min(
      integerField(
        p['maxBytes'],
        `${where}.maxBytes`,
        DEFAULT_PARTITION_MAX_BYTES,
        1,
        Number.MAX_SAFE_INTEGER,
      ),
      MAX_FETCH_BYTES,
    );
    const waitingAt =
      p['waitingAt'] === undefined
        ? undefined
        : integerField(p['waitingAt'], `${where}.waitingAt`, undefined, 0, Number.MAX_SAFE_INTEGER);
    if (waitingAt !== undefined && !wait) throw invalidRequest(`${where}.waitingAt needs wait`);
    const id = `${topic}\u0000${partition}`;
    if (seen.has(id)) throw invalidRequest(`${where} repeats ${topic}-${partition}`);
    seen.add(id);
    return {
      topic,
      partition,
      offset,
      maxBytes: partitionMaxBytes,
      ...(waitingAt !== undefined ? { waitingAt } : {}),
    };
  });
  return { partitions, maxBytes, maxWaitMs, isolationLevel, ...(wait ? { wait } : {}) };
};

/** POST /v1/fetch's `wait`: `{"connectionId", "token"}` from the wait socket's hello frame. */
const parseWaitConnection = (raw: unknown): WaitConnection | undefined => {
  if (raw === undefined) return undefined;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw invalidRequest('wait must be an object {connectionId, token}');
  const w = raw as Record<string, unknown>;
  rejectUnknownFields(w, ['connectionId', 'token'], 'wait');
  const { connectionId, token } = w;
  // API Gateway's connection ids are 16 characters; tokens are 32. Anything far longer is a lie.
  if (typeof connectionId !== 'string' || connectionId.length === 0 || connectionId.length > 128)
    throw invalidRequest('wait.connectionId must be the connection id its hello frame named');
  if (typeof token !== 'string' || token.length === 0 || token.length > 128)
    throw invalidRequest('wait.token must be the token its hello frame handed');
  return { connectionId, token };
};

/** A partition's answer on the wire: its batches in base64, or its error as the error envelope has it. */
const renderPartitionFetch = (result: PartitionFetchResult): PartitionFetchAnswer => {
  const id = { topic: result.topic, partition: result.partition };
  if ('error' in result) {
    const e = result.error;
    // As the router answers a 500: its words are for the log, never for the client.
    const message = e.code === 'UNKNOWN_SERVER_ERROR' ? 'internal error; see the server log' : e.message;
    const bounds = e.details ?? {};
    return {
      ...id,
      error: { code: e.code, message, retriable: e.retriable },
      ...(typeof bounds['highWatermark'] === 'number' ? { highWatermark: bounds['highWatermark'] } : {}),
      ...(typeof bounds['logStartOffset'] === 'number' ? { logStartOffset: bounds['logStartOffset'] } : {}),
    };
  }
  return {
    ...id,
    highWatermark: result.highWatermark,
    logStartOffset: result.logStartOffset,
    nextOffset: result.nextOffset,
    ...(result.lastStableOffset !== undefined ? { lastStableOffset: result.lastStableOffset } : {}),
    ...(result.abortedTransactions ? { abortedTransactions: result.abortedTransactions } : {}),
    recordBatches: Buffer.concat(result.batches).toString('base64'),
  };
};
