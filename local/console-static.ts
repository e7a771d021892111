/**
 * The web console's static files for the local gateway: console/ and, under `/console/vendor/`, uPlot's
 * distribution files from node_modules (the one npm dependency the console loads). Which path is which
 * file, and the headers, are lib/http/console-site.ts's, as for the deployed console function.
 */
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONSOLE_VENDOR_FILES, consoleHeaders, consolePath } from '../lib/http/console-site.js';

const CONSOLE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'console');

/** Answers a GET or HEAD under /console; returns false for every other request. */
export const serveConsole = async (
  method: string,
  rawPath: string,
  res: ServerResponse,
): Promise<boolean> => {
  const target = consolePath(rawPath);
  if (target === undefined || (method !== 'GET' && method !== 'HEAD')) return false;
  if (target.kind === 'redirect') {
    res.writeHead(308, { location: target.location });
    res.end();
    return true;
  }
  const file =
    target.kind !== 'file'
      ? undefined
      : target.vendor
        ? createRequire(import.meta.url).resolve(CONSOLE_VENDOR_FILES[target.name]!)
        : join(CONSOLE_DIR, target.name);
  const body = file === undefined ? undefined : await readFile(file).catch(() => undefined);
  if (target.kind !== 'file' || body === undefined) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('not found\n');
    return true;
  }
  res.writeHead(200, consoleHeaders(target.name, body.length));
  res.end(method === 'HEAD' ? undefined : body);
  return true;
};
