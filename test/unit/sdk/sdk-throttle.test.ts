/**
 * The SDK honours client quotas as Kafka's clients do (KIP-219): after an answer that carries a
 * throttle time no request leaves before it has passed, and a request refused for a quota (429, which
 * changed nothing) is sent again once the wait it was told is over; the client id goes with every request.
 */
import { describe, expect, it } from 'vitest';
import { SluiceClient } from '../../../sdk/client.js';
import { Transport } from '../../../sdk/transport.js';
import type { FetchLike } from '../../../sdk/transport.js';

interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

const scripted = (answers: Scripted[]) => {
  const seen: { url: string; headers: Record<string, string> }[] = [];
  const fetch: FetchLike = async (url, init) => {
    seen.push({ url, headers: { ...(init.headers as Record<string, string>) } });
    const next = answers.shift();
    if (!next) throw new Error('no answer scripted');
    return new Response(next.body === undefined ? null : JSON.stringify(next.body), {
      status: next.status,
      headers: { 'content-type': 'application/json', ...next.headers },
    });
  };
  return { fetch, seen };
};

const throttled = (ms: number): Scripted => ({
  status: 429,
  headers: { 'retry-after': String(Math.ceil(ms / 1000)), 'sluice-throttle-time-ms': String(ms) },
  body: {
    error: { code: 'THROTTLING_QUOTA_EXCEEDED', message: 'quota', retriable: true },
    throttle_time_ms: ms,
  },
});

describe('SDK under client quotas', () => {
  it('waits out the throttle time of an answer before its next request', async () => {
    const { fetch, seen } = scripted([
      { status: 200, headers: { 'sluice-throttle-time-ms': '750', 'retry-after': '1' }, body: { ok: 1 } },
      { status: 200, body: { ok: 2 } },
    ]);
    const sleeps: number[] = [];
    const transport = new Transport({ url: 'http://x', fetch, sleep: async (ms) => void sleeps.push(ms) });
    await transport.json({ method: 'GET', path: '/v1/a' });
    expect(sleeps).toEqual([]);
    await transport.json({ method: 'GET', path: '/v1/b' });
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(700);
    expect(sleeps[0]).toBeLessThanOrEqual(750);
    expect(seen).toHaveLength(2);
  });

  it('sends a refused request again after the wait, and gives up after maxThrottleRetries', async () => {
    const ok = scripted([throttled(300), throttled(300), { status: 200, body: { done: true } }]);
    const sleeps: number[] = [];
    const transport = new Transport({
      url: 'http://x',
      fetch: ok.fetch,
      sleep: async (ms) => void sleeps.push(ms),
    });
    expect(await transport.json({ method: 'POST', path: '/v1/topics/t/records', json: {} })).toEqual({
      done: true,
    });
    expect(sleeps).toHaveLength(2);
    expect(ok.seen).toHaveLength(3);

    const never = scripted([throttled(100), throttled(100), throttled(100)]);
    const bounded = new Transport({
      url: 'http://x',
      fetch: never.fetch,
      maxThrottleRetries: 2,
      sleep: async () => {},
    });
    await expect(bounded.json({ method: 'GET', path: '/v1/x' })).rejects.toMatchObject({
      code: 'THROTTLING_QUOTA_EXCEEDED',
      status: 429,
      details: { throttle_time_ms: 100 },
    });
    expect(never.seen).toHaveLength(3);
  });

  it('does not resend a 429 that names no wait (a proxy in front), and caps a lying wait', async () => {
    const bare = scripted([{ status: 429, body: 'slow down' }]);
    const transport = new Transport({ url: 'http://x', fetch: bare.fetch, sleep: async () => {} });
    await expect(transport.json({ method: 'GET', path: '/v1/x' })).rejects.toMatchObject({ status: 429 });
    expect(bare.seen).toHaveLength(1);

    const liar = scripted([
      { status: 200, headers: { 'sluice-throttle-time-ms': String(10 ** 12) }, body: {} },
      { status: 200, body: {} },
    ]);
    const sleeps: number[] = [];
    const capped = new Transport({
      url: 'http://x',
      fetch: liar.fetch,
      sleep: async (ms) => void sleeps.push(ms),
    });
    await capped.json({ method: 'GET', path: '/v1/x' });
    await capped.json({ method: 'GET', path: '/v1/x' });
    expect(sleeps[0]).toBeLessThanOrEqual(5 * 60_000);
  });

  it('sends the client id as Kafka-Client-Id', async () => {
    const { fetch, seen } = scripted([{ status: 200, body: { entries: [] } }]);
    const admin = new SluiceClient({ url: 'http://x', fetch, clientId: 'billing-app' }).admin();
    expect(await admin.describeClientQuotas({ clientId: null })).toEqual([]);
    expect(seen[0]?.headers['kafka-client-id']).toBe('billing-app');
    expect(seen[0]?.url).toBe('http://x/v1/client-quotas?clientIdDefault=true');
  });
});
