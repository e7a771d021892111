/**
 * The one compare-and-set retry loop of the group coordinator: an attempt reads, decides and writes
 * conditionally; when a concurrent writer got there first the whole attempt starts over after an
 * exponential backoff with full jitter. Bounded: past the last attempt (about 20 s of waiting at most,
 * under API Gateway's 29 s) the caller gets a retriable COORDINATOR_NOT_AVAILABLE.
 */
import type { ErrorCode } from '../../../protocol/errors.js';
import { SluiceError } from '../../../protocol/errors.js';
import type { Clock } from '../../ports/clock.js';
import { ConditionFailedError, TransactionCanceledError } from '../../ports/metadata-store.js';

/** Thrown inside an attempt to start it over (e.g. after tidying up state the attempt depends on). */
export class StaleRead extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'StaleRead';
  }
}

export interface CasRetryOptions {
  clock: Clock;
  random: () => number;
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** The retriable code past the last attempt (default COORDINATOR_NOT_AVAILABLE). */
  exhaustedCode?: ErrorCode;
}

export const isConflict = (e: unknown): boolean =>
  e instanceof ConditionFailedError ||
  e instanceof StaleRead ||
  (e instanceof TransactionCanceledError && (e.conditionFailed || e.reasons.includes('TransactionConflict')));

/**
 * The backoff window starts at the larger of baseDelayMs and the duration of the attempt that lost:
 * contenders then spread over at least as many attempt-lengths as there are rounds, whether the
 * store answers in 5 ms or in 200 ms.
 */
export const retryOnConflict = async <T>(
  what: string,
  options: CasRetryOptions,
  attempt: () => Promise<T>,
): Promise<T> => {
  const { clock, random, attempts = 8, baseDelayMs = 20, maxDelayMs = 5_000 } = options;
  const exhaustedCode = options.exhaustedCode ?? 'COORDINATOR_NOT_AVAILABLE';
  for (let n = 1; ; n++) {
    const started = clock.now();
    try {
      return await attempt();
    } catch (error) {
      if (!isConflict(error)) throw error;
      if (n >= attempts) {
        throw new SluiceError(exhaustedCode, `${what} kept conflicting with concurrent changes; retry`, {
          cause: error,
        });
      }
      const base = Math.max(baseDelayMs, clock.now() - started);
      await clock.sleep(random() * Math.min(maxDelayMs, base * 2 ** (n - 1)));
    }
  }
};
