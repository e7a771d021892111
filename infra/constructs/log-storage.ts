import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3express from 'aws-cdk-lib/aws-s3express';
import { Construct } from 'constructs';
import { TMP_PREFIX, storeId } from '../../lib/config/environment.js';

export interface LogStorageProps {
  /**
   * Number of store buckets. Each bucket is one replica store (ids s0, s1, … in order); a topic's
   * replication factor cannot exceed it.
   * @default 1
   */
  readonly storeCount?: number;
  /**
   * Availability zone ids (e.g. `use1-az4`) for S3 Express One Zone stores: one directory bucket per
   * zone, in this order, instead of S3 Standard buckets. Each is single-AZ, so durability comes from
   * replicating topics across them (RF=3 over three zones). When set, `storeCount` must be absent or
   * equal to the number of zones.
   * @default none: S3 Standard buckets
   */
  readonly expressZones?: readonly string[];
  /**
   * Age after which objects under `tmp/` are expired by a lifecycle rule.
   * @default Duration.days(1)
   */
  readonly tmpObjectExpiration?: Duration;
  /**
   * How long S3 server access logs are kept.
   * @default Duration.days(90)
   */
  readonly accessLogExpiration?: Duration;
}

/**
 * The S3 buckets that hold record data (one per replica store) and the bucket that receives their
 * server access logs.
 *
 * Versioning is off on purpose: Sluice never overwrites an object (every batch and segment gets a
 * fresh key), so a version history would only ever hold the objects that retention, compaction and
 * garbage collection deliberately delete, billing for data Kafka's semantics say is gone.
 * Durability against a lost store comes from replica stores, not from versions.
 *
 * The buckets are RETAINed and their logical ids are pinned to this construct's id, so refactoring
 * the construct tree never replaces a bucket that holds data.
 */
export class LogStorage extends Construct {
  /** S3 Standard store buckets in store-id order (s0, s1, …); empty with Express One Zone stores. */
  readonly buckets: readonly s3.Bucket[];
  /** S3 Express One Zone directory buckets in store-id order; empty with Standard stores. */
  readonly directoryBuckets: readonly s3express.CfnDirectoryBucket[];
  /** Receives the store buckets' server access logs (prefix = store id). */
  readonly accessLogBucket: s3.Bucket;
  /** How cdk-nag names each bucket's `arn/*` resource (the logical ids are pinned). */
  private readonly objectArnPatterns: string[] = [];
  private readonly acknowledgedPrincipals = new WeakSet<object>();

