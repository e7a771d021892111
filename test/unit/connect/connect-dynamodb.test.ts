/**
 * The DynamoDB Streams source without a service: DynamoDB JSON → plain JSON, the adapter's reading of
 * a two-page DescribeStream answer (test/fixtures/dynamodb-streams, in the service's wire shape, with a
 * trimmed parent, two rolls and a split), the lineage rule over it, a recorded TTL deletion through
 * the SDK into a source record, and the task's polls over an
 * in-memory stream with that lineage: parents before children, a failed poll that lets no child
 * overtake its parent's uncommitted tail, expired and trimmed iterators, exact replays.
 */
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { itemToJson, numberToJson, valueToJson } from '../../../connect/connectors/dynamodb-json.js';
import { readableShards, shardKey } from '../../../connect/connectors/dynamodb-shards.js';
import type { ShardRef } from '../../../connect/connectors/dynamodb-shards.js';
import { DynamoDbStreamsSourceTask, retriableOutages } from '../../../connect/connectors/dynamodb-source.js';
import { DYNAMODB_SOURCE } from '../../../connect/connectors/dynamodb-source-plugin.js';
import { createAwsChangeStreams } from '../../../lib/adapters/aws/dynamodb-streams.js';
import type { StreamDescription } from '../../../lib/ports/change-streams.js';
import { ChangeStreamsUnavailableError } from '../../../lib/ports/change-streams.js';
import type { SourceMap } from '../../../connect/plugin.js';
import { RetriableConnectError, sourcePartitionKey } from '../../../connect/plugin.js';
import { validateConnectorConfig } from '../../../connect/connector-config.js';
import { FakeChangeStreams } from './dynamodb-streams-fake.js';

const fixture = (name: string): string =>
  readFileSync(new URL(`../../fixtures/dynamodb-streams/${name}`, import.meta.url), 'utf8');

/** An SDK request handler that answers DescribeStream with the recorded pages, in order. */
const recorded = (pages: string[], requests: unknown[]) => ({
  handle: async (request: { body?: unknown }) => {
    requests.push(JSON.parse(new TextDecoder().decode(request.body as Uint8Array)));
    const body = pages.shift();
    if (body === undefined) throw new Error('no more recorded answers');
    return {
      response: {
        statusCode: 200,
        headers: { 'content-type': 'application/x-amz-json-1.0' },
        body: Readable.from([Buffer.from(body)]),
      },
    };
  },
});

const describeRecorded = async (): Promise<{ description: StreamDescription; requests: unknown[] }> => {
  const requests: unknown[] = [];
  const streams = createAwsChangeStreams({
    endpoint: 'http://127.0.0.1:1',
    region: 'eu-west-1',
    requestHandler: recorded(
      [fixture('describe-stream-page-1.json'), fixture('describe-stream-page-2.json')],
      requests,
    ),
  });
  const description = await streams.describeStream(ARN);
  streams.close();
  return { description, requests };
};

const ARN = 'arn:aws:dynamodb:eu-west-1:123456789012:table/orders/stream/2024-12-01T00:00:00.000';
const A = 'shardId-00000001733011200000-aaaa0001';
const B = 'shardId-00000001733025600000-bbbb0002';
const C = 'shardId-00000001733040000000-cccc0003';
const D = 'shardId-00000001733054400000-dddd0004';
const E = 'shardId-00000001733054400001-eeee0005';
const F = 'shardId-00000001733011200001-ffff0006';

describe('DynamoDB JSON as plain JSON', () => {
  it('converts every attribute type, numbers only when exact, maps with sorted names', () => {
    expect(
      itemToJson({
        s: { S: 'text' },
        n: { N: '-12.5' },
        big: { N: '12345678901234567890.5' },
        tiny: { N: '0.0000001' },
        b: { B: new Uint8Array([1, 2, 255]) },
        t: { BOOL: true },
        z: { NULL: true },
        ss: { SS: ['b', 'a'] },
        ns: { NS: ['1', '99999999999999999999'] },
        bs: { BS: [new Uint8Array([0]), new Uint8Array([1, 1])] },
        m: { M: { y: { L: [{ S: 'x' }, { N: '3' }] }, a: { M: {} } } },
      }),
    ).toEqual({
      b: 'AQL/',
      big: '12345678901234567890.5',
      bs: ['AA==', 'AQE='],
      m: { a: {}, y: ['x', 3] },
      n: -12.5,
      ns: [1, '99999999999999999999'],
      s: 'text',
      ss: ['b', 'a'],
      t: true,
      tiny: '0.0000001',
      z: null,
    });
    expect(Object.keys(itemToJson({ b: { S: '' }, a: { S: '' }, c: { S: '' } }))).toEqual(['a', 'b', 'c']);
    expect(numberToJson('9007199254740993')).toBe('9007199254740993');
    expect(numberToJson('9007199254740992')).toBe(9007199254740992);
    expect(() => valueToJson({})).toThrow('unsupported DynamoDB attribute value');
  });
});

