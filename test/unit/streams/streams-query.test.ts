/**
 * Interactive queries through the router and the SDK, over state that real stream tasks wrote into
 * the metadata table: a word count (String keys, JSON counts), a tumbling-window count and a session
 * count, each with its tasks spread over three partitions. Answers are checked whole; hostile paths
 * and parameters get 400s that read nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { partitionForKey } from '../../../protocol/partitioner.js';
import { topology as pageViews } from '../../../examples/page-views.js';
import { SluiceClient } from '../../../sdk/client.js';
import { SluiceError } from '../../../sdk/errors.js';
import {
  Consumed,
  JoinWindows,
  Materialized,
  Serdes,
  SessionWindows,
  StreamsBuilder,
  TimeWindows,
} from '../../../streams/index.js';
import type { Topology } from '../../../streams/index.js';
import { describeStores, registerStores } from '../../../streams/query/registry.js';
import { parseKey } from '../../../streams/query/rest.js';
import { MetadataStateBackend } from '../../../streams/state/metadata-backend.js';
import { StreamTask } from '../../../streams/task.js';
import { conformanceProblems } from '../../support/openapi-conformance.js';
import type { Exchange } from '../../support/router-fetch.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

const PARTITIONS = 3;
const APP = 'iq-app';
const T0 = 1_700_000_000_000;

const topology = (): Topology => {
  const builder = new StreamsBuilder();
  const words = builder.stream<string, string>('words');
  words.groupByKey().count(Materialized.as('counts'));
  words.groupByKey().windowedBy(TimeWindows.ofSizeWithNoGrace(60_000)).count(Materialized.as('per-minute'));
  words
    .groupByKey()
    .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(10_000))
    .count(Materialized.as('sessions'));
  builder
    .stream('blobs', Consumed.with(Serdes.Bytes(), Serdes.JSON<{ v: number }>()))
    .groupByKey()
    .reduce((_a, b) => b, Materialized.as('latest'));
  return builder.build();
};

let http: ReturnType<typeof memorySluice>['http'];
/** Every answer of the tests below, held to docs/openapi.json at the end. */
const exchanges: Exchange[] = [];
let client: SluiceClient;

/** Runs records through the task of `partition` and writes its state as a commit would. */
const process = async (
  t: Topology,
  backend: MetadataStateBackend,
  topic: string,
  partition: number,
  records: { key: string | Uint8Array; value: string; timestamp: number }[],
): Promise<void> => {
  const sub = t.subTopologies.find((s) => s.sources.some((src) => src.name === topic))!;
  const task = new StreamTask(t, sub, partition, APP, backend, { send: () => undefined });
  for (const r of records)
    await task.process({
      topic,
      key: typeof r.key === 'string' ? Buffer.from(r.key) : r.key,
      value: Buffer.from(r.value),
      timestamp: r.timestamp,
      headers: [],
    });
  await task.stores.flush();
};

const home = (key: string): number => partitionForKey(Buffer.from(key), PARTITIONS);
const WORDS = ['apple', 'banana', 'cherry', 'date', 'elder', 'fig'];
/** How many records each word gets: more for later words of its partition, so counts differ. */
const countOf = (w: string): number => WORDS.filter((x) => home(x) === home(w)).indexOf(w) + 1 + w.length;
const lastTime = (w: string): number => T0 + (countOf(w) - 1) * 25_000;

