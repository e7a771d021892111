/**
 * X-Ray tracing (functions/xray.ts through functions/telemetry.ts): where Lambda runs the function
 * with active tracing, each sampled invocation is a subsegment of Lambda's segment and each S3 call a
 * subsegment of it, sent to the daemon's UDP address in the daemon's format — checked here by a UDP
 * listener standing in for the daemon and a fake S3 answering scripted statuses. Elsewhere (the local
 * stack, tests, POWERTOOLS_TRACE_ENABLED=false) the clients stay as they were and nothing is sent.
 */
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SubsegmentDocument } from '../../../functions/xray.js';
import { daemonAddressOf, flagsOf, parseTraceHeader } from '../../../functions/xray.js';

const ROOT = '1-5759e988-bd862e3fe1be46a994272793';
const PARENT = '53995c3f42cd8ad8';

const daemon = createSocket('udp4');
const received: string[] = [];
daemon.on('message', (m) => received.push(m.toString()));

/** Fake S3: the status of each answer, taken in order (200 when none is left). */
const statuses: number[] = [];
const s3 = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const status = statuses.shift() ?? 200;
    const code = { 404: 'NoSuchKey', 429: 'TooManyRequests', 503: 'SlowDown', 500: 'InternalError' }[status];
    response.writeHead(status, { 'content-type': 'application/xml', 'x-amz-request-id': `req-${status}` });
    response.end(code ? `<Error><Code>${code}</Code><Message>m</Message></Error>` : 'hello');
  });
});

let daemonAddress = '';
let s3Endpoint = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  daemonAddress = `127.0.0.1:${daemon.address().port}`;
  await new Promise<void>((resolve) => s3.listen(0, '127.0.0.1', resolve));
  s3Endpoint = `http://127.0.0.1:${(s3.address() as AddressInfo).port}`;
});
afterAll(async () => {
  daemon.close();
  await new Promise((resolve) => s3.close(resolve));
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
  received.length = 0;
  statuses.length = 0;
});

const tracingEnv = (sampled: 0 | 1) => ({
  AWS_XRAY_DAEMON_ADDRESS: `udp:${daemonAddress} tcp:${daemonAddress}`,
  AWS_LAMBDA_FUNCTION_NAME: 'sluice-produce',
  _X_AMZN_TRACE_ID: `Root=${ROOT};Parent=${PARENT};Sampled=${sampled}`,
});

const s3Client = (maxAttempts = 1) =>
  new S3Client({
    region: 'eu-west-1',
    endpoint: s3Endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'a', secretAccessKey: 's' },
    maxAttempts,
    retryStrategy: undefined,
  });

const get = (client: S3Client) =>
  client.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' })).then(
    async (r) => r.Body?.transformToString(),
    (e: unknown) => e,
  );

/** The documents the daemon received, each checked to carry the daemon's header line. */
const documents = async (count: number): Promise<SubsegmentDocument[]> => {
  await vi.waitFor(() => expect(received.length).toBeGreaterThanOrEqual(count), { timeout: 2000 });
  return received.map((datagram) => {
    const [header, body, ...rest] = datagram.split('\n');
    expect(header).toBe('{"format": "json", "version": 1}');
    expect(rest).toEqual([]);
    return JSON.parse(body!) as SubsegmentDocument;
  });
};

const telemetry = async () => {
  const { PowertoolsTelemetry } = await import('../../../functions/telemetry.js');
  return new PowertoolsTelemetry({ sink: { log: () => {}, emf: () => {} } });
};

