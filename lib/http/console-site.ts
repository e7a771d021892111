/**
 * The web console's static files as a site serves them, wherever it runs: which request path names
 * which file (`/console/` is index.html, flat names of console/, and uPlot's two files under
 * `/console/vendor/`), and the headers each answer carries. Names are matched against a fixed pattern,
 * so no path can reach a file outside those folders. The local gateway (local/console-static.ts) and
 * the deployed console function (functions/console.ts) both answer from here.
 */

/** uPlot's distribution files the console loads, by their name under vendor/. */
export const CONSOLE_VENDOR_FILES: Readonly<Record<string, string>> = {
  'uPlot.iife.min.js': 'uplot/dist/uPlot.iife.min.js',
  'uPlot.min.css': 'uplot/dist/uPlot.min.css',
};

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};
const NAME = /^[a-z0-9][a-z0-9-]*\.(html|js|css|svg)$/i;

/** What a path under /console is: a redirect to `/console/`, a file, or nothing. */
export type ConsolePath =
  | { kind: 'redirect'; location: string }
  | { kind: 'file'; name: string; vendor: boolean }
  | { kind: 'not-found' };

export const consolePath = (path: string): ConsolePath | undefined => {
  if (path !== '/console' && !path.startsWith('/console/')) return undefined;
  if (path === '/console') return { kind: 'redirect', location: '/console/' };
  if (path === '/console/') return { kind: 'file', name: 'index.html', vendor: false };
  const vendor = /^\/console\/vendor\/([^/]+)$/.exec(path)?.[1];
  if (vendor !== undefined)
    return vendor in CONSOLE_VENDOR_FILES
      ? { kind: 'file', name: vendor, vendor: true }
      : { kind: 'not-found' };
  const name = /^\/console\/([^/]+)$/.exec(path)?.[1];
  return name !== undefined && NAME.test(name)
    ? { kind: 'file', name, vendor: false }
    : { kind: 'not-found' };
};

/** The headers of a console file: its type, no sniffing, a strict content security policy. */
export const consoleHeaders = (name: string, length: number): Record<string, string> => ({
  'content-type': TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream',
  'content-length': String(length),
  'cache-control': 'no-cache',
  'x-content-type-options': 'nosniff',
  'content-security-policy':
    "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
});
