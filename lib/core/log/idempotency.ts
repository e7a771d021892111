/**
 * A JSON produce's Idempotency-Key, as the IETF Idempotency-Key draft has it: the key names one
 * request, so the server keeps a fingerprint of that request beside it. A retry with the same
 * fingerprint is answered exactly as the original was (its offsets and its timestamps, which were
 * taken from the clock at the original request); the same key with a different request is refused
 * (422 IDEMPOTENCY_KEY_REUSED) instead of being answered with offsets that hold other records.
 *
 * The mark stored in a tail entry (and in the K# item once the entry is materialized) is one string,
 * `hash.fingerprint.requestTime36`: the hash alone is what the commit condition tests in the `idempotencyKeys` list.
 */
import { createHash } from 'node:crypto';
import { SluiceError } from '../../../protocol/errors.js';
import type { RecordHeader } from '../../../protocol/record-batch/index.js';

export interface IdempotencyMark {
  /** sha256(topicId, key), the identity the commit condition tests. */
  hash: string;
  /** The request's fingerprint (requestFingerprint). */
  fingerprint: string;
  /** The clock at the original request: the timestamp of its records that carried none. */
  requestTime: number;
}

export const idempotencyHash = (topicId: string, key: string): string =>
  createHash('sha256').update(topicId).update('\u0000').update(key).digest('base64url').slice(0, 22);

export const encodeMark = (mark: IdempotencyMark): string =>
  `${mark.hash}.${mark.fingerprint}.${mark.requestTime.toString(36)}`;

export const decodeMark = (mark: string): IdempotencyMark => {
  const [hash = '', fingerprint = '', time = ''] = mark.split('.');
  return { hash, fingerprint, requestTime: parseInt(time, 36) };
};

/** The hash part of a stored mark. */
export const markHash = (mark: string): string => mark.split('.', 1)[0]!;

export interface FingerprintedRecord {
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: readonly RecordHeader[];
  partition?: number;
  timestamp?: number;
}

/**
 * A digest of everything that decides what a produce writes: each record's partition choice, key,
 * value, headers and timestamp as parsed (so the same bytes sent as utf8 or base64 match). Every field
 * is length-prefixed, so no two different requests share an input to the hash.
 */
export const requestFingerprint = (records: readonly FingerprintedRecord[]): string => {
  const hash = createHash('sha256');
  const bytes = (b: Uint8Array | null) => {
    hash.update(b === null ? 'n' : `b${b.length}:`);
    if (b !== null) hash.update(b);
  };
  const text = (s: string) => bytes(new Uint8Array(Buffer.from(s, 'utf8')));
  hash.update(`r${records.length}:`);
  for (const r of records) {
    text(r.partition === undefined ? '' : String(r.partition));
    text(r.timestamp === undefined ? '' : String(r.timestamp));
    bytes(r.key);
    bytes(r.value);
    hash.update(`h${r.headers.length}:`);
    for (const h of r.headers) {
      text(h.key);
      bytes(h.value);
    }
  }
  return hash.digest('base64url').slice(0, 22);
};

/** Throws IDEMPOTENCY_KEY_REUSED unless the stored mark was made by this very request. */
export const checkSameRequest = (stored: IdempotencyMark, fingerprint: string, where: string): void => {
  if (stored.fingerprint !== fingerprint) {
    throw new SluiceError(
      'IDEMPOTENCY_KEY_REUSED',
      `this Idempotency-Key was used for a different request on ${where}; use a new key for a new request`,
    );
  }
};
