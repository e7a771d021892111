/**
 * A `fetch` for Node.js on `node:http`/`node:https` with keep-alive connections, for producers that
 * move a lot of bytes: Node's built-in fetch (undici) streams every body through WHATWG streams and
 * costs several times the CPU of a plain `http.request` per megabyte (the AWS SDK avoids it in Node
 * for the same reason). Pass it as `new SluiceClient({ url, fetch: nodeHttpFetch() })`. Only what the
 * SDK's transport uses is implemented: method, headers, a string or byte body, and an abort signal.
 */
import type { Agent as HttpAgent, IncomingMessage } from 'node:http';
import { Agent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { FetchLike } from './transport.js';

export interface NodeHttpFetchOptions {
  /** Sockets kept per host (default 64). */
  maxSockets?: number;
}

export const nodeHttpFetch = (options: NodeHttpFetchOptions = {}): FetchLike => {
  const maxSockets = options.maxSockets ?? 64;
  const agents: { http: HttpAgent; https: HttpsAgent } = {
    http: new Agent({ keepAlive: true, maxSockets }),
    https: new HttpsAgent({ keepAlive: true, maxSockets }),
  };
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input);
      const secure = url.protocol === 'https:';
      const body = toBytes(init.body);
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      if (body) headers['content-length'] = String(body.length);
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(abortError(signal));
      const req = (secure ? httpsRequest : httpRequest)(
        url,
        { method: init.method ?? 'GET', headers, agent: secure ? agents.https : agents.http },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', (error) => {
            signal?.removeEventListener('abort', onAbort);
            reject(error);
          });
          res.on('end', () => {
            signal?.removeEventListener('abort', onAbort);
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              if (value === undefined) continue;
              for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
            }
            const status = res.statusCode ?? 500;
            const payload = status === 204 || status === 304 ? null : Buffer.concat(chunks);
            resolve(new Response(payload, { status, headers: responseHeaders }));
          });
        },
      );
      const onAbort = (): void => {
        req.destroy(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (error) => {
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      });
      req.end(body);
    });
};

const toBytes = (body: RequestInit['body']): Uint8Array | undefined => {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('nodeHttpFetch sends string and byte bodies only');
};

const abortError = (signal: AbortSignal): Error =>
  signal.reason instanceof Error
    ? signal.reason
    : new DOMException('This operation was aborted', 'AbortError');
