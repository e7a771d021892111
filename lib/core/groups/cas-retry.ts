/**
 * The one compare-and-set retry loop of the group coordinator: an attempt reads, decides and writes
 * conditionally; when a concurrent writer got there first the whole attempt starts over after an
 * exponential backoff with full jitter. Bounded: past the last attempt the caller gets a retriable
 * COORDINATOR_NOT_AVAILABLE instead of an unbounded wait.
 */
import { SluiceError } from '../../errors.js';
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
}

export const isConflict = (e: unknown): boolean =>
  e instanceof ConditionFailedError ||
  e instanceof StaleRead ||
  (e instanceof TransactionCanceledError && (e.conditionFailed || e.reasons.includes('TransactionConflict')));

export const retryOnConflict = async <T>(
  what: string,
  options: CasRetryOptions,
  attempt: () => Promise<T>,
): Promise<T> => {
  const { clock, random, attempts = 8, baseDelayMs = 20, maxDelayMs = 2_000 } = options;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isConflict(error)) throw error;
      if (n >= attempts) {
        throw new SluiceError(
          'COORDINATOR_NOT_AVAILABLE',
          `${what} kept conflicting with concurrent changes; retry`,
          {
            cause: error,
          },
        );
      }
      await clock.sleep(random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (n - 1)));
    }
  }
};
