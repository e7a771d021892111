/** ApiVersions: every API this gateway serves and its versions (KIP-511 fallback in dispatch.ts). */
import type { Message } from '../../protocol/kafka/codec.js';
import { ApiVersions } from '../../protocol/kafka/messages/api-versions.js';
import type { ApiHandler, GatewayContext } from '../api.js';

export function apiVersionsAnswer(gateway: GatewayContext, errorCode = 0): Message {
  const apiKeys = [...gateway.apis().values()]
    .sort((a, b) => a.schema.apiKey - b.schema.apiKey)
    .map((h) => ({ apiKey: h.schema.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion }));
  return { errorCode, apiKeys, throttleTimeMs: 0 };
}

export const apiVersions: ApiHandler = {
  schema: ApiVersions,
  minVersion: 0,
  maxVersion: 4,
  handle: async (_request, ctx) => apiVersionsAnswer(ctx.gateway),
};