describe('the recorded DescribeStream answer', () => {
  it('is read page by page (ExclusiveStartShardId) with lineage, closed ranges and HASH first', async () => {
    const { description, requests } = await describeRecorded();
    expect(requests).toEqual([{ StreamArn: ARN }, { StreamArn: ARN, ExclusiveStartShardId: B }]);
    expect(description).toMatchObject({
      streamArn: ARN,
      tableName: 'orders',
      streamStatus: 'ENABLED',
      streamViewType: 'NEW_AND_OLD_IMAGES',
      keyAttributes: ['order', 'line'],
    });
    expect(
      description.shards.map((s) => [s.shardId, s.parentShardId ?? null, s.endingSequenceNumber ?? null]),
    ).toEqual([
      [A, 'shardId-00000001732996800000-zzzz0000', '100000000000000000090'],
      [F, null, null],
      [B, A, '200000000000000000050'],
      [C, B, '300000000000000000070'],
      [D, C, null],
      [E, C, null],
    ]);
  });

  it('lineage: a child waits for its parent; a parent no longer listed counts as read', async () => {
    const { description } = await describeRecorded();
    const shards: ShardRef[] = description.shards.map((s) => ({
      ...s,
      tableName: 'orders',
      streamArn: ARN,
      streamLabel: description.streamLabel,
    }));
    const readable = (...done: string[]) =>
      readableShards(shards, (s) => done.includes(s.shardId)).map((s) => s.shardId);
    expect(readable()).toEqual([A, F]);
    expect(readable(A)).toEqual([F, B]);
    expect(readable(A, B)).toEqual([F, C]);
    // The split: both children become readable together, once their parent is read to its end.
    expect(readable(A, B, C)).toEqual([F, D, E]);
    expect(readable(A, B, C, D, E, F)).toEqual([]);
    // A child is never readable before its parent, whatever else is finished.
    expect(readable(F)).toEqual([A]);
  });

  it('lineage across streams: every shard of an older stream before any of a newer one', () => {
    const old = { tableName: 't', streamArn: 'old', streamLabel: '2024-01-01T00:00:00.000' };
    const now = { tableName: 't', streamArn: 'new', streamLabel: '2024-02-01T00:00:00.000' };
    const other = { tableName: 'u', streamArn: 'u', streamLabel: '2024-03-01T00:00:00.000' };
    const shards: ShardRef[] = [
      { ...now, shardId: 'n1' },
      { ...old, shardId: 'o1', endingSequenceNumber: '5' },
      { ...other, shardId: 'u1' },
      { ...old, shardId: 'o2', parentShardId: 'o1', endingSequenceNumber: '9' },
    ];
    const readable = (...done: string[]) =>
      readableShards(shards, (s) => done.includes(s.shardId)).map(shardKey);
    expect(readable()).toEqual([
      shardKey({ streamArn: 'old', shardId: 'o1' }),
      shardKey({ streamArn: 'u', shardId: 'u1' }),
    ]);
    expect(readable('o1')).toEqual([
      shardKey({ streamArn: 'old', shardId: 'o2' }),
      shardKey({ streamArn: 'u', shardId: 'u1' }),
    ]);
    expect(readable('o1', 'o2')).toEqual([
      shardKey({ streamArn: 'new', shardId: 'n1' }),
      shardKey({ streamArn: 'u', shardId: 'u1' }),
    ]);
  });
});

