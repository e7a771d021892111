/**
 * The fault injector behind the faulty store decorators: decides, from a seeded random source, whether
 * an operation fails and how, and counts what it did.
 *
 * - `failBefore`: a retriable error (unavailable or throttled) and nothing is written.
 * - `failAfter`: the operation takes effect, then the caller gets the ambiguous "unavailable" error —
 *   the case that finds double-writes and lost acknowledgements.
 * - `dropResponse`: as failAfter from the caller's view (the operation took effect, the caller sees a
 *   timeout), counted apart.
 * - `delay`: the operation waits before or after it runs, so concurrent operations reorder.
 */
import { SluiceError } from '../../../protocol/errors.js';
import type { Clock } from '../../ports/clock.js';
import { storageUnavailable, throttled } from '../../ports/storage-errors.js';
import type { Random } from './random.js';
import { randomInt, seededRandom, weighted } from './random.js';

export const FAULT_KINDS = ['failBefore', 'failAfter', 'dropResponse', 'delay'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One store operation as the injector sees it. */
export interface FaultTarget {
  store: 'metadata' | 'object';
  op: string;
  /** Metadata: the item's pk/sk (the first item's for transactions and batch writes). Object: the key. */
  pk?: string;
  sk?: string;
  key?: string;
}

/** Which operations a rule applies to; every given field must match. */
export interface FaultFilter {
  store?: 'metadata' | 'object';
  /** Operation names, e.g. `['update']` or `['put', 'get']`. */
  ops?: readonly string[];
  /** Prefix of the item's pk. */
  pk?: string;
  /** Prefix of the item's sk, e.g. `'STATE'` for partition state items. */
  sk?: string;
  /** Prefix of the object key. */
  key?: string;
}

/** The JSON spec of `SLUICE_FAULTS` and of tests: a rate of faults over the filtered operations. */
export interface FaultSpec extends FaultFilter {
  seed: number;
  /** Probability that a matching operation gets a fault (default 0.05). */
  rate?: number;
  /** Relative weights of the kinds (default failBefore 1, failAfter 2, dropResponse 1, delay 2). */
  kinds?: Partial<Record<FaultKind, number>>;
  /** Longest delay, in clock milliseconds (default 20). */
  maxDelayMs?: number;
}

export type FaultCounts = Record<FaultKind, number>;

const DEFAULT_KINDS: Record<FaultKind, number> = { failBefore: 1, failAfter: 2, dropResponse: 1, delay: 2 };

/**
 * Module-level switch over every injector: the soak test turns faults off for its final drain, and
 * tests pause them while they set up or check. In-process only (the local stack runs in the same process).
 */
const registry = new Set<FaultInjector>();
let globallyEnabled = true;

export const setFaultsEnabled = (enabled: boolean): void => {
  globallyEnabled = enabled;
};

export const faultsEnabled = (): boolean => globallyEnabled;

/** Faults injected so far by every live injector, by kind. */
export const totalFaultCounts = (): FaultCounts => {
  const total = zeroCounts();
  for (const injector of registry) for (const kind of FAULT_KINDS) total[kind] += injector.counts[kind];
  return total;
};

export const zeroCounts = (): FaultCounts => ({ failBefore: 0, failAfter: 0, dropResponse: 0, delay: 0 });

interface Scripted {
  filter: FaultFilter;
  kind: FaultKind;
  remaining: number;
  skip: number;
}

export class FaultInjector {
  readonly counts: FaultCounts = zeroCounts();
  /** Faults by `store.op`, for reports. */
  readonly byOperation = new Map<string, number>();
  readonly random: Random;
  /** This injector's own switch (the module switch must be on too). */
  enabled = true;
  private readonly scripted: Scripted[] = [];

  constructor(
    readonly spec: FaultSpec,
    private readonly clock?: Clock,
  ) {
    this.random = seededRandom(spec.seed);
    registry.add(this);
  }

  /** Stops counting this injector in `totalFaultCounts`. */
  dispose(): void {
    registry.delete(this);
  }

  /**
   * Forces `kind` on the next `count` operations matching filter, after skipping `skip` of them —
   * scripted crashes for specific scenarios. Applies even when the rate is 0.
   */
  failNext(filter: FaultFilter, kind: FaultKind, options: { count?: number; skip?: number } = {}): void {
    this.scripted.push({ filter, kind, remaining: options.count ?? 1, skip: options.skip ?? 0 });
  }

  /** The fault for this operation, if any (and counts it). */
  decide(target: FaultTarget): FaultKind | undefined {
    if (!this.enabled || !globallyEnabled) return undefined;
    for (const s of this.scripted) {
      if (s.remaining <= 0 || !matches(s.filter, target)) continue;
      if (s.skip > 0) {
        s.skip--;
        continue;
      }
      s.remaining--;
      return this.count(target, s.kind);
    }
    if (!matches(this.spec, target)) return undefined;
    if (this.random() >= (this.spec.rate ?? 0.05)) return undefined;
    return this.count(target, weighted(this.random, this.spec.kinds ?? DEFAULT_KINDS));
  }

  /** The error a failBefore throws: retriable, and nothing was written. */
  beforeError(target: FaultTarget): SluiceError {
    const what = describe(target);
    return this.random() < 0.5
      ? throttled(what)
      : storageUnavailable(what, new Error('injected fault before the write'));
  }

  /** The error a failAfter or dropResponse throws: the write may have taken effect. */
  afterError(target: FaultTarget, kind: 'failAfter' | 'dropResponse'): SluiceError {
    const what = describe(target);
    if (kind === 'dropResponse') {
      return new SluiceError('REQUEST_TIMED_OUT', `${what} timed out (injected: the response was dropped)`);
    }
    return storageUnavailable(what, new Error('injected fault after the write'));
  }

  /** Waits a random while: on the clock when there is one, else a few macrotask turns. */
  async pause(): Promise<void> {
    const ms = randomInt(this.random, 1, this.spec.maxDelayMs ?? 20);
    if (this.clock) await this.clock.sleep(ms);
    else for (let i = 0; i < ms; i++) await new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * Runs one operation under the injector: `run` performs it against the wrapped store. Reads treat
   * failAfter like failBefore (nothing to take effect), but still pay for the read.
   */
  async around<T>(target: FaultTarget, run: () => Promise<T>): Promise<T> {
    const kind = this.decide(target);
    if (kind === undefined) return run();
    if (kind === 'failBefore') throw this.beforeError(target);
    if (kind === 'delay') {
      const before = this.random() < 0.5;
      if (before) await this.pause();
      const result = await run();
      if (!before) await this.pause();
      return result;
    }
    // The operation happens (whatever its own outcome, even a failed condition); the caller cannot tell.
    await run().catch(() => undefined);
    throw this.afterError(target, kind);
  }

  private count(target: FaultTarget, kind: FaultKind): FaultKind {
    this.counts[kind]++;
    const op = `${target.store}.${target.op}`;
    this.byOperation.set(op, (this.byOperation.get(op) ?? 0) + 1);
    return kind;
  }
}

export const matches = (filter: FaultFilter, target: FaultTarget): boolean =>
  (filter.store === undefined || filter.store === target.store) &&
  (filter.ops === undefined || filter.ops.includes(target.op)) &&
  (filter.pk === undefined || (target.pk ?? '').startsWith(filter.pk)) &&
  (filter.sk === undefined || (target.sk ?? '').startsWith(filter.sk)) &&
  (filter.key === undefined || (target.key ?? '').startsWith(filter.key));

const describe = (target: FaultTarget): string =>
  target.store === 'object'
    ? `object store ${target.op} ${target.key ?? ''}`.trim()
    : `metadata store ${target.op} ${target.pk ?? ''}/${target.sk ?? ''}`;

/** Parses `SLUICE_FAULTS` (JSON); throws on anything but an object with a numeric seed. */
export const parseFaultSpec = (json: string): FaultSpec => {
  const spec = JSON.parse(json) as unknown;
  if (spec === null || typeof spec !== 'object' || typeof (spec as FaultSpec).seed !== 'number') {
    throw new Error(`SLUICE_FAULTS must be a JSON object with a numeric seed, got ${json}`);
  }
  return spec as FaultSpec;
};