  constructor(scope: Construct, id: string, props: LogStorageProps = {}) {
    super(scope, id);
    const zones = props.expressZones ?? [];
    const storeCount = props.storeCount ?? (zones.length > 0 ? zones.length : 1);
    if (!Number.isSafeInteger(storeCount) || storeCount < 1) {
      throw new Error(`LogStorage: storeCount must be a positive integer, got ${storeCount}`);
    }
    if (zones.length > 0 && zones.length !== storeCount) {
      throw new Error(`LogStorage: ${zones.length} express zones but storeCount ${storeCount}`);
    }
    for (const zone of zones) {
      if (!/^[a-z0-9]+-az\d+$/.test(zone))
        throw new Error(`LogStorage: ${JSON.stringify(zone)} is not an availability zone id like use1-az4`);
    }
    const logicalIdPrefix = id.replace(/[^A-Za-z0-9]/g, '');

    this.accessLogBucket = new s3.Bucket(this, 'AccessLogs', {
      // Server access log delivery supports SSE-S3 only.
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      versioned: false,
      lifecycleRules: [
        { id: 'ExpireAccessLogs', expiration: props.accessLogExpiration ?? Duration.days(90) },
        { id: 'AbortIncompleteMultipartUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    pinLogicalId(this.accessLogBucket, `${logicalIdPrefix}AccessLogs`);
    Validations.of(this.accessLogBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'This bucket is the server access log destination of the store buckets; logging it into itself would loop, and into another bucket would only move the finding.',
    });

    this.directoryBuckets = zones.map((zone, i) => {
      // Directory buckets: no access logs, versioning or public access to configure (not offered).
      const bucket = new s3express.CfnDirectoryBucket(this, `Store${i}`, {
        dataRedundancy: 'SingleAvailabilityZone',
        locationName: zone,
        bucketEncryption: {
          serverSideEncryptionConfiguration: [{ serverSideEncryptionByDefault: { sseAlgorithm: 'AES256' } }],
        },
        lifecycleConfiguration: {
          rules: [
            {
              id: 'AbortIncompleteMultipartUploads',
              status: 'Enabled',
              abortIncompleteMultipartUpload: { daysAfterInitiation: 1 },
            },
            {
              id: 'ExpireTmp',
              status: 'Enabled',
              prefix: TMP_PREFIX,
              expirationInDays: Math.max(
                1,
                Math.round((props.tmpObjectExpiration ?? Duration.days(1)).toDays()),
              ),
            },
          ],
        },
      });
      bucket.applyRemovalPolicy(RemovalPolicy.RETAIN);
      bucket.overrideLogicalId(`${logicalIdPrefix}Store${i}`);
      return bucket;
    });

    const buckets: s3.Bucket[] = [];
    for (let i = 0; i < (zones.length > 0 ? 0 : storeCount); i++) {
      const bucket = new s3.Bucket(this, `Store${i}`, {
        encryption: s3.BucketEncryption.S3_MANAGED,
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        enforceSSL: true,
        minimumTLSVersion: 1.2,
        versioned: false,
        serverAccessLogsBucket: this.accessLogBucket,
        serverAccessLogsPrefix: `${storeId(i)}/`,
        lifecycleRules: [
          { id: 'AbortIncompleteMultipartUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
          { id: 'ExpireTmp', prefix: TMP_PREFIX, expiration: props.tmpObjectExpiration ?? Duration.days(1) },
        ],
        removalPolicy: RemovalPolicy.RETAIN,
      });
      pinLogicalId(bucket, `${logicalIdPrefix}Store${i}`);
      this.objectArnPatterns.push(`Resource::<${logicalIdPrefix}Store${i}.Arn>/*`);
      buckets.push(bucket);
    }
    this.buckets = buckets;
  }

  /** Store ids in bucket order. */
  get storeIds(): string[] {
    return this.bucketNames.map((_, i) => storeId(i));
  }

  /** Bucket names in store-id order (tokens until deploy). */
  get bucketNames(): string[] {
    return [...this.buckets.map((b) => b.bucketName), ...this.directoryBuckets.map((b) => b.ref)];
  }

  /**
   * GetObject (ranged reads) on the objects and ListBucket on the buckets; without ListBucket a
   * missing key answers 403 instead of 404, which would hide NoSuchKey from the adapter.
   */
  grantReadObjects(grantee: iam.IGrantable): iam.Grant {
    this.grantBucketLevel(grantee, ['s3:ListBucket']);
    return this.grantObjectLevel(grantee, ['s3:GetObject']);
  }

  /** PutObject (covers multipart upload parts) on the objects; no read, no delete. */
  grantPutObjects(grantee: iam.IGrantable): iam.Grant {
    return this.grantObjectLevel(grantee, ['s3:PutObject']);
  }

  /** DeleteObject on the objects, for retention, compaction, topic deletion and garbage collection. */
  grantDeleteObjects(grantee: iam.IGrantable): iam.Grant {
    return this.grantObjectLevel(grantee, ['s3:DeleteObject']);
  }

  /**
   * Directory buckets authorize every object call through a session (s3express:CreateSession; the
   * SDK creates and refreshes sessions itself). ReadWrite sessions are what writes and deletes need;
   * a job that only reads gets ReadOnly ones.
   */
  private grantSessions(grantee: iam.IGrantable, write: boolean): void {
    if (this.directoryBuckets.length === 0) return;
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['s3express:CreateSession'],
      resourceArns: this.directoryBuckets.map((b) => b.attrArn),
      ...(write ? {} : { conditions: { StringEquals: { 's3express:SessionMode': 'ReadOnly' } } }),
    });
  }

  private grantObjectLevel(grantee: iam.IGrantable, actions: string[]): iam.Grant {
    this.grantSessions(grantee, !actions.every((a) => a === 's3:GetObject'));
    if (this.buckets.length === 0)
      return iam.Grant.drop(grantee, 'S3 Express One Zone stores: sessions only');
    const grant = iam.Grant.addToPrincipal({
      grantee,
      actions,
      resourceArns: this.buckets.map((b) => b.arnForObjects('*')),
    });
    const principal: unknown = grantee.grantPrincipal;
    if (Construct.isConstruct(principal) && !this.acknowledgedPrincipals.has(principal)) {
      this.acknowledgedPrincipals.add(principal);
      for (const [i, pattern] of this.objectArnPatterns.entries()) {
        Validations.of(principal).acknowledge({
          id: `AwsSolutions-IAM5[${pattern}]`,
          reason: `Object keys in store ${storeId(i)} are generated per topic, partition and batch at run time; the wildcard covers only this data bucket's objects, with only the actions this job needs.`,
        });
      }
    }
    return grant;
  }

  private grantBucketLevel(grantee: iam.IGrantable, actions: string[]): iam.Grant {
    if (this.buckets.length === 0)
      return iam.Grant.drop(grantee, 'S3 Express One Zone stores: sessions only');
    return iam.Grant.addToPrincipal({ grantee, actions, resourceArns: this.buckets.map((b) => b.bucketArn) });
  }
}

function pinLogicalId(bucket: s3.Bucket, logicalId: string): void {
  (bucket.node.defaultChild as s3.CfnBucket).overrideLogicalId(logicalId);
}
