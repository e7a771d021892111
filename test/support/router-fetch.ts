/**
 * A fetch that hands each request to a Router in this process (Hono's `app.request` habit), so the
 * SDK, the CLI and the harness drive the real routes without sockets. Bodies take the same trip as
 * over HTTP: JSON answers are serialized, bytes are passed through.
 */
import type { Router } from '../../lib/http/router.js';
import type { FetchLike } from '../../sdk/transport.js';

export interface Exchange {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  contentType: string;
  /** Parsed JSON, raw bytes, or undefined for an empty body. */
  body: unknown;
}

export const routerFetch =
  (router: Router, onExchange?: (exchange: Exchange) => void): FetchLike =>
  async (input, init) => {
    const url = new URL(input);
    const headers: Record<string, string> = {};
    for (const [k, v] of new Headers(init.headers as ConstructorParameters<typeof Headers>[0]))
      headers[k.toLowerCase()] = v;
    const raw = init.body;
    const body =
      raw === undefined || raw === null
        ? new Uint8Array()
        : typeof raw === 'string'
          ? new TextEncoder().encode(raw)
          : raw instanceof Uint8Array
            ? raw
            : new Uint8Array(await new Response(raw).arrayBuffer());
    const query = Object.fromEntries(url.searchParams);
    const answer = await router.handle({
      method: init.method ?? 'GET',
      path: url.pathname,
      query,
      headers,
      body,
    });
    const out = { ...answer.headers };
    let bytes: Uint8Array | undefined;
    if (answer.body instanceof Uint8Array) bytes = answer.body;
    else if (answer.body !== undefined) bytes = new TextEncoder().encode(JSON.stringify(answer.body));
    const contentType = out['content-type'] ?? '';
    onExchange?.({
      method: init.method ?? 'GET',
      path: url.pathname,
      query,
      status: answer.status,
      contentType,
      body:
        bytes === undefined
          ? undefined
          : contentType.includes('json')
            ? JSON.parse(new TextDecoder().decode(bytes))
            : bytes,
    });
    return new Response(answer.status === 204 || bytes === undefined ? null : bytes, {
      status: answer.status,
      headers: out,
    });
  };
