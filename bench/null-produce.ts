/**
 * The fair limit's server: the local gateway with the real admin, fetch and groups functions, but a
 * produce function that does only what no produce can avoid — one object PUT of the request body and
 * one read-free commit UpdateItem — through the same storage adapters and the same latency model as
 * Sluice. The same SDK producers send the very same requests to it (same encoder, transport and
 * gateway), so Sluice ÷ this is Sluice's own server-side overhead (`limitRatioFair`).
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createAwsClients } from '../lib/adapters/aws/clients.js';
import { DynamoMetadataStore } from '../lib/adapters/aws/dynamodb-metadata-store.js';
import { S3ObjectStore } from '../lib/adapters/aws/s3-object-store.js';
import type { LatencyModelName } from '../lib/adapters/latency/index.js';
import { latencyModels, withLatency } from '../lib/adapters/latency/index.js';
import type { ApiGatewayV2Event, ApiGatewayV2Result } from '../lib/http/apigw.js';
import { requestFromEvent, resultFromResponse } from '../lib/http/apigw.js';
import type { LocalStack } from '../local/stack.js';
import type { Handlers } from '../local/gateway.js';
import { createGateway } from '../local/gateway.js';

const BATCH_PATH = /^\/v1\/topics\/([^/]+)\/partitions\/(\d+)\/batches$/;

/** Offsets a body of RecordBatches spans: the sum of each batch's lastOffsetDelta + 1 (header only). */
const offsetsIn = (body: Uint8Array): number => {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let n = 0;
  for (let at = 0; at + 27 <= body.length;) {
    n += view.getInt32(at + 23) + 1;
    at += 12 + view.getInt32(at + 8);
  }
  return n;
};

export const startNullProduceGateway = async (
  stack: LocalStack,
  latencyModel: LatencyModelName,
): Promise<{ url: string; stop(): Promise<void> }> => {
  const clients = createAwsClients({ endpoints: stack.endpoints });
  const real = {
    store: new DynamoMetadataStore({ client: clients.dynamodb, tableName: stack.tableName }),
    objectStores: [new S3ObjectStore({ client: clients.s3, bucket: stack.buckets[0]!, id: 's0' })],
  };
  const { store, objectStores } =
    latencyModel === 'none' ? real : withLatency(latencyModels[latencyModel], real, 99);
  const objects = objectStores[0]!;
  let producerIds = 0;
  const run = randomUUID().slice(0, 8);
  const produce = async (event: ApiGatewayV2Event): Promise<ApiGatewayV2Result> => {
    const request = requestFromEvent(event);
    if (request.path === '/v1/producers')
      return resultFromResponse({ status: 200, body: { producerId: ++producerIds, producerEpoch: 0 } });
    const match = BATCH_PATH.exec(request.path);
    if (!match)
      return resultFromResponse({ status: 404, body: { error: { code: 'UNKNOWN_TOPIC_OR_PARTITION' } } });
    const n = offsetsIn(request.body);
    await objects.put(`null/${run}/${randomUUID()}`, request.body);
    const old = await store.update(
      { pk: `NULL#${run}#${match[1]}#${match[2]}`, sk: 'STATE' },
      [{ set: 'nextOffset', add: n, initial: 0 }],
      { returnValues: 'allOld' },
    );
    const baseOffset = typeof old?.['nextOffset'] === 'number' ? old['nextOffset'] : 0;
    return resultFromResponse({
      status: 200,
      body: { baseOffset, lastOffset: baseOffset + n - 1, logAppendTime: -1, logStartOffset: 0 },
    });
  };
  const handlers: Handlers = {
    admin: (await import('../functions/admin.js')).handler,
    produce,
    fetch: (await import('../functions/fetch.js')).handler,
    groups: (await import('../functions/groups.js')).handler,
    connect: (await import('../functions/connect.js')).handler,
  };
  const server = createGateway(handlers);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      clients.s3.destroy();
      clients.dynamodb.destroy();
    },
  };
};
