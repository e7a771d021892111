/** Calls the group routes through the router as the HTTP edge does, with a JSON body. */
import type { Router } from '../../../../lib/http/router.js';

export const routeCaller =
  (router: Router) =>
  async <T>(method: string, path: string, body?: unknown, query: Record<string, string> = {}) => {
    const res = await router.handle({
      method,
      path,
      query,
      headers: {},
      body: body === undefined ? new Uint8Array() : new TextEncoder().encode(JSON.stringify(body)),
    });
    return { status: res.status, body: res.body as T };
  };