beforeAll(async () => {
  const m = memorySluice();
  http = m.http;
  client = new SluiceClient({
    url: 'http://sluice.test',
    fetch: routerFetch(m.sluice.router(), (e) => exchanges.push(e)),
    retry: { retries: 0 },
  });
  const t = topology();
  const backend = new MetadataStateBackend(m.sluice.store, APP);
  await registerStores(m.sluice.store, APP, describeStores(t, PARTITIONS));
  for (let p = 0; p < PARTITIONS; p++) {
    const mine = WORDS.filter((w) => home(w) === p);
    // In time order across keys, so that no record is late for its window.
    const records = mine
      .flatMap((w) =>
        Array.from({ length: countOf(w) }, (_, n) => ({ key: w, value: 'x', timestamp: T0 + n * 25_000 })),
      )
      .sort((a, b) => a.timestamp - b.timestamp);
    await process(t, backend, 'words', p, records);
  }
  // A key written to a partition the default partitioner would not pick is still found.
  await process(t, backend, 'words', (home('stray') + 1) % PARTITIONS, [
    { key: 'stray', value: 'x', timestamp: T0 },
  ]);
  // Bytes keys (not UTF-8), JSON values: the later value of a key wins (reduce).
  const blob = Buffer.from([0, 1, 0xff]);
  await process(t, backend, 'blobs', partitionForKey(blob, PARTITIONS), [
    { key: blob, value: '{"v":1}', timestamp: T0 },
    { key: blob, value: '{"v":2}', timestamp: T0 + 5 },
  ]);
});

const get = async (path: string) => {
  const r = await http('GET', path);
  const [pathname, search = ''] = path.split('?');
  exchanges.push({
    method: 'GET',
    path: pathname!,
    query: Object.fromEntries(new URLSearchParams(search)),
    status: r.status,
    contentType: r.headers?.['content-type'] ?? '',
    body: r.body,
  });
  return { status: r.status, body: r.body as Record<string, unknown> };
};
const code = async (path: string) => {
  const r = await get(path);
  return `${r.status} ${(r.body['error'] as { code: string } | undefined)?.code ?? ''}`;
};
const S = `/v1/streams/${APP}/stores`;

describe('the registry', () => {
  it('lives under ST#{app}#, the only keys besides S#{app}# a deployed app may write', async () => {
    const { sluice } = memorySluice();
    await registerStores(sluice.store, 'wc', { partitions: 1, stores: {} });
    expect(await sluice.store.get({ pk: 'ST#wc#STORES', sk: 'STORES' })).toEqual({
      pk: 'ST#wc#STORES',
      sk: 'STORES',
      partitions: 1,
      stores: {},
    });
  });

  it('leaves out suppression buffers and join windows, which only their processors read', () => {
    expect(describeStores(pageViews(), 2).stores).toEqual({
      'views-per-minute': { kind: 'window', subTopology: 0, keyFormat: 'string', valueFormat: 'json' },
    });
    const builder = new StreamsBuilder();
    builder
      .stream<string, string>('left')
      .join(
        builder.stream<string, string>('right'),
        (l, r) => `${l}${r}`,
        JoinWindows.ofTimeDifferenceWithNoGrace(1000),
      )
      .to('joined');
    expect(describeStores(builder.build(), 1)).toEqual({ partitions: 1, stores: {} });
  });

  it('records each queryable store with its kind, sub-topology and serde formats', () => {
    expect(describeStores(topology(), PARTITIONS)).toEqual({
      partitions: 3,
      stores: {
        counts: { kind: 'key-value', subTopology: 0, keyFormat: 'string', valueFormat: 'json' },
        'per-minute': { kind: 'window', subTopology: 0, keyFormat: 'string', valueFormat: 'json' },
        sessions: { kind: 'session', subTopology: 0, keyFormat: 'string', valueFormat: 'json' },
        latest: { kind: 'key-value', subTopology: 1, keyFormat: 'bytes', valueFormat: 'json' },
      },
    });
  });
});

