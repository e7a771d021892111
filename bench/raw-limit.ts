/**
 * The local limit: what the emulators sustain for the same traffic without Sluice in between. Each of
 * `concurrency` writers loops over one S3 PutObject of `objectBytes` (a produce's data object) followed
 * by one DynamoDB UpdateItem that adds to a per-partition offset counter and returns the old value
 * (the floor of a read-free commit). Sluice's produce throughput divided by this is its limitRatio.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createAwsClients } from '../lib/adapters/aws/clients.js';
import { round, summarize } from './stats.js';

export interface RawLimitOptions {
  endpoints: { s3: string; dynamodb: string };
  tableName: string;
  bucket: string;
  concurrency: number;
  /** Writers are spread over this many counter items, as producers are over partitions. */
  partitions: number;
  objectBytes: number;
  seconds: number;
}

export interface RawLimitResult {
  concurrency: number;
  objectBytes: number;
  seconds: number;
  requests: number;
  requestsPerSec: number;
  mibPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

export const measureRawLimit = async (o: RawLimitOptions): Promise<RawLimitResult> => {
  const clients = createAwsClients({ endpoints: o.endpoints });
  const body = randomBytes(o.objectBytes);
  const run = randomUUID().slice(0, 8);
  const latencies: number[] = [];
  const stopAt = Date.now() + o.seconds * 1000;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: o.concurrency }, async (_, w) => {
        const pk = `RAW#${run}#${w % o.partitions}`;
        while (Date.now() < stopAt) {
          const t0 = performance.now();
          await clients.s3.send(
            new PutObjectCommand({
              Bucket: o.bucket,
              Key: `raw/${run}/${randomUUID()}`,
              Body: body,
              ContentLength: body.length,
            }),
          );
          await clients.dynamodb.send(
            new UpdateItemCommand({
              TableName: o.tableName,
              Key: { pk: { S: pk }, sk: { S: 'STATE' } },
              UpdateExpression: 'SET nextOffset = if_not_exists(nextOffset, :zero) + :n',
              ExpressionAttributeValues: { ':zero': { N: '0' }, ':n': { N: '1000' } },
              ReturnValues: 'UPDATED_OLD',
            }),
          );
          latencies.push(performance.now() - t0);
        }
      }),
    );
  } finally {
    clients.s3.destroy();
    clients.dynamodb.destroy();
  }
  const elapsed = (performance.now() - started) / 1000;
  const s = summarize(latencies);
  return {
    concurrency: o.concurrency,
    objectBytes: o.objectBytes,
    seconds: round(elapsed),
    requests: latencies.length,
    requestsPerSec: round(latencies.length / elapsed, 1),
    mibPerSec: round((latencies.length * o.objectBytes) / 2 ** 20 / elapsed),
    p50Ms: round(s.p50, 1),
    p99Ms: round(s.p99, 1),
  };
};
