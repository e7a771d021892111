import { SluiceError } from '../errors.js';

export class ObjectNotFoundError extends SluiceError {
  constructor(
    readonly key: string,
    options: { cause?: unknown } = {},
  ) {
    super('KAFKA_STORAGE_ERROR', `object ${key} not found`, { ...options, retriable: false });
    this.name = 'ObjectNotFoundError';
  }
}

/** The backend asked us to slow down. */
export const throttled = (what: string, cause?: unknown): SluiceError =>
  new SluiceError('THROTTLING_QUOTA_EXCEEDED', `${what} is throttled; retry with backoff`, { cause });

/** The backend failed or could not be reached; the write may or may not have taken effect. */
export const storageUnavailable = (what: string, cause?: unknown): SluiceError =>
  new SluiceError('KAFKA_STORAGE_ERROR', `${what} is unavailable: ${messageOf(cause)}`, { cause });

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
