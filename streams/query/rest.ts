/**
 * The interactive-query routes: a key of a key-value store, a key-value store's range, and a key's
 * windows in a window or session store. Path and query parameters are checked here, before anything
 * is read; keys arrive as the store's key serde writes them (text for String, JSON text for JSON,
 * base64 for bytes) and answers render keys and values the same way (lib/wire/types.ts).
 */
import { SluiceError, invalidRequest } from '../../protocol/errors.js';
import { describeName } from '../../lib/http/limits.js';
import { bindRoutes, defineRoute } from '../../lib/http/define-route.js';
import { STREAMS_ERRORS, queryParam } from '../../lib/http/routes/errors.js';
import type { HttpRequest, Route } from '../../lib/http/types.js';
import { json } from '../../lib/http/types.js';
import { encodeBytes, encodeValue } from '../../lib/wire/encoding.js';
import type { Encoding, JsonValue, StoreKeyValue, StoreRange, StoreWindows } from '../../lib/wire/types.js';
import type { InteractiveQueries, KeyValueEntry } from './interactive.js';
import type { SerdeFormat } from './registry.js';

export const STREAMS_QUERY_LIMITS = {
  /** application.id's rule (streams/runtime/config.ts). */
  applicationId: /^[a-zA-Z0-9._-]{1,200}$/,
  /** Kafka's store names follow its topic name rule (they name changelog topics). */
  storeName: /^[a-zA-Z0-9._-]{1,249}$/,
  /** Serialized key bytes: their hex plus window times must fit DynamoDB's 1 KiB sort key. */
  maxKeyBytes: 400,
  defaultRangeLimit: 1000,
  maxRangeLimit: 10_000,
  /** Times are stored as 15 digits (streams/state/stores.ts). */
  maxTime: 10 ** 15 - 2,
} as const;

const ENCODING_OF: Record<SerdeFormat, Encoding> = { string: 'utf8', json: 'json', bytes: 'base64' };
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const checkNames = (request: HttpRequest): { app: string; store: string } => {
  const app = request.params['app'] ?? '';
  const store = request.params['store'] ?? '';
  if (!STREAMS_QUERY_LIMITS.applicationId.test(app))
    throw invalidRequest(`application id ${describeName(app)} is invalid: use 1-200 of [a-zA-Z0-9._-]`);
  if (!STREAMS_QUERY_LIMITS.storeName.test(store))
    throw invalidRequest(`store name ${describeName(store)} is invalid: use 1-249 of [a-zA-Z0-9._-]`);
  return { app, store };
};

const allowOnly = (request: HttpRequest, allowed: readonly string[]): void => {
  const unknown = Object.keys(request.query).filter((k) => !allowed.includes(k));
  if (unknown.length > 0)
    throw invalidRequest(
      `unknown query parameter(s) ${unknown.map((k) => describeName(k)).join(', ')}; this read takes ${allowed.join(', ')}`,
    );
};

/** A key as the store's key serde writes it. */
export const parseKey = (text: string, format: SerdeFormat, what = 'key'): Uint8Array => {
  let bytes: Uint8Array;
  if (format === 'string') bytes = new TextEncoder().encode(text);
  else if (format === 'json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw invalidRequest(
        `${what} ${describeName(text)} is not JSON: this store's keys use the JSON serde (a string key is quoted, e.g. "user-1")`,
      );
    }
    // The JSON serde writes JSON.stringify's form, so {"a": 1} finds the key {"a":1}.
    bytes = new TextEncoder().encode(JSON.stringify(parsed));
  } else {
    if (!BASE64.test(text))
      throw invalidRequest(`${what} ${describeName(text)} is not base64: this store's keys are bytes`);
    bytes = new Uint8Array(Buffer.from(text, 'base64'));
  }
  if (bytes.length > STREAMS_QUERY_LIMITS.maxKeyBytes)
    throw invalidRequest(
      `${what} is ${bytes.length} bytes serialized; at most ${STREAMS_QUERY_LIMITS.maxKeyBytes}`,
    );
  return bytes;
};

const time = (request: HttpRequest, name: string, fallback: number): number => {
  const raw = request.query[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d{1,16}$/.test(raw) || value > STREAMS_QUERY_LIMITS.maxTime)
    throw invalidRequest(
      `${name} must be a time in ms from 0 to ${STREAMS_QUERY_LIMITS.maxTime}, not ${describeName(raw)}`,
    );
  return value;
};

const rangeLimit = (request: HttpRequest): number => {
  const raw = request.query['limit'];
  if (raw === undefined) return STREAMS_QUERY_LIMITS.defaultRangeLimit;
  const value = Number(raw);
  if (!/^\d{1,5}$/.test(raw) || value < 1 || value > STREAMS_QUERY_LIMITS.maxRangeLimit)
    throw invalidRequest(`limit must be 1-${STREAMS_QUERY_LIMITS.maxRangeLimit}, not ${describeName(raw)}`);
  return value;
};

