/**
 * A fetch that hands SDK requests to Sluice's router in this process (Hono's `app.request` habit):
 * the Connect worker in Lambda talks to Sluice through sdk/, its one client, without a network
 * hop or a SigV4-signed call back into its own API, and runs exactly the handlers API Gateway runs.
 * Wired by the composition root (functions/connect-worker.ts, local/stack.ts): the worker itself
 * only ever sees a SluiceClient.
 */
import type { Router } from '../lib/http/router.js';
import type { FetchLike } from '../sdk/index.js';

const bytesOf = async (body: RequestInit['body']): Promise<Uint8Array> => {
  if (body === undefined || body === null) return new Uint8Array();
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  return new Uint8Array(await new Response(body).arrayBuffer());
};

export const inProcessFetch =
  (router: Router): FetchLike =>
  async (input, init) => {
    const url = new URL(input, 'http://sluice.internal');
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const response = await router.handle({
      method: (init.method ?? 'GET').toUpperCase(),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body: await bytesOf(init.body),
    });
    const out = new Headers(response.headers ?? {});
    if (response.body === undefined) return new Response(null, { status: response.status, headers: out });
    if (response.body instanceof Uint8Array) {
      if (!out.has('content-type')) out.set('content-type', 'application/octet-stream');
      return new Response(response.body, { status: response.status, headers: out });
    }
    if (!out.has('content-type')) out.set('content-type', 'application/json; charset=utf-8');
    return new Response(JSON.stringify(response.body), { status: response.status, headers: out });
  };
