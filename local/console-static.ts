/**
 * The web console's static files for the local gateway: `GET /console/` is console/index.html, other
 * names are the flat files of console/, and `/console/vendor/` is uPlot's distribution files from
 * node_modules (the one npm dependency the console loads). Names are matched against a fixed pattern,
 * so no request can reach a file outside those two folders. Deployed, the same files go to any static
 * host (docs/console.md).
 */
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONSOLE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'console');
const VENDOR: Record<string, string> = {
  'uPlot.iife.min.js': 'uplot/dist/uPlot.iife.min.js',
  'uPlot.min.css': 'uplot/dist/uPlot.min.css',
};
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};
const NAME = /^[a-z0-9][a-z0-9-]*\.(html|js|css|svg)$/i;

const resolveFile = (path: string): string | undefined => {
  if (path === '/console/') return join(CONSOLE_DIR, 'index.html');
  const vendor = /^\/console\/vendor\/([^/]+)$/.exec(path);
  if (vendor) {
    const target = VENDOR[vendor[1]!];
    return target === undefined ? undefined : createRequire(import.meta.url).resolve(target);
  }
  const name = /^\/console\/([^/]+)$/.exec(path)?.[1];
  return name !== undefined && NAME.test(name) ? join(CONSOLE_DIR, name) : undefined;
};

/** Answers a GET or HEAD under /console; returns false for every other request. */
export const serveConsole = async (
  method: string,
  rawPath: string,
  res: ServerResponse,
): Promise<boolean> => {
  if (rawPath !== '/console' && !rawPath.startsWith('/console/')) return false;
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (rawPath === '/console') {
    res.writeHead(308, { location: '/console/' });
    res.end();
    return true;
  }
  const file = resolveFile(rawPath);
  const body = file === undefined ? undefined : await readFile(file).catch(() => undefined);
  if (file === undefined || body === undefined) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('not found\n');
    return true;
  }
  res.writeHead(200, {
    'content-type': TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream',
    'content-length': String(body.length),
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'content-security-policy':
      "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  });
  res.end(method === 'HEAD' ? undefined : body);
  return true;
};
