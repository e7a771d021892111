/**
 * The metadata store on one DynamoDB table (pk/sk strings). Conditions and update actions compile to
 * expressions; a failed condition comes back as ConditionFailedError carrying the item DynamoDB saw,
 * so callers never need a second read.
 */
import { randomUUID } from 'node:crypto';
import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type ConsumedCapacity,
  type DynamoDBClient,
  type TransactWriteItem,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import type {
  Item,
  ItemKey,
  MetadataStore,
  QueryInput,
  QueryPage,
  TransactOp,
  UpdateAction,
  UpdateOptions,
  WriteOptions,
} from '../../ports/metadata-store.js';
import { ConditionFailedError, TransactionCanceledError } from '../../ports/metadata-store.js';
import { itemSize, readUnitsFor, StorageMeter, writeUnitsFor } from '../../ports/meter.js';
import { throttled } from '../../ports/storage-errors.js';
import { invalidRequest, SluiceError } from '../../../protocol/errors.js';
import {
  conditionExpression,
  ExpressionNames,
  keyConditionExpression,
  updateExpression,
} from './expressions.js';
import { errorName, translateAwsError } from './errors.js';
import { marshalItem, unmarshalItem, type DynamoItem } from './marshal.js';

export interface DynamoMetadataStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  /** Counts requests and capacity units; a fresh meter when omitted. */
  meter?: StorageMeter;
}

const BATCH_WRITE_MAX = 25;
const BATCH_RETRY_ATTEMPTS = 10;
const BATCH_CONCURRENCY = 8;

type CancellationCode = TransactionCanceledError['reasons'][number];

export class DynamoMetadataStore implements MetadataStore {
  readonly meter: StorageMeter;
  private readonly client: DynamoDBClient;
  private readonly tableName: string;

  constructor(options: DynamoMetadataStoreOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.meter = options.meter ?? new StorageMeter();
  }

