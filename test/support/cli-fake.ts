/**
 * A fake Sluice API for the command line's unit tests: a function from request to [status, body] that
 * records every request (JSON bodies parsed, RecordBatch bodies decoded), and `cli` to run the command
 * line in-process against it with captured output and a fake clock.
 */
import { withMultiFetch } from './multi-fetch-fake.js';
import type { FetchResult, TopicDescription } from '../../cli/api.js';
import { decodeRecordBatch, encodeRecordBatch, splitBatches } from '../../protocol/record-batch/index.js';
import { RECORD_BATCH_MEDIA_TYPE } from '../../sdk/producer.js';
import type { FetchLike } from '../../sdk/transport.js';
import { run } from '../../cli/main.js';

export interface Request {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  // Request bodies of many shapes; the assertions check them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export type Answer = [status: number, body?: unknown];

/** A fake Sluice API: a function from request to [status, body], recording every request. */
export const fakeApi = (answer: (request: Request) => Answer | Promise<Answer>) => {
  const requests: Request[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    const request: Request = {
      method: init.method ?? 'GET',
      path: decodeURIComponent(url.pathname),
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(Object.entries((init.headers ?? {}) as Record<string, string>)),
      body:
        typeof init.body === 'string'
          ? JSON.parse(init.body)
          : init.body instanceof Uint8Array
            ? { batches: decodeBatches(init.body) }
            : undefined,
    };
    requests.push(request);
    const [status, body] = await answer(request);
    if (status === 200 && (request.headers['accept'] ?? '').includes(RECORD_BATCH_MEDIA_TYPE)) {
      return recordBatchAnswer(body as FetchResult);
    }
    return new Response(body === undefined ? null : JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json' },
    });
  };
  // POST /v1/fetch (the SDK consumer's one poll) is answered through the single-partition fake;
  // `polls` keeps each poll's body (its partitions), `requests` the single reads it was answered by.
  const polls: Request[] = [];
  const multi = withMultiFetch(fetch);
  const outer: FetchLike = async (input, init) => {
    const url = new URL(input);
    if (url.pathname === '/v1/fetch')
      polls.push({
        method: init.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: Object.fromEntries(Object.entries((init.headers ?? {}) as Record<string, string>)),
        body: JSON.parse(String(init.body)),
      });
    return multi(input, init);
  };
  return { fetch: outer, requests, polls };
};

/** A fetch answer, written as JSON by the tests, as the server sends it to the SDK: one RecordBatch per record. */
const recordBatchAnswer = ({ records, nextOffset, highWatermark, logStartOffset }: FetchResult): Response => {
  const bytes = (text: string | null): Uint8Array | null =>
    text === null ? null : new TextEncoder().encode(text);
  const batches = records.map((r) =>
    encodeRecordBatch(
      [
        {
          key: bytes(r.key),
          value: bytes(typeof r.value === 'string' || r.value === null ? r.value : JSON.stringify(r.value)),
          headers: r.headers.map((h) => ({ key: h.key, value: bytes(h.value) })),
          timestamp: r.timestamp,
        },
      ],
      { baseOffset: r.offset },
    ),
  );
  return new Response(Buffer.concat(batches), {
    status: 200,
    headers: {
      'content-type': RECORD_BATCH_MEDIA_TYPE,
      'sluice-next-offset': String(nextOffset),
      'sluice-high-watermark': String(highWatermark),
      'sluice-log-start-offset': String(logStartOffset),
    },
  });
};

export const envelope = (
  code: string,
  message: string,
  retriable = false,
  extra: Record<string, unknown> = {},
) => ({
  error: { code, message, retriable },
  ...extra,
});

/** Runs the CLI against a fake fetch with captured output. */
export const cli = async (
  argv: string[],
  fetch: FetchLike,
  { stdin, signal }: { stdin?: string[]; signal?: AbortSignal } = {},
) => {
  let stdout = '';
  let stderr = '';
  const sleeps: number[] = [];
  let clock = 0;
  const code = await run(argv, {
    stdout: { write: (t) => void (stdout += t) },
    stderr: { write: (t) => void (stderr += t) },
    env: { SLUICE_URL: 'http://sluice.test' },
    fetch,
    ...(stdin
      ? {
          stdin: (async function* () {
            yield* stdin;
          })(),
        }
      : {}),
    ...(signal ? { signal } : {}),
    now: () => (clock += 100),
    sleep: async (ms) => void sleeps.push(ms),
  });
  return { code, stdout, stderr, sleeps };
};

export const partition = (p: number, logStartOffset: number, highWatermark: number) => ({
  partition: p,
  leader: 's0',
  leaderEpoch: 2,
  replicas: ['s0', 's1'],
  isr: ['s0', 's1'],
  osr: [],
  logEndOffsets: { s0: highWatermark, s1: highWatermark },
  logStartOffset,
  highWatermark,
});

export const orders: TopicDescription = {
  name: 'orders',
  topicId: 'id-1',
  replicationFactor: 2,
  configs: { 'retention.ms': '604800000', 'cleanup.policy': 'delete' },
  partitions: [partition(0, 0, 3), partition(1, 5, 7)],
};

/** The RecordBatches of a binary produce body, decoded. */
const decodeBatches = (body: Uint8Array): ReturnType<typeof decodeRecordBatch>[] =>
  splitBatches(body).map(({ start, end }) => decodeRecordBatch(body.subarray(start, end)));
