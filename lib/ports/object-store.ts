/**
 * The object store: immutable blobs (S3). Sluice never overwrites an object; keys are unique.
 */
export interface ByteRange {
  start: number;
  /** Exclusive. */
  end: number;
}

export interface ObjectInfo {
  key: string;
  size: number;
  lastModified: number;
}

export interface ObjectListPage {
  objects: ObjectInfo[];
  cursor?: string;
}

export interface ObjectStore {
  /** Stable id of this store (a replica location), e.g. `s0`. */
  readonly id: string;
  /** Where it lives, for `GET /v1/cluster`, e.g. `s3://bucket`. */
  readonly location: string;
  /** Its storage class as a failure domain (default standard), and its zone when it lives in one. */
  readonly kind?: 'standard' | 'express';
  readonly zone?: string;
  put(key: string, body: Uint8Array): Promise<void>;
  /** Throws ObjectNotFoundError when absent. A range past the end is truncated. */
  get(key: string, range?: ByteRange): Promise<Uint8Array>;
  /** Idempotent: deleting an absent key succeeds. */
  delete(keys: readonly string[]): Promise<void>;
  list(prefix: string, options?: { cursor?: string; limit?: number }): Promise<ObjectListPage>;
}
