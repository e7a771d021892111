/**
 * The DynamoDB Streams source task: the change streams of its tables into topics, read as AWS's
 * model asks. ListStreams and DescribeStream give each table's streams and shards with their
 * lineage; a shard is read from TRIM_HORIZON (nothing read yet) or AFTER_SEQUENCE_NUMBER (its
 * offset), and a child only once its parent has been read to its end (connect/connectors/
 * dynamodb-shards.ts), so every item's changes reach the topic in the order DynamoDB made them.
 *
 * Source partition `{streamArn, shardId}`, source offset `{sequenceNumber}` of the last record
 * produced: the runtime commits them with the records (KIP-618), and `replay` reads exactly the
 * records after one offset up to another. A shard is finished once a GetRecords answer without a
 * next iterator has been seen *and* the committed position has reached its last record, so a poll
 * that failed half way never lets a child overtake the parent's uncommitted tail.
 *
 * Expired iterators (15 minutes) are renewed from the last position; a position older than the
 * stream's 24-hour retention (TrimmedDataAccessException) restarts the shard at TRIM_HORIZON and logs
 * the loss, as the KCL does; a shard that no longer exists counts as finished.
 */
import { listOf } from '../config-def.js';
import type { SourceMap, SourcePoll, SourceRecord, SourceTask, TaskContext } from '../plugin.js';
import { RetriableConnectError, sourcePartitionKey } from '../plugin.js';
import type { PlainJson } from './dynamodb-json.js';
import { itemToJson, valueToJson } from './dynamodb-json.js';
import type { ShardRef } from './dynamodb-shards.js';
import { compareSequenceNumbers, readableShards, shardKey } from './dynamodb-shards.js';
import type { ChangeRecord, ChangeStreams, StreamDescription } from '../../lib/ports/change-streams.js';
import {
  ChangeStreamsUnavailableError,
  ExpiredIteratorError,
  StreamResourceNotFoundError,
  TrimmedDataError,
} from '../../lib/ports/change-streams.js';

/** How often the shard list is described again while no shard has ended (new shards appear rarely). */
const SHARD_REFRESH_MS = 10_000;
/**
 * Shards one poll takes records from: the runtime commits a poll's offsets, one item per shard, in one
 * DynamoDB transaction (at most 100 items).
 */
const MAX_SHARDS_PER_POLL = 50;
/** Empty pages in a row that a replay accepts before it calls the stream unavailable. */
const MAX_EMPTY_PAGES = 50;

interface Cursor {
  /** The sequence number the iterator reads after (null: from the shard's start). */
  after: string | null;
  iterator: string;
}

const sequenceOf = (offset: SourceMap | null | undefined): string | null =>
  typeof offset?.['sequenceNumber'] === 'string' ? offset['sequenceNumber'] : null;

export class DynamoDbStreamsSourceTask implements SourceTask {
  private readonly tables: string[];
  private readonly prefix: string;
  private shards: ShardRef[] = [];
  private readonly descriptions = new Map<string, StreamDescription>();
  private readonly cursors = new Map<string, Cursor>();
  /** Shards seen to end, with the sequence number of their last record (null: they had none). */
  private readonly ends = new Map<string, string | null>();
  private refreshedAt = Number.NEGATIVE_INFINITY;
  private refreshNeeded = true;

  constructor(
    private readonly streams: ChangeStreams,
    config: Record<string, string>,
    private readonly log: TaskContext['log'],
    private readonly now: () => number = Date.now,
  ) {
    this.tables = listOf(config['tables'] ?? config['dynamodb.table.includelist'] ?? '');
    this.prefix = config['kafka.topic.prefix'] ?? 'dynamodb-';
  }

  /** Describes every stream of every table again (a disabled stream's description never changes). */
  async refresh(): Promise<void> {
    const shards: ShardRef[] = [];
    for (const tableName of this.tables) {
      const streams = await this.streams.tableStreams(tableName);
      if (streams.length === 0)
        throw new Error(
          `table ${tableName} has no stream: enable its StreamSpecification (DynamoDB Streams)`,
        );
      for (const { streamArn, streamLabel } of streams) {
        let d = this.descriptions.get(streamArn);
        if (d?.streamStatus !== 'DISABLED') {
          d = await this.streams.describeStream(streamArn);
          this.descriptions.set(streamArn, d);
        }
        for (const shard of d.shards) shards.push({ ...shard, tableName, streamArn, streamLabel });
      }
    }
    this.shards = shards;
    this.refreshedAt = this.now();
    this.refreshNeeded = false;
  }

  sourcePartitions(): SourceMap[] {
    return this.shards.map((s) => ({ streamArn: s.streamArn, shardId: s.shardId }));
  }

