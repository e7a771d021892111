/**
 * The one canonical form of a request path, computed once at the request's entry and used by both the
 * router and the authorizer, so the path a policy is evaluated on is exactly the path that is routed.
 *
 * Why refuse rather than normalise: on AWS, API Gateway's IAM authorizer builds the execute-api ARN
 * from the path as sent, while HTTP APIs route leniently (a trailing `/` reaches the route without it).
 * A Deny written for `/v1/topics/secret/partitions/*\/records` then misses `…/records/`, and a handler
 * that normalised the path would serve what the policy refused. Serving only paths that are already
 * canonical makes "the path as sent" and "the path routed" the same string wherever Sluice runs.
 *
 * Canonical: starts with `/`; no empty segment (no `//`, no trailing `/`); no `.` or `..` segment,
 * raw or percent-encoded; no segment that decodes to a `/` (except a Streams interactive query's key,
 * the last segment of `/v1/streams/{app}/stores/{store}/keys/{key}`: keys are data, not a resource of
 * any ACL, and a `/` there only reaches further below the store's own path); every segment percent-encoded exactly as
 * `encodeURIComponent` encodes its decoded text (what the SDK sends and what lib/auth/grants.ts
 * writes into policies). Case is not folded: route literals and resource names are case-sensitive,
 * in IAM's resource match as in Kafka.
 */

/** The canonical path, or why the path is not canonical. */
export type CanonicalPath = { path: string } | { reason: string };

export const canonicalRequestPath = (rawPath: string): CanonicalPath => {
  if (!rawPath.startsWith('/')) return { reason: 'does not start with /' };
  const segments = rawPath.slice(1).split('/');
  const streamsKey = segments.length === 7 && segments[1] === 'streams' && segments[5] === 'keys';
  for (const [i, segment] of segments.entries()) {
    if (segment === '') return { reason: 'has an empty segment (// or a trailing /)' };
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return { reason: 'has a segment that is not valid percent-encoding' };
    }
    if (decoded === '.' || decoded === '..') return { reason: 'has a dot segment' };
    if (decoded.includes('/') && !(streamsKey && i === 6))
      return { reason: 'has a segment with an encoded /' };
    if (encodeURIComponent(decoded) !== segment)
      return { reason: 'has a segment not percent-encoded in canonical form (encodeURIComponent)' };
  }
  return { path: rawPath };
};

/** True when `rawPath` is served as it is; every other path answers 404. */
export const isCanonicalPath = (rawPath: string): boolean => 'path' in canonicalRequestPath(rawPath);
