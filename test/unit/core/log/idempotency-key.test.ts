/**
 * Issue 10, class 2 (and issue 13's report): an Idempotency-Key names one request. A retry of it is
 * answered exactly as the original was, offsets and timestamps; the key reused for another request is
 * refused with 422 IDEMPOTENCY_KEY_REUSED and writes nothing.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { decodePartitionState } from '../../../../lib/core/log/partition-codec.js';
import { memorySluice } from '../../../support/log-support.js';

const setup = async (configs: Record<string, string> = {}) => {
  const s = memorySluice({ tailFlushEntries: 4 });
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions: 1, configs })).status).toBe(201);
  const topic = await s.sluice.catalog.get('t');
  const hw = async () =>
    decodePartitionState((await s.store.get(keys.partitionState(topic.topicId, 0)))!).nextOffset;
  const produce = (body: unknown, key?: string) =>
    s.http('POST', '/v1/topics/t/records', body, key === undefined ? {} : { 'idempotency-key': key });
  return { ...s, hw, produce };
};

const records = (values: string[], extra: Record<string, unknown> = {}) => ({
  records: values.map((value) => ({ value, ...extra })),
});

describe('Idempotency-Key', () => {
  it('refuses the key reused for a different request (2 records, then 5) with 422, writing nothing', async () => {
    const s = await setup();
    const first = await s.produce(records(['a', 'b']), 'req-1');
    expect(first.body.results.map((r: { offset: number }) => r.offset)).toEqual([0, 1]);
    await s.produce(records(['x', 'y', 'z']));
    const reused = await s.produce(records(['c', 'd', 'e', 'f', 'g']), 'req-1');
    expect([reused.status, reused.body.error.code, reused.body.error.retriable]).toEqual([
      422,
      'IDEMPOTENCY_KEY_REUSED',
      false,
    ]);
    expect(await s.hw()).toBe(5);
    const fetched = await s.http('GET', '/v1/topics/t/partitions/0/records?offset=0');
    expect(fetched.body.records.map((r: { value: string }) => r.value)).toEqual(['a', 'b', 'x', 'y', 'z']);
  });

  it.each([
    ['in the partition item', 0],
    ['after its entry left the partition item', 10],
  ])('answers a retry %s with the original offsets and timestamps', async (_, writesBetween) => {
    const s = await setup();
    const body = { records: [{ value: 'a' }, { value: 'b', timestamp: 1_600_000_000_000 }, { value: 'c' }] };
    const first = await s.produce(body, 'req-2');
    for (let i = 0; i < writesBetween; i++) await s.produce(records([`x${i}`]));
    s.clock.time += 90_000; // the retry comes later: its clock must not leak into the answer
    const retry = await s.produce(body, 'req-2');
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    expect(first.body.results.map((r: { timestamp: number }) => r.timestamp)).toEqual([
      1_700_000_000_000, 1_600_000_000_000, 1_700_000_000_000,
    ]);
    expect(await s.hw()).toBe(3 + writesBetween);
    // And what is stored: the records carry the very timestamps both answers gave.
    const all = await s.http('GET', `/v1/topics/t/partitions/0/records?offset=0`);
    expect(all.status).toBe(200);
    expect(
      all.body.records.slice(0, 3).map((r: { offset: number; timestamp: number }) => [r.offset, r.timestamp]),
    ).toEqual(first.body.results.map((r: { offset: number; timestamp: number }) => [r.offset, r.timestamp]));
  });

  it('answers a retry on a LogAppendTime topic with the original append time', async () => {
    const s = await setup({ 'message.timestamp.type': 'LogAppendTime' });
    const first = await s.produce(records(['a', 'b']), 'req-3');
    s.clock.time += 5_000;
    expect((await s.produce(records(['a', 'b']), 'req-3')).body).toEqual(first.body);
  });

  it('treats the same bytes sent as utf8 or base64 as the same request', async () => {
    const s = await setup();
    const first = await s.produce(records(['hello']), 'req-4');
    const retry = await s.produce({ records: [{ value: 'aGVsbG8=' }], encoding: 'base64' }, 'req-4');
    expect(retry.body).toEqual(first.body);
    expect(await s.hw()).toBe(1);
  });

  it.each([
    ['another value', records(['A', 'b'])],
    ['another timestamp', records(['a', 'b'], { timestamp: 5 })],
    ['another header', records(['a', 'b'], { headers: [{ key: 'h', value: 'v' }] })],
    ['another partition choice', records(['a', 'b'], { partition: 0 })],
    ['one record fewer', records(['a'])],
  ])('refuses the key with %s, also after the entry left the partition item', async (_, other) => {
    const s = await setup();
    await s.produce(records(['a', 'b']), 'req-5');
    for (let i = 0; i < 10; i++) await s.produce(records([`x${i}`]));
    const reused = await s.produce(other, 'req-5');
    expect([reused.status, reused.body.error.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    expect(await s.hw()).toBe(12);
  });
});