describe('a recorded TTL deletion, through the SDK', () => {
  it('becomes a REMOVE with its old image, its time and the TTL service identity', async () => {
    const answers = JSON.parse(fixture('ttl-remove.json')) as Record<string, unknown>;
    const requests: unknown[] = [];
    const streams = createAwsChangeStreams({
      endpoint: 'http://127.0.0.1:1',
      region: 'eu-west-1',
      requestHandler: recorded(
        ['ListStreams', 'DescribeStream', 'GetShardIterator', 'GetRecords'].map((op) =>
          JSON.stringify(answers[op]),
        ),
        requests,
      ),
    });
    const task = new DynamoDbStreamsSourceTask(streams, { tables: 'sessions' }, () => {});
    await task.refresh();
    const { records } = await task.poll(new Map(), 100);
    const arn = 'arn:aws:dynamodb:eu-west-1:123456789012:table/sessions/stream/2024-12-01T00:00:00.000';
    expect(requests).toEqual([
      { TableName: 'sessions' },
      { StreamArn: arn },
      { StreamArn: arn, ShardId: 'shardId-00000001733011200000-aaaa0001', ShardIteratorType: 'TRIM_HORIZON' },
      { ShardIterator: `${arn}|1|AAAAAAAAAAHfakeiterator`, Limit: 100 },
    ]);
    expect(records).toEqual([
      {
        topic: 'dynamodb-sessions',
        timestamp: 1_733_011_260_000,
        key: { session: 's-42' },
        value: {
          eventID: 'c81e728d9d4c2f636f067f89cc14862c',
          eventName: 'REMOVE',
          ApproximateCreationDateTime: 1_733_011_260_000,
          Keys: { session: 's-42' },
          OldImage: { cart: [{ qty: 2, sku: 'A-1' }], expiresAt: 1733011200, session: 's-42' },
          SequenceNumber: '700000000000000000011',
          SizeBytes: 84,
          StreamViewType: 'OLD_IMAGE',
          userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
        },
        headers: [],
        sourcePartition: { streamArn: arn, shardId: 'shardId-00000001733011200000-aaaa0001' },
        sourceOffset: { sequenceNumber: '700000000000000000011' },
      },
    ]);
    await task.close();
  });
});

/** A stream of table `orders` with A (closed) → B (closed) → C (open) and an unrelated open root R. */
const lineageStream = (): FakeChangeStreams => {
  const fake = new FakeChangeStreams('orders', ['order']);
  fake.addShard('s-a', undefined);
  fake.addShard('s-b', 's-a');
  fake.addShard('s-c', 's-b');
  fake.addShard('s-r', undefined);
  fake.put('s-a', 'k1', 3);
  fake.put('s-r', 'k9', 2);
  fake.closeShard('s-a');
  fake.put('s-b', 'k1', 2);
  fake.closeShard('s-b');
  fake.put('s-c', 'k1', 2);
  return fake;
};

/** Every change of lineageStream(), parents' before children's, the unrelated root's last. */
const LINEAGE_ORDER = ['s-a:1', 's-a:2', 's-a:3', 's-b:1', 's-b:2', 's-c:1', 's-c:2', 's-r:1', 's-r:2'];

const newTask = async (fake: FakeChangeStreams, logs: Record<string, unknown>[] = []) => {
  const task = new DynamoDbStreamsSourceTask(fake, { tables: 'orders', 'kafka.topic.prefix': 'ddb-' }, (e) =>
    logs.push(e),
  );
  await task.refresh();
  return task;
};

/** Runs polls the way the runtime does: offsets move to each poll's last record per shard. */
const drain = async (
  task: DynamoDbStreamsSourceTask,
  max: number,
  offsets = new Map<string, SourceMap | null>(),
) => {
  const seen: string[] = [];
  for (let i = 0; i < 50; i++) {
    const { records } = await task.poll(offsets, max);
    if (records.length === 0) break;
    for (const r of records) {
      seen.push(
        `${String(r.sourcePartition['shardId'])}:${(r.value as { NewImage: { n: number } }).NewImage.n}`,
      );
      offsets.set(sourcePartitionKey(r.sourcePartition), r.sourceOffset);
    }
  }
  return { seen, offsets };
};

