/** `npm run openapi`: writes docs/openapi.json from lib/wire/openapi.ts (the test fails when they differ). */
import { writeFileSync } from 'node:fs';
import { SLUICE_VERSION } from '../functions/app.js';
import { openApiDocument } from '../lib/wire/openapi.js';
import { ROUTES } from '../functions/routes.js';

const file = new URL('../docs/openapi.json', import.meta.url);
writeFileSync(file, `${JSON.stringify(openApiDocument(SLUICE_VERSION, ROUTES), null, 2)}\n`);
console.log(`wrote ${file.pathname}`);
