/**
 * The AWS adapters on DynamoDB Local and s3rver (started by test/support/emulators.ts), each run on a
 * fresh table and bucket; plus the translation of AWS failures into Sluice errors.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createAwsClients, LOCAL_CREDENTIALS } from '../../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../../lib/adapters/aws/dynamodb-metadata-store.js';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { ensureBucket, ensureTable } from '../../lib/adapters/aws/schema.js';
import { SluiceError } from '../../protocol/errors.js';
import { StorageMeter } from '../../lib/ports/index.js';
import { registerStorageContract } from './storage-contract.js';

const endpoints = { dynamodb: inject('dynamodbEndpoint'), s3: inject('s3Endpoint') };
const clients = createAwsClients({ endpoints, credentials: LOCAL_CREDENTIALS });
const name = `sluice-contract-${randomUUID().slice(0, 8)}`;

afterAll(() => {
  clients.dynamodb.destroy();
  clients.s3.destroy();
});

registerStorageContract('aws (DynamoDB Local, s3rver)', async () => {
  await Promise.all([ensureTable(clients.dynamodb, name), ensureBucket(clients.s3, name)]);
  return {
    metadata: new DynamoMetadataStore({ client: clients.dynamodb, tableName: name }),
    objects: new S3ObjectStore({ client: clients.s3, bucket: name, id: 's0' }),
  };
});

const failure = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => new Error('expected the operation to fail'),
    (error: unknown) => error,
  );

const expectSluiceError = (error: unknown, code: SluiceError['code']): void => {
  expect(error).toBeInstanceOf(SluiceError);
  expect((error as SluiceError).code).toBe(code);
  expect(error).not.toHaveProperty('$metadata');
  expect((error as Error).name).not.toMatch(/Exception$/);
  // The message reaches clients: no service, operation, table, bucket or AWS exception name in it.
  expect((error as Error).message).not.toMatch(
    /DynamoDB|S3|Exception|Item|Query|Object|Bucket|sluice-contract/,
  );
};

describe('aws adapters', () => {
  it('creates the table and bucket idempotently', async () => {
    const table = `${name}-schema`;
    expect((await ensureTable(clients.dynamodb, table)).created).toBe(true);
    expect(await ensureTable(clients.dynamodb, table)).toEqual({ created: false, ttl: true });
    expect(await ensureBucket(clients.s3, table)).toEqual({ created: true });
    expect(await ensureBucket(clients.s3, table)).toEqual({ created: false });
  });

  it('translates a missing table or bucket into a SluiceError, not an AWS exception', async () => {
    const table = new DynamoMetadataStore({ client: clients.dynamodb, tableName: `${name}-missing` });
    expectSluiceError(await failure(table.get({ pk: 'a', sk: 'b' })), 'UNKNOWN_SERVER_ERROR');
    expectSluiceError(await failure(table.put({ pk: 'a', sk: 'b' })), 'UNKNOWN_SERVER_ERROR');
    expectSluiceError(await failure(table.query({ pk: 'a' })), 'UNKNOWN_SERVER_ERROR');
    const bucket = new S3ObjectStore({ client: clients.s3, bucket: `${name}-missing`, id: 's9' });
    expectSluiceError(await failure(bucket.put('k', new Uint8Array([1]))), 'UNKNOWN_SERVER_ERROR');
    expectSluiceError(await failure(bucket.list('')), 'UNKNOWN_SERVER_ERROR');
  });

  it("keeps DynamoDB's own validation failures (a 3 KB key, a 500 KB item) out of the message", async () => {
    const table = new DynamoMetadataStore({ client: clients.dynamodb, tableName: name });
    const longKey = await failure(table.get({ pk: 'T#'.padEnd(3000, 'x'), sk: 'META' }));
    expectSluiceError(longKey, 'UNKNOWN_SERVER_ERROR');
    expect(String((longKey as Error).cause)).toMatch(/ValidationException/);
    expectSluiceError(
      await failure(table.put({ pk: 'big', sk: 'x', blob: 'y'.repeat(500 * 1024) })),
      'UNKNOWN_SERVER_ERROR',
    );
  });

  it('translates an unreachable endpoint into a retriable storage error', async () => {
    const port = await closedPort();
    const dead = createAwsClients({
      endpoints: { dynamodb: `http://127.0.0.1:${port}`, s3: `http://127.0.0.1:${port}` },
      credentials: LOCAL_CREDENTIALS,
      connectionTimeoutMs: 500,
    });
    try {
      const table = new DynamoMetadataStore({ client: dead.dynamodb, tableName: name });
      const error = await failure(table.get({ pk: 'a', sk: 'b' }));
      expectSluiceError(error, 'KAFKA_STORAGE_ERROR');
      expect((error as SluiceError).retriable).toBe(true);
      const bucket = new S3ObjectStore({ client: dead.s3, bucket: name, id: 's0' });
      expectSluiceError(await failure(bucket.get('k')), 'KAFKA_STORAGE_ERROR');
    } finally {
      dead.dynamodb.destroy();
      dead.s3.destroy();
    }
  });

  it('meters requests, bytes and the capacity units DynamoDB reports', async () => {
    const meter = new StorageMeter();
    const table = new DynamoMetadataStore({ client: clients.dynamodb, tableName: name, meter });
    const bucket = new S3ObjectStore({ client: clients.s3, bucket: name, id: 's0', meter });
    await table.put({ pk: 'meter', sk: 'S', blob: 'x'.repeat(3000) });
    await table.get({ pk: 'meter', sk: 'S' }, { consistent: true });
    await bucket.put('meter/object', new Uint8Array(1234));
    await bucket.get('meter/object', { start: 0, end: 100 });
    expect(meter.read()).toMatchObject({
      metadataWrites: 1,
      writeUnits: 3,
      metadataReads: 1,
      readUnits: 1,
      objectPuts: 1,
      objectPutBytes: 1234,
      objectGets: 1,
      objectGetBytes: 100,
    });
  });
});

/** A port nothing listens on: bind one, then close it. */
const closedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
