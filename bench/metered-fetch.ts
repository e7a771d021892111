/**
 * A fetch for the SDK that records every call's job (which function served it), body sizes and
 * latency, so a benchmark can count API Gateway billing units and Lambda time as the client saw them.
 */
import { matchRoute } from '../functions/route-table.js';
import { nodeHttpFetch } from '../sdk/node-http.js';
import type { FetchLike } from '../sdk/transport.js';

export interface MeteredCall {
  job: string;
  path: string;
  requestBytes: number;
  responseBytes: number;
  ms: number;
}

export const meteredFetch = (
  inner: FetchLike = nodeHttpFetch(),
): { fetch: FetchLike; calls: MeteredCall[] } => {
  const calls: MeteredCall[] = [];
  const fetch: FetchLike = async (url, init) => {
    const started = performance.now();
    const response = await inner(url, init);
    const body = new Uint8Array(await response.arrayBuffer());
    const path = new URL(url).pathname;
    const requestBytes =
      init.body instanceof Uint8Array
        ? init.body.length
        : typeof init.body === 'string'
          ? Buffer.byteLength(init.body)
          : 0;
    calls.push({
      job: matchRoute(init.method ?? 'GET', path)?.job ?? 'unknown',
      path,
      requestBytes,
      responseBytes: body.length,
      ms: performance.now() - started,
    });
    return new Response(response.status === 204 ? null : body, {
      status: response.status,
      headers: response.headers,
    });
  };
  return { fetch, calls };
};