  async get(key: ItemKey, options: { consistent?: boolean } = {}): Promise<Item | undefined> {
    const consistent = options.consistent ?? false;
    const out = await this.call('GetItem', () =>
      this.client.send(
        new GetItemCommand({
          TableName: this.tableName,
          Key: keyOf(key),
          ConsistentRead: consistent,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    const item = unmarshalItem(out.Item);
    this.meter.add({
      metadataReads: 1,
      readUnits: unitsOf(out.ConsumedCapacity) ?? readUnitsFor(item ? itemSize(item) : 1, consistent),
    });
    return item;
  }

  async put(item: Item, options: WriteOptions = {}): Promise<void> {
    const x = new ExpressionNames();
    const condition = options.condition && conditionExpression(options.condition, x);
    const out = await this.conditional('PutItem', item.pk, () =>
      this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: marshalItem(item),
          ...(condition === undefined ? {} : { ConditionExpression: condition, ...x.attributes() }),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    this.meterWrite(out.ConsumedCapacity, itemSize(item));
  }

  async update(
    key: ItemKey,
    actions: readonly UpdateAction[],
    options: UpdateOptions = {},
  ): Promise<Item | undefined> {
    const x = new ExpressionNames();
    const update = updateExpression(actions, x);
    const condition = options.condition && conditionExpression(options.condition, x);
    const returnValues = options.returnValues ?? 'none';
    const out = await this.conditional('UpdateItem', key.pk, () =>
      this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: keyOf(key),
          ...(update === undefined ? {} : { UpdateExpression: update }),
          ...(condition === undefined ? {} : { ConditionExpression: condition }),
          ...x.attributes(),
          ReturnValues:
            returnValues === 'allOld' ? 'ALL_OLD' : returnValues === 'allNew' ? 'ALL_NEW' : 'NONE',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    const returned = returnValues === 'none' ? undefined : unmarshalItem(out.Attributes);
    this.meterWrite(out.ConsumedCapacity, returned ? itemSize(returned) : 1);
    return returned;
  }

  async delete(key: ItemKey, options: WriteOptions = {}): Promise<void> {
    const x = new ExpressionNames();
    const condition = options.condition && conditionExpression(options.condition, x);
    const out = await this.conditional('DeleteItem', key.pk, () =>
      this.client.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: keyOf(key),
          ...(condition === undefined ? {} : { ConditionExpression: condition, ...x.attributes() }),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    this.meterWrite(out.ConsumedCapacity, 1);
  }

  async query(input: QueryInput): Promise<QueryPage> {
    const x = new ExpressionNames();
    const keyCondition = keyConditionExpression(input.pk, input.sk, x);
    const consistent = input.consistent ?? false;
    const out = await this.call('Query', () =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: keyCondition,
          ...x.attributes(),
          ScanIndexForward: !input.reverse,
          ConsistentRead: consistent,
          ...(input.limit === undefined ? {} : { Limit: input.limit }),
          ...(input.cursor === undefined ? {} : { ExclusiveStartKey: decodeCursor(input.cursor) }),
          ReturnConsumedCapacity: 'TOTAL',
        }),
      ),
    );
    const items = (out.Items ?? []).map((raw) => unmarshalItem(raw) as Item);
    const bytes = items.reduce((sum, item) => sum + itemSize(item), 0);
    this.meter.add({
      metadataReads: 1,
      readUnits: unitsOf(out.ConsumedCapacity) ?? readUnitsFor(bytes, consistent),
    });
    // DynamoDB may hand back a cursor whose next page is empty (the limit fell on the last item).
    return {
      items,
      ...(out.LastEvaluatedKey === undefined ? {} : { cursor: encodeCursor(out.LastEvaluatedKey) }),
    };
  }

  async transact(ops: readonly TransactOp[]): Promise<void> {
    if (ops.length === 0) return;
    const items = ops.map((op) => this.transactItem(op));
    let out;
    try {
      out = await this.client.send(
        new TransactWriteItemsCommand({
          TransactItems: items,
          // Makes the SDK's own retries of this call idempotent for ten minutes.
          ClientRequestToken: randomUUID(),
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
    } catch (error) {
      throw this.transactionError(error);
    }
    const writes = ops.filter((op) => !('check' in op));
    this.meter.add({
      metadataWrites: writes.length,
      writeUnits:
        unitsOf(out.ConsumedCapacity) ??
        // Without ConsumedCapacity: checks are billed as writes too (lib/ports/meter.ts).
        ops.reduce((sum, op) => sum + 2 * writeUnitsFor('put' in op ? itemSize(op.put) : 1), 0),
    });
  }

  async batchWrite(writes: { puts?: readonly Item[]; deletes?: readonly ItemKey[] }): Promise<void> {
    // One request per key, as if the puts ran in order and then the deletes (the memory store's
    // order): DynamoDB rejects a batch that names a key twice.
    const byKey = new Map<string, WriteRequest>();
    for (const item of writes.puts ?? [])
      byKey.set(keyString(item), { PutRequest: { Item: marshalItem(item) } });
    for (const key of writes.deletes ?? []) byKey.set(keyString(key), { DeleteRequest: { Key: keyOf(key) } });
    const requests = [...byKey.values()];
    const chunks: WriteRequest[][] = [];
    for (let i = 0; i < requests.length; i += BATCH_WRITE_MAX)
      chunks.push(requests.slice(i, i + BATCH_WRITE_MAX));
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let chunk = chunks[next++]; chunk !== undefined; chunk = chunks[next++])
        await this.batchWriteChunk(chunk);
    };
    await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, chunks.length) }, worker));
  }

  private async batchWriteChunk(chunk: WriteRequest[]): Promise<void> {
    let pending = chunk;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= BATCH_RETRY_ATTEMPTS) {
        throw throttled(
          `DynamoDB BatchWriteItem on ${this.tableName} (${pending.length} writes unprocessed)`,
        );
      }
      if (attempt > 0) await sleep(backoff(attempt));
      const requestItems = pending;
      const out = await this.call('BatchWriteItem', () =>
        this.client.send(
          new BatchWriteItemCommand({
            RequestItems: { [this.tableName]: requestItems },
            ReturnConsumedCapacity: 'TOTAL',
          }),
        ),
      );
      const unprocessed = out.UnprocessedItems?.[this.tableName] ?? [];
      const done = requestItems.length - unprocessed.length;
      this.meter.add({ metadataWrites: done, writeUnits: unitsOf(out.ConsumedCapacity) ?? done });
      pending = unprocessed;
    }
  }

  private transactItem(op: TransactOp): TransactWriteItem {
    const x = new ExpressionNames();
    const common = { TableName: this.tableName, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
    if ('check' in op) {
      const ConditionExpression = conditionExpression(op.condition, x);
      return { ConditionCheck: { ...common, Key: keyOf(op.check), ConditionExpression, ...x.attributes() } };
    }
    const condition = op.condition && conditionExpression(op.condition, x);
    const when = condition === undefined ? {} : { ConditionExpression: condition };
    if ('put' in op) return { Put: { ...common, Item: marshalItem(op.put), ...when, ...x.attributes() } };
    if ('delete' in op) return { Delete: { ...common, Key: keyOf(op.delete), ...when, ...x.attributes() } };
    // DynamoDB requires an expression here; an empty one fails validation like any other Sluice bug.
    const UpdateExpression = updateExpression(op.actions, x) ?? '';
    return { Update: { ...common, Key: keyOf(op.update), UpdateExpression, ...when, ...x.attributes() } };
  }

  private transactionError(error: unknown): Error {
    const what = `DynamoDB TransactWriteItems on ${this.tableName}`;
    if (errorName(error) !== 'TransactionCanceledException') return translateAwsError(error, what);
    const cancelled =
      (error as { CancellationReasons?: { Code?: string; Message?: string }[] }).CancellationReasons ?? [];
    const codes = cancelled.map((r) => r.Code ?? 'None');
    const reasons = codes.map((code): CancellationCode =>
      code === 'None' || code === 'ConditionalCheckFailed' || code === 'TransactionConflict' ? code : 'Other',
    );
    // A transaction cancelled only because DynamoDB was busy is back-pressure, not a conflict.
    if (
      !reasons.includes('ConditionalCheckFailed') &&
      codes.some((c) => /Throttl|ThroughputExceeded/.test(c))
    ) {
      return throttled(what, error);
    }
    if (codes.includes('ValidationError')) {
      const messages = cancelled.map((r) => r.Message).filter((m) => m !== undefined);
      return new SluiceError('UNKNOWN_SERVER_ERROR', `${what} rejected: ${messages.join('; ')}`, {
        cause: error,
      });
    }
    return new TransactionCanceledError(reasons, { cause: error });
  }

  /** Runs a conditional write; a failed condition becomes ConditionFailedError with the current item. */
  private async conditional<T>(operation: string, pk: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (errorName(error) === 'ConditionalCheckFailedException') {
        // DynamoDB bills the attempted write even though nothing changed.
        this.meter.add({ metadataWrites: 1, writeUnits: 1 });
        throw new ConditionFailedError(unmarshalItem((error as { Item?: DynamoItem }).Item), {
          cause: error,
        });
      }
      throw translateAwsError(error, `DynamoDB ${operation} on ${this.tableName} (pk ${pk})`);
    }
  }

  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw translateAwsError(error, `DynamoDB ${operation} on ${this.tableName}`);
    }
  }

  private meterWrite(capacity: ConsumedCapacity | undefined, fallbackBytes: number): void {
    this.meter.add({ metadataWrites: 1, writeUnits: unitsOf(capacity) ?? writeUnitsFor(fallbackBytes) });
  }
}