  async poll(offsets: ReadonlyMap<string, SourceMap | null>, maxRecords: number): Promise<SourcePoll> {
    if (this.refreshNeeded || this.now() - this.refreshedAt >= SHARD_REFRESH_MS) await this.refresh();
    // Where each shard stands in this poll: its committed offset, then past what this poll took.
    const taken = new Map<string, string | null>();
    const position = (s: ShardRef): string | null => {
      const key = shardKey(s);
      return taken.has(key) ? taken.get(key)! : sequenceOf(offsets.get(sourcePartitionKey(partitionOf(s))));
    };
    const finished = (s: ShardRef): boolean => this.isFinished(s, position(s));
    const records: SourceRecord[] = [];
    const visited = new Set<string>();
    while (records.length < maxRecords && taken.size < MAX_SHARDS_PER_POLL) {
      // A shard that ends in this poll makes its children readable at once, after its own records.
      const shard = readableShards(this.shards, finished).find((s) => !visited.has(shardKey(s)));
      if (!shard) break;
      visited.add(shardKey(shard));
      const page = await this.read(shard, position(shard), maxRecords - records.length);
      for (const change of page) records.push(this.toSourceRecord(shard, change));
      const last = page.at(-1);
      if (last) taken.set(shardKey(shard), last.sequenceNumber);
    }
    return { records };
  }

  async replay(partition: SourceMap, from: SourceMap | null, through: SourceMap): Promise<SourceRecord[]> {
    const out: SourceRecord[] = [];
    try {
      await this.replayInto(out, partition, from, through);
    } catch (error) {
      if (!(error instanceof StreamResourceNotFoundError)) throw error;
      // The stream or shard went (trimmed, table deleted) before the half-written poll was redone.
      this.log({
        level: 'warn',
        msg: 'shard no longer exists; the rest of its poll cannot be replayed',
        shard: String(partition['shardId']),
        replayed: out.length,
      });
    }
    return out;
  }

  private async replayInto(
    out: SourceRecord[],
    partition: SourceMap,
    from: SourceMap | null,
    through: SourceMap,
  ): Promise<void> {
    const streamArn = String(partition['streamArn']);
    const shardId = String(partition['shardId']);
    const described = await this.describe(streamArn);
    const shard: ShardRef = this.shards.find((s) => s.streamArn === streamArn && s.shardId === shardId) ?? {
      tableName: described.tableName,
      streamArn,
      streamLabel: described.streamLabel,
      shardId,
    };
    const end = sequenceOf(through);
    if (end === null) return;
    let after = sequenceOf(from);
    let iterator = await this.iterator(shard, after);
    for (let empty = 0; empty <= MAX_EMPTY_PAGES;) {
      let page;
      try {
        page = await this.streams.getRecords(iterator, 1_000);
      } catch (error) {
        if (!(error instanceof ExpiredIteratorError)) throw error;
        iterator = await this.iterator(shard, after);
        continue;
      }
      for (const change of page.records) {
        if (compareSequenceNumbers(change.sequenceNumber, end) > 0) return;
        out.push(this.toSourceRecord(shard, change));
        if (change.sequenceNumber === end) return;
        after = change.sequenceNumber;
      }
      if (!page.nextShardIterator) return;
      empty = page.records.length === 0 ? empty + 1 : 0;
      iterator = page.nextShardIterator;
    }
    throw new RetriableConnectError(`shard ${shardId} did not return the records up to ${end}`);
  }

  async close(): Promise<void> {
    this.streams.close();
  }

  private isFinished(shard: ShardRef, position: string | null): boolean {
    const key = shardKey(shard);
    if (this.ends.has(key) && this.ends.get(key) === position) return true;
    // Nothing in a closed shard comes after its ending sequence number.
    return (
      shard.endingSequenceNumber !== undefined &&
      position !== null &&
      compareSequenceNumbers(position, shard.endingSequenceNumber) >= 0
    );
  }

  /** One GetRecords call on a shard, after `after`, reusing the iterator the last call handed back. */
  private async read(shard: ShardRef, after: string | null, limit: number): Promise<ChangeRecord[]> {
    const key = shardKey(shard);
    let cursor = this.cursors.get(key);
    let page;
    try {
      if (cursor?.after !== after) cursor = { after, iterator: await this.iterator(shard, after) };
      try {
        page = await this.streams.getRecords(cursor.iterator, limit);
      } catch (error) {
        if (!(error instanceof ExpiredIteratorError)) throw error;
        cursor = { after, iterator: await this.iterator(shard, after) };
        page = await this.streams.getRecords(cursor.iterator, limit);
      }
    } catch (error) {
      if (!(error instanceof StreamResourceNotFoundError)) throw error;
      this.log({ level: 'warn', msg: 'shard no longer exists; counted as read', shard: shard.shardId });
      this.cursors.delete(key);
      this.ends.set(key, after);
      return [];
    }
    const last = page.records.at(-1)?.sequenceNumber ?? after;
    if (page.nextShardIterator) this.cursors.set(key, { after: last, iterator: page.nextShardIterator });
    else {
      this.cursors.delete(key);
      this.ends.set(key, last);
      this.refreshNeeded = true; // its children may not be listed yet
    }
    return page.records;
  }

