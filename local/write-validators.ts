/**
 * `npm run validators`: writes lib/http/validators/<name>.js, the request body validators compiled
 * ahead of time (local/request-validators.ts); test/unit/functions/request-validators.test.ts fails when one is
 * stale.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { VALIDATORS_DIR, VALIDATOR_MODULES, validatorModuleSource } from './request-validators.js';

const dir = new URL(`../${VALIDATORS_DIR}/`, import.meta.url);
mkdirSync(dir, { recursive: true });
for (const file of readdirSync(dir)) if (file.endsWith('.js')) rmSync(new URL(file, dir));
for (const name of Object.keys(VALIDATOR_MODULES)) {
  const file = new URL(`${name}.js`, dir);
  writeFileSync(file, validatorModuleSource(name));
  console.log(`wrote ${file.pathname}`);
}
