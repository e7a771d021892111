/**
 * The Kafka gateway under SLUICE_AUTH=iam: every connection authenticates with SASL/OAUTHBEARER (a
 * presigned `GET /v1/whoami`, sdk/kafka-token.ts) and everything it does is authorized by Sluice as
 * that principal, with the same ACL table as the HTTP routes. Real clients: kafkajs
 * (`oauthBearerProvider`) and confluent-kafka-python (librdkafka, `oauth_cb` running `sluice gateway token`).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import type { SASLOptions } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminGrants, consumeGrants, produceGrants } from '../../lib/auth/grants.js';
import { ON_BEHALF_OF_HEADER } from '../../lib/auth/delegation.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { InitProducerId } from '../../protocol/kafka/messages/init-producer-id.js';
import { Metadata } from '../../protocol/kafka/messages/metadata.js';
import { SaslAuthenticate, SaslHandshake } from '../../protocol/kafka/messages/sasl.js';
import { kafkaToken } from '../../sdk/kafka-token.js';
import { kafkaWire } from '../support/kafka-wire-client.js';
import type { AuthStack } from './auth-stack.js';
import { grantArns, invokePolicy, startAuthStack } from './auth-stack.js';

const run = promisify(execFile);
let auth: AuthStack;
let bootstrap: string;

beforeAll(async () => {
  auth = await startAuthStack(
    [
      {
        name: 'alice',
        policies: [
          invokePolicy(grantArns([...produceGrants('orders'), ...consumeGrants('orders', 'alice-group')])),
        ],
      },
      { name: 'bob', policies: [invokePolicy(grantArns(produceGrants('bobs')))] },
      // May call nothing at all, not even GET /v1/whoami.
      { name: 'mallory', policies: [] },
      { name: 'admin', policies: [invokePolicy(grantArns(adminGrants()))] },
    ],
    { kafkaPort: 0 },
  );
  bootstrap = auth.stack.kafka!.bootstrap;
  for (const [name, partitions] of [
    ['orders', 2],
    ['bobs', 1],
  ] as const)
    expect((await auth.call('admin', 'POST', '/v1/topics', { body: { name, partitions } })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await auth?.stop();
});

const tokenOf = (principal: string, options: { url?: string; expiresInSeconds?: number } = {}) =>
  kafkaToken({
    url: options.url ?? auth.stack.url,
    region: 'us-east-1',
    credentials: auth.keys[principal]!,
    ...(options.expiresInSeconds ? { expiresInSeconds: options.expiresInSeconds } : {}),
  });

const sasl = (principal: string): SASLOptions => ({
  mechanism: 'oauthbearer',
  oauthBearerProvider: async () => ({ value: (await tokenOf(principal)).value }),
});

const kafkaAs = (principal: string | undefined) =>
  new Kafka({
    brokers: [bootstrap],
    clientId: `auth-${principal ?? 'anonymous'}`,
    logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 100 },
    ...(principal ? { sasl: sasl(principal) } : {}),
  });

/** The OAUTHBEARER client response of RFC 7628 for a token. */
const bearer = (token: string) => Buffer.from(`n,,\u0001auth=Bearer ${token}\u0001\u0001`);

describe('kafkajs with SASL/OAUTHBEARER', () => {
  it('an authenticated principal produces and reads within its grants; HTTP sees the same records', async () => {
    const kafka = kafkaAs('alice');
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const sent = await producer.send({
      topic: 'orders',
      acks: -1,
      messages: Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `alice ${i}`, partition: 0 })),
    });
    expect(sent[0]!.errorCode).toBe(0);
    await producer.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets('orders');
    expect(offsets.find((p) => p.partition === 0)!.high).toBe('5');
    await admin.disconnect();
    const read = await auth.call('admin', 'GET', '/v1/topics/orders/partitions/0/records?offset=0');
    expect((read.json as { records: { value: string }[] }).records.map((r) => r.value)).toEqual(
      Array.from({ length: 5 }, (_, i) => `alice ${i}`),
    );
  });

  it('a principal gets TOPIC_AUTHORIZATION_FAILED for a topic it may not write, and cannot create topics', async () => {
    const kafka = kafkaAs('bob');
    const producer = kafka.producer();
    await producer.connect();
    await expect(
      producer.send({ topic: 'orders', acks: -1, messages: [{ value: 'not bob' }] }),
    ).rejects.toMatchObject({ cause: { type: 'TOPIC_AUTHORIZATION_FAILED' } });
    // Its own topic works on the same connection.
    const ok = await producer.send({ topic: 'bobs', acks: -1, messages: [{ value: 'bob' }] });
    expect(ok[0]!.errorCode).toBe(0);
    await producer.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    const refused = (await admin
      .createTopics({ topics: [{ topic: 'bob-made' }] })
      .catch((e: unknown) => e)) as {
      errors?: { type: string }[];
    };
    expect(refused.errors?.map((e) => e.type)).toEqual([
      expect.stringMatching(/^(CLUSTER|TOPIC)_AUTHORIZATION_FAILED$/),
    ]);
    await admin.disconnect();
    expect((await auth.call('admin', 'GET', '/v1/topics/bob-made')).status).toBe(404);
    // Nothing of bob's reached orders.
    const read = await auth.call('admin', 'GET', '/v1/topics/orders/partitions/1/records?offset=0');
    expect((read.json as { records: unknown[] }).records).toEqual([]);
  });

  it('a group consumer reads through its group grant; another principal is refused the group', async () => {
    const consumer = kafkaAs('alice').consumer({ groupId: 'alice-group', sessionTimeout: 10_000 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    const seen: string[] = [];
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message.value!.toString());
      },
    });
    await expect.poll(() => seen.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(5);
    await consumer.disconnect();
    const intruder = kafkaAs('bob').consumer({ groupId: 'alice-group' });
    await intruder.connect();
    await intruder.subscribe({ topic: 'bobs' });
    const crashed = new Promise<unknown>((resolve) => intruder.on(intruder.events.CRASH, (e) => resolve(e)));
    void intruder.run({ eachMessage: async () => undefined }).catch(() => undefined);
    expect(JSON.stringify(await crashed)).toMatch(/GROUP_AUTHORIZATION_FAILED|not authorized/i);
    await intruder.disconnect();
  }, 60_000);

  it('an unauthenticated client is refused', async () => {
    const admin = kafkaAs(undefined).admin();
    await expect(admin.connect().then(() => admin.listTopics())).rejects.toThrow();
    await admin.disconnect();
    await expect(kafkaAs('mallory').admin().connect()).rejects.toThrow(/SASL|authenticat/i);
  });
});

