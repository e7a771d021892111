/**
 * Issue 10, classes 3, 4, 5 and 7d: JSON depth, size and UTF-8 at the edge; Kafka's name limits; no
 * AWS internals in any answer; an offset commit is all-or-nothing.
 */
import { describe, expect, it } from 'vitest';
import { translateAwsError } from '../../../lib/adapters/aws/errors.js';
import { keys } from '../../../lib/core/keys.js';
import { decodePartitionState } from '../../../lib/core/log/partition-codec.js';
import { memorySluice } from '../../support/log-support.js';

const deep = (levels: number, inner = '1') => '['.repeat(levels) + inner + ']'.repeat(levels);
const raw = (text: string | Buffer) => new Uint8Array(Buffer.isBuffer(text) ? text : Buffer.from(text));
/** What no answer may ever carry: AWS service, operation and exception names, stack frames. */
const INTERNALS =
  /DynamoDB|GetItem|PutItem|UpdateItem|TransactWriteItems|Query\b|S3 |GetObject|PutObject|Exception|ValidationException|\bat \S+:\d+|sluice-table/;

const setup = async () => {
  const s = memorySluice();
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions: 1 })).status).toBe(201);
  const topic = await s.sluice.catalog.get('t');
  const hw = async () =>
    decodePartitionState((await s.store.get(keys.partitionState(topic.topicId, 0)))!).nextOffset;
  return { ...s, hw };
};

const expectRefused = (
  reply: { status: number; body: { error: { code: string; message: string } } },
  code: string,
) => {
  expect([reply.status, reply.body.error.code]).toEqual([400, code]);
  expect(reply.body.error.message).not.toMatch(INTERNALS);
};

