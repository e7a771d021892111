/** Lambda entry point: the fetch routes of the HTTP API (see lib/http/route-table.ts). */
import { httpHandler } from './runtime.js';

export const handler = httpHandler('fetch');
