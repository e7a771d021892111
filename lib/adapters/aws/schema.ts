/**
 * Creates Sluice's table and bucket when they are missing (the local stack and tests; in AWS the CDK
 * app owns them). Both are idempotent: an existing table or bucket is left as it is.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  HeadBucketCommand,
  type BucketLocationConstraint,
  type S3Client,
} from '@aws-sdk/client-s3';
import { storageUnavailable } from '../../ports/storage-errors.js';
import { errorName, httpStatusOf, translateAwsError } from './errors.js';

/** The attribute DynamoDB's TTL reads (epoch seconds). */
export const TTL_ATTRIBUTE = 'expiresAt';

const ACTIVE_TIMEOUT_MS = 60_000;

export interface EnsureTableResult {
  created: boolean;
  /** False when the backend does not support TTL (some emulators); expired items then stay. */
  ttl: boolean;
}

export const ensureTable = async (client: DynamoDBClient, tableName: string): Promise<EnsureTableResult> => {
  const what = `DynamoDB table ${tableName}`;
  let created = false;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    created = true;
  } catch (error) {
    if (errorName(error) !== 'ResourceInUseException') throw translateAwsError(error, `create ${what}`);
  }
  await waitUntilActive(client, tableName);
  return { created, ttl: await enableTtl(client, tableName) };
};

const waitUntilActive = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  const deadline = Date.now() + ACTIVE_TIMEOUT_MS;
  for (;;) {
    let status: string | undefined;
    try {
      const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
      status = out.Table?.TableStatus;
    } catch (error) {
      // Right after CreateTable a real account may briefly not find the table yet.
      if (errorName(error) !== 'ResourceNotFoundException')
        throw translateAwsError(error, `describe ${tableName}`);
    }
    if (status === 'ACTIVE') return;
    if (Date.now() > deadline)
      throw storageUnavailable(`DynamoDB table ${tableName}`, `still ${status} after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

const enableTtl = async (client: DynamoDBClient, tableName: string): Promise<boolean> => {
  try {
    const out = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    const status = out.TimeToLiveDescription?.TimeToLiveStatus;
    if (status === 'ENABLED' || status === 'ENABLING') return true;
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      }),
    );
    return true;
  } catch {
    // Emulators differ here (unsupported operation, or TTL already being changed); TTL only saves
    // storage, so the table is usable without it.
    return false;
  }
};

export const ensureBucket = async (client: S3Client, bucket: string): Promise<{ created: boolean }> => {
  if (await bucketExists(client, bucket)) return { created: false };
  const region = await client.config.region();
  try {
    await client.send(
      new CreateBucketCommand({
        Bucket: bucket,
        // us-east-1 is the one region that rejects its own name as a location constraint.
        ...(region === 'us-east-1'
          ? {}
          : { CreateBucketConfiguration: { LocationConstraint: region as BucketLocationConstraint } }),
      }),
    );
    return { created: true };
  } catch (error) {
    const name = errorName(error);
    // Another process created it meanwhile; "already exists" is only fine if the bucket is ours.
    const ours =
      name === 'BucketAlreadyOwnedByYou' ||
      (name === 'BucketAlreadyExists' && (await bucketExists(client, bucket)));
    if (ours) return { created: false };
    throw translateAwsError(error, `S3 CreateBucket ${bucket}`);
  }
};

const bucketExists = async (client: S3Client, bucket: string): Promise<boolean> => {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
    return true;
  } catch (error) {
    if (
      errorName(error) === 'NotFound' ||
      errorName(error) === 'NoSuchBucket' ||
      httpStatusOf(error) === 404
    ) {
      return false;
    }
    throw translateAwsError(error, `S3 HeadBucket ${bucket}`);
  }
};
