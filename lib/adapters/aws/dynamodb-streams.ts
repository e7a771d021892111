/**
 * ChangeStreams (lib/ports/change-streams.ts) over the AWS SDK's DynamoDB Streams client, with the
 * other AWS adapters: the only file that imports it, and the one place that turns the service's
 * exceptions into the port's errors
 * (throttling and outages become retriable, so `errors.retry.timeout` applies; nothing that reaches a
 * task's status trace names an AWS exception or operation).
 */
import type { _Record, DynamoDBStreamsClientConfig } from '@aws-sdk/client-dynamodb-streams';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { LOCAL_CREDENTIALS } from './clients.js';
import type {
  ChangeRecord,
  ChangeStreams,
  IteratorPosition,
  StreamDescription,
} from '../../ports/change-streams.js';
import {
  ChangeStreamsUnavailableError,
  ExpiredIteratorError,
  StreamResourceNotFoundError,
  TrimmedDataError,
} from '../../ports/change-streams.js';

export interface AwsChangeStreamsOptions {
  /** DynamoDB Local, LocalStack or a VPC endpoint; empty: the region's DynamoDB Streams endpoint. */
  endpoint?: string;
  region?: string;
  env?: Record<string, string | undefined>;
  /** Replaces the HTTP layer (tests answer with recorded service responses). */
  requestHandler?: DynamoDBStreamsClientConfig['requestHandler'];
}

const RETRIABLE = new Set([
  'LimitExceededException',
  'InternalServerError',
  'ThrottlingException',
  'ServiceUnavailable',
  'RequestLimitExceeded',
  'TimeoutError',
]);

/** The service's exception as the connector's own error, without the AWS names. */
const translate = (error: unknown, what: string): Error => {
  const e = error as {
    name?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    $retryable?: unknown;
  };
  switch (e.name) {
    case 'ExpiredIteratorException':
      return new ExpiredIteratorError();
    case 'TrimmedDataAccessException':
      return new TrimmedDataError();
    case 'ResourceNotFoundException':
      return new StreamResourceNotFoundError(what);
  }
  // No HTTP status: the request never got an answer (connection refused, reset, timed out).
  const status = e.$metadata?.httpStatusCode;
  if (RETRIABLE.has(e.name ?? '') || e.$retryable !== undefined || status === undefined || status >= 500)
    return new ChangeStreamsUnavailableError(`DynamoDB Streams did not answer a read of ${what}; will retry`);
  return new Error(`DynamoDB Streams refused a read of ${what}: ${e.message ?? 'unknown error'}`);
};

const toChangeRecord = (record: _Record): ChangeRecord => {
  const d = record.dynamodb ?? {};
  if (d.SequenceNumber === undefined || record.eventName === undefined)
    throw new Error('DynamoDB Streams returned a record without a sequence number or event name');
  return {
    eventID: record.eventID ?? '',
    eventName: record.eventName,
    sequenceNumber: d.SequenceNumber,
    approximateCreationDateTime: d.ApproximateCreationDateTime?.getTime() ?? 0,
    keys: d.Keys ?? {},
    ...(d.NewImage ? { newImage: d.NewImage } : {}),
    ...(d.OldImage ? { oldImage: d.OldImage } : {}),
    ...(d.SizeBytes !== undefined ? { sizeBytes: d.SizeBytes } : {}),
    ...(d.StreamViewType ? { streamViewType: d.StreamViewType } : {}),
    ...(record.userIdentity
      ? {
          userIdentity: {
            ...(record.userIdentity.Type ? { type: record.userIdentity.Type } : {}),
            ...(record.userIdentity.PrincipalId ? { principalId: record.userIdentity.PrincipalId } : {}),
          },
        }
      : {}),
  };
};

