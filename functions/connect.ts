/** Lambda entry point: Kafka Connect's REST API under /v1/connect (see lib/http/route-table.ts). */
import { httpHandler } from './runtime.js';

export const handler = httpHandler('connect');
