import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { SEGMENT_STORE_ID } from '../../lib/config/environment.js';

export interface SegmentStorageProps {
  /** Receives the segment bucket's server access logs (prefix `segments/`). */
  readonly accessLogBucket: s3.IBucket;
}

/**
 * The segment store (KIP-405's remote tier): one S3 Standard bucket, regional and durable on its own,
 * that holds every rolled segment once, whatever the replication factor of the replica stores. Same
 * hardening as the store buckets (no versioning: segments are never overwritten, see LogStorage); the
 * bucket is RETAINed and its logical id pinned so a refactor never replaces it.
 */
export class SegmentStorage extends Construct {
  readonly bucket: s3.Bucket;
  private readonly objectArnPattern: string;
  private readonly acknowledgedPrincipals = new WeakSet<object>();

  constructor(scope: Construct, id: string, props: SegmentStorageProps) {
    super(scope, id);
    const logicalId = id.replace(/[^A-Za-z0-9]/g, '');
    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      versioned: false,
      serverAccessLogsBucket: props.accessLogBucket,
      serverAccessLogsPrefix: `${SEGMENT_STORE_ID}/`,
      lifecycleRules: [
        { id: 'AbortIncompleteMultipartUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    (this.bucket.node.defaultChild as s3.CfnBucket).overrideLogicalId(logicalId);
    this.objectArnPattern = `Resource::<${logicalId}.Arn>/*`;
  }

  /** GetObject (ranged reads) and ListBucket (a missing key then answers 404, not 403). */
  grantRead(grantee: iam.IGrantable): void {
    this.grant(grantee, ['s3:GetObject']);
  }

  /** Get, Put and Delete on the objects: the maintenance run rolls, compacts and collects. */
  grantReadWrite(grantee: iam.IGrantable): void {
    this.grant(grantee, ['s3:GetObject', 's3:PutObject', 's3:DeleteObject']);
  }

  /** DeleteObject: topic deletion purges a topic's segments. */
  grantDelete(grantee: iam.IGrantable): void {
    this.grant(grantee, ['s3:DeleteObject']);
  }

  /** The object actions, plus ListBucket on the bucket (listing for the collector; 404 on a missing key). */
  private grant(grantee: iam.IGrantable, actions: string[]): void {
    iam.Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket'], resourceArns: [this.bucket.bucketArn] });
    iam.Grant.addToPrincipal({ grantee, actions, resourceArns: [this.bucket.arnForObjects('*')] });
    const principal: unknown = grantee.grantPrincipal;
    if (!Construct.isConstruct(principal) || this.acknowledgedPrincipals.has(principal)) return;
    this.acknowledgedPrincipals.add(principal);
    Validations.of(principal).acknowledge({
      id: `AwsSolutions-IAM5[${this.objectArnPattern}]`,
      reason:
        'Segment keys are generated per topic, partition and base offset at run time; the wildcard covers only the segment bucket, with only the actions this job needs.',
    });
  }
}
