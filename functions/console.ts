/**
 * Lambda entry point of the deployed web console (infra/constructs/console-site.ts): serves the static
 * files of console/ and uPlot's two files, bundled beside this handler, on the API's own origin at
 * `/console/`. It reads no data: the console's requests to `/v1/…` are signed in the browser with the
 * user's own credentials and authorized by the API as any other client's.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApiGatewayV2Event, ApiGatewayV2Result } from '../lib/http/apigw.js';
import { consoleHeaders, consolePath } from '../lib/http/console-site.js';

/** Where the bundle keeps the files: `console/` and `console/vendor/` beside the handler. */
export const CONSOLE_BUNDLE_DIR = 'console';

/** A handler over files found by `read(name, vendor)`; undefined when a file is missing. */
export const consoleHandler =
  (read: (name: string, vendor: boolean) => Promise<Uint8Array | undefined>) =>
  async (event: ApiGatewayV2Event): Promise<ApiGatewayV2Result> => {
    const method = event.requestContext.http.method;
    const target = consolePath(event.rawPath);
    if (target === undefined || (method !== 'GET' && method !== 'HEAD'))
      return {
        statusCode: 404,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: 'not found\n',
      };
    if (target.kind === 'redirect') return { statusCode: 308, headers: { location: target.location } };
    const body = target.kind === 'file' ? await read(target.name, target.vendor) : undefined;
    if (target.kind !== 'file' || body === undefined)
      return {
        statusCode: 404,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: 'not found\n',
      };
    return {
      statusCode: 200,
      headers: consoleHeaders(target.name, body.length),
      body: method === 'HEAD' ? '' : Buffer.from(body).toString('base64'),
      isBase64Encoded: true,
    };
  };

const here = dirname(fileURLToPath(import.meta.url));

export const handler = consoleHandler(async (name, vendor) =>
  readFile(join(here, CONSOLE_BUNDLE_DIR, ...(vendor ? ['vendor'] : []), name)).catch(() => undefined),
);