const render = (bytes: Uint8Array, format: SerdeFormat): JsonValue => encodeValue(bytes, ENCODING_OF[format]);

export interface StreamsQueryRoutesOptions {
  queries: InteractiveQueries;
}

const entryOf = (e: KeyValueEntry, keyFormat: SerdeFormat, valueFormat: SerdeFormat): StoreKeyValue => ({
  key: render(e.key, keyFormat),
  value: render(e.value, valueFormat),
  timestamp: e.timestamp,
});

/** Interactive queries are reads of the metadata table, as fetch's are (served by the fetch function). */
export const STREAMS_QUERY_ROUTES = [
  defineRoute<StreamsQueryRoutesOptions>({
    method: 'GET',
    path: '/v1/streams/{app}/stores/{store}/keys/{key}',
    job: 'fetch',
    // A Streams application's state belongs to its group (application.id): reading it is describing it.
    acl: { operation: 'DESCRIBE', resourceType: 'GROUP', param: 'app' },
    id: 'queryStoreKey',
    summary:
      "Interactive query of a Streams application's store: a key-value store's committed value of the key (ReadOnlyKeyValueStore.get), or a window or session store's windows of the key (ReadOnlyWindowStore.fetch(key, from, to), ReadOnlySessionStore.findSessions). The key is written as the store's key serde writes it: text (String), JSON text (JSON), base64 (bytes).",
    query: [
      queryParam(
        'windowStart',
        'integer',
        'window and session stores: windows starting (sessions ending) at or after this time, ms',
      ),
      queryParam(
        'windowEnd',
        'integer',
        'window and session stores: windows (sessions) starting at or before this time, ms',
      ),
    ],
    ok: { 200: 'StoreKeyOrWindows' },
    errors: STREAMS_ERRORS,
    handler:
      ({ queries }) =>
      async (request) => {
        const { app, store } = checkNames(request);
        allowOnly(request, ['windowStart', 'windowEnd']);
        const from = time(request, 'windowStart', 0);
        const to = time(request, 'windowEnd', STREAMS_QUERY_LIMITS.maxTime);
        if (from > to) throw invalidRequest(`windowStart ${from} is after windowEnd ${to}`);
        const windowed = 'windowStart' in request.query || 'windowEnd' in request.query;
        const s = await queries.resolve(
          app,
          store,
          windowed ? ['window', 'session'] : ['key-value', 'window', 'session'],
        );
        const { keyFormat, valueFormat } = s.description;
        const key = parseKey(request.params['key'] ?? '', keyFormat);
        if (s.description.kind === 'key-value') {
          const entry = await queries.get(s, key);
          if (!entry)
            throw new SluiceError(
              'NOT_FOUND',
              `store ${store} of ${app} has no key ${describeName(request.params['key'] ?? '')}`,
            );
          return json(200, entryOf(entry, keyFormat, valueFormat));
        }
        const windows = await queries.windows(s, key, from, to);
        const body: StoreWindows = {
          key: render(key, keyFormat),
          windows: windows.map((w) => ({ ...w, value: render(w.value, valueFormat) })),
        };
        return json(200, body);
      },
  }),
  defineRoute<StreamsQueryRoutesOptions>({
    method: 'GET',
    path: '/v1/streams/{app}/stores/{store}/keys',
    job: 'fetch',
    acl: { operation: 'DESCRIBE', resourceType: 'GROUP', param: 'app' },
    id: 'queryStoreRange',
    summary:
      "Interactive query of a key-value store's range (ReadOnlyKeyValueStore.range(from, to), or all()), in key-byte order, one page at a time.",
    query: [
      queryParam('from', 'string', 'first key, inclusive (default: the first)'),
      queryParam('to', 'string', 'last key, inclusive (default: the last)'),
      queryParam('limit', 'integer', 'entries per page, 1-10000 (default 1000); `next` starts the next page'),
    ],
    ok: { 200: 'StoreRange' },
    errors: STREAMS_ERRORS,
    handler:
      ({ queries }) =>
      async (request) => {
        const { app, store } = checkNames(request);
        allowOnly(request, ['from', 'to', 'limit']);
        const limit = rangeLimit(request);
        const s = await queries.resolve(app, store, ['key-value']);
        const { keyFormat, valueFormat } = s.description;
        const bound = (name: 'from' | 'to') => {
          const raw = request.query[name];
          return raw === undefined ? undefined : parseKey(raw, keyFormat, name);
        };
        const page = await queries.range(s, bound('from'), bound('to'), limit);
        const body: StoreRange = {
          entries: page.entries.map((e) => entryOf(e, keyFormat, valueFormat)),
          next: page.next && encodeBytes(page.next, keyFormat === 'bytes' ? 'base64' : 'utf8'),
        };
        return json(200, body);
      },
  }),
];

/** The interactive-query routes alone over one store reader. */
export const streamsQueryRoutes = (queries: InteractiveQueries): Route[] =>
  bindRoutes(STREAMS_QUERY_ROUTES, { queries });
