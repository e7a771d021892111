/**
 * `sluice produce` on the SDK's producer: stdin lines become RecordBatches per partition (murmur2 for
 * keys, sticky for keyless records) under the idempotent producer's sequence numbers, batched by
 * batch.size, --batch-records and linger.ms; --idempotency-key keeps the repeatable JSON requests.
 */
import { describe, expect, it } from 'vitest';
import { EXIT_API_ERROR, EXIT_OK, EXIT_USAGE, run } from '../../../cli/main.js';
import { partitionForKey } from '../../../protocol/partitioner.js';
import type { Answer, Request } from '../../support/cli-fake.js';
import { cli, envelope, fakeApi, orders } from '../../support/cli-fake.js';

const text = (b: Uint8Array | null): string | null => (b === null ? null : new TextDecoder().decode(b));
const unbase64 = (b: string): string => Buffer.from(b, 'base64').toString('utf8');
const partitionOfKey = (key: string): number => partitionForKey(new TextEncoder().encode(key), 2);

interface SentBatch {
  partition: number;
  producerId: number;
  baseSequence: number;
  records: { key: string | null; value: string | null; headers: { key: string; value: string | null }[] }[];
}

const BATCHES = /^\/v1\/topics\/orders\/partitions\/(\d+)\/batches$/;

/** The binary produce requests, in the order they were sent, decoded. */
const batchesOf = (requests: Request[]): SentBatch[] =>
  requests.flatMap((r) => {
    const m = BATCHES.exec(r.path);
    if (!m) return [];
    // One RecordBatch per request here: the batches stay far below the producer's 1 MiB split.
    expect(r.body.batches).toHaveLength(1);
    const [batch] = r.body.batches;
    return [
      {
        partition: Number(m[1]),
        producerId: batch.header.producerId,
        baseSequence: batch.header.baseSequence,
        records: batch.records.map(
          (rec: {
            key: Uint8Array | null;
            value: Uint8Array | null;
            headers: { key: string; value: Uint8Array | null }[];
          }) => ({
            key: text(rec.key),
            value: text(rec.value),
            headers: rec.headers.map((h) => ({ key: h.key, value: text(h.value) })),
          }),
        ),
      },
    ];
  });

/**
 * The orders topic (2 partitions) taking batches at consecutive offsets per partition, and JSON
 * requests the same way; `fail` answers a partition's batches with an error instead.
 */
const producing = (fail?: (partition: number) => Answer | undefined) => {
  const next = [0, 0];
  return fakeApi((r): Answer => {
    if (r.path === '/v1/topics/orders') return [200, orders];
    if (r.path === '/v1/producers') return [200, { producerId: 7, producerEpoch: 0 }];
    const m = BATCHES.exec(r.path);
    if (m) {
      const p = Number(m[1]);
      const failure = fail?.(p);
      if (failure) return failure;
      const count = r.body.batches.reduce((n: number, b: { records: unknown[] }) => n + b.records.length, 0);
      const baseOffset = next[p]!;
      next[p] = baseOffset + count;
      return [200, { baseOffset, lastOffset: baseOffset + count - 1, logAppendTime: -1, logStartOffset: 0 }];
    }
    if (r.path === '/v1/topics/orders/records') {
      const results = r.body.records.map((rec: { partition: number }) => ({
        partition: rec.partition,
        offset: next[rec.partition]!++,
        timestamp: 1,
      }));
      return [200, { results }];
    }
    return [404, envelope('NOT_FOUND', r.path)];
  });
};

