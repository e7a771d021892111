/**
 * Issue 10, class 6: the local gateway behaves as API Gateway's HTTP API does. It routes on the raw
 * path (no `\` → `/`, no `..` resolution; the path percent-decoded once, so `%2F` separates segments),
 * and a connection stays usable after a 413 on a chunked upload.
 */
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiGatewayV2Event } from '../../../lib/http/apigw.js';
import { createGateway } from '../../../local/gateway.js';

const events: ApiGatewayV2Event[] = [];
const answer = (job: string) => async (event: ApiGatewayV2Event) => {
  events.push(event);
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ job }) };
};
const server = createGateway({
  admin: answer('admin'),
  produce: answer('produce'),
  fetch: answer('fetch'),
  groups: answer('groups'),
  connect: answer('connect'),
});
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
let port = 0;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  agent.destroy();
  await new Promise((resolve) => server.close(resolve));
});

interface Reply {
  status: number;
  body: string;
  reusedSocket: boolean;
}

const send = (method: string, path: string, body?: (write: (chunk: Buffer) => boolean) => void) =>
  new Promise<Reply>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
          reusedSocket: req.reusedSocket,
        }),
      );
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${method} ${path}`)));
    if (body) body((chunk) => req.write(chunk));
    req.end();
  });

describe('local gateway routing', () => {
  it.each([
    // Only canonical paths are routed (lib/http/request-path.ts): a raw `\`, a dot segment raw or
    // encoded, an encoded `/` or a bad escape is 404 and reaches no handler.
    ['/v1/topics/a\\..\\b', 404, undefined, undefined],
    ['/v1/topics/x/../y', 404, undefined, undefined],
    ['/v1/topics/a%2Fb', 404, undefined, undefined],
    ['/v1/topics/a%2Fb/partitions/0/records', 404, undefined, undefined],
    ['/v1/topics/%2E%2E', 404, undefined, undefined],
    ['/v1/topics/t/', 404, undefined, undefined],
    ['/v1/topics//t', 404, undefined, undefined],
    ['/v1/topics/%74', 404, undefined, undefined],
    ['/v1/topics/t', 200, 'admin', '/v1/topics/t'],
    ['/v1/topics/t/partitions/0/records?offset=1&x=%2F', 200, 'fetch', '/v1/topics/t/partitions/0/records'],
    ['/v1/topics/bad%zz', 404, undefined, undefined],
  ])('GET %s → %i', async (path, status, job, rawPath) => {
    events.length = 0;
    const reply = await send('GET', path);
    expect(reply.status).toBe(status);
    if (job === undefined) {
      expect(events).toEqual([]);
      expect(JSON.parse(reply.body).error.code).toBe('NOT_FOUND');
      return;
    }
    expect(JSON.parse(reply.body)).toEqual({ job });
    expect(events.map((e) => [e.rawPath, e.requestContext.http.path])).toEqual([[rawPath, rawPath]]);
  });

  it('hands the raw query string over as it came', async () => {
    events.length = 0;
    await send('GET', '/v1/topics/t/partitions/0/records?offset=1&x=%2F&y=a+b');
    expect([events[0]!.rawQueryString, events[0]!.queryStringParameters]).toEqual([
      'offset=1&x=%2F&y=a+b',
      { offset: '1', x: '/', y: 'a b' },
    ]);
  });
});

describe('local gateway payload limit', () => {
  it('answers 413 to an 11 MiB body with a Content-Length and keeps the connection', async () => {
    events.length = 0;
    const body = Buffer.alloc(11 * 1024 * 1024, 0x62);
    const big = await new Promise<Reply>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/topics/t/records',
          agent,
          headers: { 'content-length': body.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString(),
              reusedSocket: req.reusedSocket,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(big.status).toBe(413);
    const next = await send('GET', '/v1/topics/t');
    expect([next.status, next.reusedSocket]).toEqual([200, true]);
    expect(events.map((e) => e.rawPath)).toEqual(['/v1/topics/t']);
  });

  it('answers 413 to a chunked 11 MiB upload and then serves the next request on the same connection', async () => {
    events.length = 0;
    const mib = Buffer.alloc(1024 * 1024, 0x61);
    const big = await send('POST', '/v1/topics/t/records', (write) => {
      for (let i = 0; i < 11; i++) write(mib);
    });
    expect([big.status, JSON.parse(big.body).error.code]).toEqual([413, 'RECORD_LIST_TOO_LARGE']);
    const next = await send('GET', '/v1/topics/t');
    expect([next.status, next.reusedSocket]).toEqual([200, true]);
    expect(events.map((e) => e.rawPath)).toEqual(['/v1/topics/t']);
  });
});
