/**
 * What the DynamoDB Streams source's integration tests share: a table with a stream on the global
 * setup's DynamoDB Local, a seeded workload of inserts, updates and deletes that keeps the golden
 * (every change each item must produce, in order, as the connector converts it), and a check of a
 * topic against that golden: per key exactly those changes in that order, on Kafka's partition for the
 * key, no sequence number twice.
 */
import {
  CreateTableCommand,
  DeleteItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { expect, inject } from 'vitest';
import { createAwsClients } from '../../lib/adapters/aws/clients.js';
import { partitionForKey } from '../../protocol/partitioner.js';
import type { ConsumedRecord, SluiceClient } from '../../sdk/index.js';

export const dynamodb = (): DynamoDBClient =>
  createAwsClients({ endpoints: { dynamodb: inject('dynamodbEndpoint') } }).dynamodb;

/** A table keyed by (pk string, sk number) with a NEW_AND_OLD_IMAGES stream. */
export const createStreamTable = async (ddb: DynamoDBClient, name: string): Promise<void> => {
  await ddb.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'N' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
};

type Item = Record<string, unknown>;

export interface ExpectedChange {
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  NewImage?: Item;
  OldImage?: Item;
}

const UTF8 = new TextEncoder();

/** mulberry32: the workload (and a test's kill moments) replay from their seed. */
export const seeded = (seed: number) => {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/**
 * Inserts, updates and deletes of `keys` items, chosen by a seeded random; every operation changes the
 * item (DynamoDB writes no stream record for a write that changes nothing).
 */
export class ChangeWorkload {
  readonly expected = new Map<string, ExpectedChange[]>();
  private readonly items = new Map<string, Item>();
  private readonly random: () => number;
  private version = 0;
  changes = 0;

  constructor(
    private readonly ddb: DynamoDBClient,
    private readonly table: string,
    private readonly keys: number,
    seed: number,
  ) {
    this.random = seeded(seed);
  }

  static keyJson(pk: string, sk: number): string {
    return JSON.stringify({ pk, sk });
  }

  async step(): Promise<void> {
    const n = Math.floor(this.random() * this.keys);
    const pk = `item-${n % 7}`;
    const sk = n;
    const key = ChangeWorkload.keyJson(pk, sk);
    const old = this.items.get(key);
    const roll = this.random();
    this.version += 1;
    const v = this.version;
    if (old === undefined) {
      const item = { pk, sk, v, note: `first-${v}`, flags: true, blob: 'AQI=', tags: ['a', `t${n}`] };
      await this.ddb.send(
        new PutItemCommand({
          TableName: this.table,
          Item: {
            pk: { S: pk },
            sk: { N: String(sk) },
            v: { N: String(v) },
            note: { S: item.note },
            flags: { BOOL: true },
            blob: { B: new Uint8Array([1, 2]) },
            tags: { SS: ['a', `t${n}`] },
          },
        }),
      );
      this.items.set(key, item);
      this.record(key, { eventName: 'INSERT', NewImage: item });
    } else if (roll < 0.25) {
      await this.ddb.send(
        new DeleteItemCommand({ TableName: this.table, Key: { pk: { S: pk }, sk: { N: String(sk) } } }),
      );
      this.items.delete(key);
      this.record(key, { eventName: 'REMOVE', OldImage: old });
    } else {
      const item = { ...old, v, note: `update-${v}` };
      await this.ddb.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: { pk: { S: pk }, sk: { N: String(sk) } },
          UpdateExpression: 'SET v = :v, note = :note',
          ExpressionAttributeValues: { ':v': { N: String(v) }, ':note': { S: item.note } },
        }),
      );
      this.items.set(key, item);
      this.record(key, { eventName: 'MODIFY', NewImage: item, OldImage: old });
    }
  }

  async run(steps: number): Promise<void> {
    for (let i = 0; i < steps; i++) await this.step();
  }

  private record(key: string, change: ExpectedChange): void {
    this.expected.set(key, [...(this.expected.get(key) ?? []), change]);
    this.changes += 1;
  }
}

/** Every record of the topic, partition by partition, in offset order. */
export const readTopic = async (
  client: SluiceClient,
  topic: string,
  partitions: number,
): Promise<ConsumedRecord[]> => {
  const consumer = client.consumer();
  const out: ConsumedRecord[] = [];
  for (let p = 0; p < partitions; p++) {
    for (let offset = 0; ;) {
      const batch = await consumer.fetch(topic, p, offset, { maxWaitMs: 0 });
      out.push(...batch.records);
      if (batch.records.length === 0 || batch.nextOffset >= batch.highWatermark) break;
      offset = batch.nextOffset;
    }
  }
  return out;
};

const text = (b: Uint8Array | null): string => Buffer.from(b ?? new Uint8Array()).toString('utf8');

interface Change {
  eventName: string;
  NewImage?: Item;
  OldImage?: Item;
  Keys: Item;
  SequenceNumber: string;
  ApproximateCreationDateTime: number;
}

/** The topic equals the golden: per key its changes exactly, in order, where Kafka puts the key. */
export const expectGolden = (
  records: readonly ConsumedRecord[],
  workload: ChangeWorkload,
  partitions: number,
) => {
  const byKey = new Map<string, ExpectedChange[]>();
  const sequences = new Set<string>();
  for (const r of records) {
    const key = text(r.key);
    const value = JSON.parse(text(r.value)) as Change;
    expect(partitionForKey(UTF8.encode(key), partitions)).toBe(r.partition);
    expect(JSON.stringify(value.Keys)).toBe(key);
    expect(r.timestamp).toBe(value.ApproximateCreationDateTime);
    sequences.add(value.SequenceNumber);
    const change: ExpectedChange = {
      eventName: value.eventName as ExpectedChange['eventName'],
      ...(value.NewImage ? { NewImage: value.NewImage } : {}),
      ...(value.OldImage ? { OldImage: value.OldImage } : {}),
    };
    byKey.set(key, [...(byKey.get(key) ?? []), change]);
  }
  // Image attributes are sorted by name; compare as values.
  const sorted = (m: Map<string, ExpectedChange[]>) =>
    Object.fromEntries(
      [...m.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => [k, JSON.parse(JSON.stringify(v))]),
    );
  expect(sorted(byKey)).toEqual(sorted(workload.expected));
  expect(records.length).toBe(workload.changes);
  expect(sequences.size).toBe(workload.changes);
};