describe('GET /v1/streams/{app}/stores/{store}/keys/{key}', () => {
  it('answers a key-value store’s committed value with its timestamp, from the key’s own task', async () => {
    const r = await get(`${S}/counts/keys/apple`);
    expect(r).toEqual({
      status: 200,
      body: { key: 'apple', value: countOf('apple'), timestamp: lastTime('apple') },
    });
  });

  it('counts match what was processed, key by key, and a key in a foreign partition is found', async () => {
    const all = (await client.streams(APP).range('counts')).entries;
    expect(all.map((e) => e.key)).toEqual(['apple', 'banana', 'cherry', 'date', 'elder', 'fig', 'stray']);
    for (const e of all) expect(await client.streams(APP).get('counts', e.key as string)).toEqual(e);
    expect(all.slice(0, 6)).toEqual(
      WORDS.map((w) => ({ key: w, value: countOf(w), timestamp: lastTime(w) })),
    );
    expect(await client.streams(APP).get('counts', 'stray')).toEqual({
      key: 'stray',
      value: 1,
      timestamp: T0,
    });
  });

  it('answers 404s with Kafka-style codes for an unknown app, store and key', async () => {
    expect(await code('/v1/streams/nobody/stores/counts/keys/apple')).toBe('404 GROUP_ID_NOT_FOUND');
    const store = await get(`${S}/nope/keys/apple`);
    expect(store.status).toBe(404);
    expect(store.body['error']).toEqual({
      code: 'UNKNOWN_STATE_STORE',
      message: `application ${APP} has no state store nope; its stores: counts, latest, per-minute, sessions`,
      retriable: false,
    });
    expect(await code(`${S}/counts/keys/zebra`)).toBe('404 NOT_FOUND');
    expect(await client.streams(APP).get('counts', 'zebra')).toBeUndefined();
    await expect(client.streams('nobody').get('counts', 'apple')).rejects.toMatchObject({
      code: 'GROUP_ID_NOT_FOUND',
      status: 404,
    });
  });

  it('reads bytes keys as base64 and renders them so', async () => {
    expect(await get(`${S}/latest/keys/AAH%2F`)).toEqual({
      status: 200,
      body: { key: 'AAH/', value: { v: 2 }, timestamp: T0 + 5 },
    });
    expect(await code(`${S}/latest/keys/AAEC`)).toBe('404 NOT_FOUND');
    expect((await client.streams(APP).range('latest')).entries).toEqual([
      { key: 'AAH/', value: { v: 2 }, timestamp: T0 + 5 },
    ]);
    expect(await code(`${S}/latest/keys/not*base64`)).toBe('400 INVALID_REQUEST');
  });
});

describe('window and session reads', () => {
  it('fetch(key, from, to): the windows that start in [windowStart, windowEnd], in time order', async () => {
    const every = await client.streams(APP).windows('per-minute', 'fig');
    // fig's records come every 25 s from T0: tumbling windows of 60 s aligned to the epoch, each
    // counting its records and stamped with its latest record's time.
    const fig = (await client.streams(APP).get('counts', 'fig'))!.value as number;
    const expected = new Map<number, { windowStart: number; value: number; timestamp: number }>();
    for (let n = 0; n < fig; n++) {
      const t = T0 + n * 25_000;
      const start = t - (t % 60_000);
      const w = expected.get(start) ?? { windowStart: start, value: 0, timestamp: t };
      expected.set(start, { ...w, value: w.value + 1, timestamp: t });
    }
    expect(every).toEqual({ key: 'fig', windows: [...expected.values()] });
    expect(every.windows.length).toBeGreaterThan(2);
    const [first, second] = every.windows.map((w) => w.windowStart) as [number, number];
    const one = await client.streams(APP).windows('per-minute', 'fig', { from: second, to: second });
    expect(one.windows).toEqual([every.windows[1]]);
    const none = await client.streams(APP).windows('per-minute', 'fig', { from: first + 1, to: second - 1 });
    expect(none).toEqual({ key: 'fig', windows: [] });
  });

  it('session stores answer sessions with their end, filtered as findSessions(key, from, to)', async () => {
    const all = await client.streams(APP).windows('sessions', 'apple');
    // Records 25 s apart never share a 10 s session: one session per record, each of count 1.
    const n = (await client.streams(APP).get('counts', 'apple'))!.value as number;
    expect(all.windows).toHaveLength(n);
    expect(all.windows[0]).toEqual({ windowStart: T0, windowEnd: T0, value: 1, timestamp: T0 });
    const later = await client.streams(APP).windows('sessions', 'apple', { from: T0 + 1 });
    expect(later.windows.map((w) => w.windowStart)).toEqual(all.windows.slice(1).map((w) => w.windowStart));
  });

  it('refuses window bounds on a key-value store and a range on a window store', async () => {
    expect(await code(`${S}/counts/keys/apple?windowStart=0`)).toBe('400 INVALID_REQUEST');
    expect(await code(`${S}/per-minute/keys`)).toBe('400 INVALID_REQUEST');
  });
});