describe('polls follow the lineage', () => {
  it('reads a parent to its end before its child, in one poll and across polls', async () => {
    const whole = await drain(await newTask(lineageStream()), 100);
    expect(whole.seen).toEqual(LINEAGE_ORDER);
    const small = await drain(await newTask(lineageStream()), 2);
    // Per shard the same order; A's and B's changes to k1 always before C's.
    expect(small.seen.filter((s) => !s.startsWith('s-r'))).toEqual(LINEAGE_ORDER.slice(0, 7));
    expect(small.seen.filter((s) => s.startsWith('s-r'))).toEqual(['s-r:1', 's-r:2']);
  });

  it('a poll that failed after reading a parent’s last page does not let the child overtake it', async () => {
    const fake = lineageStream();
    const task = await newTask(fake);
    // The poll reads all of A (its last page), then R fails: the runtime retries from the same offsets.
    fake.failNextRead('s-r', new RetriableConnectError('throttled'));
    await expect(task.poll(new Map(), 100)).rejects.toThrow('throttled');
    const { seen } = await drain(task, 100);
    expect(seen).toEqual(LINEAGE_ORDER);
  });

  it('records: key attributes in key order, the change as plain JSON, timestamp, partition, offset', async () => {
    const fake = new FakeChangeStreams('orders', ['order', 'line']);
    fake.addShard('s-1', undefined);
    fake.put('s-1', 'o1', 1);
    const task = await newTask(fake);
    const [record] = (await task.poll(new Map(), 10)).records;
    expect(record).toEqual({
      topic: 'ddb-orders',
      timestamp: 1_733_011_200_001,
      key: { order: 'o1', line: 1 },
      value: {
        eventID: 'e-s-1-1',
        eventName: 'INSERT',
        ApproximateCreationDateTime: 1_733_011_200_001,
        Keys: { line: 1, order: 'o1' },
        NewImage: { line: 1, n: 1, order: 'o1' },
        SequenceNumber: fake.sequence('s-1', 0),
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
      headers: [],
      sourcePartition: { streamArn: fake.streamArn, shardId: 's-1' },
      sourceOffset: { sequenceNumber: fake.sequence('s-1', 0) },
    });
  });
});

describe('the port’s outages', () => {
  it('become Connect’s retriable error; every other error passes unchanged', async () => {
    const fake = lineageStream();
    const outage = new ChangeStreamsUnavailableError('DynamoDB Streams did not answer; will retry');
    fake.failNextRead('s-r', outage);
    const wrapped = retriableOutages(fake);
    const arn = (await wrapped.tableStreams('orders'))[0]!.streamArn;
    const iterator = await wrapped.shardIterator(arn, 's-r', { type: 'TRIM_HORIZON' });
    const failed = await wrapped.getRecords(iterator, 10).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(RetriableConnectError);
    expect((failed as Error).message).toBe(outage.message);
    expect((failed as Error).cause).toBe(outage);
    const refused = new Error('refused');
    fake.failNextRead('s-r', refused);
    expect(await wrapped.getRecords(iterator, 10).catch((e: unknown) => e)).toBe(refused);
    expect((await wrapped.getRecords(iterator, 10)).records.length).toBeGreaterThan(0);
  });
});

describe('poll size', () => {
  it('takes records from at most 50 shards a poll (its offsets commit in one transaction)', async () => {
    const fake = new FakeChangeStreams('orders', ['order']);
    for (let i = 0; i < 60; i++) {
      fake.addShard(`s-${String(i).padStart(2, '0')}`, undefined);
      fake.put(`s-${String(i).padStart(2, '0')}`, `k${i}`, 2);
    }
    const task = await newTask(fake);
    const first = await task.poll(new Map(), 1_000);
    expect(first.records).toHaveLength(100);
    expect(new Set(first.records.map((r) => r.sourcePartition['shardId'])).size).toBe(50);
    const { seen } = await drain(task, 1_000);
    expect(seen).toHaveLength(120);
  });
});

describe('iterators and replays', () => {
  it('renews an expired iterator from the last position, without skipping or repeating', async () => {
    const fake = new FakeChangeStreams('orders', ['order']);
    fake.addShard('s-1', undefined);
    fake.put('s-1', 'k', 4);
    const task = await newTask(fake);
    const offsets = new Map<string, SourceMap | null>();
    const first = await task.poll(offsets, 2);
    for (const r of first.records) offsets.set(sourcePartitionKey(r.sourcePartition), r.sourceOffset);
    fake.expireIterators();
    const { seen } = await drain(task, 2, offsets);
    expect(seen).toEqual(['s-1:3', 's-1:4']);
    expect(fake.iteratorRequests.map((r) => r.type)).toEqual(['TRIM_HORIZON', 'AFTER_SEQUENCE_NUMBER']);
  });

  it('a position older than the retention restarts the shard at TRIM_HORIZON and says so', async () => {
    const fake = new FakeChangeStreams('orders', ['order']);
    fake.addShard('s-1', undefined);
    fake.put('s-1', 'k', 5);
    const lost = fake.sequence('s-1', 1);
    fake.trim('s-1', 3); // records 1-3 aged out
    const logs: Record<string, unknown>[] = [];
    const task = await newTask(fake, logs);
    const offsets = new Map<string, SourceMap | null>([
      [sourcePartitionKey({ streamArn: fake.streamArn, shardId: 's-1' }), { sequenceNumber: lost }],
    ]);
    const { seen } = await drain(task, 10, offsets);
    expect(seen).toEqual(['s-1:4', 's-1:5']);
    expect(logs).toEqual([
      {
        level: 'warn',
        msg: 'records trimmed from the stream before they were read; continuing at TRIM_HORIZON',
        shard: 's-1',
        after: lost,
      },
    ]);
  });

  it('replay reads exactly the records after `from` through `through`, across pages', async () => {
    const fake = new FakeChangeStreams('orders', ['order']);
    fake.addShard('s-1', undefined);
    fake.put('s-1', 'k', 2500);
    fake.pageSize = 700;
    const task = await newTask(fake);
    const partition = { streamArn: fake.streamArn, shardId: 's-1' };
    const replayed = await task.replay(
      partition,
      { sequenceNumber: fake.sequence('s-1', 9) },
      { sequenceNumber: fake.sequence('s-1', 2009) },
    );
    expect(replayed.map((r) => (r.value as { NewImage: { n: number } }).NewImage.n)).toEqual(
      Array.from({ length: 2000 }, (_, i) => i + 11),
    );
    const fromStart = await task.replay(partition, null, { sequenceNumber: fake.sequence('s-1', 2) });
    expect(fromStart.map((r) => r.sourceOffset)).toEqual(
      [0, 1, 2].map((i) => ({ sequenceNumber: fake.sequence('s-1', i) })),
    );
  });

  it('replaying a shard that no longer exists gives what is left, and says so', async () => {
    const fake = lineageStream();
    const logs: Record<string, unknown>[] = [];
    const task = await newTask(fake, logs);
    fake.deleteShard('s-b');
    const replayed = await task.replay({ streamArn: fake.streamArn, shardId: 's-b' }, null, {
      sequenceNumber: fake.sequence('s-b', 1),
    });
    expect(replayed).toEqual([]);
    expect(logs).toEqual([
      {
        level: 'warn',
        msg: 'shard no longer exists; the rest of its poll cannot be replayed',
        shard: 's-b',
        replayed: 0,
      },
    ]);
  });

  it('a shard that disappeared (trimmed) counts as read and its child goes on', async () => {
    const fake = lineageStream();
    const logs: Record<string, unknown>[] = [];
    const task = await newTask(fake, logs);
    fake.deleteShard('s-a');
    const { seen } = await drain(task, 100);
    expect(seen).toEqual(['s-b:1', 's-b:2', 's-c:1', 's-c:2', 's-r:1', 's-r:2']);
    expect(logs).toEqual([{ level: 'warn', msg: 'shard no longer exists; counted as read', shard: 's-a' }]);
  });
});

describe('configuration', () => {
  it('is validated in Connect’s shape, with Kafka/Confluent names', () => {
    const infos = validateConnectorConfig(DYNAMODB_SOURCE, {
      name: 'ddb',
      'connector.class': 'DynamoDbSourceConnector',
      'dynamodb.table.includelist': 'orders, x',
      'dynamodb.service.endpoint': 'localhost:8000',
      'aws.region': 'Europe',
      'dynamodb.cdc.max.poll.records': '0',
    });
    const errors = Object.fromEntries(
      infos.configs.filter((c) => c.value.errors.length > 0).map((c) => [c.value.name, c.value.errors]),
    );
    expect(errors).toEqual({
      'dynamodb.table.includelist': [
        'Invalid value orders, x for configuration dynamodb.table.includelist: not a DynamoDB table name: x',
      ],
      'dynamodb.service.endpoint': [
        'Invalid value localhost:8000 for configuration dynamodb.service.endpoint: must be an http:// or https:// URL',
      ],
      'aws.region': ['Invalid value Europe for configuration aws.region: not an AWS region name'],
      'dynamodb.cdc.max.poll.records': [
        'Invalid value 0 for configuration dynamodb.cdc.max.poll.records: Value must be at least 1',
      ],
    });
    expect(infos.error_count).toBe(4);
    const missing = validateConnectorConfig(DYNAMODB_SOURCE, {
      name: 'ddb',
      'connector.class': 'DynamoDbSourceConnector',
    });
    expect(missing.configs.find((c) => c.value.name === 'dynamodb.table.includelist')!.value.errors).toEqual([
      'Missing required configuration "dynamodb.table.includelist" which has no default value.',
    ]);
    expect(missing.error_count).toBe(1);
  });

  it('deals whole tables to tasks and sizes polls by dynamodb.cdc.max.poll.records', () => {
    const configs = DYNAMODB_SOURCE.taskConfigs(
      { 'dynamodb.table.includelist': 'a,b,c', 'dynamodb.cdc.max.poll.records': '250' },
      2,
    );
    expect(configs.map((c) => [c['tables'], c['batch.max.rows']])).toEqual([
      ['a,c', '250'],
      ['b', '250'],
    ]);
    expect(
      DYNAMODB_SOURCE.taskConfigs({ 'dynamodb.table.includelist': 'a' }, 4).map((c) => c['tables']),
    ).toEqual(['a']);
  });
});