describe('tracing', () => {
  it('sends the invocation and each AWS call as subsegments with the trace id, parents and outcome', async () => {
    for (const [name, value] of Object.entries(tracingEnv(1))) vi.stubEnv(name, value);
    const t = await telemetry();
    const client = t.traced(s3Client());
    expect(client.middlewareStack.identify().join(' ')).toContain('SluiceXRaySubsegment');
    statuses.push(200, 404, 429, 503);
    await t.run({ function: 'produce' }, async () => {
      t.annotate({ API: 'Produce', topic: 'orders', partition: 3 });
      expect(await get(client)).toBe('hello');
      for (let i = 0; i < 3; i++) await get(client);
    });
    const docs = await documents(5);
    const invocation = docs.find((d) => d.name === '## produce')!;
    expect(invocation).toMatchObject({
      trace_id: ROOT,
      parent_id: PARENT,
      type: 'subsegment',
      annotations: { API: 'Produce', topic: 'orders', partition: 3 },
    });
    expect(invocation.id).toMatch(/^[0-9a-f]{16}$/);
    expect(invocation.end_time).toBeGreaterThanOrEqual(invocation.start_time);
    const calls = docs.filter((d) => d.namespace === 'aws');
    expect(calls).toHaveLength(4);
    for (const call of calls) {
      expect(call).toMatchObject({
        name: 'S3',
        trace_id: ROOT,
        parent_id: invocation.id,
        type: 'subsegment',
        aws: { operation: 'GetObject', region: 'eu-west-1', retries: 0 },
      });
      expect(call.start_time).toBeGreaterThanOrEqual(invocation.start_time);
    }
    const outcome = (d: SubsegmentDocument) => [
      d.http?.response.status,
      d.error ?? false,
      d.throttle ?? false,
      d.fault ?? false,
      d.cause?.exceptions[0]?.type,
    ];
    expect(calls.map(outcome)).toEqual([
      [200, false, false, false, undefined],
      [404, true, false, false, 'NoSuchKey'],
      [429, true, true, false, 'TooManyRequests'],
      [503, false, true, true, 'SlowDown'],
    ]);
    expect(calls[0]!.aws!['request_id']).toBe('req-200');
  });

  it('counts the retries of a call in its subsegment, and marks a failed invocation as a fault', async () => {
    for (const [name, value] of Object.entries(tracingEnv(1))) vi.stubEnv(name, value);
    const t = await telemetry();
    const client = t.traced(s3Client(3));
    statuses.push(500, 200);
    await expect(
      t.run({ function: 'fetch' }, async () => {
        await get(client);
        throw new Error('handler failed');
      }),
    ).rejects.toThrow('handler failed');
    const docs = await documents(2);
    expect(docs.find((d) => d.namespace === 'aws')).toMatchObject({
      aws: { retries: 1 },
      http: { response: { status: 200 } },
    });
    expect(docs.find((d) => d.name === '## fetch')!.fault).toBe(true);
  });

  it('sends nothing for an unsampled invocation, and calls outside an invocation are not traced', async () => {
    for (const [name, value] of Object.entries(tracingEnv(0))) vi.stubEnv(name, value);
    const t = await telemetry();
    const client = t.traced(s3Client());
    await t.run({ function: 'produce' }, () => get(client));
    await get(client);
    await new Promise((r) => setTimeout(r, 100));
    expect(received).toEqual([]);
  });

  it('leaves the clients alone without active tracing, and with POWERTOOLS_TRACE_ENABLED=false', async () => {
    for (const env of [{}, { ...tracingEnv(1), POWERTOOLS_TRACE_ENABLED: 'false' }]) {
      vi.unstubAllEnvs();
      vi.resetModules();
      vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', undefined);
      for (const [name, value] of Object.entries(env as Record<string, string>)) vi.stubEnv(name, value);
      const t = await telemetry();
      const client = s3Client();
      const before = client.middlewareStack.identify();
      t.traced(client);
      expect(client.middlewareStack.identify()).toEqual(before);
      await t.run({ function: 'produce' }, () => get(client));
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(received).toEqual([]);
  });
});

describe('X-Ray header, address and flags', () => {
  it('reads the trace header, refusing one without a root or parent', () => {
    expect(parseTraceHeader(`Root=${ROOT};Parent=${PARENT};Sampled=1;Lineage=a:1`)).toEqual({
      root: ROOT,
      parent: PARENT,
      sampled: true,
    });
    expect(parseTraceHeader(`Root=${ROOT};Sampled=1`)).toBeUndefined();
    expect(parseTraceHeader('garbage')).toBeUndefined();
    expect(parseTraceHeader(undefined)).toBeUndefined();
  });

  it('reads both forms of the daemon address and refuses a bad one', () => {
    expect(daemonAddressOf('169.254.79.129:2000')).toEqual({ host: '169.254.79.129', port: 2000 });
    expect(daemonAddressOf('tcp:10.0.0.1:2001 udp:10.0.0.2:2000')).toEqual({ host: '10.0.0.2', port: 2000 });
    expect(() => daemonAddressOf('nowhere')).toThrow(/daemon address/);
  });

  it('flags DynamoDB’s 400 throttling as an error and a throttle, a lost answer as a fault', () => {
    expect(flagsOf(400, 'ProvisionedThroughputExceededException')).toEqual({ error: true, throttle: true });
    expect(flagsOf(400, 'ValidationException')).toEqual({ error: true });
    expect(flagsOf(undefined, 'TimeoutError')).toEqual({ fault: true });
  });
});