describe('GET /v1/streams/{app}/stores/{store}/keys (range)', () => {
  it('range(from, to) is inclusive at both ends, in key-byte order, across tasks', async () => {
    const r = await client.streams(APP).range('counts', { from: 'banana', to: 'elder' });
    expect(r.entries.map((e) => e.key)).toEqual(['banana', 'cherry', 'date', 'elder']);
    expect(r.next).toBeNull();
    const open = await client.streams(APP).range('counts', { from: 'e' });
    expect(open.entries.map((e) => e.key)).toEqual(['elder', 'fig', 'stray']);
    const upTo = await client.streams(APP).range('counts', { to: 'cherry' });
    expect(upTo.entries.map((e) => e.key)).toEqual(['apple', 'banana', 'cherry']);
    expect((await client.streams(APP).range('counts', { from: 'z' })).entries).toEqual([]);
    expect((await client.streams(APP).range('counts', { from: 'f', to: 'b' })).entries).toEqual([]);
  });

  it('pages by limit: next is the first key left out, and the pages add up to all()', async () => {
    const keys: unknown[] = [];
    let from: string | undefined;
    let pages = 0;
    do {
      const page = await client.streams(APP).range('counts', { limit: 2, ...(from ? { from } : {}) });
      keys.push(...page.entries.map((e) => e.key));
      from = page.next ?? undefined;
      pages++;
    } while (from !== undefined);
    expect(pages).toBe(4);
    expect(keys).toEqual(['apple', 'banana', 'cherry', 'date', 'elder', 'fig', 'stray']);
  });
});

describe('hostile paths and parameters: refused before anything is read', () => {
  it.each([
    [`/v1/streams/bad%20app/stores/counts/keys/a`, '400 INVALID_REQUEST'],
    [`/v1/streams/${'a'.repeat(201)}/stores/counts/keys/a`, '400 INVALID_REQUEST'],
    // Not a canonical path (an encoded / outside the key, broken percent-encoding): no route (404).
    [`${S}/bad%2Fstore/keys/a`, '404 NOT_FOUND'],
    [`${S}/${'s'.repeat(250)}/keys/a`, '400 INVALID_REQUEST'],
    [`${S}/counts/keys/${'k'.repeat(401)}`, '400 INVALID_REQUEST'],
    [`${S}/counts/keys/%E0%A4%A`, '404 NOT_FOUND'],
    [`${S}/counts/keys/apple?windowStart=-1`, '400 INVALID_REQUEST'],
    [`${S}/per-minute/keys/apple?windowStart=abc`, '400 INVALID_REQUEST'],
    [`${S}/per-minute/keys/apple?windowStart=5&windowEnd=4`, '400 INVALID_REQUEST'],
    [`${S}/per-minute/keys/apple?windowEnd=99999999999999999`, '400 INVALID_REQUEST'],
    [`${S}/counts/keys/apple?from=a`, '400 INVALID_REQUEST'],
    [`${S}/counts/keys?limit=0`, '400 INVALID_REQUEST'],
    [`${S}/counts/keys?limit=10001`, '400 INVALID_REQUEST'],
    [`${S}/counts/keys?limit=1.5`, '400 INVALID_REQUEST'],
    [`${S}/counts/keys?to=${'t'.repeat(401)}`, '400 INVALID_REQUEST'],
    [`${S}/counts/keys?offset=3`, '400 INVALID_REQUEST'],
  ])('%s → %s', async (path, expected) => {
    expect(await code(path)).toBe(expected);
  });

  it('says what is wrong in words a user can act on', async () => {
    const r = await get(`${S}/counts/keys/${'k'.repeat(401)}`);
    expect((r.body['error'] as { message: string }).message).toBe('key is 401 bytes serialized; at most 400');
    const q = await get(`${S}/counts/keys?offset=3`);
    expect((q.body['error'] as { message: string }).message).toBe(
      'unknown query parameter(s) "offset"; this read takes from, to, limit',
    );
  });

  it('keys are data: a 400-byte key, a slash and non-ASCII text are looked up, not refused', async () => {
    expect(await code(`${S}/counts/keys/${'k'.repeat(400)}`)).toBe('404 NOT_FOUND');
    expect(await code(`${S}/counts/keys/a%2Fb`)).toBe('404 NOT_FOUND');
    expect(await code(`${S}/counts/keys/%C3%A9t%C3%A9`)).toBe('404 NOT_FOUND');
  });
});

