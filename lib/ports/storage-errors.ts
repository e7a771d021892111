import { SluiceError } from '../../protocol/errors.js';

export class ObjectNotFoundError extends SluiceError {
  constructor(
    readonly key: string,
    options: { cause?: unknown } = {},
  ) {
    super('KAFKA_STORAGE_ERROR', `object ${key} not found`, { ...options, retriable: false });
    this.name = 'ObjectNotFoundError';
  }
}

/**
 * The failed operation and the backend's own words, for the server log only: an answer never carries
 * a service, operation, table, bucket or exception name (the router logs the cause chain of a 5xx).
 */
export class StorageFailure extends Error {
  constructor(what: string, cause?: unknown) {
    super(cause === undefined ? what : `${what}: ${messageOf(cause)}`, { cause });
    this.name = 'StorageFailure';
  }
}

/** The backend asked us to slow down. */
export const throttled = (what: string, cause?: unknown): SluiceError =>
  new SluiceError('THROTTLING_QUOTA_EXCEEDED', 'storage is throttled; retry with backoff', {
    cause: new StorageFailure(what, cause),
  });

/** The backend failed or could not be reached; the write may or may not have taken effect. */
export const storageUnavailable = (what: string, cause?: unknown): SluiceError =>
  new SluiceError(
    'KAFKA_STORAGE_ERROR',
    'storage is unavailable; the request may or may not have taken effect',
    {
      cause: new StorageFailure(what, cause),
    },
  );

// AWS SDK errors are Errors; what a test or a mock throws may only look like one.
const messageOf = (e: unknown): string => {
  if (typeof e !== 'object' || e === null) return String(e);
  const { name, message } = e as { name?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(e);
  return typeof name === 'string' && name !== 'Error' ? `${name}: ${text}` : text;
};
