#!/usr/bin/env node
// The `sluice` command. An installed package runs the compiled CLI in dist/; a checkout (where the
// TypeScript sources sit beside this file) runs them through tsx, so `npx sluice` needs no build.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

const source = new URL('../cli/main.ts', import.meta.url);
let cli;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(source.href);
} else {
  cli = await import(new URL('../dist/cli/main.js', import.meta.url).href);
}
await cli.main(process.argv.slice(2));
