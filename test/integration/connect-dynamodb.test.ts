/**
 * The DynamoDB Streams source on DynamoDB Local's streams, run by the Connect runtime on the local
 * stack: a seeded workload of inserts, updates and deletes reaches the topic exactly (per key, in
 * order, with the converted images); a poll that a crash left half-written is completed with no gap
 * and no duplicate; a stream disabled and enabled again (its shard closed, a new stream opened) is
 * read to its end before the new one; a task fenced mid-stream (its lease taken by a restart) hands
 * over without gap or duplicate. The SIGKILL test through `npm start` is connect-dynamodb-kill.
 */
import { CreateTableCommand, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DYNAMODB_SOURCE } from '../../connect/connectors/dynamodb-source-plugin.js';
import { retriableOutages } from '../../connect/connectors/dynamodb-source.js';
import { createAwsChangeStreams } from '../../lib/adapters/aws/dynamodb-streams.js';
import {
  ChangeStreamsUnavailableError,
  StreamResourceNotFoundError,
} from '../../lib/ports/change-streams.js';
import { RetriableConnectError, sourcePartitionKey } from '../../connect/plugin.js';
import { POLL_HEADER } from '../../connect/worker/source-runner.js';
import { ConnectWorker } from '../../connect/worker/worker.js';
import { ConnectStateStore } from '../../connect/state-store.js';
import { sluiceFromEnv } from '../../local/runtime.js';
import { systemClock } from '../../lib/ports/clock.js';
import { SluiceClient } from '../../sdk/index.js';
import {
  ChangeWorkload,
  createStreamTable,
  dynamodb,
  expectGolden,
  readTopic,
} from './dynamodb-source-support.js';
import type { TestStack } from './stack.js';
import { startTestStack } from './stack.js';

const PARTITIONS = 3;
let stack: TestStack;
let client: SluiceClient;
let ddb: DynamoDBClient;
let state: ConnectStateStore;
let worker: ConnectWorker;

beforeAll(async () => {
  stack = await startTestStack();
  client = new SluiceClient({ url: stack.url });
  ddb = dynamodb();
  state = new ConnectStateStore(sluiceFromEnv().store);
  worker = new ConnectWorker({
    state,
    client,
    clock: systemClock,
    workerId: 'test',
    budgetMs: 1_500,
    pollIntervalMs: 100,
  });
}, 120_000);

afterAll(async () => {
  ddb?.destroy();
  await stack?.stack.stop();
});

/** A table with a stream, its topic, and a started source connector on them. */
const source = async (name: string): Promise<{ table: string; topic: string }> => {
  const table = `${name}-${randomUUID().slice(0, 8)}`;
  await createStreamTable(ddb, table);
  const topic = `dynamodb-${table}`;
  await client.admin().createTopic({ name: topic, partitions: PARTITIONS });
  const created = await stack.call('POST', '/v1/connect/connectors', {
    name,
    config: {
      'connector.class': 'DynamoDbSourceConnector',
      'dynamodb.table.includelist': table,
      'dynamodb.service.endpoint': inject('dynamodbEndpoint'),
      'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'dynamodb.cdc.max.poll.records': '25',
    },
  });
  expect(created.status).toBe(201);
  return { table, topic };
};

/** Ticks until the topic holds `count` records (each tick runs every task for its budget). */
const tickUntil = async (topic: string, count: number): Promise<number> => {
  let ran = 0;
  for (let i = 0; i < 10 && (await readTopic(client, topic, PARTITIONS)).length < count; i++) {
    for (const o of await worker.tick()) ran += o.records ?? 0;
  }
  return ran;
};

const offsetsOf = async (name: string) =>
  (await stack.call('GET', `/v1/connect/connectors/${name}/offsets`)).json.offsets as {
    partition: { streamArn: string; shardId: string };
    offset: { sequenceNumber: string };
  }[];

const remove = async (name: string) =>
  expect((await stack.call('DELETE', `/v1/connect/connectors/${name}`)).status).toBe(204);

