/**
 * The gateway's API table: one handler per Kafka API (or per family of APIs), each in its own file.
 * To add an API: its schema in protocol/kafka/messages/, its handler in gateway/apis/, one line here.
 */
import type { ApiHandler } from '../api.js';
import { apiVersions } from './api-versions.js';
import { metadata } from './metadata.js';

export const API_HANDLERS: readonly ApiHandler[] = [apiVersions, metadata];