describe('the SDK', () => {
  it('get() is for key-value stores, windows() for window and session stores; query() takes either', async () => {
    await expect(client.streams(APP).get('per-minute', 'fig')).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'store per-minute is a window or session store: read its windows with windows()',
    });
    await expect(client.streams(APP).windows('counts', 'fig')).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      status: 400,
      message: 'store counts is a key-value store; this read applies to window and session stores',
    });
    expect(await client.streams(APP).query('per-minute', 'fig')).toEqual(
      await client.streams(APP).windows('per-minute', 'fig'),
    );
    expect(await client.streams(APP).query('counts', 'fig')).toEqual({
      key: 'fig',
      value: countOf('fig'),
      timestamp: lastTime('fig'),
    });
    expect(await client.streams(APP).query('counts', 'zebra')).toBeUndefined();
  });

  it('turns errors into SluiceError with the code and status', async () => {
    const error = await client
      .streams(APP)
      .range('nope')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SluiceError);
    expect(error).toMatchObject({ code: 'UNKNOWN_STATE_STORE', status: 404, retriable: false });
  });
});

describe('keys as the key serde writes them', () => {
  const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');
  it('JSON keys are canonical JSON.stringify text; anything else is refused', () => {
    expect(text(parseKey('{"a": 1, "b": [true]}', 'json'))).toBe('{"a":1,"b":[true]}');
    expect(text(parseKey('"user-1"', 'json'))).toBe('"user-1"');
    expect(text(parseKey('42', 'json'))).toBe('42');
    expect(() => parseKey('user-1', 'json')).toThrow(
      'key "user-1" is not JSON: this store\'s keys use the JSON serde (a string key is quoted, e.g. "user-1")',
    );
  });
  it('String keys are their UTF-8 bytes; bytes keys are strict base64', () => {
    expect([...parseKey('é', 'string')]).toEqual([0xc3, 0xa9]);
    expect([...parseKey('AAH/', 'bytes')]).toEqual([0, 1, 0xff]);
    for (const bad of ['AAH', 'AA=H', 'AAH_', '===='])
      expect(() => parseKey(bad, 'bytes')).toThrow('is not base64');
  });
});

describe('docs/openapi.json', () => {
  it('documents every answer above: statuses, error codes and body schemas', () => {
    const { problems, seen } = conformanceProblems(exchanges);
    expect(problems).toEqual([]);
    expect([...seen].sort()).toEqual([
      'GET /v1/streams/{app}/stores/{store}/keys',
      'GET /v1/streams/{app}/stores/{store}/keys/{key}',
    ]);
    expect(exchanges).toHaveLength(65);
  });
});