describe('the SASL exchange on the wire', () => {
  it('before authenticating, requests are answered SASL_AUTHENTICATION_FAILED or the connection closes', async () => {
    const wire = await kafkaWire(bootstrap);
    const answer = await wire.send(InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 1000 });
    expect(answer.errorCode).toBe(ERROR.SASL_AUTHENTICATION_FAILED);
    await expect(wire.send(Metadata, 12, { topics: null })).rejects.toThrow(/closed/);
    wire.close();
  });

  it('refuses forged, tampered, foreign and expired tokens, and closes the connection after', async () => {
    const alice = (await tokenOf('alice')).value;
    const url = Buffer.from(alice, 'base64url').toString();
    const tampered = Buffer.from(
      url.replace(/X-Amz-Signature=([0-9a-f])/, (_, c: string) => `X-Amz-Signature=${c === 'a' ? 'b' : 'a'}`),
    ).toString('base64url');
    // The same signature over another principal's key id: the signature no longer matches.
    const renamed = Buffer.from(
      url.replace(auth.keys['alice']!.accessKeyId, auth.keys['admin']!.accessKeyId),
    ).toString('base64url');
    // A URL elsewhere: never called (the gateway calls only its own Sluice).
    const foreign = (await tokenOf('alice', { url: 'http://169.254.169.254:80' })).value;
    const notUrl = Buffer.from('hello').toString('base64url');
    const cases: [string, Buffer, RegExp][] = [
      ['tampered signature', bearer(tampered), /did not accept/],
      ['other key id', bearer(renamed), /did not accept/],
      ['foreign URL', bearer(foreign), /this gateway's Sluice/],
      ['not a URL', bearer(notUrl), /not a presigned/],
      ['no principal may whoami', bearer((await tokenOf('mallory')).value), /did not accept/],
      ['not OAUTHBEARER', Buffer.from('\u0000alice\u0000secret'), /RFC 7628/],
      [
        'authzid of another',
        Buffer.from(`n,a=arn:aws:iam::111122223333:user/admin,\u0001auth=Bearer ${alice}\u0001\u0001`),
        /may not act as/,
      ],
    ];
    for (const [name, bytes, message] of cases) {
      const wire = await kafkaWire(bootstrap);
      expect((await wire.send(SaslHandshake, 1, { mechanism: 'OAUTHBEARER' })).errorCode, name).toBe(0);
      const answer = await wire.send(SaslAuthenticate, 2, { authBytes: bytes });
      expect(answer.errorCode, name).toBe(ERROR.SASL_AUTHENTICATION_FAILED);
      expect(answer.errorMessage, name).toMatch(message);
      await expect(wire.send(Metadata, 12, { topics: null }), name).rejects.toThrow(/closed/);
      wire.close();
    }
  });

  it('a valid token opens a session as long as the token lives; other mechanisms are refused', async () => {
    const wire = await kafkaWire(bootstrap);
    const plain = await wire.send(SaslHandshake, 1, { mechanism: 'PLAIN' });
    expect(plain).toMatchObject({ errorCode: ERROR.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['OAUTHBEARER'] });
    expect((await wire.send(SaslHandshake, 1, { mechanism: 'OAUTHBEARER' })).errorCode).toBe(0);
    const token = await tokenOf('alice', { expiresInSeconds: 60 });
    const answer = await wire.send(SaslAuthenticate, 2, { authBytes: bearer(token.value) });
    expect(answer.errorCode).toBe(0);
    expect(answer.sessionLifetimeMs).toBeGreaterThan(50_000);
    expect(answer.sessionLifetimeMs).toBeLessThanOrEqual(60_000);
    const metadata = await wire.send(Metadata, 12, {
      topics: [
        { topicId: '00000000000000000000000000000000', name: 'orders' },
        { topicId: '00000000000000000000000000000000', name: 'bobs' },
      ],
    });
    expect(metadata.topics.map((t: { name: string; errorCode: number }) => [t.name, t.errorCode])).toEqual([
      ['orders', 0],
      ['bobs', ERROR.TOPIC_AUTHORIZATION_FAILED],
    ]);
    // All topics: those alice may describe (she may not list them, so none), never a closed connection.
    expect((await wire.send(Metadata, 12, { topics: null })).topics).toEqual([]);
    // Re-authenticating as someone else is refused (KIP-368 keeps the principal).
    expect((await wire.send(SaslHandshake, 1, { mechanism: 'OAUTHBEARER' })).errorCode).toBe(0);
    const other = await wire.send(SaslAuthenticate, 2, { authBytes: bearer((await tokenOf('bob')).value) });
    expect(other.errorCode).toBe(ERROR.SASL_AUTHENTICATION_FAILED);
    wire.close();
  });
});

