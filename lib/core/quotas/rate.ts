/**
 * The shared rate of one quota, kept in the metadata store so that every instance serving the same
 * user or client id counts against the same number (Kafka keeps it in one broker's memory; Sluice
 * has no broker, and a per-instance count would let N instances grant N times the quota).
 *
 * A token bucket in its virtual-time form (GCRA), which needs nothing but DynamoDB's atomic ADD: one
 * item per (quota type, counted entity) holds `tat`, the time at which the entity's admitted work
 * will have been paid for at its quota's rate. A request of cost c under a quota of q per second adds
 * c / q seconds to it; it is admitted while `tat ≤ now + burst` (the bucket holds `burst` worth of
 * quota), in one conditional UpdateItem that counts nothing when it refuses. The throttle time is
 * `tat − burst − now`: when the excess is paid. Concurrent requests never conflict (ADD), so a crowd
 * of in-flight requests that crosses the quota together is all counted and all paid for afterwards
 * (the excess is debt, not forgotten when an estimate dips); the long-run rate is the quota's, and
 * the error is bounded by one burst plus clock skew between instances. An idle entity's `tat` falls
 * behind `now`: once it is more than `burst` behind, the next request moves it up to `now` (a second,
 * conditional write, about once per idle period), so idle time does not pile up credit.
 */
import type { Clock } from '../../ports/clock.js';
import type { MetadataStore } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import type { QuotaType } from './entity.js';

/** Kafka's quota.window.size.seconds default: the bucket holds one second of quota. */
export const DEFAULT_QUOTA_WINDOW_MS = 1_000;
/** An idle entity's rate item is deleted by TTL after this long. */
const RATE_ITEM_TTL_MS = 60 * 60_000;

export interface QuotaDecision {
  /** False: the entity was throttled; nothing was counted and the request must not be served. */
  admitted: boolean;
  /** How long the client must wait before its next request (0: not throttled). */
  throttleTimeMs: number;
}

export interface RateOptions {
  store: MetadataStore;
  clock: Clock;
  /** How much quota a burst may take at once, in ms of the quota's rate (default 1000). */
  windowMs?: number;
}

/** The rate item of a counted entity and quota type. */
export const rateKey = (type: QuotaType, counterKey: string) => ({
  pk: `QUOTA_RATE#${type}#${counterKey}`,
  sk: 'RATE',
});

export class QuotaRates {
  private readonly store: MetadataStore;
  private readonly clock: Clock;
  readonly windowMs: number;

  constructor({ store, clock, windowMs = DEFAULT_QUOTA_WINDOW_MS }: RateOptions) {
    this.store = store;
    this.clock = clock;
    this.windowMs = windowMs;
  }

  /**
   * Counts `cost` against `limit` (units per second). With `admit`, the cost is counted only while
   * the entity is not throttled, and a throttled entity is refused; without it (the cost of work
   * already done, such as request time), it is counted regardless.
   */
  async record(
    type: QuotaType,
    counterKey: string,
    cost: number,
    limit: number,
    { admit }: { admit: boolean },
  ): Promise<QuotaDecision> {
    const key = rateKey(type, counterKey);
    const now = this.clock.now();
    const burst = this.windowMs;
    const costMs = (cost * 1000) / limit;
    let tat: number;
    try {
      const item = await this.store.update(
        key,
        [
          { set: 'tat', add: costMs, initial: now },
          { set: 'expiresAt', value: Math.ceil((now + RATE_ITEM_TTL_MS) / 1000) },
        ],
        {
          returnValues: 'allNew',
          ...(admit
            ? { condition: { or: [{ notExists: 'tat' }, { path: 'tat', op: '<=', value: now + burst }] } }
            : {}),
        },
      );
      tat = Number(item?.['tat'] ?? now + costMs);
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      const current = Number(error.current?.['tat'] ?? now);
      return { admitted: false, throttleTimeMs: Math.max(1, Math.ceil(current - burst - now)) };
    }
    if (tat < now - burst) {
      await this.catchUp(key, now, tat - costMs);
      tat = now + costMs;
    }
    return { admitted: true, throttleTimeMs: Math.max(0, Math.ceil(tat - burst - now)) };
  }

  /** How long the entity is still throttled (0: not), from one consistent read. */
  async throttled(type: QuotaType, counterKey: string): Promise<number> {
    const item = await this.store.get(rateKey(type, counterKey), { consistent: true });
    if (item?.['tat'] === undefined) return 0;
    return Math.max(0, Math.ceil(Number(item['tat']) - this.windowMs - this.clock.now()));
  }

  /**
   * Moves an idle entity's `tat` up to now plus the cost just counted (adding, so work counted
   * meanwhile stays counted), unless another request already moved it.
   */
  private async catchUp(key: { pk: string; sk: string }, now: number, before: number): Promise<void> {
    try {
      await this.store.update(key, [{ set: 'tat', add: now - before }], {
        condition: { path: 'tat', op: '<', value: now },
      });
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }
}