describe('produce', () => {
  it('sends a slow trickle within linger.ms of its first record, not only when input pauses', async () => {
    const api = producing();
    // A line every 20 ms, never a 100 ms pause: an idle timer would hold all 12 for one request.
    const yielded: number[] = [];
    const trickle = async function* () {
      for (let i = 0; i < 12; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        yielded.push(performance.now());
        yield `v${i}\n`;
      }
    };
    const sent: number[] = [];
    const code = await run(['produce', 'orders', '-q', '--producer-property', 'linger.ms=100'], {
      stdout: { write: () => {} },
      stderr: { write: () => {} },
      env: { SLUICE_URL: 'http://sluice.test' },
      fetch: async (input, init) => {
        if (BATCHES.test(new URL(input).pathname)) sent.push(performance.now());
        return api.fetch(input, init);
      },
      stdin: trickle(),
    });
    expect(code).toBe(EXIT_OK);
    const batches = batchesOf(api.requests);
    expect(batches.flatMap((b) => b.records.map((r) => r.value)).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `v${i}`).sort(),
    );
    // ~240 ms of input in batches of at most linger.ms: the first went out before the last line came
    // (however slow a loaded machine makes the timers), so there are at least two.
    expect(batches.length).toBeGreaterThanOrEqual(2);
    expect(sent[0]!).toBeLessThan(yielded[11]!);
  });

  it('partitions keyed lines as Kafka does, in batches of --batch-records under one producer id', async () => {
    const api = producing();
    const lines = Array.from({ length: 1203 }, (_, i) => `k${i}:v${i}\n`);
    const result = await cli(['produce', 'orders', '--separator', ':', '--batch-records', '500'], api.fetch, {
      stdin: lines,
    });
    expect(result.code).toBe(EXIT_OK);
    const batches = batchesOf(api.requests);
    const expected = [0, 1].map((p) =>
      Array.from({ length: 1203 }, (_, i) => i).filter((i) => partitionOfKey(`k${i}`) === p),
    );
    for (const p of [0, 1]) {
      const mine = batches.filter((b) => b.partition === p);
      // Each partition's records in input order, cut at 500, sequences consecutive from 0.
      expect(mine.flatMap((b) => b.records.map((r) => r.key))).toEqual(expected[p]!.map((i) => `k${i}`));
      expect(mine.flatMap((b) => b.records.map((r) => r.value))).toEqual(expected[p]!.map((i) => `v${i}`));
      const sizes = mine.map((b) => b.records.length);
      expect(sizes).toEqual([
        ...Array.from({ length: Math.floor(expected[p]!.length / 500) }, () => 500),
        expected[p]!.length % 500,
      ]);
      expect(mine.map((b) => b.baseSequence)).toEqual(sizes.map((_, i) => i * 500));
    }
    expect(new Set(batches.map((b) => b.producerId))).toEqual(new Set([7]));
    expect(api.requests.filter((r) => r.path === '/v1/producers')).toHaveLength(1);
    expect(result.stdout).toMatch(
      new RegExp(`^Produced 1,203 records to orders in ${batches.length} requests \\(.+\\)\\.\\n`),
    );
    const [n0, n1] = [expected[0]!.length, expected[1]!.length];
    expect(result.stdout.split('\n').slice(1)).toEqual([
      'PARTITION  RECORDS  FIRST OFFSET  LAST OFFSET',
      `        0  ${String(n0).padStart(7)}             0  ${String(n0 - 1).padStart(11)}`,
      `        1  ${String(n1).padStart(7)}             0  ${String(n1 - 1).padStart(11)}`,
      '',
    ]);
    expect(result.stderr).toBe('');
  });

  it('prints nothing under -q, as kafka-console-producer, but the summary as data under --json', async () => {
    const lines = ['k1:a\n', 'k2:b\n', 'k3:c\n'];
    const quiet = await cli(['produce', 'orders', '--separator', ':', '-q'], producing().fetch, {
      stdin: lines,
    });
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([EXIT_OK, '', '']);
    const api = producing();
    const json = await cli(['produce', 'orders', '--separator', ':', '-q', '--json'], api.fetch, {
      stdin: lines,
    });
    expect(json.code).toBe(EXIT_OK);
    expect(JSON.parse(json.stdout)).toMatchObject({ topic: 'orders', records: 3 });
    expect(
      batchesOf(api.requests)
        .flatMap((b) => b.records.map((r) => r.value))
        .sort(),
    ).toEqual(['a', 'b', 'c']);
  });

  it('with --idempotency-key sends JSON requests keyed K, K-1, … one partition each', async () => {
    const api = producing();
    const lines = Array.from({ length: 12 }, (_, i) => `k${i}:v${i}\n`);
    const result = await cli(
      ['produce', 'orders', '--separator', ':', '--batch-records', '4', '--idempotency-key', 'load-1', '-q'],
      api.fetch,
      { stdin: lines },
    );
    expect(result.code).toBe(EXIT_OK);
    const json = api.requests.filter((r) => r.path === '/v1/topics/orders/records');
    expect(json.map((r) => r.headers['idempotency-key'])).toEqual(
      json.map((_, i) => (i === 0 ? 'load-1' : `load-1-${i}`)),
    );
    expect(batchesOf(api.requests)).toEqual([]);
    for (const r of json) {
      const partitions = new Set(r.body.records.map((rec: { partition: number }) => rec.partition));
      expect(partitions.size).toBe(1);
      expect(r.body.records.length).toBeLessThanOrEqual(4);
      // The SDK sends bytes as base64.
      expect(r.body.encoding).toBe('base64');
      for (const rec of r.body.records) expect(partitionOfKey(unbase64(rec.key))).toBe(rec.partition);
    }
    expect(
      json.flatMap((r) => r.body.records.map((rec: { value: string }) => unbase64(rec.value))).sort(),
    ).toEqual(lines.map((l) => l.trim().split(':')[1]).sort());
  });

  it('cuts batches by batch.size as well as by count; keyless records stick to a partition per batch', async () => {
    const api = producing();
    const big = 'x'.repeat(400);
    await cli(['produce', 'orders', '--batch-bytes', '1000', '-q'], api.fetch, {
      stdin: [`${big}\n${big}\n${big}\n`],
    });
    const batches = batchesOf(api.requests);
    expect(batches.map((b) => b.records.length)).toEqual([2, 1]);
    // The full batch moved the sticky partition on.
    expect(batches[1]!.partition).toBe(1 - batches[0]!.partition);
  });

  it('sends --value arguments with key, partition, headers and JSON values', async () => {
    const api = producing();
    const result = await cli(
      [
        'produce',
        'orders',
        '--encoding',
        'json',
        '--key',
        'u1',
        '--partition',
        '1',
        '--header',
        'trace=abc',
        '--value',
        '{"n":1}',
        '--value',
        'null',
        '--json',
      ],
      api.fetch,
    );
    expect(result.code).toBe(EXIT_OK);
    expect(batchesOf(api.requests)).toEqual([
      {
        partition: 1,
        producerId: 7,
        baseSequence: 0,
        records: [
          { key: 'u1', value: '{"n":1}', headers: [{ key: 'trace', value: 'abc' }] },
          { key: 'u1', value: null, headers: [{ key: 'trace', value: 'abc' }] },
        ],
      },
    ]);
    expect(JSON.parse(result.stdout)).toMatchObject({
      topic: 'orders',
      records: 2,
      failed: 0,
      requests: 1,
      partitions: [{ partition: 1, records: 2, firstOffset: 0, lastOffset: 1 }],
    });
  });

  it('reports records the server did not write, sends nothing more to that partition, exits 1', async () => {
    const tooLarge: Answer = [413, envelope('MESSAGE_TOO_LARGE', 'record is 2000000 bytes')];
    const api = producing((p) => (p === 1 ? tooLarge : undefined));
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    const k0 = keys.find((k) => partitionOfKey(k) === 0)!;
    const [k1a, k1b] = keys.filter((k) => partitionOfKey(k) === 1);
    const result = await cli(['produce', 'orders', '--separator', ':', '--batch-records', '1'], api.fetch, {
      stdin: [`${k0}:a\n${k1a}:b\n${k1b}:c\n`],
    });
    expect(result.code).toBe(EXIT_API_ERROR);
    // Partition 1's second record is not sent after its first failed: nothing written out of order.
    expect(batchesOf(api.requests).map((b) => [b.partition, b.records[0]!.value])).toEqual([
      [0, 'a'],
      [1, 'b'],
    ]);
    expect(result.stdout).toContain('Produced 1 record to orders in 3 requests');
    expect(result.stdout).toContain('; 2 records failed.');
    expect(result.stderr).toContain(
      'error: MESSAGE_TOO_LARGE: 2 records not written (the first from line 2): record is 2000000 bytes',
    );
    expect(result.stderr).toContain('hint: send smaller records');
  });

  it('rejects a malformed line with its number and exit 2, after what was already sent, no stack', async () => {
    const api = producing();
    const result = await cli(['produce', 'orders', '--encoding', 'json', '--batch-records', '1'], api.fetch, {
      stdin: ['{"a":1}\n', '\n', '{oops\n', '{"b":2}\n'],
    });
    expect(result.code).toBe(EXIT_USAGE);
    expect(batchesOf(api.requests).map((b) => b.records.map((r) => r.value))).toEqual([['{"a":1}']]);
    expect(result.stdout).toContain('Produced 1 record');
    expect(result.stderr).toContain('error: line 3 is not valid JSON');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('rejects a line that is not base64 under --encoding base64, naming the line', async () => {
    const api = producing();
    const result = await cli(['produce', 'orders', '--encoding', 'base64', '-q'], api.fetch, {
      stdin: ['aGVsbG8=\n', 'not base64!\n'],
    });
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.stderr).toContain('error: line 2 is not valid base64');
    expect(batchesOf(api.requests).map((b) => b.records.map((r) => r.value))).toEqual([['hello']]);
  });

  it('refuses a partition the topic does not have before reading input', async () => {
    const api = producing();
    const result = await cli(['produce', 'orders', '--partition', '2', '-q'], api.fetch, { stdin: ['a\n'] });
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.stderr).toContain('error: orders has 2 partitions; there is no partition 2');
    expect(batchesOf(api.requests)).toEqual([]);
  });

  it('names the nearest topic for a typo before reading any input (did you mean)', async () => {
    const api = fakeApi((r): Answer =>
      r.path === '/v1/topics'
        ? [200, { topics: [{ name: 'orders', partitions: 2, replicationFactor: 1 }] }]
        : [404, envelope('UNKNOWN_TOPIC_OR_PARTITION', 'topic ordrs does not exist')],
    );
    const result = await cli(['produce', 'ordrs', '-q'], api.fetch, { stdin: ['a\n'] });
    expect(result.code).toBe(EXIT_API_ERROR);
    expect(result.stderr).toContain('error: UNKNOWN_TOPIC_OR_PARTITION');
    expect(result.stderr).toContain('did you mean orders?');
    expect(batchesOf(api.requests)).toEqual([]);
  });

  it('needs records', async () => {
    const api = producing();
    const result = await cli(['produce', 'orders'], api.fetch, { stdin: [] });
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.stderr).toContain('no records');
    expect(api.requests.map((r) => r.path)).toEqual(['/v1/topics/orders']);
  });
});
