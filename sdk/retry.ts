/**
 * The retrier: exponential backoff with jitter and a cap. Only retriable errors are retried; the
 * operation may also `bail` with an error to stop at once.
 */
import { SluiceError } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 5; 0 disables retrying). */
  retries?: number;
  /** Delay before the first retry in ms (default 100). */
  initialRetryTimeMs?: number;
  /** Cap on any one delay in ms (default 10000). */
  maxRetryTimeMs?: number;
  /** Growth of the delay per retry (default 2). */
  multiplier?: number;
  /** Each delay is drawn uniformly from ±jitter of its nominal value (default 0.2). */
  jitter?: number;
}

export interface RetryDeps {
  sleep?: (ms: number) => Promise<void>;
  /** Uniform in [0, 1); Math.random by default. */
  random?: () => number;
}

/** Stops retrying: the operation throws what `bail` was given. */
export type Bail = (error: unknown) => never;

export type Retrier = <T>(operation: (bail: Bail, attempt: number) => Promise<T>) => Promise<T>;

/** Whether an error is worth another attempt: only SluiceErrors that say so. */
export const isRetriable = (error: unknown): boolean => error instanceof SluiceError && error.retriable;

/** What `bail` throws, so the retrier can tell it from the operation's own failures. */
class Bailed {
  constructor(readonly error: unknown) {}
}

export const createRetrier = (
  {
    retries = 5,
    initialRetryTimeMs = 100,
    maxRetryTimeMs = 10_000,
    multiplier = 2,
    jitter = 0.2,
  }: RetryOptions = {},
  { sleep = defaultSleep, random = Math.random }: RetryDeps = {},
): Retrier => {
  /** Nominal delay before retry number `retry` (1-based), jittered and capped. */
  const delayBefore = (retry: number): number => {
    const nominal = Math.min(maxRetryTimeMs, initialRetryTimeMs * multiplier ** (retry - 1));
    const jittered = nominal * (1 - jitter + 2 * jitter * random());
    return Math.min(maxRetryTimeMs, Math.max(0, Math.round(jittered)));
  };
  return async <T>(operation: (bail: Bail, attempt: number) => Promise<T>): Promise<T> => {
    const bail: Bail = (error) => {
      throw new Bailed(error);
    };
    for (let attempt = 0; ; attempt++) {
      try {
        return await operation(bail, attempt);
      } catch (caught) {
        if (caught instanceof Bailed) throw caught.error;
        if (!isRetriable(caught) || attempt >= retries) throw caught;
        await sleep(delayBefore(attempt + 1));
      }
    }
  };
};

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
