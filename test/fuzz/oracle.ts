/**
 * What every fuzz case must satisfy. An answer is never a 5xx. A 4xx carries one of Kafka's error
 * codes and leaves the metadata (every item) and the readable log exactly as they were. A produce that
 * is acknowledged reads back exactly: the same keys, values, headers and timestamps at the offsets it
 * was given, and the high watermark moves by exactly its record count (or not at all for a duplicate).
 */
import { ERROR_CODES } from '../../protocol/errors.js';
import { decodeRecordBatch, splitBatches } from '../../protocol/record-batch/index.js';
import type { MemoryMetadataStore } from '../../lib/adapters/memory/metadata-store.js';
import type { BatchCase } from './batch-cases.js';
import type { JsonCase } from './json-cases.js';

export type Http = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
) => Promise<{ status: number; body: any }>;

export class Finding extends Error {
  constructor(
    message: string,
    readonly detail: unknown,
  ) {
    super(message);
    this.name = 'Finding';
  }
}

/** The whole metadata table, as a string that compares equal exactly when no item changed. */
export const snapshot = (store: MemoryMetadataStore): string => {
  const partitions = (store as unknown as { partitions: Map<string, Map<string, unknown>> }).partitions;
  const rows: [string, string, unknown][] = [];
  for (const [pk, items] of partitions) for (const [sk, item] of items) rows.push([pk, sk, item]);
  rows.sort((a, b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1));
  return JSON.stringify(rows);
};

const b64 = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString('base64'));

const readAll = async (http: Http, topic: string, partition: number) => {
  const reply = await http(
    'GET',
    `/v1/topics/${topic}/partitions/${partition}/records?offset=0&maxBytes=4194304&encoding=base64`,
  );
  return reply.status === 200 ? JSON.stringify(reply.body) : `status ${reply.status}`;
};

export type Outcome = { kind: 'refused'; code: string } | { kind: 'accepted' };

const checkRefusal = (
  reply: { status: number; body: { error?: { code?: string } } },
  what: string,
): Outcome => {
  if (reply.status >= 500) throw new Finding(`${what}: answered ${reply.status}`, reply.body);
  if (reply.status < 400) return { kind: 'accepted' };
  const code = reply.body.error?.code;
  if (code === undefined || !(code in ERROR_CODES))
    throw new Finding(`${what}: ${reply.status} without a Kafka error code`, reply.body);
  return { kind: 'refused', code };
};

export const checkBatchCase = async (
  http: Http,
  store: MemoryMetadataStore,
  c: BatchCase,
  logAppendTime: boolean,
): Promise<Outcome> => {
  const before = snapshot(store);
  const logBefore = await readAll(http, c.topic, c.partition);
  const reply = await http('POST', `/v1/topics/${c.topic}/partitions/${c.partition}/batches`, c.body, {
    'content-type': 'application/vnd.kafka.record-batch',
  });
  const outcome = checkRefusal(reply, c.mutation);
  if (outcome.kind === 'refused') {
    if (snapshot(store) !== before)
      throw new Finding(`${c.mutation}: refused with ${outcome.code} but metadata changed`, reply.body);
    if ((await readAll(http, c.topic, c.partition)) !== logBefore)
      throw new Finding(`${c.mutation}: refused but the log changed`, reply.body);
    return outcome;
  }
  const { baseOffset, lastOffset } = reply.body as { baseOffset: number; lastOffset: number };
  // A retried batch of an idempotent producer (same id, epoch and sequences) is answered with the
  // original's offsets and writes nothing, as in Kafka, which does not compare the records either.
  const hwBefore = logBefore.startsWith('{')
    ? (JSON.parse(logBefore) as { highWatermark: number }).highWatermark
    : 0;
  if (baseOffset < hwBefore) {
    if (snapshot(store) !== before || (await readAll(http, c.topic, c.partition)) !== logBefore) {
      throw new Finding(
        `${c.mutation}: answered as a duplicate at ${baseOffset} but the log changed`,
        reply.body,
      );
    }
    return { kind: 'accepted' };
  }
  // Accepted: what was sent must read back at the offsets the answer gave, and nothing else was added.
  const sent = splitBatches(c.body).flatMap(
    ({ start, end }) => decodeRecordBatch(c.body.subarray(start, end)).records,
  );
  if (baseOffset !== hwBefore || lastOffset - baseOffset + 1 !== sent.length)
    throw new Finding(
      `${c.mutation}: ${sent.length} records acked as ${baseOffset}..${lastOffset}`,
      reply.body,
    );
  const fetched = await http(
    'GET',
    `/v1/topics/${c.topic}/partitions/${c.partition}/records?offset=${baseOffset}&maxBytes=4194304&encoding=base64`,
  );
  const got = (
    fetched.body.records as {
      offset: number;
      timestamp: number;
      key: string | null;
      value: string | null;
      headers: { key: string; value: string | null }[];
    }[]
  ).slice(0, sent.length);
  const want = sent.map((r, i) => ({
    offset: baseOffset + i,
    timestamp: logAppendTime ? (reply.body.logAppendTime as number) : r.timestamp,
    key: b64(r.key),
    value: b64(r.value),
    headers: r.headers.map((h) => ({ key: h.key, value: b64(h.value) })),
  }));
  if (JSON.stringify(got) !== JSON.stringify(want))
    throw new Finding(`${c.mutation}: acked records do not read back`, { got, want });
  return outcome;
};