export const createAwsChangeStreams = (options: AwsChangeStreamsOptions = {}): ChangeStreams => {
  const env = options.env ?? process.env;
  const endpoint = options.endpoint || undefined;
  const region = options.region || env.AWS_REGION || (endpoint ? 'us-east-1' : undefined);
  // An emulator accepts any key; without configured credentials the SDK's chain would find none.
  const configured = [env.AWS_ACCESS_KEY_ID, env.AWS_PROFILE, env.AWS_WEB_IDENTITY_TOKEN_FILE].some(
    (v) => v !== undefined,
  );
  const client = new DynamoDBStreamsClient({
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    ...(endpoint && !configured ? { credentials: LOCAL_CREDENTIALS } : {}),
    requestHandler: options.requestHandler ?? { connectionTimeout: 3_000, requestTimeout: 10_000 },
  });
  const send = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw translate(error, what);
    }
  };

  return {
    tableStreams: async (tableName) => {
      const streams: { streamArn: string; streamLabel: string }[] = [];
      let start: string | undefined;
      do {
        const page = await send(`the streams of table ${tableName}`, () =>
          client.send(
            new ListStreamsCommand({
              TableName: tableName,
              ...(start ? { ExclusiveStartStreamArn: start } : {}),
            }),
          ),
        );
        for (const s of page.Streams ?? [])
          if (s.StreamArn && s.StreamLabel)
            streams.push({ streamArn: s.StreamArn, streamLabel: s.StreamLabel });
        start = page.LastEvaluatedStreamArn;
      } while (start);
      return streams.sort((a, b) =>
        a.streamLabel < b.streamLabel ? -1 : a.streamLabel > b.streamLabel ? 1 : 0,
      );
    },

    describeStream: async (streamArn): Promise<StreamDescription> => {
      let description: StreamDescription | undefined;
      let start: string | undefined;
      do {
        const page = await send(`stream ${streamArn}`, () =>
          client.send(
            new DescribeStreamCommand({
              StreamArn: streamArn,
              ...(start ? { ExclusiveStartShardId: start } : {}),
            }),
          ),
        );
        const d = page.StreamDescription ?? {};
        description ??= {
          streamArn,
          streamLabel: d.StreamLabel ?? '',
          tableName: d.TableName ?? '',
          streamStatus: d.StreamStatus ?? '',
          streamViewType: d.StreamViewType ?? '',
          // HASH before RANGE, whatever order the service lists them in.
          keyAttributes: [...(d.KeySchema ?? [])]
            .sort((a, b) => (a.KeyType === 'HASH' ? -1 : b.KeyType === 'HASH' ? 1 : 0))
            .map((k) => k.AttributeName ?? ''),
          shards: [],
        };
        for (const s of d.Shards ?? []) {
          if (!s.ShardId) continue;
          const range = s.SequenceNumberRange ?? {};
          description.shards.push({
            shardId: s.ShardId,
            ...(s.ParentShardId ? { parentShardId: s.ParentShardId } : {}),
            ...(range.StartingSequenceNumber ? { startingSequenceNumber: range.StartingSequenceNumber } : {}),
            ...(range.EndingSequenceNumber ? { endingSequenceNumber: range.EndingSequenceNumber } : {}),
          });
        }
        start = d.LastEvaluatedShardId;
      } while (start);
      return description!;
    },

    shardIterator: async (streamArn, shardId, position: IteratorPosition) => {
      const answer = await send(`shard ${shardId}`, () =>
        client.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: shardId,
            ShardIteratorType: position.type,
            ...(position.type === 'AFTER_SEQUENCE_NUMBER' ? { SequenceNumber: position.sequenceNumber } : {}),
          }),
        ),
      );
      if (!answer.ShardIterator) throw new StreamResourceNotFoundError(`shard ${shardId}`);
      return answer.ShardIterator;
    },

    getRecords: async (shardIterator, limit) => {
      const page = await send('a shard', () =>
        client.send(new GetRecordsCommand({ ShardIterator: shardIterator, Limit: Math.min(1_000, limit) })),
      );
      return {
        records: (page.Records ?? []).map(toChangeRecord),
        ...(page.NextShardIterator ? { nextShardIterator: page.NextShardIterator } : {}),
      };
    },

    close: () => client.destroy(),
  };
};