describe('the DynamoDB Streams adapter on DynamoDB Local', () => {
  it('answers in its own errors: retriable when unreachable, refusals without AWS names', async () => {
    const unreachable = createAwsChangeStreams({ endpoint: 'http://127.0.0.1:9' });
    const down = await unreachable.tableStreams('orders').catch((e: unknown) => e);
    expect(down).toBeInstanceOf(ChangeStreamsUnavailableError);
    expect((down as Error).message).toBe(
      'DynamoDB Streams did not answer a read of the streams of table orders; will retry',
    );
    // The connector reads the port through retriableOutages: the same outage is Connect's retriable error.
    const viaConnector = await retriableOutages(unreachable)
      .tableStreams('orders')
      .catch((e: unknown) => e);
    unreachable.close();
    expect(viaConnector).toBeInstanceOf(RetriableConnectError);
    expect((viaConnector as Error).message).toBe((down as Error).message);

    const streams = createAwsChangeStreams({ endpoint: inject('dynamodbEndpoint') });
    expect(await streams.tableStreams(`absent-${randomUUID()}`)).toEqual([]);
    const refused = await streams.getRecords('not-an-iterator', 10).catch((e: unknown) => e);
    expect(refused).not.toBeInstanceOf(ChangeStreamsUnavailableError);
    expect((refused as Error).message).toBe(
      'DynamoDB Streams refused a read of a shard: Invalid ShardIterator',
    );
    const table = `errors-${randomUUID().slice(0, 8)}`;
    await createStreamTable(ddb, table);
    const { streamArn } = (await streams.tableStreams(table))[0]!;
    const gone = await streams
      .shardIterator(streamArn, 'shardId-00000000000000000000-00000000', { type: 'TRIM_HORIZON' })
      .catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(StreamResourceNotFoundError);
    expect((gone as Error).message).toBe('shard shardId-00000000000000000000-00000000 does not exist');
    streams.close();
    // A table without a stream fails the task with a message that says what to do.
    const plain = `plain-${randomUUID().slice(0, 8)}`;
    await ddb.send(
      new CreateTableCommand({
        TableName: plain,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
    await expect(
      DYNAMODB_SOURCE.createTask(
        { tables: plain, 'dynamodb.service.endpoint': inject('dynamodbEndpoint') },
        { connector: 'x', task: 0, log: () => {}, reportErrant: () => Promise.resolve() },
      ),
    ).rejects.toThrow(`table ${plain} has no stream: enable its StreamSpecification (DynamoDB Streams)`);
  });
});

describe('DynamoDB Streams source on DynamoDB Local', () => {
  it('inserts, updates and deletes reach the topic per key, in order, with exact images', async () => {
    const { table, topic } = await source('ddb-changes');
    const workload = new ChangeWorkload(ddb, table, 12, 7);
    await workload.run(120);
    expect(await tickUntil(topic, workload.changes)).toBe(workload.changes);
    const records = await readTopic(client, topic, PARTITIONS);
    expectGolden(records, workload, PARTITIONS);
    const kinds = new Set(records.map((r) => JSON.parse(Buffer.from(r.value!).toString()).eventName));
    expect([...kinds].sort()).toEqual(['INSERT', 'MODIFY', 'REMOVE']);

    const values = records.map(
      (r) => JSON.parse(Buffer.from(r.value!).toString()) as Record<string, unknown>,
    );
    const insert = values.find((v) => v['eventName'] === 'INSERT')!;
    expect(Object.keys(insert)).toEqual([
      'eventID',
      'eventName',
      'ApproximateCreationDateTime',
      'Keys',
      'NewImage',
      'SequenceNumber',
      'SizeBytes',
      'StreamViewType',
    ]);
    const first = insert;
    expect(first.StreamViewType).toBe('NEW_AND_OLD_IMAGES');

    // The committed offset is the last change's sequence number on the stream's one shard.
    const last = values
      .map((v) => v['SequenceNumber'] as string)
      .sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1))
      .at(-1);
    const offsets = await offsetsOf('ddb-changes');
    expect(offsets).toHaveLength(1);
    expect(offsets[0]!.partition.streamArn).toContain(`table/${table}/stream/`);
    expect(offsets[0]!.offset).toEqual({ sequenceNumber: last });

    // Nothing new: another tick produces nothing.
    expect((await worker.tick()).map((o) => [o.outcome, o.records])).toEqual([['ran', 0]]);
    await remove('ddb-changes');
  });

  it('completes a poll that a crash left half-written: no gap, no duplicate', async () => {
    const name = 'ddb-crash';
    const { table, topic } = await source(name);
    const workload = new ChangeWorkload(ddb, table, 10, 11);
    await workload.run(10);
    expect(await tickUntil(topic, 10)).toBe(10);
    const [committed] = await offsetsOf(name);

    // The crash: the next poll (changes 11-20) has its intent written and only partition 0's records.
    await workload.run(10);
    const task = await DYNAMODB_SOURCE.createTask(
      { tables: table, 'dynamodb.service.endpoint': inject('dynamodbEndpoint') },
      { connector: name, task: 0, log: () => {}, reportErrant: () => Promise.resolve() },
    );
    const partition = committed!.partition;
    const { records: all } = await task.poll(
      new Map([[sourcePartitionKey(partition), committed!.offset]]),
      100,
    );
    await task.close();
    expect(all).toHaveLength(10);
    const through = all.at(-1)!.sourceOffset;
    const lastPoll = (await state.task(name, 0))!.lastPoll ?? 0;
    const lease = (await state.acquire(name, 0, 'crashed', Date.now(), 1))!;
    await state.beginPoll(lease, {
      poll: lastPoll + 1,
      ranges: [{ partition, from: committed!.offset, through }],
      marks: (await client.admin().fetchTopicOffsets(topic)).map((p) => ({
        topic,
        partition: p.partition,
        offset: p.high,
      })),
      partitionCounts: { [topic]: PARTITIONS },
    });
    const { partitionForKey } = await import('../../protocol/partitioner.js');
    const encode = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    const onZero = all.filter((r) => partitionForKey(encode(r.key), PARTITIONS) === 0);
    expect(onZero.length).toBeGreaterThan(0);
    expect(onZero.length).toBeLessThan(10);
    await client.producer().send({
      topic,
      messages: onZero.map((r) => ({
        key: encode(r.key),
        value: encode(r.value),
        partition: 0,
        timestamp: r.timestamp,
        headers: [{ key: POLL_HEADER, value: `${name}/0/${lastPoll + 1}` }],
      })),
    });
    await new Promise((r) => setTimeout(r, 20)); // the crashed lease (1 ms) has expired

    // Recovery writes only what partitions 1 and 2 lack, then reads on.
    await workload.run(3);
    const [outcome] = await worker.tick();
    expect(outcome).toMatchObject({ outcome: 'ran', records: 10 - onZero.length + 3 });
    expectGolden(await readTopic(client, topic, PARTITIONS), workload, PARTITIONS);
    const after = (await state.task(name, 0))!;
    expect(after.pendingPoll).toBeUndefined();
    await remove(name);
  });

  it('a task whose lease is taken mid-stream stops; its successor goes on with no gap or duplicate', async () => {
    const name = 'ddb-fenced';
    const { table, topic } = await source(name);
    const workload = new ChangeWorkload(ddb, table, 15, 23);
    await workload.run(40);
    const doomed = new ConnectWorker({
      state,
      client,
      clock: systemClock,
      workerId: 'doomed',
      budgetMs: 30_000,
      pollIntervalMs: 50,
    });
    const running = doomed.tick();
    while ((await readTopic(client, topic, PARTITIONS)).length === 0)
      await new Promise((r) => setTimeout(r, 20));
    let writing = true;
    const writer = (async () => {
      while (writing) await workload.step();
    })();
    await new Promise((r) => setTimeout(r, 300));
    // A task restart bumps the lease epoch: the running task's next write is refused and it stops.
    expect((await stack.call('POST', `/v1/connect/connectors/${name}/tasks/0/restart`)).status).toBe(204);
    const started = Date.now();
    expect((await running).map((o) => o.outcome)).toEqual(['fenced']);
    expect(Date.now() - started).toBeLessThan(10_000);
    await new Promise((r) => setTimeout(r, 300));
    writing = false;
    await writer;
    expect(workload.changes).toBeGreaterThan(40);
    await tickUntil(topic, workload.changes);
    expectGolden(await readTopic(client, topic, PARTITIONS), workload, PARTITIONS);
    await remove(name);
  });

  it('reads a closed shard to its end before the stream that replaced it', async () => {
    const name = 'ddb-reenabled';
    const { table, topic } = await source(name);
    const workload = new ChangeWorkload(ddb, table, 6, 3);
    await workload.run(8);
    await ddb.send(
      new UpdateTableCommand({ TableName: table, StreamSpecification: { StreamEnabled: false } }),
    );
    await ddb.send(
      new UpdateTableCommand({
        TableName: table,
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    await workload.run(8);
    expect(await tickUntil(topic, 16)).toBe(16);
    expectGolden(await readTopic(client, topic, PARTITIONS), workload, PARTITIONS);
    // One offset per stream's shard: the closed one and the new one.
    const offsets = await offsetsOf(name);
    expect(offsets).toHaveLength(2);
    expect(new Set(offsets.map((o) => o.partition.streamArn)).size).toBe(2);
    await remove(name);
  });
});