describe('JSON bodies: depth, size, UTF-8', () => {
  const bodies: [string, string, string][] = [
    ['encoding', '/v1/topics/t/records', `{"records":[{"value":"v"}],"encoding":${deep(100_000)}}`],
    ['acks', '/v1/topics/t/records', `{"records":[{"value":"v"}],"acks":${deep(100_000)}}`],
    [
      'a json-encoded value',
      '/v1/topics/t/records',
      `{"records":[{"value":${deep(100_000)}}],"encoding":"json"}`,
    ],
    ['a topic name', '/v1/topics', `{"name":${deep(100_000)}}`],
    ['a heartbeat', '/v1/groups/g/heartbeat', `{"memberEpoch":0,"subscribedTopics":${deep(100_000, '"t"')}}`],
  ];
  it.each(bodies)('refuses 100k levels of nesting in %s with 400', async (_, path, body) => {
    const s = await setup();
    expectRefused(await s.http('POST', path, raw(body)), 'INVALID_REQUEST');
    expect(await s.hw()).toBe(0);
    expect((await s.http('GET', '/v1/topics')).body.topics).toHaveLength(1);
  });

  it('accepts a json value nested 60 levels deep and returns it exactly', async () => {
    const s = await setup();
    const value = JSON.parse(deep(60));
    const reply = await s.http('POST', '/v1/topics/t/records', { records: [{ value }], encoding: 'json' });
    expect(reply.status).toBe(200);
    const fetched = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0&encoding=json');
    expect(fetched.body.records[0].value).toEqual(value);
  });

  it('refuses a control-plane body over 1 MiB with 400', async () => {
    const s = await setup();
    const body = `{"name":"big","configs":{"retention.ms":"${'1'.repeat(1024 * 1024)}"}}`;
    expectRefused(await s.http('POST', '/v1/topics', raw(body)), 'INVALID_REQUEST');
  });

  it('refuses invalid UTF-8 instead of storing U+FFFD', async () => {
    const s = await setup();
    const body = Buffer.concat([
      Buffer.from('{"records":[{"value":"a'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('b"}]}'),
    ]);
    const reply = await s.http('POST', '/v1/topics/t/records', raw(body));
    expectRefused(reply, 'INVALID_REQUEST');
    expect(reply.body.error.message).toContain('UTF-8');
    expect(await s.hw()).toBe(0);
  });

  it.each(['"\\ud800"', '"x\\udc00y"', '{"\\ud83d":"v"}'])(
    'refuses the unpaired surrogate in %s',
    async (json) => {
      const s = await setup();
      const reply = await s.http(
        'POST',
        '/v1/topics/t/records',
        raw(`{"records":[{"value":${json}}],"encoding":"json"}`),
      );
      expectRefused(reply, 'INVALID_REQUEST');
      expect(await s.hw()).toBe(0);
    },
  );

  it('stores a surrogate pair escape as the code point it names, byte for byte', async () => {
    const s = await setup();
    expect(
      (
        await s.http(
          'POST',
          '/v1/topics/t/records',
          raw('{"records":[{"key":"\\ud83d\\ude00","value":"é"}]}'),
        )
      ).status,
    ).toBe(200);
    const fetched = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0&encoding=base64');
    const [record] = fetched.body.records;
    expect([record.key, record.value]).toEqual([
      Buffer.from('f09f9880', 'hex').toString('base64'),
      Buffer.from('c3a9', 'hex').toString('base64'),
    ]);
  });
});

describe("Kafka's limits at the edge", () => {
  const longName = 'x'.repeat(1100);
  const paths: [string, string, string][] = [
    ['GET', `/v1/topics/${longName}`, 'INVALID_TOPIC_EXCEPTION'],
    ['GET', `/v1/topics/${longName}/partitions/0/records`, 'INVALID_TOPIC_EXCEPTION'],
    ['GET', '/v1/topics/a%20b', 'INVALID_TOPIC_EXCEPTION'],
    ['GET', `/v1/groups/${'g'.repeat(256)}`, 'INVALID_REQUEST'],
    ['GET', '/v1/groups/a%00b/offsets', 'INVALID_REQUEST'],
  ];
  it.each(paths)('%s %s → 400 %s', async (method, path, code) => {
    const s = await setup();
    const reply = await s.http(method, path);
    expectRefused(reply, code);
    expect(reply.body.error.message.length).toBeLessThan(200);
  });

  it('refuses a heartbeat subscribing to 2,500 long topic names, writing no member', async () => {
    const s = await setup();
    const subscribedTopics = Array.from({ length: 2500 }, (_, i) => `${'t'.repeat(240)}${i}`);
    const reply = await s.http('POST', '/v1/groups/g/heartbeat', { memberEpoch: 0, subscribedTopics });
    expectRefused(reply, 'INVALID_REQUEST');
    expect((await s.http('GET', '/v1/groups')).body.groups).toEqual([]);
  });

  // Kafka bounds a record by max.message.bytes only, never by its number of headers.
  it('accepts a record with 5,000 headers and reads every one back in order', async () => {
    const s = await setup();
    const headers = Array.from({ length: 5000 }, (_, i) => ({ key: `h${i}`, value: `v${i}` }));
    const ok = await s.http('POST', '/v1/topics/t/records', { records: [{ value: 'v', headers }] });
    expect(ok.body.results).toEqual([{ partition: 0, offset: 0, timestamp: expect.any(Number) }]);
    const read = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0');
    expect(read.body.records[0].headers).toEqual(headers);
  });

  it("refuses a record over the topic's max.message.bytes, however its bytes are spent, writing nothing", async () => {
    const s = await setup();
    expect(
      (
        await s.http('POST', '/v1/topics', {
          name: 'small',
          partitions: 1,
          configs: { 'max.message.bytes': '2000' },
        })
      ).status,
    ).toBe(201);
    const headers = Array.from({ length: 400 }, (_, i) => ({ key: `h${i}`, value: 'v' }));
    const reply = await s.http('POST', '/v1/topics/small/records', { records: [{ value: 'v', headers }] });
    expect(reply.status).toBe(413);
    expect(reply.body.error.code).toBe('MESSAGE_TOO_LARGE');
    const read = await s.http('GET', '/v1/topics/small/partitions/0/offsets?at=latest');
    expect(read.body.offset).toBe(0);
  });
});

describe('offset commits are all-or-nothing', () => {
  const commit = (n: number) => ({
    offsets: Array.from({ length: n }, (_, partition) => ({ topic: 'wide', partition, offset: 5 })),
  });
  it('refuses a commit over one transaction (100 partitions) and writes none of it', async () => {
    const s = memorySluice();
    await s.http('POST', '/v1/topics', { name: 'wide', partitions: 150 });
    expectRefused(await s.http('POST', '/v1/groups/g/offsets', commit(150)), 'INVALID_REQUEST');
    expect((await s.http('GET', '/v1/groups/g/offsets')).body.offsets).toEqual([]);
    const ok = await s.http('POST', '/v1/groups/g/offsets', commit(99));
    expect(ok.body.results).toHaveLength(99);
    expect((await s.http('GET', '/v1/groups/g/offsets')).body.offsets).toHaveLength(99);
  });
});

describe('no answer carries an AWS exception or operation name', () => {
  const awsFailures = [
    {
      name: 'ValidationException',
      message: 'Hash primary key values must be under 2048 bytes',
      $metadata: { httpStatusCode: 400 },
    },
    {
      name: 'ValidationException',
      message: 'Item size has exceeded the maximum allowed size',
      $metadata: { httpStatusCode: 400 },
    },
    { name: 'ThrottlingException', message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } },
    { name: 'InternalServerError', message: 'Internal server error', $metadata: { httpStatusCode: 500 } },
    {
      name: 'ResourceNotFoundException',
      message: 'Requested resource not found: Table: sluice-table not found',
      $metadata: { httpStatusCode: 400 },
    },
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
    }),
  ];
  const requests: [string, string, unknown][] = [
    ['POST', '/v1/topics', { name: 'n', partitions: 1 }],
    ['GET', '/v1/topics/t', undefined],
    ['POST', '/v1/topics/t/records', { records: [{ value: 'v' }] }],
    ['GET', '/v1/topics/t/partitions/0/records', undefined],
    ['POST', '/v1/producers', undefined],
    ['POST', '/v1/groups/g/heartbeat', { memberEpoch: 0, subscribedTopics: ['t'] }],
    ['POST', '/v1/groups/g/offsets', { offsets: [{ topic: 't', partition: 0, offset: 1 }] }],
    ['GET', '/v1/groups', undefined],
  ];

  it(`answers ${awsFailures.length * requests.length} storage failures without internals, logging them`, async () => {
    let answered = 0;
    for (const failure of awsFailures) {
      for (const [method, path, body] of requests) {
        const s = await setup();
        const fail = () =>
          Promise.reject(translateAwsError(failure, 'DynamoDB GetItem on sluice-table (pk T#t)'));
        Object.assign(s.store, { get: fail, update: fail, put: fail, query: fail, transact: fail });
        s.sluice.catalog.forget('t');
        const reply = await s.http(method, path, body);
        expect(reply.status).toBeGreaterThanOrEqual(429);
        expect(JSON.stringify(reply.body)).not.toMatch(INTERNALS);
        expect(reply.body.error.code).toMatch(
          /^(UNKNOWN_SERVER_ERROR|KAFKA_STORAGE_ERROR|THROTTLING_QUOTA_EXCEEDED|COORDINATOR_NOT_AVAILABLE|REQUEST_TIMED_OUT)$/,
        );
        answered++;
      }
    }
    expect(answered).toBe(awsFailures.length * requests.length);
  });

  it('keeps the operation and the AWS words in the error cause, for the log', () => {
    const e = translateAwsError(awsFailures[0], 'DynamoDB GetItem on sluice-table');
    expect(e.message).not.toMatch(INTERNALS);
    expect(String((e.cause as Error).message)).toBe(
      'DynamoDB GetItem on sluice-table failed: ValidationException: Hash primary key values must be under 2048 bytes',
    );
  });
});
