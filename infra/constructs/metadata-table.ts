import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { TABLE } from '../../lib/config/environment.js';

export interface MetadataTableProps {
  /**
   * DynamoDB deletion protection: the table cannot be deleted (not even by CloudFormation) until it
   * is turned off. Turn it off for throwaway deployments (context `sluice:deletionProtection=false`).
   * @default true
   */
  readonly deletionProtection?: boolean;
}

/**
 * The one DynamoDB table that holds everything that must be ordered or fenced: offsets, high
 * watermarks, leader epochs, producer sequences, group epochs, committed offsets.
 *
 * Key schema pk/sk (strings), on-demand capacity, point-in-time recovery, TTL on `expiresAt` (idle
 * producers, idempotency keys), AWS-managed KMS encryption. No GSI: anything that orders or fences
 * is read with ConsistentRead on the base table. RETAINed, with a pinned logical id.
 */
export class MetadataTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: MetadataTableProps = {}) {
    super(scope, id);
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      // Wakes Streams apps (infra/constructs/streams-app.ts: an event source mapping filtered to the
      // partition items of an app's source topics) and sink connectors (connect-runtime.ts: the same
      // for every partition item; it reads only the keys) and waiting consumers (wait-socket.ts: the
      // notifier tells the registrations between a partition's old and new high watermark, so it needs
      // both images). Writing the stream is free; only reads are billed, and Lambda's reads of it are not.
      stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection: props.deletionProtection ?? true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    (this.table.node.defaultChild as dynamodb.CfnTable).overrideLogicalId(
      `${id.replace(/[^A-Za-z0-9]/g, '')}Table`,
    );
  }

  get tableName(): string {
    return this.table.tableName;
  }

  /** Get/Query/Scan/BatchGet/ConditionCheck; no writes. */
  grantReadData(grantee: iam.IGrantable): iam.Grant {
    return this.table.grantReadData(grantee);
  }

  /**
   * PutItem and BatchWriteItem on the wait registrations only (`W#…` partition keys, IAM's
   * dynamodb:LeadingKeys): what the fetch function writes when a fetch names its wait connection
   * (lib/core/log/waiters.ts); it writes nothing else.
   */
  grantWaitRegistrations(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:PutItem', 'dynamodb:BatchWriteItem'],
      resourceArns: [this.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['W#*'] } },
    });
  }

  /** Reads plus Put/Update/Delete/BatchWrite (transactions are authorized per item by these). */
  grantReadWriteData(grantee: iam.IGrantable): iam.Grant {
    return this.table.grantReadWriteData(grantee);
  }
}
