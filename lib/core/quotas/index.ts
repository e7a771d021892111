/**
 * Kafka's client quotas (KIP-13, KIP-124, KIP-219, KIP-257, KIP-599) for Sluice: which quota governs a
 * request (entity.ts), the stored configs (configs.ts) and the shared rate (rate.ts). Requests are
 * never dropped silently: an answer carries how long the client must wait.
 */
import type { Clock } from '../../ports/clock.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import { ClientQuotaConfigs } from './configs.js';
import type { QuotaPrincipal, QuotaType, ResolvedQuota } from './entity.js';
import { resolveQuota } from './entity.js';
import type { QuotaDecision } from './rate.js';
import { QuotaRates } from './rate.js';

export * from './entity.js';
export { ClientQuotaConfigs, DEFAULT_QUOTA_CONFIG_TTL_MS } from './configs.js';
export type { QuotaAlteration } from './configs.js';
export { DEFAULT_QUOTA_WINDOW_MS, QuotaRates, rateKey } from './rate.js';
export type { QuotaDecision } from './rate.js';

export interface ClientQuotaManagerOptions {
  store: MetadataStore;
  clock: Clock;
  /** Kafka's quota.window.size.seconds, in ms (default 1000). */
  windowMs?: number;
  /** How long an instance serves the quota configs from memory (default 5000 ms). */
  configCacheTtlMs?: number;
}

const UNTHROTTLED: QuotaDecision = { admitted: true, throttleTimeMs: 0 };

/** What request time a request may still take: checked before it is served, counted after. */
export interface RequestTimeGate {
  /** Set when the principal is throttled now: refuse the request. */
  throttleTimeMs: number;
  /** Counts the time the request took; the answer's throttle time. */
  record(elapsedMs: number): Promise<number>;
}

export class ClientQuotaManager {
  readonly configs: ClientQuotaConfigs;
  readonly rates: QuotaRates;
  private readonly clock: Clock;

  constructor({ store, clock, windowMs, configCacheTtlMs }: ClientQuotaManagerOptions) {
    this.clock = clock;
    this.configs = new ClientQuotaConfigs({
      store,
      clock,
      ...(configCacheTtlMs !== undefined ? { cacheTtlMs: configCacheTtlMs } : {}),
    });
    this.rates = new QuotaRates({ store, clock, ...(windowMs !== undefined ? { windowMs } : {}) });
  }

  /** The quota of this type that governs the principal, if any (from the cached configs). */
  async resolve(principal: QuotaPrincipal, type: QuotaType): Promise<ResolvedQuota | undefined> {
    return resolveQuota(await this.configs.all(), principal, type);
  }

  /**
   * Counts `cost` (bytes, partition mutations) against the principal's quota of this type, unless it
   * is throttled: then nothing is counted and the request must be refused with the throttle time.
   * No quota of the type: no store call.
   */
  async admit(
    principal: QuotaPrincipal,
    type: QuotaType,
    cost: number | (() => number | Promise<number>),
  ): Promise<QuotaDecision> {
    const quota = await this.resolve(principal, type);
    if (!quota) return UNTHROTTLED;
    // Computed only under a quota (an answer's size, a topic's partitions).
    const amount = typeof cost === 'number' ? cost : await cost();
    if (amount <= 0) return UNTHROTTLED;
    return this.rates.record(type, quota.counterKey, amount, quota.limit, { admit: true });
  }

  now(): number {
    return this.clock.now();
  }

  /** request_percentage: a gate read before the request, and its time counted after it. */
  async requestTime(principal: QuotaPrincipal): Promise<RequestTimeGate | undefined> {
    const quota = await this.resolve(principal, 'request_percentage');
    if (!quota) return undefined;
    // request_percentage 100 is one request handler's whole time: 1000 ms of handling per second.
    const limit = quota.limit * 10;
    return {
      throttleTimeMs: await this.rates.throttled('request_percentage', quota.counterKey),
      record: async (elapsedMs) =>
        (await this.rates.record('request_percentage', quota.counterKey, elapsedMs, limit, { admit: false }))
          .throttleTimeMs,
    };
  }
}
