/**
 * What the DynamoDB Streams source connector (connect/connectors/dynamodb-source.ts) needs from
 * DynamoDB Streams (ListStreams, DescribeStream, GetShardIterator, GetRecords), in its own types, so
 * the task and its tests do not depend on the AWS SDK; lib/adapters/aws/dynamodb-streams.ts is the
 * one implementation over the SDK and the one place that translates the service's exceptions into
 * the errors below. A port like the others: the adapter implements it, Connect uses it, and neither
 * lib/ nor the adapter knows Connect.
 */

/** One DynamoDB attribute value, as the Streams API returns it (exactly one member is set). */
export interface DynamoValue {
  S?: string;
  N?: string;
  B?: Uint8Array;
  SS?: string[];
  NS?: string[];
  BS?: Uint8Array[];
  M?: Record<string, DynamoValue>;
  L?: DynamoValue[];
  NULL?: boolean;
  BOOL?: boolean;
}

export type DynamoItem = Record<string, DynamoValue>;

export interface TableStream {
  streamArn: string;
  /** An ISO timestamp: a table's streams (one per enabling of its stream) sort by it. */
  streamLabel: string;
}

export interface StreamShard {
  shardId: string;
  parentShardId?: string;
  startingSequenceNumber?: string;
  /** Set once the shard is closed: no record is added to it any more. */
  endingSequenceNumber?: string;
}

export interface StreamDescription {
  streamArn: string;
  streamLabel: string;
  tableName: string;
  streamStatus: string;
  streamViewType: string;
  /** The table's key attributes, HASH first. */
  keyAttributes: string[];
  shards: StreamShard[];
}

export interface ChangeRecord {
  eventID: string;
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  sequenceNumber: string;
  /** Epoch milliseconds. */
  approximateCreationDateTime: number;
  keys: DynamoItem;
  newImage?: DynamoItem;
  oldImage?: DynamoItem;
  sizeBytes?: number;
  streamViewType?: string;
  /** Set for deletions by TTL: `{type: "Service", principalId: "dynamodb.amazonaws.com"}`. */
  userIdentity?: { type?: string; principalId?: string };
}

export type IteratorPosition =
  { type: 'TRIM_HORIZON' } | { type: 'AFTER_SEQUENCE_NUMBER'; sequenceNumber: string };

export interface RecordsPage {
  records: ChangeRecord[];
  /** Absent when the shard is closed and everything in it has been read. */
  nextShardIterator?: string;
}

export interface ChangeStreams {
  /** The table's streams, oldest first (a disabled stream stays readable for 24 hours). */
  tableStreams(tableName: string): Promise<TableStream[]>;
  /** The whole description, every page of shards. */
  describeStream(streamArn: string): Promise<StreamDescription>;
  shardIterator(streamArn: string, shardId: string, position: IteratorPosition): Promise<string>;
  getRecords(shardIterator: string, limit: number): Promise<RecordsPage>;
  close(): void;
}

/** ExpiredIteratorException: the iterator is older than 15 minutes; ask for a new one. */
export class ExpiredIteratorError extends Error {
  constructor() {
    super('the shard iterator expired');
    this.name = 'ExpiredIteratorError';
  }
}

/** TrimmedDataAccessException: the position is older than the stream's 24-hour retention. */
export class TrimmedDataError extends Error {
  constructor() {
    super('the records at that position were trimmed from the stream (older than 24 hours)');
    this.name = 'TrimmedDataError';
  }
}

/** ResourceNotFoundException: the stream or shard no longer exists (trimmed, or the table deleted). */
export class StreamResourceNotFoundError extends Error {
  constructor(what: string) {
    super(`${what} does not exist`);
    this.name = 'StreamResourceNotFoundError';
  }
}

/**
 * The service did not answer (throttled, unavailable, unreachable): the same read may succeed later.
 * The connector turns it into its retriable error, so `errors.retry.timeout` applies.
 */
export class ChangeStreamsUnavailableError extends Error {
  readonly retriable = true;
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ChangeStreamsUnavailableError';
  }
}
