/**
 * Client quotas through the Kafka gateway. The gateway serves many clients over one HTTP transport,
 * so it must not wait out one client's throttle itself: each Kafka request runs in a context holding
 * the client.id of its header, which goes to Sluice as `Kafka-Client-Id`, and the throttle time
 * Sluice answers with is collected there and put into the Kafka response's `throttleTimeMs`, which
 * Kafka's clients honour (KIP-219: they hold their next request to this broker for that long).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '../sdk/transport.js';

interface RequestQuota {
  clientId: string;
  throttleTimeMs: number;
}

const current = new AsyncLocalStorage<RequestQuota>();

/** Runs one Kafka request for `clientId`; resolves with its result and the longest throttle Sluice set. */
export const runForClient = async <T>(
  clientId: string,
  run: () => Promise<T>,
): Promise<{ result: T; throttleTimeMs: number }> => {
  const quota: RequestQuota = { clientId, throttleTimeMs: 0 };
  const result = await current.run(quota, run);
  return { result, throttleTimeMs: quota.throttleTimeMs };
};

/** The throttle time a request collected so far (a handler that fails still reports it). */
export const collectedThrottle = (): number => current.getStore()?.throttleTimeMs ?? 0;

/** A fetch that names the current Kafka client to Sluice and notes the throttle time of each answer. */
export const clientQuotaFetch =
  (inner: FetchLike): FetchLike =>
  async (input, init) => {
    const quota = current.getStore();
    const headers =
      quota && quota.clientId !== ''
        ? { ...(init.headers as Record<string, string> | undefined), 'kafka-client-id': quota.clientId }
        : init.headers;
    const response = await inner(input, { ...init, ...(headers ? { headers } : {}) });
    const ms = Number(response.headers.get('sluice-throttle-time-ms') ?? 0);
    if (quota && Number.isFinite(ms) && ms > 0) quota.throttleTimeMs = Math.max(quota.throttleTimeMs, ms);
    return response;
  };
