/**
 * The object store on one S3 bucket. Objects are immutable; a range past the end is truncated, and a
 * missing key is ObjectNotFoundError.
 */
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { ByteRange, ObjectListPage, ObjectStore } from '../../ports/object-store.js';
import { ObjectNotFoundError, storageUnavailable } from '../../ports/storage-errors.js';
import { StorageMeter } from '../../ports/meter.js';
import { errorName, httpStatusOf, translateAwsError } from './errors.js';

export interface S3ObjectStoreOptions {
  client: S3Client;
  bucket: string;
  /** Stable id of this replica location, e.g. `s0`. */
  id: string;
  /** Counts requests and bytes; a fresh meter when omitted. */
  meter?: StorageMeter;
}

const DELETE_MAX = 1000;
const LIST_MAX = 1000;

export class S3ObjectStore implements ObjectStore {
  readonly id: string;
  readonly location: string;
  readonly kind: 'standard' | 'express';
  readonly zone?: string;
  readonly meter: StorageMeter;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3ObjectStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.id = options.id;
    this.location = `s3://${options.bucket}`;
    // Directory buckets (S3 Express One Zone) are named base--<zone id>--x-s3 by AWS's rule.
    const express = /--([a-z0-9-]+)--x-s3$/.exec(options.bucket);
    this.kind = express ? 'express' : 'standard';
    if (express) this.zone = express[1]!;
    this.meter = options.meter ?? new StorageMeter();
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    await this.call('PutObject', key, () =>
      this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length }),
      ),
    );
    this.meter.add({ objectPuts: 1, objectPutBytes: body.length });
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    this.meter.add({ objectGets: 1 });
    if (range !== undefined && range.end <= range.start) {
      // HTTP cannot express an empty range; only the key's existence matters.
      await this.call('HeadObject', key, () =>
        this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })),
      );
      return new Uint8Array(0);
    }
    let bytes: Uint8Array;
    try {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end - 1}` }),
        }),
      );
      if (out.Body === undefined)
        throw storageUnavailable(`S3 GetObject s3://${this.bucket}/${key}`, 'no body');
      bytes = await out.Body.transformToByteArray();
    } catch (error) {
      // A range that starts at or past the end of an existing object reads as empty, like a slice.
      if (errorName(error) === 'InvalidRange' || httpStatusOf(error) === 416) return new Uint8Array(0);
      throw this.translate(error, 'GetObject', key);
    }
    this.meter.add({ objectGetBytes: bytes.length });
    return bytes;
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_MAX) {
      const chunk = keys.slice(i, i + DELETE_MAX);
      const out = await this.call('DeleteObjects', chunk[0] ?? '', () =>
        this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true },
          }),
        ),
      );
      this.meter.add({ objectDeletes: 1 });
      // DeleteObjects answers 200 even when single keys failed; a missing key is not a failure.
      const failed = (out.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        const first = failed[0];
        throw storageUnavailable(
          `S3 DeleteObjects on s3://${this.bucket} (${failed.length} keys failed, first ${first?.Key}: ${first?.Code})`,
        );
      }
    }
  }

  async list(prefix: string, options: { cursor?: string; limit?: number } = {}): Promise<ObjectListPage> {
    const out = await this.call('ListObjectsV2', prefix, () =>
      this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          MaxKeys: Math.min(options.limit ?? LIST_MAX, LIST_MAX),
          ...(options.cursor === undefined ? {} : { ContinuationToken: options.cursor }),
        }),
      ),
    );
    this.meter.add({ objectLists: 1 });
    const objects = (out.Contents ?? []).flatMap((o) =>
      o.Key === undefined
        ? []
        : [{ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified?.getTime() ?? 0 }],
    );
    const cursor = out.IsTruncated ? out.NextContinuationToken : undefined;
    return { objects, ...(cursor === undefined ? {} : { cursor }) };
  }

  private async call<T>(operation: string, key: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw this.translate(error, operation, key);
    }
  }

  private translate(error: unknown, operation: string, key: string): Error {
    const name = errorName(error);
    if (name === 'NoSuchKey' || name === 'NotFound' || httpStatusOf(error) === 404) {
      // A missing bucket is a deployment bug, not a missing object.
      if (name !== 'NoSuchBucket') return new ObjectNotFoundError(key, { cause: error });
    }
    return translateAwsError(error, `S3 ${operation} s3://${this.bucket}/${key}`);
  }
}
