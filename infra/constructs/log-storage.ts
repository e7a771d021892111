import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { TMP_PREFIX, storeId } from '../config.js';

export interface LogStorageProps {
  /**
   * Number of store buckets. Each bucket is one replica store (ids s0, s1, … in order); a topic's
   * replication factor cannot exceed it.
   * @default 1
   */
  readonly storeCount?: number;
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
  /** Store buckets in store-id order (s0, s1, …). */
  readonly buckets: readonly s3.Bucket[];
  /** Receives the store buckets' server access logs (prefix = store id). */
  readonly accessLogBucket: s3.Bucket;
  /** How cdk-nag names each bucket's `arn/*` resource (the logical ids are pinned). */
  private readonly objectArnPatterns: string[] = [];
  private readonly acknowledgedPrincipals = new WeakSet<object>();

  constructor(scope: Construct, id: string, props: LogStorageProps = {}) {
    super(scope, id);
    const storeCount = props.storeCount ?? 1;
    if (!Number.isSafeInteger(storeCount) || storeCount < 1) {
      throw new Error(`LogStorage: storeCount must be a positive integer, got ${storeCount}`);
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

    const buckets: s3.Bucket[] = [];
    for (let i = 0; i < storeCount; i++) {
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
    return this.buckets.map((_, i) => storeId(i));
  }

  /** Bucket names in store-id order (tokens until deploy). */
  get bucketNames(): string[] {
    return this.buckets.map((b) => b.bucketName);
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

  private grantObjectLevel(grantee: iam.IGrantable, actions: string[]): iam.Grant {
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
    return iam.Grant.addToPrincipal({ grantee, actions, resourceArns: this.buckets.map((b) => b.bucketArn) });
  }
}

function pinLogicalId(bucket: s3.Bucket, logicalId: string): void {
  (bucket.node.defaultChild as s3.CfnBucket).overrideLogicalId(logicalId);
}
