/**
 * `tsx infra/build-function.ts <entry> <outDir>`: bundles one function (infra/bundling.ts). The CDK
 * app runs it as a child process from its local bundling (infra/constructs/sluice-functions.ts):
 * esbuild's plugins need its asynchronous API, which a synchronous bundling hook cannot await.
 */
import { buildFunction } from './bundling.js';

const [entry, outDir] = process.argv.slice(2);
if (!entry || !outDir) throw new Error('usage: tsx infra/build-function.ts <entry> <outDir>');
await buildFunction(entry, outDir);
