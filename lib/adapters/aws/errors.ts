/**
 * Turns AWS SDK failures into Sluice's errors, so nothing above this folder sees an AWS exception.
 */
import { SluiceError } from '../../../protocol/errors.js';
import { StorageFailure, storageUnavailable, throttled } from '../../ports/storage-errors.js';

const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'SlowDown',
  'RequestThrottled',
  // Not throttling, but the same advice: another writer holds the item for a moment; back off, retry.
  'TransactionConflictException',
  'TransactionInProgressException',
]);

// Failures of the request, not of its content: the write may or may not have happened.
const UNAVAILABLE = new Set([
  'InternalServerError',
  'InternalFailure',
  'InternalError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'AbortError',
]);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'EHOSTDOWN',
  'ESOCKETTIMEDOUT',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

interface AwsLikeError {
  name?: string;
  code?: string;
  syscall?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
}

export const errorName = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null ? (error as AwsLikeError).name : undefined;

export const httpStatusOf = (error: unknown): number | undefined =>
  typeof error === 'object' && error !== null ? (error as AwsLikeError).$metadata?.httpStatusCode : undefined;

/** `what` names the store and operation for the message, e.g. `DynamoDB PutItem`. */
export const translateAwsError = (error: unknown, what: string): SluiceError => {
  if (error instanceof SluiceError) return error;
  const e = (typeof error === 'object' && error !== null ? error : {}) as AwsLikeError;
  const name = e.name ?? '';
  const status = e.$metadata?.httpStatusCode;
  if (THROTTLING.has(name) || e.$retryable?.throttling === true || status === 429)
    return throttled(what, error);
  if (UNAVAILABLE.has(name) || (status !== undefined && status >= 500))
    return storageUnavailable(what, error);
  // The request never got an answer: socket, DNS and TLS failures (Node system errors carry a syscall).
  if (NETWORK_CODES.has(e.code ?? '') || NETWORK_CODES.has(name) || e.syscall !== undefined) {
    return storageUnavailable(what, error);
  }
  // The service understood the request and refused it, or the SDK failed before sending: a bug or a
  // misconfiguration in Sluice (ValidationException, a missing table or bucket, denied access), not
  // the user's input, and not worth retrying.
  return new SluiceError('UNKNOWN_SERVER_ERROR', 'storage refused the request; see the server log', {
    cause: new StorageFailure(`${what} failed`, error),
  });
};
