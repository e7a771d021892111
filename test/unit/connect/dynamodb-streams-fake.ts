/**
 * An in-memory DynamoDB Streams for the source task's unit tests: one table, one stream, shards with
 * parents that the test opens, fills, closes, trims and deletes, iterators that it can expire, and
 * reads that it can make fail once. Behaves as the service documents: a closed shard's last page has
 * no next iterator, AFTER_SEQUENCE_NUMBER into trimmed records is TrimmedDataAccessException.
 */
import type {
  ChangeRecord,
  ChangeStreams,
  IteratorPosition,
  RecordsPage,
  StreamDescription,
} from '../../../lib/ports/change-streams.js';
import {
  ExpiredIteratorError,
  StreamResourceNotFoundError,
  TrimmedDataError,
} from '../../../lib/ports/change-streams.js';

interface FakeShard {
  id: string;
  parent: string | undefined;
  records: ChangeRecord[];
  closed: boolean;
  trimmed: number;
  deleted: boolean;
}

interface Iterator {
  shard: string;
  index: number;
  epoch: number;
}

const T0 = 1_733_011_200_000;

export class FakeChangeStreams implements ChangeStreams {
  readonly streamLabel = '2024-12-01T00:00:00.000';
  readonly streamArn: string;
  /** Most records one GetRecords answer holds. */
  pageSize = 1_000;
  readonly iteratorRequests: IteratorPosition[] = [];
  private readonly shards: FakeShard[] = [];
  private readonly failures = new Map<string, Error>();
  private sequence_ = 0;
  private epoch = 0;

  constructor(
    readonly tableName: string,
    private readonly keyAttributes: string[],
  ) {
    this.streamArn = `arn:aws:dynamodb:us-east-1:000000000000:table/${tableName}/stream/${this.streamLabel}`;
  }

  addShard(id: string, parent: string | undefined): void {
    this.shards.push({ id, parent, records: [], closed: false, trimmed: 0, deleted: false });
  }

  /** Appends `count` INSERTs of item `key` (the range key, if any, and attribute n count 1, 2, …). */
  put(shardId: string, key: string, count: number): void {
    const shard = this.shard(shardId);
    for (let i = 0; i < count; i++) {
      const n = shard.records.length + 1;
      this.sequence_ += 1;
      const keys = {
        [this.keyAttributes[0]!]: { S: key },
        ...(this.keyAttributes[1] ? { [this.keyAttributes[1]]: { N: String(n) } } : {}),
      };
      shard.records.push({
        eventID: `e-${shardId}-${n}`,
        eventName: 'INSERT',
        sequenceNumber: String(this.sequence_).padStart(21, '0'),
        approximateCreationDateTime: T0 + this.sequence_,
        keys,
        newImage: { ...keys, n: { N: String(n) } },
        streamViewType: 'NEW_AND_OLD_IMAGES',
      });
    }
  }

  sequence(shardId: string, index: number): string {
    return this.shard(shardId).records[index]!.sequenceNumber;
  }

  closeShard(shardId: string): void {
    this.shard(shardId).closed = true;
  }

  /** The first `count` records of the shard age out of the stream. */
  trim(shardId: string, count: number): void {
    this.shard(shardId).trimmed = count;
  }

  deleteShard(shardId: string): void {
    this.shard(shardId).deleted = true;
  }

  expireIterators(): void {
    this.epoch += 1;
  }

  failNextRead(shardId: string, error: Error): void {
    this.failures.set(shardId, error);
  }

  async tableStreams(tableName: string) {
    return tableName === this.tableName ? [{ streamArn: this.streamArn, streamLabel: this.streamLabel }] : [];
  }

  async describeStream(streamArn: string): Promise<StreamDescription> {
    if (streamArn !== this.streamArn) throw new StreamResourceNotFoundError(`stream ${streamArn}`);
    return {
      streamArn,
      streamLabel: this.streamLabel,
      tableName: this.tableName,
      streamStatus: 'ENABLED',
      streamViewType: 'NEW_AND_OLD_IMAGES',
      keyAttributes: this.keyAttributes,
      shards: this.shards
        .filter((s) => !s.deleted)
        .map((s) => ({
          shardId: s.id,
          ...(s.parent ? { parentShardId: s.parent } : {}),
          ...(s.closed ? { endingSequenceNumber: s.records.at(-1)?.sequenceNumber ?? '0' } : {}),
        })),
    };
  }

  async shardIterator(_streamArn: string, shardId: string, position: IteratorPosition): Promise<string> {
    this.iteratorRequests.push(position);
    const shard = this.shard(shardId);
    if (shard.deleted) throw new StreamResourceNotFoundError(`shard ${shardId}`);
    let index = shard.trimmed;
    if (position.type === 'AFTER_SEQUENCE_NUMBER') {
      index = shard.records.findIndex((r) => r.sequenceNumber === position.sequenceNumber) + 1;
      if (index === 0 || index < shard.trimmed) throw new TrimmedDataError();
    }
    return JSON.stringify({ shard: shardId, index, epoch: this.epoch } satisfies Iterator);
  }

  async getRecords(shardIterator: string, limit: number): Promise<RecordsPage> {
    const at = JSON.parse(shardIterator) as Iterator;
    if (at.epoch !== this.epoch) throw new ExpiredIteratorError();
    const shard = this.shard(at.shard);
    const failure = this.failures.get(at.shard);
    if (failure) {
      this.failures.delete(at.shard);
      throw failure;
    }
    if (shard.deleted) throw new StreamResourceNotFoundError(`shard ${at.shard}`);
    const records = shard.records.slice(at.index, at.index + Math.min(limit, this.pageSize));
    const next = at.index + records.length;
    const ended = shard.closed && next >= shard.records.length;
    return {
      records,
      ...(ended
        ? {}
        : { nextShardIterator: JSON.stringify({ shard: at.shard, index: next, epoch: this.epoch }) }),
    };
  }

  close(): void {}

  private shard(id: string): FakeShard {
    const shard = this.shards.find((s) => s.id === id);
    if (!shard) throw new Error(`no shard ${id}`);
    return shard;
  }
}
