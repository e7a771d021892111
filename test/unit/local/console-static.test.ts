/**
 * The console's static files on the local gateway: the pages and uPlot are served with their types
 * and a content security policy, and no request target — dot segments, encoded dots, backslashes,
 * other folders, other methods — reaches a file outside console/ and uPlot's two files, or an API
 * handler.
 */
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../../local/gateway.js';

let handled = 0;
const answer = async () => {
  handled++;
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
};
const server = createGateway({
  admin: answer,
  produce: answer,
  fetch: answer,
  groups: answer,
  connect: answer,
});
let port = 0;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** A raw request target, sent as is (fetch would normalise `..`). */
const get = (path: string, method = 'GET') =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
    (resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    },
  );

describe('console static files', () => {
  it('redirects /console to /console/ and serves index.html, app.js and uPlot with their types', async () => {
    const bare = await get('/console');
    expect(bare.status).toBe(308);
    expect(bare.headers['location']).toBe('/console/');
    const index = await get('/console/');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.body).toBe(await readFile('console/index.html', 'utf8'));
    expect(index.headers['content-security-policy']).toContain("default-src 'self'");
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    const app = await get('/console/app.js');
    expect(app.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(app.body).toBe(await readFile('console/app.js', 'utf8'));
    const uplot = await get('/console/vendor/uPlot.iife.min.js');
    expect(uplot.status).toBe(200);
    expect(uplot.body).toBe(await readFile('node_modules/uplot/dist/uPlot.iife.min.js', 'utf8'));
    expect((await get('/console/vendor/uPlot.min.css')).headers['content-type']).toBe(
      'text/css; charset=utf-8',
    );
    const head = await get('/console/style.css', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(handled).toBe(0);
  });

  it('serves nothing outside its files and passes no such request to a handler', async () => {
    for (const path of [
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/..%2fpackage.json',
      '/console/..\\package.json',
      '/console/vendor/../../package.json',
      '/console/vendor/uPlot.esm.js',
      '/console/vendor/package.json',
      '/console/missing.js',
      '/console/.hidden.js',
      '/console/app.ts',
      '/console/sub/app.js',
      '/console//app.js',
    ]) {
      const reply = await get(path);
      expect([path, reply.status]).toEqual([path, 404]);
      expect(reply.body).toBe('not found\n');
    }
    // Other methods are not the console's: the API's router answers (no route → Kafka-style 404).
    const post = await get('/console/app.js', 'POST');
    expect(post.status).toBe(404);
    expect(JSON.parse(post.body).error.code).toBe('NOT_FOUND');
    // /consoles is not /console.
    expect((await get('/consoles')).status).toBe(404);
    expect(handled).toBe(0);
  });
});
