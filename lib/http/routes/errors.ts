/** Error codes several routes share (each route lists its own in its definition). */
import type { ErrorCode } from '../../../protocol/errors.js';

/** Codes any route may answer: a bad request, refused credentials, overload, a failed store. */
export const COMMON_ERRORS: readonly ErrorCode[] = [
  'INVALID_REQUEST',
  'SASL_AUTHENTICATION_FAILED',
  'THROTTLING_QUOTA_EXCEEDED',
  'UNKNOWN_SERVER_ERROR',
  'KAFKA_STORAGE_ERROR',
  'REQUEST_TIMED_OUT',
];
export const TOPIC_ERRORS: ErrorCode[] = ['UNKNOWN_TOPIC_OR_PARTITION', 'TOPIC_AUTHORIZATION_FAILED'];
export const GROUP_ERRORS: ErrorCode[] = ['GROUP_AUTHORIZATION_FAILED', 'COORDINATOR_NOT_AVAILABLE'];
export const CONNECTOR_ERRORS: ErrorCode[] = ['NOT_FOUND', 'CLUSTER_AUTHORIZATION_FAILED'];
/** Interactive queries (streams/query/): unknown application, store or key. */
export const STREAMS_ERRORS: ErrorCode[] = [
  'GROUP_ID_NOT_FOUND',
  'UNKNOWN_STATE_STORE',
  'NOT_FOUND',
  'GROUP_AUTHORIZATION_FAILED',
];

/** A query parameter as the OpenAPI document describes it. */
export const queryParam = (name: string, type: 'integer' | 'string', description: string) => ({
  name,
  schema: { type },
  description,
});
