/**
 * The shared rate of one quota, kept in the metadata store so that every instance serving the same
 * user or client id counts against the same number (Kafka keeps it in one broker's memory; Sluice
 * has no broker, and a per-instance count would let N instances grant N times the quota).
 *
 * One item per (quota type, counted entity): a counter per window (`w<index>`, atomic ADD, so
 * concurrent requests never conflict) and `throttledUntil`. A check is one conditional UpdateItem
 * that adds the request's cost only while the entity is not throttled, and returns the item: the
 * current and previous windows give a sliding estimate of the rate (the previous window weighted by
 * the part of it still inside the last window span). When a request takes the estimate over the
 * quota, the delay is Kafka's, (observed − quota) / quota × window span, and a second write stores
 * `throttledUntil = now + delay` (only ever moved later); until then every request of the entity is
 * refused without being counted. Storing the delay with the request that caused it is what holds a
 * large or bursty sender to its quota: the estimate alone readmits it as soon as it dips, while the
 * delay pays off all the excess at the quota's own rate first.
 */
import type { Clock } from '../../ports/clock.js';
import type { Item, MetadataStore, UpdateAction } from '../../ports/metadata-store.js';
import { ConditionFailedError } from '../../ports/metadata-store.js';
import type { QuotaType } from './entity.js';

/** Kafka's quota.window.size.seconds default: one second per window. */
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
  windowMs?: number;
}

/** The rate item of a counted entity and quota type. */
export const rateKey = (type: QuotaType, counterKey: string) => ({
  pk: `QUOTA_RATE#${type}#${counterKey}`,
  sk: 'RATE',
});

const windowAttr = (index: number): string => `w${index}`;
const WINDOW_ATTR = /^w(\d+)$/;

export class QuotaRates {
  private readonly store: MetadataStore;
  private readonly clock: Clock;
  readonly windowMs: number;
  /** Window counters this instance saw left behind (older than the previous window), removed on its next write. */
  private readonly stale = new Map<string, string[]>();

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
    const index = Math.floor(now / this.windowMs);
    const id = `${key.pk}`;
    const removals = new Set([windowAttr(index - 2), windowAttr(index - 3), ...(this.stale.get(id) ?? [])]);
    removals.delete(windowAttr(index));
    removals.delete(windowAttr(index - 1));
    const actions: UpdateAction[] = [
      { set: windowAttr(index), add: cost, initial: 0 },
      { set: 'expiresAt', value: Math.ceil((now + RATE_ITEM_TTL_MS) / 1000) },
      ...[...removals].map((attr) => ({ remove: attr })),
    ];
    let item: Item | undefined;
    try {
      item = await this.store.update(key, actions, {
        returnValues: 'allNew',
        ...(admit
          ? {
              condition: {
                or: [{ notExists: 'throttledUntil' }, { path: 'throttledUntil', op: '<=', value: now }],
              },
            }
          : {}),
      });
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      const until = Number(error.current?.['throttledUntil'] ?? now);
      return { admitted: false, throttleTimeMs: Math.max(1, Math.ceil(until - now)) };
    }
    this.noteStale(id, item, index);
    const pending = Math.max(0, Number(item?.['throttledUntil'] ?? 0) - now);
    const delay = this.throttleTime(item, now, index, limit);
    if (delay <= pending) return { admitted: true, throttleTimeMs: Math.ceil(pending) };
    const until = now + delay;
    try {
      await this.store.update(key, [{ set: 'throttledUntil', value: until }], {
        condition: {
          or: [{ notExists: 'throttledUntil' }, { path: 'throttledUntil', op: '<', value: until }],
        },
      });
    } catch (error) {
      // Another request of the entity stored a later end: that one stands.
      if (!(error instanceof ConditionFailedError)) throw error;
      const later = Number(error.current?.['throttledUntil'] ?? until);
      return { admitted: true, throttleTimeMs: Math.ceil(Math.max(later, until) - now) };
    }
    return { admitted: true, throttleTimeMs: Math.ceil(delay) };
  }

  /** How long the entity is still throttled (0: not), from one consistent read. */
  async throttled(type: QuotaType, counterKey: string): Promise<number> {
    const item = await this.store.get(rateKey(type, counterKey), { consistent: true });
    const now = this.clock.now();
    return Math.max(0, Math.ceil(Number(item?.['throttledUntil'] ?? 0) - now));
  }

  /**
   * Kafka's throttle time: (observed − quota) / quota × window span, where the observed rate is the
   * sliding estimate over the last window span; 0 while within the quota.
   */
  private throttleTime(item: Item | undefined, now: number, index: number, limit: number): number {
    const current = Number(item?.[windowAttr(index)] ?? 0);
    const previous = Number(item?.[windowAttr(index - 1)] ?? 0);
    const elapsed = (now - index * this.windowMs) / this.windowMs;
    const observed = current + previous * (1 - elapsed);
    const allowed = (limit * this.windowMs) / 1000;
    if (observed <= allowed) return 0;
    return ((observed - allowed) / allowed) * this.windowMs;
  }

  private noteStale(id: string, item: Item | undefined, index: number): void {
    const stale = Object.keys(item ?? {}).filter((attr) => {
      const m = WINDOW_ATTR.exec(attr);
      return m !== null && Number(m[1]) < index - 1;
    });
    if (stale.length > 0) this.stale.set(id, stale);
    else this.stale.delete(id);
  }
}