  private async iterator(shard: ShardRef, after: string | null): Promise<string> {
    if (after === null)
      return this.streams.shardIterator(shard.streamArn, shard.shardId, { type: 'TRIM_HORIZON' });
    try {
      return await this.streams.shardIterator(shard.streamArn, shard.shardId, {
        type: 'AFTER_SEQUENCE_NUMBER',
        sequenceNumber: after,
      });
    } catch (error) {
      if (!(error instanceof TrimmedDataError)) throw error;
      // The records after the offset aged out of the stream before they were read: they are lost.
      this.log({
        level: 'warn',
        msg: 'records trimmed from the stream before they were read; continuing at TRIM_HORIZON',
        shard: shard.shardId,
        after,
      });
      return this.streams.shardIterator(shard.streamArn, shard.shardId, { type: 'TRIM_HORIZON' });
    }
  }

  private async describe(streamArn: string): Promise<StreamDescription> {
    let d = this.descriptions.get(streamArn);
    if (!d) {
      d = await this.streams.describeStream(streamArn);
      this.descriptions.set(streamArn, d);
    }
    return d;
  }

  private toSourceRecord(shard: ShardRef, change: ChangeRecord): SourceRecord {
    const keyAttributes =
      this.descriptions.get(shard.streamArn)?.keyAttributes ?? Object.keys(change.keys).sort();
    // The key attributes in the table's key order (HASH, RANGE): one item always has one key.
    const key: Record<string, PlainJson> = {};
    for (const name of keyAttributes) {
      const value = change.keys[name];
      if (value !== undefined) key[name] = valueToJson(value);
    }
    return {
      topic: `${this.prefix}${shard.tableName}`,
      timestamp: change.approximateCreationDateTime,
      key,
      value: {
        eventID: change.eventID,
        eventName: change.eventName,
        ApproximateCreationDateTime: change.approximateCreationDateTime,
        Keys: itemToJson(change.keys),
        ...(change.newImage ? { NewImage: itemToJson(change.newImage) } : {}),
        ...(change.oldImage ? { OldImage: itemToJson(change.oldImage) } : {}),
        SequenceNumber: change.sequenceNumber,
        ...(change.sizeBytes !== undefined ? { SizeBytes: change.sizeBytes } : {}),
        ...(change.streamViewType ? { StreamViewType: change.streamViewType } : {}),
        ...(change.userIdentity ? { userIdentity: change.userIdentity } : {}),
      },
      headers: [],
      sourcePartition: partitionOf(shard),
      sourceOffset: { sequenceNumber: change.sequenceNumber },
    };
  }
}

const partitionOf = (shard: { streamArn: string; shardId: string }): SourceMap => ({
  streamArn: shard.streamArn,
  shardId: shard.shardId,
});

/** The port's "did not answer" as Connect's retriable error (errors.retry.timeout applies to it). */
export const retriableOutages = (streams: ChangeStreams): ChangeStreams => {
  const translated = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw error instanceof ChangeStreamsUnavailableError
        ? new RetriableConnectError(error.message, error)
        : error;
    }
  };
  return {
    tableStreams: (tableName) => translated(() => streams.tableStreams(tableName)),
    describeStream: (streamArn) => translated(() => streams.describeStream(streamArn)),
    shardIterator: (streamArn, shardId, position) =>
      translated(() => streams.shardIterator(streamArn, shardId, position)),
    getRecords: (shardIterator, limit) => translated(() => streams.getRecords(shardIterator, limit)),
    close: () => streams.close(),
  };
};

/** Builds the task and lists its shards (the runtime reads their stored offsets before the first poll). */
export const createDynamoDbStreamsSourceTask = async (
  config: Record<string, string>,
  context: TaskContext,
): Promise<SourceTask> => {
  const { createAwsChangeStreams } = await import('../../lib/adapters/aws/dynamodb-streams.js');
  const streams = retriableOutages(
    createAwsChangeStreams({
      endpoint: config['dynamodb.service.endpoint'] ?? '',
      region: config['aws.region'] ?? '',
    }),
  );
  const task = new DynamoDbStreamsSourceTask(streams, config, context.log);
  // A throttled or briefly absent service at start should not fail the task for good.
  for (let attempt = 0; ; attempt++) {
    try {
      await task.refresh();
      return task;
    } catch (error) {
      if (!(error instanceof RetriableConnectError) || attempt >= 4) {
        streams.close();
        throw error;
      }
      await new Promise((r) => setTimeout(r, 250 * 2 ** attempt));
    }
  }
};