const keyOf = (key: ItemKey): DynamoItem => ({ pk: { S: key.pk }, sk: { S: key.sk } });

const keyString = (key: ItemKey): string => JSON.stringify([key.pk, key.sk]);

/** Capacity units DynamoDB reported, or undefined when it reported none (DynamoDB Local may not). */
const unitsOf = (capacity: ConsumedCapacity | ConsumedCapacity[] | undefined): number | undefined => {
  const all = capacity === undefined ? [] : Array.isArray(capacity) ? capacity : [capacity];
  const units = all.map((c) => c.CapacityUnits).filter((u): u is number => u !== undefined);
  return units.length === 0 ? undefined : units.reduce((a, b) => a + b, 0);
};

const encodeCursor = (lastKey: DynamoItem): string => {
  const pk = lastKey.pk?.S;
  const sk = lastKey.sk?.S;
  return Buffer.from(JSON.stringify({ pk, sk }), 'utf8').toString('base64url');
};

const decodeCursor = (cursor: string): DynamoItem => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidRequest('invalid query cursor');
  }
  const { pk, sk } = (parsed ?? {}) as { pk?: unknown; sk?: unknown };
  if (typeof pk !== 'string' || typeof sk !== 'string') throw invalidRequest('invalid query cursor');
  return keyOf({ pk, sk });
};

/** Exponential backoff with full jitter, capped at two seconds. */
const backoff = (attempt: number): number => Math.random() * Math.min(2_000, 50 * 2 ** attempt);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
