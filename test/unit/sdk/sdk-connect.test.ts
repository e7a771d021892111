import { describe, expect, it } from 'vitest';
import { SluiceClient } from '../../../sdk/client.js';
import type { ConnectAdmin } from '../../../sdk/connect.js';
import type { FetchLike } from '../../../sdk/transport.js';

const client = (answers: [number, unknown][]) => {
  const seen: string[] = [];
  const fetch: FetchLike = async (url, init) => {
    seen.push(`${init.method} ${new URL(url).pathname}`);
    const [status, body] = answers.shift() ?? [200, {}];
    return new Response(body === undefined ? null : JSON.stringify(body), { status });
  };
  return {
    connect: new SluiceClient({
      url: 'http://h:1',
      fetch,
      retry: { retries: 3, sleep: async () => {} },
    }).connect(),
    seen,
  };
};

const unavailable: [number, unknown] = [
  503,
  { error: { code: 'REQUEST_TIMED_OUT', message: 'later', retriable: true } },
];
const throttled: [number, unknown] = [
  429,
  { error: { code: 'THROTTLING_QUOTA_EXCEEDED', message: 'slow down', retriable: true } },
];
const info = { name: 'c', config: {}, tasks: [], type: 'sink' };

describe('ConnectAdmin retries as each call’s idempotence allows', () => {
  it('sends a create, restart, delete or offset change once after a 5xx (it may have taken effect)', async () => {
    for (const call of [
      (c: ConnectAdmin) => c.createConnector('c', { 'connector.class': 'X' }),
      (c: ConnectAdmin) => c.restart('c'),
      (c: ConnectAdmin) => c.deleteConnector('c'),
      (c: ConnectAdmin) => c.alterOffsets('c', [{ partition: { a: 1 }, offset: null }]),
      (c: ConnectAdmin) => c.resetOffsets('c'),
    ]) {
      const { connect, seen } = client([unavailable, [200, info]]);
      await expect(call(connect)).rejects.toMatchObject({ code: 'REQUEST_TIMED_OUT', attempts: 1 });
      expect(seen).toHaveLength(1);
    }
  });

  it('sends a create again after an answer that says nothing was created', async () => {
    const { connect, seen } = client([throttled, [201, info]]);
    expect(await connect.createConnector('c', { 'connector.class': 'X' })).toEqual(info);
    expect(seen).toEqual(['POST /v1/connect/connectors', 'POST /v1/connect/connectors']);
  });

  it('retries reads, a whole config, pause, resume, stop and validation after a 5xx', async () => {
    for (const call of [
      (c: ConnectAdmin) => c.status('c'),
      (c: ConnectAdmin) => c.putConfig('c', { 'connector.class': 'X' }),
      (c: ConnectAdmin) => c.pause('c'),
      (c: ConnectAdmin) => c.resume('c'),
      (c: ConnectAdmin) => c.stop('c'),
      (c: ConnectAdmin) => c.validate('X', {}),
      (c: ConnectAdmin) => c.plugins(),
    ]) {
      const { connect, seen } = client([unavailable, [200, {}]]);
      await call(connect);
      expect(seen).toHaveLength(2);
    }
  });
});