/** The bytes a JSON produce's field should be stored as, by the request's encoding. */
const expected = (value: unknown, encoding: string, isValue: boolean): string | null => {
  if (value === null || value === undefined) return null;
  if (isValue && encoding === 'json') return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
  return encoding === 'base64' ? (value as string) : Buffer.from(value as string, 'utf8').toString('base64');
};

export const checkJsonCase = async (
  http: Http,
  store: MemoryMetadataStore,
  c: JsonCase,
): Promise<Outcome> => {
  const before = snapshot(store);
  const reply = await http(c.method, c.path, c.body, c.headers);
  const outcome = checkRefusal(reply, `${c.method} ${c.path} ${c.mutation} ${JSON.stringify(c.headers)}`);
  if (outcome.kind === 'refused') {
    if (snapshot(store) !== before)
      throw new Finding(
        `${c.method} ${c.path} ${c.mutation}: refused with ${outcome.code} but metadata changed`,
        reply.body,
      );
    return outcome;
  }
  // A read changes nothing, whatever it is asked.
  if (c.method === 'GET') {
    if (snapshot(store) !== before) throw new Finding(`GET ${c.path}: a read changed metadata`, reply.body);
    return outcome;
  }
  if (!c.path.endsWith('/records')) return outcome;
  const body = c.json as {
    records: { key?: unknown; value?: unknown; headers?: { key: string; value?: unknown }[] }[];
    encoding?: string;
  };
  const encoding = body.encoding ?? 'utf8';
  for (const [i, result] of (reply.body.results as { partition: number; offset?: number }[]).entries()) {
    if (result.offset === undefined) continue;
    const fetched = await http(
      'GET',
      `/v1/topics/d/partitions/${result.partition}/records?offset=${result.offset}&maxBytes=1&encoding=base64`,
    );
    const [got] = fetched.body.records as {
      key: string | null;
      value: string | null;
      headers: { key: string; value: string | null }[];
    }[];
    const r = body.records[i]!;
    const want = {
      key: expected(r.key, encoding === 'json' ? 'utf8' : encoding, false),
      value: expected(r.value, encoding, true),
      headers: (r.headers ?? []).map((h) => ({
        key: h.key,
        value: expected(h.value, encoding === 'json' ? 'utf8' : encoding, false),
      })),
    };
    const have = got && { key: got.key, value: got.value, headers: got.headers };
    if (JSON.stringify(have) !== JSON.stringify(want))
      throw new Finding(`${c.path} ${c.mutation}: record ${i} does not read back`, { have, want });
  }
  return outcome;
};
