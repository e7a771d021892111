/**
 * The gateway's connection handling, with no Sluice behind it (ApiVersions and refusals need none):
 * in-order answers to pipelined requests, Kafka's answers to versions it does not serve, and the guards
 * against hostile clients. Each hostile case fails on a gateway without its guard: without the frame
 * size check the gigabyte claim stays open, without the in-flight bound the pipelined flood runs
 * thousands of requests at once, without max.connections the flood is accepted, without the idle
 * timeout the truncated frame holds its connection forever.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../../protocol/kafka/codec.js';
import { encodeRequest } from '../../../protocol/kafka/frame.js';
import { ApiVersions } from '../../../protocol/kafka/messages/api-versions.js';
import { Fetch } from '../../../protocol/kafka/messages/fetch.js';
import { Produce } from '../../../protocol/kafka/messages/produce.js';
import { decodeResponse } from '../../../protocol/kafka/frame.js';
import type { KafkaGatewayOptions } from '../../../gateway/server.js';
import { KafkaGateway } from '../../../gateway/server.js';
import { KafkaWire } from '../../support/kafka-wire.js';

const gateways: KafkaGateway[] = [];
const wires: KafkaWire[] = [];

afterEach(async () => {
  for (const w of wires.splice(0)) w.end();
  for (const g of gateways.splice(0)) await g.close();
});

const start = async (options: Partial<KafkaGatewayOptions> = {}) => {
  // Nothing listens on port 9 of loopback: any call to Sluice would fail, and none is made.
  const gateway = new KafkaGateway({ sluice: { url: 'http://127.0.0.1:9' }, port: 0, ...options });
  await gateway.listen();
  gateways.push(gateway);
  return gateway;
};
const open = async (gateway: KafkaGateway) => {
  const wire = await KafkaWire.open(gateway.listening.port);
  wires.push(wire);
  return wire;
};
const apiVersions = async (wire: KafkaWire) =>
  (await wire.request(ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' })).body;

describe('ApiVersions', () => {
  it('lists every served API with its versions', async () => {
    const wire = await open(await start());
    const body = await apiVersions(wire);
    expect(body['errorCode']).toBe(0);
    const keys = body['apiKeys'] as Message[];
    expect(keys.find((k) => k['apiKey'] === 0)).toEqual({ apiKey: 0, minVersion: 0, maxVersion: 11 });
    expect(keys.find((k) => k['apiKey'] === 1)).toEqual({ apiKey: 1, minVersion: 4, maxVersion: 12 });
    expect(keys.find((k) => k['apiKey'] === 18)).toEqual({ apiKey: 18, minVersion: 0, maxVersion: 4 });
    expect(keys.map((k) => k['apiKey'])).toEqual(
      [...keys.map((k) => k['apiKey'] as number)].sort((a, b) => a - b),
    );
  });

  it('answers a version newer than it knows in v0 with UNSUPPORTED_VERSION and the list (KIP-511)', async () => {
    const gateway = await start();
    const wire = await open(gateway);
    // A v9 ApiVersions request: header v2, a body this gateway cannot know.
    wire.socket.write(
      encodeRequest({ apiKey: 18, apiVersion: 9, correlationId: 77, clientId: 'future' }, ApiVersions, {}),
    );
    const frame = await wire.nextFrame();
    const answer = decodeResponse(frame!, ApiVersions, 0);
    expect(answer.correlationId).toBe(77);
    expect(answer.body['errorCode']).toBe(35);
    expect((answer.body['apiKeys'] as Message[]).length).toBeGreaterThan(10);
    // The connection stays usable: the client retries at a version we gave.
    expect((await apiVersions(wire))['errorCode']).toBe(0);
  });
});

describe('versions and APIs not served', () => {
  it('answers Produce v2 and Fetch v3 with UNSUPPORTED_VERSION per partition and keeps the connection', async () => {
    const wire = await open(await start());
    const produce = await wire.request(Produce, 2, {
      acks: -1,
      timeoutMs: 1000,
      topicData: [{ name: 'orders', partitionData: [{ index: 3, records: new Uint8Array(0) }] }],
    });
    const responses = produce.body['responses'] as Message[];
    expect(responses.map((r) => r['name'])).toEqual(['orders']);
    const p = (responses[0]!['partitionResponses'] as Message[])[0]!;
    expect([p['index'], p['errorCode'], p['baseOffset']]).toEqual([3, 35, -1]);
    const fetch = await wire.request(Fetch, 3, {
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1000,
      topics: [{ topic: 'orders', partitions: [{ partition: 1, fetchOffset: 0, partitionMaxBytes: 100 }] }],
    });
    const partition = ((fetch.body['responses'] as Message[])[0]!['partitions'] as Message[])[0]!;
    expect([partition['partitionIndex'], partition['errorCode']]).toEqual([1, 35]);
    expect((await apiVersions(wire))['errorCode']).toBe(0);
  });

  it('closes the connection on an API key Kafka does not define, as a broker does', async () => {
    const gateway = await start();
    const wire = await open(gateway);
    wire.socket.write(
      encodeRequest(
        { apiKey: 999, apiVersion: 0, correlationId: 1, clientId: null },
        { ...ApiVersions, request: [] },
        {},
      ),
    );
    expect(await wire.closesWithin(2000)).toBe(true);
    expect((await apiVersions(await open(gateway)))['errorCode']).toBe(0);
  });
});

describe('pipelining', () => {
  it('answers 200 pipelined requests in order, one write for all of them', async () => {
    const wire = await open(await start());
    const frames = Array.from({ length: 200 }, (_, i) =>
      encodeRequest(
        { apiKey: 18, apiVersion: i % 2 === 0 ? 3 : 1, correlationId: 1000 + i, clientId: 'p' },
        ApiVersions,
        {},
      ),
    );
    wire.socket.write(Buffer.concat(frames));
    const ids: number[] = [];
    for (let i = 0; i < 200; i++)
      ids.push(decodeResponse((await wire.nextFrame())!, ApiVersions, i % 2 === 0 ? 3 : 1).correlationId);
    expect(ids).toEqual(Array.from({ length: 200 }, (_, i) => 1000 + i));
  });
});

describe('hostile input', () => {
  it('closes a connection whose frame claims 2 GiB, holding nothing for it, and serves others', async () => {
    const gateway = await start();
    const wire = await open(gateway);
    const claim = Buffer.alloc(4);
    claim.writeInt32BE(0x7fffffff);
    wire.socket.write(claim);
    expect(await wire.closesWithin(1000)).toBe(true);
    expect(gateway.stats().peakRequestBytes).toBe(0);
    expect((await apiVersions(await open(gateway)))['errorCode']).toBe(0);
  });

  it('closes on a frame over socket.request.max.bytes', async () => {
    const gateway = await start({ maxRequestBytes: 1024 });
    const wire = await open(gateway);
    const claim = Buffer.alloc(4);
    claim.writeInt32BE(1025);
    wire.socket.write(claim);
    expect(await wire.closesWithin(1000)).toBe(true);
  });

  it('closes on garbage bytes and on a negative or tiny size', async () => {
    const gateway = await start();
    for (const bytes of [
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
      Buffer.from([0xff, 0xff, 0xff, 0xf0, 1, 2, 3]),
      Buffer.from([0, 0, 0, 2, 0, 18]),
    ]) {
      const wire = await open(gateway);
      wire.socket.write(bytes);
      expect(await wire.closesWithin(1000)).toBe(true);
    }
    expect((await apiVersions(await open(gateway)))['errorCode']).toBe(0);
  });

  it('closes on a complete frame whose fields are truncated', async () => {
    const gateway = await start();
    const wire = await open(gateway);
    const good = encodeRequest({ apiKey: 0, apiVersion: 7, correlationId: 5, clientId: 'x' }, Produce, {
      acks: 1,
      timeoutMs: 10,
      topicData: [{ name: 'orders', partitionData: [{ index: 0, records: new Uint8Array(50) }] }],
    });
    const cut = Buffer.from(good.subarray(0, good.length - 30));
    cut.writeInt32BE(cut.length - 4, 0);
    wire.socket.write(cut);
    expect(await wire.closesWithin(1000)).toBe(true);
  });

  it('closes a connection that stops mid-frame once connections.max.idle.ms passes', async () => {
    const gateway = await start({ connectionsMaxIdleMs: 300 });
    const wire = await open(gateway);
    const frame = encodeRequest(
      { apiKey: 18, apiVersion: 3, correlationId: 1, clientId: 'x' },
      ApiVersions,
      {},
    );
    wire.socket.write(frame.subarray(0, frame.length - 3));
    expect(await wire.closesWithin(150)).toBe(false);
    expect(await wire.closesWithin(1500)).toBe(true);
  });

  it('refuses connections past max.connections while serving the ones it holds', async () => {
    const gateway = await start({ maxConnections: 5 });
    const held = await Promise.all(Array.from({ length: 5 }, () => open(gateway)));
    const flood = await Promise.all(Array.from({ length: 20 }, () => open(gateway)));
    const refused = await Promise.all(flood.map((w) => w.closesWithin(1000)));
    expect(refused.every(Boolean)).toBe(true);
    expect(gateway.stats().refusedConnections).toBe(20);
    for (const w of held) expect((await apiVersions(w))['errorCode']).toBe(0);
  });

  it('bounds a pipelined flood from a client that never reads: in-flight requests and memory stay capped', async () => {
    const gateway = await start({ maxInFlightRequests: 8, maxPendingResponseBytes: 64 * 1024 });
    const wire = await open(gateway);
    wire.socket.pause(); // never read the answers
    const frame = encodeRequest(
      { apiKey: 18, apiVersion: 3, correlationId: 1, clientId: 'flood' },
      ApiVersions,
      {},
    );
    const burst = Buffer.concat(Array.from({ length: 20_000 }, () => frame));
    wire.socket.write(burst);
    await new Promise((r) => setTimeout(r, 1500));
    const stats = gateway.stats();
    expect(stats.peakInFlight).toBeLessThanOrEqual(8);
    expect(stats.peakRequestBytes).toBeLessThanOrEqual(8 * frame.length);
    // Another client is served meanwhile.
    expect((await apiVersions(await open(gateway)))['errorCode']).toBe(0);
  }, 20_000);
});
