/**
 * The retrier: exponential backoff with jitter and a cap. Only retriable errors are retried; the
 * operation may also `bail` with an error to stop at once.
 *
 * Which calls are safe to retry is the caller's to say, per call: an idempotent one (a read, a commit
 * of given offsets, a PUT of a whole config, a produce carrying sequence numbers or an Idempotency-Key)
 * runs under the retrier as it is; one that is not (a create, a delete, a restart) is wrapped in
 * `nonIdempotent`, so it is retried only after an answer that says it changed nothing.
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
  /**
   * Whether a refused connection (nothing listens at the URL) is retried (default true: a server
   * that restarts comes back). A command line, where a person waits, fails at once instead.
   */
  retryRefused?: boolean;
}

export interface RetryDeps {
  sleep?: (ms: number) => Promise<void>;
  /** Uniform in [0, 1); Math.random by default. */
  random?: () => number;
}

/** Stops retrying: the operation throws what `bail` was given. */
export type Bail = (error: unknown) => never;

/** One attempt of a call; `attempt` counts from 0. */
export type Attempt<T> = (bail: Bail, attempt: number) => Promise<T>;

/**
 * Runs an operation, retrying as its policy says. A SluiceError it finally throws carries in
 * `attempts` how many times the operation ran.
 */
export type Retrier = <T>(operation: Attempt<T>) => Promise<T>;

/** Whether an error is worth another attempt: only SluiceErrors that say so. */
export const isRetriable = (error: unknown): boolean => error instanceof SluiceError && error.retriable;

/**
 * Marks a call that is not idempotent: repeating it after it took effect would answer differently
 * (a second create answers TOPIC_ALREADY_EXISTS, a second delete UNKNOWN_TOPIC_OR_PARTITION) or act
 * twice (a restart). It is retried only after a retriable answer that says it changed nothing (a 4xx
 * such as THROTTLING_QUOTA_EXCEEDED); after a timeout, a lost connection or a 5xx it may or may not
 * have taken effect (API.md "Conventions"), so that error goes to the caller, who can look.
 */
export const nonIdempotent =
  <T>(operation: Attempt<T>): Attempt<T> =>
  async (bail, attempt) => {
    try {
      return await operation(bail, attempt);
    } catch (error) {
      if (error instanceof SluiceError && error.ambiguous && !error.refused) bail(error);
      throw error;
    }
  };

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
    retryRefused = true,
  }: RetryOptions = {},
  { sleep = defaultSleep, random = Math.random }: RetryDeps = {},
): Retrier => {
  /** Nominal delay before retry number `retry` (1-based), jittered and capped. */
  const delayBefore = (retry: number): number => {
    const nominal = Math.min(maxRetryTimeMs, initialRetryTimeMs * multiplier ** (retry - 1));
    const jittered = nominal * (1 - jitter + 2 * jitter * random());
    return Math.min(maxRetryTimeMs, Math.max(0, Math.round(jittered)));
  };
  return async <T>(operation: Attempt<T>): Promise<T> => {
    const bail: Bail = (error) => {
      throw new Bailed(error);
    };
    for (let attempt = 0; ; attempt++) {
      try {
        return await operation(bail, attempt);
      } catch (caught) {
        const error = caught instanceof Bailed ? caught.error : caught;
        const last =
          caught instanceof Bailed ||
          !isRetriable(error) ||
          attempt >= retries ||
          (!retryRefused && error instanceof SluiceError && error.refused);
        if (last) {
          if (error instanceof SluiceError) error.attempts = attempt + 1;
          throw error;
        }
        await sleep(delayBefore(attempt + 1));
      }
    }
  };
};

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
