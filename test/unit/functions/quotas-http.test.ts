/**
 * Client quotas at the HTTP edge: over its quota a client is answered with how long to wait
 * (`throttle_time_ms`, `Retry-After`, `Sluice-Throttle-Time-Ms`), the request that crossed is served,
 * and the ones it sends before the wait is over are refused with 429 having changed nothing; the
 * quota routes as kafka-configs.sh uses them.
 */
import { describe, expect, it } from 'vitest';
import { ROUTE_ACLS } from '../../../functions/route-table.js';
import { memorySluice } from '../../support/log-support.js';

const client = (id: string) => ({ 'kafka-client-id': id });

const setQuota = async (
  http: ReturnType<typeof memorySluice>['http'],
  entity: Record<string, string | null>,
  key: string,
  value: number | null,
) => http('POST', '/v1/client-quotas', { entries: [{ entity, ops: [{ key, value }] }] });

const records = (n: number, size: number) => ({
  records: Array.from({ length: n }, (_, i) => ({ value: `${i}`.padEnd(size, 'x') })),
});

describe('quota routes', () => {
  it('alter and describe as kafka-configs.sh does, ACLs ALTER_CONFIGS/DESCRIBE_CONFIGS on the cluster', async () => {
    const { http } = memorySluice({ clientQuotas: {} });
    const set = await setQuota(http, { 'client-id': 'noisy' }, 'producer_byte_rate', 1024);
    expect(set.status).toBe(200);
    expect(set.body.entries).toEqual([
      { entity: { 'client-id': 'noisy' }, values: { producer_byte_rate: 1024 } },
    ]);
    await setQuota(http, { user: null }, 'consumer_byte_rate', 2048);
    expect((await http('GET', '/v1/client-quotas?clientId=noisy')).body.entries).toEqual([
      { entity: { 'client-id': 'noisy' }, values: { producer_byte_rate: 1024 } },
    ]);
    expect((await http('GET', '/v1/client-quotas?userDefault=true')).body.entries).toEqual([
      { entity: { user: null }, values: { consumer_byte_rate: 2048 } },
    ]);
    expect((await http('GET', '/v1/client-quotas')).body.entries).toHaveLength(2);
    expect(ROUTE_ACLS['POST /v1/client-quotas']).toEqual({
      operation: 'ALTER_CONFIGS',
      resourceType: 'CLUSTER',
    });
    expect(ROUTE_ACLS['GET /v1/client-quotas']).toEqual({
      operation: 'DESCRIBE_CONFIGS',
      resourceType: 'CLUSTER',
    });
  });

  it('refuse bad input with INVALID_REQUEST and change nothing', async () => {
    const { http } = memorySluice({ clientQuotas: {} });
    for (const body of [
      { entries: [{ entity: {}, ops: [{ key: 'producer_byte_rate', value: 1 }] }] },
      { entries: [{ entity: { topic: 't' }, ops: [{ key: 'producer_byte_rate', value: 1 }] }] },
      { entries: [{ entity: { user: 'u' }, ops: [{ key: 'fetch_rate', value: 1 }] }] },
      { entries: [{ entity: { user: 'u' }, ops: [{ key: 'producer_byte_rate', value: 0 }] }] },
      { entries: [{ entity: { user: 'u' }, ops: [{ key: 'producer_byte_rate', value: 1.5 }] }] },
      {
        entries: [
          { entity: { user: 'ok' }, ops: [{ key: 'producer_byte_rate', value: 1 }] },
          { entity: { user: '' }, ops: [{ key: 'producer_byte_rate', value: 1 }] },
        ],
      },
    ]) {
      const answer = await http('POST', '/v1/client-quotas', body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('INVALID_REQUEST');
    }
    expect((await http('GET', '/v1/client-quotas')).body.entries).toEqual([]);
    expect((await http('GET', '/v1/client-quotas?user=a&userDefault=true')).status).toBe(400);
  });
});

describe('enforcement', () => {
  it('serves the produce that crosses the quota with its wait, then refuses until the wait is over', async () => {
    const { http, clock } = memorySluice({ clientQuotas: {} });
    await http('POST', '/v1/topics', { name: 't' });
    await setQuota(http, { 'client-id': 'noisy' }, 'producer_byte_rate', 1000);
    const body = records(4, 500);
    const first = await http('POST', '/v1/topics/t/records', body, client('noisy'));
    expect(first.status).toBe(200);
    expect(first.body.results).toHaveLength(4);
    const wait = first.body.throttle_time_ms as number;
    expect(wait).toBeGreaterThan(1000);
    expect(first.headers?.['retry-after']).toBe(String(Math.ceil(wait / 1000)));
    expect(first.headers?.['sluice-throttle-time-ms']).toBe(String(wait));

    const refused = await http('POST', '/v1/topics/t/records', body, client('noisy'));
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'THROTTLING_QUOTA_EXCEEDED', retriable: true });
    expect(refused.body.throttle_time_ms).toBe(wait);
    expect(refused.headers?.['retry-after']).toBe(String(Math.ceil(wait / 1000)));
    // Nothing was written by the refused request.
    expect((await http('GET', '/v1/topics/t/partitions/0/offsets?at=latest')).body.offset).toBe(4);

    // Another client id is not held back by the noisy one.
    const other = await http('POST', '/v1/topics/t/records', records(1, 10), client('quiet'));
    expect(other.status).toBe(200);
    expect(other.body.throttle_time_ms).toBeUndefined();

    clock.time += wait;
    const after = await http('POST', '/v1/topics/t/records', records(1, 10), client('noisy'));
    expect(after.status).toBe(200);
  });

  it('holds back a throttled fetch (429, the records come in a later fetch) and answers the crossing one', async () => {
    const { http, clock } = memorySluice({ clientQuotas: {} });
    await http('POST', '/v1/topics', { name: 't' });
    await http('POST', '/v1/topics/t/records', records(10, 400));
    await setQuota(http, { 'client-id': 'reader' }, 'consumer_byte_rate', 1000);
    const first = await http(
      'GET',
      '/v1/topics/t/partitions/0/records?offset=0',
      undefined,
      client('reader'),
    );
    expect(first.status).toBe(200);
    expect(first.body.records).toHaveLength(10);
    expect(first.body.throttle_time_ms).toBeGreaterThan(0);
    const held = await http('GET', '/v1/topics/t/partitions/0/records?offset=0', undefined, client('reader'));
    expect(held.status).toBe(429);
    expect(held.body.records).toBeUndefined();
    expect(held.body.throttle_time_ms).toBeGreaterThan(0);
    clock.time += held.body.throttle_time_ms as number;
    const later = await http(
      'GET',
      '/v1/topics/t/partitions/0/records?offset=0',
      undefined,
      client('reader'),
    );
    expect(later.status).toBe(200);
    expect(later.body.records).toHaveLength(10);
  });

  it('refuses topic creation over controller_mutation_rate with THROTTLING_QUOTA_EXCEEDED, creating nothing', async () => {
    const { http } = memorySluice({ clientQuotas: {} });
    await setQuota(http, { user: null }, 'controller_mutation_rate', 2);
    const first = await http('POST', '/v1/topics', { name: 'a', partitions: 6 });
    expect(first.status).toBe(201);
    expect(first.body.throttle_time_ms).toBe(2000);
    const second = await http('POST', '/v1/topics', { name: 'b', partitions: 1 });
    expect(second.status).toBe(429);
    expect(second.body.error.code).toBe('THROTTLING_QUOTA_EXCEEDED');
    expect(second.body.throttle_time_ms).toBe(2000);
    expect((await http('GET', '/v1/topics/b')).status).toBe(404);
    expect((await http('DELETE', '/v1/topics/a')).status).toBe(429);
  });

  it('applies request_percentage to request time, and no quota without configs', async () => {
    const { http, clock } = memorySluice({ clientQuotas: {} });
    await http('POST', '/v1/topics', { name: 't' });
    // No quota anywhere: nothing is added to the answer.
    const free = await http('GET', '/v1/topics/t', undefined, client('c'));
    expect(free.body.throttle_time_ms).toBeUndefined();
    expect(free.headers?.['retry-after']).toBeUndefined();
    await setQuota(http, { 'client-id': 'c' }, 'request_percentage', 1);
    // 1 % is 10 ms of handling per second: a request that takes 2 s of (test) time is 199 s of debt.
    const slow = await http(
      'GET',
      '/v1/topics/t/partitions/0/records?offset=0&maxWaitMs=2000',
      undefined,
      client('c'),
    );
    expect(slow.status).toBe(200);
    expect(slow.body.throttle_time_ms).toBeGreaterThan(150_000);
    expect((await http('GET', '/v1/topics/t', undefined, client('c'))).status).toBe(429);
    clock.time += 200_000;
    expect((await http('GET', '/v1/topics/t', undefined, client('c'))).status).toBe(200);
  });

  it('refuses an over-long Kafka-Client-Id with INVALID_REQUEST', async () => {
    const { http } = memorySluice({ clientQuotas: {} });
    const answer = await http('GET', '/v1/topics', undefined, client('x'.repeat(513)));
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('INVALID_REQUEST');
  });
});