describe('the SASL session', () => {
  it('closes a connection that sends anything between SaslHandshake and SaslAuthenticate', async () => {
    const wire = await kafkaWire(bootstrap);
    expect((await wire.send(SaslHandshake, 1, { mechanism: 'OAUTHBEARER' })).errorCode).toBe(0);
    await expect(
      wire.send(InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 1000 }),
    ).rejects.toThrow(/closed/);
    wire.close();
  });

  it('ends with its token: a request after session_lifetime_ms closes the connection (KIP-368)', async () => {
    const wire = await kafkaWire(bootstrap);
    expect((await wire.send(SaslHandshake, 1, { mechanism: 'OAUTHBEARER' })).errorCode).toBe(0);
    const token = await tokenOf('alice', { expiresInSeconds: 2 });
    const answer = await wire.send(SaslAuthenticate, 2, { authBytes: bearer(token.value) });
    expect(answer.errorCode).toBe(0);
    expect(answer.sessionLifetimeMs).toBeLessThanOrEqual(2_000);
    const orders = [{ topicId: '00000000000000000000000000000000', name: 'orders' }];
    expect((await wire.send(Metadata, 12, { topics: orders })).topics[0].errorCode).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, token.expiresAt - Date.now()) + 200));
    await expect(wire.send(Metadata, 12, { topics: orders })).rejects.toThrow(/closed/);
    wire.close();
  });
});

describe('the delegation header at the HTTP edge', () => {
  it('a client cannot name another principal: only a signer allowed CLUSTER_ACTION may', async () => {
    const before = await auth.snapshot();
    const asAdmin = await auth.call('alice', 'POST', '/v1/topics', {
      body: { name: 'forged', partitions: 1 },
      headers: { [ON_BEHALF_OF_HEADER]: 'arn:aws:iam::111122223333:user/admin' },
    });
    expect(asAdmin.status).toBe(403);
    expect((asAdmin.json as { error: { code: string } }).error.code).toBe('CLUSTER_AUTHORIZATION_FAILED');
    // admin may do anything itself, but even admin acting for bob gets only bob's rights.
    const forBob = await auth.call('admin', 'POST', '/v1/topics', {
      body: { name: 'forged', partitions: 1 },
      headers: { [ON_BEHALF_OF_HEADER]: 'arn:aws:iam::111122223333:user/bob' },
    });
    expect(forBob.status).toBe(403);
    expect((forBob.json as { error: { code: string } }).error.code).toBe('CLUSTER_AUTHORIZATION_FAILED');
    const after = await auth.snapshot();
    expect(after.items).toEqual(before.items);
  });
});

describe('confluent-kafka-python (librdkafka) with oauth_cb', () => {
  it('produces as the principal its token proves, and is refused what that principal may not do', async () => {
    const { stdout } = await run(
      '/usr/bin/python3',
      ['test/integration/kafka-clients/confluent_oauth.py', bootstrap, auth.stack.url],
      {
        timeout: 90_000,
        env: {
          ...process.env,
          AWS_ACCESS_KEY_ID: auth.keys['alice']!.accessKeyId,
          AWS_SECRET_ACCESS_KEY: auth.keys['alice']!.secretAccessKey,
          AWS_REGION: 'us-east-1',
        },
      },
    );
    const result = JSON.parse(stdout) as { delivered: (string | null)[]; refused: (string | null)[] };
    expect(result.delivered).toEqual([null, null, null]);
    expect(result.refused.every((e) => e !== null && /TOPIC_AUTHORIZATION_FAILED/.test(e))).toBe(true);
    const read = await auth.call('admin', 'GET', '/v1/topics/orders/partitions/1/records?offset=0');
    expect((read.json as { records: { value: string }[] }).records.map((r) => r.value)).toEqual([
      'librdkafka 0',
      'librdkafka 1',
      'librdkafka 2',
    ]);
  }, 120_000);
});
