/**
 * Issue 10's reproductions, through the local stack as they were found: real sockets, the local
 * gateway, DynamoDB Local and s3rver. Each answer is a 4xx with a Kafka code, names nothing of AWS,
 * and the partition's high watermark and records are unchanged. (Raw `\..\` paths are in
 * test/unit/local/gateway.test.ts: fetch normalises them before they leave the client.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecordBatch } from '../../protocol/record-batch/index.js';
import { editHeader } from '../support/batch-surgery.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

let t: TestStack;
const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };
const INTERNALS = /DynamoDB|GetItem|PutItem|UpdateItem|TransactWriteItems|Exception|S3 |Item size/;
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

beforeAll(async () => {
  t = await startTestStack();
  expect((await t.call('POST', '/v1/topics', { name: 'h', partitions: 1 })).status).toBe(201);
  expect((await t.call('POST', '/v1/topics/h/records', { records: [{ value: 'acked' }] })).status).toBe(200);
});
afterAll(async () => {
  await t?.stack.stop();
});

const unchanged = async () => {
  const fetched = await t.call('GET', '/v1/topics/h/partitions/0/records?offset=0');
  expect([fetched.json.highWatermark, fetched.json.records.map((r: { value: string }) => r.value)]).toEqual([
    1,
    ['acked'],
  ]);
};

describe('hostile requests through the local stack', () => {
  const cases: [
    string,
    () => Promise<{ status: number; json: { error: { code: string; message: string } } }>,
    number,
    string,
  ][] = [
    [
      'a 1,100-character topic name in a path',
      () => t.call('GET', `/v1/topics/${'x'.repeat(1100)}`),
      400,
      'INVALID_TOPIC_EXCEPTION',
    ],
    [
      'a heartbeat subscribing to 2,500 long topic names',
      () =>
        t.call('POST', '/v1/groups/g/heartbeat', {
          memberEpoch: 0,
          subscribedTopics: Array.from({ length: 2500 }, (_, i) => `${'n'.repeat(240)}${i}`),
        }),
      400,
      'INVALID_REQUEST',
    ],
    [
      '100k levels of JSON in encoding',
      () =>
        t.call('POST', '/v1/topics/h/records', `{"records":[{"value":"v"}],"encoding":${nested(100_000)}}`),
      400,
      'INVALID_REQUEST',
    ],
    [
      'invalid UTF-8 in a value',
      () =>
        t.call(
          'POST',
          '/v1/topics/h/records',
          Buffer.concat([
            Buffer.from('{"records":[{"value":"'),
            Buffer.from([0xc3, 0x28]),
            Buffer.from('"}]}'),
          ]),
          { 'content-type': 'application/json' },
        ),
      400,
      'INVALID_REQUEST',
    ],
    [
      'a batch claiming a million offsets',
      () =>
        t.call(
          'POST',
          '/v1/topics/h/partitions/0/batches',
          editHeader(encodeRecordBatch([{ key: null, value: new Uint8Array(1), timestamp: 1 }]), {
            lastOffsetDelta: 999_999,
          }),
          BATCH,
        ),
      400,
      'INVALID_RECORD',
    ],
  ];
  it.each(cases)('refuses %s', async (_, send, status, code) => {
    const reply = await send();
    expect([reply.status, reply.json.error.code]).toEqual([status, code]);
    expect(reply.json.error.message).not.toMatch(INTERNALS);
    await unchanged();
  });

  it('refuses an Idempotency-Key reused for another request with 422', async () => {
    const key = { 'idempotency-key': 'reuse-1' };
    const first = await t.call(
      'POST',
      '/v1/topics/h/records',
      { records: [{ value: 'a' }, { value: 'b' }] },
      key,
    );
    const retry = await t.call(
      'POST',
      '/v1/topics/h/records',
      { records: [{ value: 'a' }, { value: 'b' }] },
      key,
    );
    expect(retry.json).toEqual(first.json);
    const reused = await t.call('POST', '/v1/topics/h/records', { records: [{ value: 'c' }] }, key);
    expect([reused.status, reused.json.error.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
  });
});
