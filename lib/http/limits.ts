/**
 * The limits the HTTP edge enforces before a request reaches the core, in one module the SDK can
 * import too. Kafka's own limits where Kafka has one; elsewhere bounds chosen so that no accepted
 * request can push a DynamoDB key or item past its service limit (a 2 KiB partition key, a 400 KB
 * item), which would otherwise surface as a storage failure instead of the client's mistake.
 */
import { OFFSETS_PER_COMMIT } from '../../protocol/commit-limit.js';
import { MAX_FETCH_PARTITIONS } from '../../protocol/fetch-limits.js';
import { SluiceError } from '../../protocol/errors.js';

export const EDGE_LIMITS = {
  /** Nesting of a JSON body (objects and arrays). Kafka has none; JSON.stringify overflows near 10k. */
  maxJsonDepth: 64,
  /** A JSON body of a route that is not produce (admin, groups). Produce has its own maxRequestBytes. */
  maxControlBodyBytes: 1024 * 1024,
  /** Kafka's topic name rule (Topic.validate). */
  maxTopicNameLength: 249,
  /** API.md: group ids are 1-255 printable characters. */
  maxGroupIdLength: 255,
  /** Topics one member may subscribe to, and their names' total length (the member item must fit). */
  maxSubscribedTopics: 1000,
  maxSubscriptionChars: 64 * 1024,
  /** Partitions in one offset commit, which is one all-or-nothing transaction (enforced by the core). */
  maxCommitPartitions: OFFSETS_PER_COMMIT,
  /** Partitions one POST /v1/fetch may name (its answer is one Lambda response). */
  maxFetchPartitions: MAX_FETCH_PARTITIONS,
} as const;

const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;
const CONTROL = /\p{Cc}/u;

export const isValidTopicName = (name: string): boolean =>
  TOPIC_NAME.test(name) && name !== '.' && name !== '..';

/**
 * Path parameters, checked as the router extracts them: a name that could never have been created is
 * refused here, before it becomes a storage key.
 */
export const checkPathParam = (name: string, value: string): void => {
  if (name === 'topic' && !isValidTopicName(value)) {
    throw new SluiceError(
      'INVALID_TOPIC_EXCEPTION',
      `topic name ${describeName(value)} is invalid: use 1-249 of [a-zA-Z0-9._-], not "." or ".."`,
    );
  }
  const groupChars = [...value].length;
  if (
    name === 'group' &&
    (groupChars === 0 || groupChars > EDGE_LIMITS.maxGroupIdLength || CONTROL.test(value))
  ) {
    throw new SluiceError(
      'INVALID_REQUEST',
      `group id ${describeName(value)} is invalid: use 1-255 printable characters`,
    );
  }
};

/** A name for an error message: quoted, and cut short so a 100 KB name does not come back whole. */
export const describeName = (value: string): string =>
  value.length <= 64
    ? JSON.stringify(value)
    : `${JSON.stringify(value.slice(0, 64))}… (${value.length} chars)`;
