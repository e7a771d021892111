/**
 * kafkajs's transactional producer and `readUncommitted: false` consumer (clients this project did not
 * write) through the local stack's Kafka gateway:
 * - an aborted transaction is invisible to a read_committed consumer and visible to a read_uncommitted
 *   one, a committed one visible to both;
 * - a zombie (same transactional.id, older epoch) is fenced: its sends and its commit fail, and nothing it
 *   wrote is ever visible to read_committed readers;
 * - a consume-transform-produce application (gateway-txn/app.ts) in its own process, SIGKILLed three times
 *   at random points and started again, ends with its output exactly once: every input's output once, in
 *   input order per partition, and the group's committed offsets at the input's end.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import type { Consumer, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LocalStack } from '../../local/stack.js';
import { startLocalStack } from '../../local/stack.js';
import type { Proc } from '../support/processes.js';
import { launch, until } from '../support/processes.js';
import { call } from './stack.js';
import type { Message } from '../../protocol/kafka/codec.js';
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { ApiVersions } from '../../protocol/kafka/messages/api-versions.js';
import { Fetch } from '../../protocol/kafka/messages/fetch.js';
import { InitProducerId } from '../../protocol/kafka/messages/init-producer-id.js';
import { ListOffsets } from '../../protocol/kafka/messages/list-offsets.js';
import {
  AddOffsetsToTxn,
  AddPartitionsToTxn,
  EndTxn,
  TxnOffsetCommit,
} from '../../protocol/kafka/messages/transactions.js';
import { KafkaWire } from '../support/kafka-wire.js';

const run = promisify(execFile);
const INPUTS = Number(process.env['GWTXN_INPUTS'] ?? 300);
const INPUT_PARTITIONS = 3;

let stack: LocalStack;
let kafka: Kafka;
let bootstrap: string;
const previousSessionTimeout = process.env['SLUICE_GROUP_SESSION_TIMEOUT_MS'];

beforeAll(async () => {
  const suffix = randomUUID().slice(0, 8);
  // A killed member's partitions move after the session timeout: short, so the test runs in seconds.
  process.env['SLUICE_GROUP_SESSION_TIMEOUT_MS'] = '6000';
  stack = await startLocalStack({
    port: 0,
    kafkaPort: 0,
    maintenanceIntervalMs: 0,
    env: {
      ...process.env,
      AWS_ENDPOINT_URL_S3: inject('s3Endpoint'),
      AWS_ENDPOINT_URL_DYNAMODB: inject('dynamodbEndpoint'),
      SLUICE_TABLE_NAME: `gwtxn-${suffix}`,
      SLUICE_BUCKETS: `gwtxn-${suffix}`,
      SLUICE_SEGMENT_BUCKET: `gwtxn-${suffix}-segments`,
    },
  });
  bootstrap = stack.kafka!.bootstrap;
  kafka = new Kafka({
    clientId: 'gwtxn',
    brokers: [bootstrap],
    logLevel: process.env['GWTXN_DEBUG'] ? logLevel.WARN : logLevel.NOTHING,
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (previousSessionTimeout === undefined) delete process.env['SLUICE_GROUP_SESSION_TIMEOUT_MS'];
  else process.env['SLUICE_GROUP_SESSION_TIMEOUT_MS'] = previousSessionTimeout;
});

const createTopic = async (name: string, partitions: number) =>
  expect((await call(stack.url, 'POST', '/v1/topics', { name, partitions })).status).toBe(201);

const transactional = (transactionalId: string): Producer =>
  kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, retry: { retries: 3 } });

/** What a kafkajs consumer at this isolation level reads from the topic's start: `count` values, and any more a second later. */
const readAll = async (topic: string, readUncommitted: boolean, count: number): Promise<string[]> => {
  const consumer: Consumer = kafka.consumer({ groupId: `read-${randomUUID()}`, readUncommitted });
  const values: string[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value!.toString()) });
  try {
    await until(
      `${count} records for a ${readUncommitted ? 'read_uncommitted' : 'read_committed'} consumer`,
      () => values.length >= count,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 1_000));
  } finally {
    await consumer.disconnect();
  }
  return values.sort();
};

/** The read_committed records of a partition, over the HTTP API. */
const committedValues = async (topic: string, partition: number): Promise<string[]> => {
  const out: string[] = [];
  let offset = 0;
  for (;;) {
    const reply = await call(
      stack.url,
      'GET',
      `/v1/topics/${topic}/partitions/${partition}/records?offset=${offset}&isolationLevel=read_committed`,
    );
    expect(reply.status).toBe(200);
    const { records, nextOffset, lastStableOffset } = reply.json as {
      records: { value: string }[];
      nextOffset: number;
      lastStableOffset: number;
    };
    out.push(...records.map((r) => r.value));
    if (nextOffset >= lastStableOffset) return out;
    offset = nextOffset;
  }
};

describe('kafkajs transactions through the Kafka gateway', () => {
  it('an aborted transaction is invisible to read_committed and visible to read_uncommitted', async () => {
    await createTopic('txn-vis', 2);
    const producer = transactional(`vis-${randomUUID()}`);
    await producer.connect();
    const aborted = await producer.transaction();
    await aborted.send({
      topic: 'txn-vis',
      messages: [
        { value: 'aborted-0', partition: 0 },
        { value: 'aborted-1', partition: 1 },
      ],
    });
    await aborted.abort();
    const committed = await producer.transaction();
    await committed.send({
      topic: 'txn-vis',
      messages: [
        { value: 'committed-0', partition: 0 },
        { value: 'committed-1', partition: 1 },
      ],
    });
    await committed.commit();
    // A second transaction at the same epoch (kafkajs's EndTxn v1 cannot learn a new one).
    const again = await producer.transaction();
    await again.send({ topic: 'txn-vis', messages: [{ value: 'last', partition: 0 }] });
    await again.commit();
    await producer.disconnect();

    expect(await readAll('txn-vis', false, 3)).toEqual(['committed-0', 'committed-1', 'last']);
    expect(await readAll('txn-vis', true, 5)).toEqual([
      'aborted-0',
      'aborted-1',
      'committed-0',
      'committed-1',
      'last',
    ]);
  });

  it('a zombie producer (same transactional.id, older epoch) is fenced', async () => {
    await createTopic('txn-zombie', 1);
    const id = `zombie-${randomUUID()}`;
    const zombie = transactional(id);
    await zombie.connect();
    const old = await zombie.transaction();
    await old.send({ topic: 'txn-zombie', messages: [{ value: 'zombie-before' }] });

    const fresh = transactional(id);
    await fresh.connect();
    // kafkajs's first transaction() calls InitProducerId: a new epoch, the zombie's transaction aborted.
    const txn = await fresh.transaction();
    const sendError = await old.send({ topic: 'txn-zombie', messages: [{ value: 'zombie-after' }] }).then(
      () => null,
      (e: Error & { type?: string }) => e.type ?? e.name,
    );
    expect(sendError).toBe('INVALID_PRODUCER_EPOCH');
    const commitError = await old.commit().then(
      () => null,
      (e: Error & { type?: string }) => e.type ?? e.name,
    );
    expect(commitError).toMatch(/INVALID_PRODUCER_EPOCH|KafkaJSNonRetriableError/);

    await txn.send({ topic: 'txn-zombie', messages: [{ value: 'fresh' }] });
    await txn.commit();
    await fresh.disconnect();
    await zombie.disconnect().catch(() => undefined);
    expect(await committedValues('txn-zombie', 0)).toEqual(['fresh']);
    expect(await readAll('txn-zombie', false, 1)).toEqual(['fresh']);
  });
});

describe('a kafkajs consume-transform-produce loop SIGKILLed three times', () => {
  it('ends with its output exactly once', async () => {
    const suffix = randomUUID().slice(0, 8);
    const [input, output, group, id] = [
      `ctp-in-${suffix}`,
      `ctp-out-${suffix}`,
      `ctp-${suffix}`,
      `ctp-${suffix}`,
    ];
    await createTopic(input, INPUT_PARTITIONS);
    await createTopic(output, INPUT_PARTITIONS);
    // The inputs come in four chunks, one before each run, so every run has work when it is killed.
    const CHUNK = Math.ceil(INPUTS / 4);
    const producer = kafka.producer();
    await producer.connect();
    let produced = 0;
    const produceChunk = async () => {
      const end = Math.min(INPUTS, produced + CHUNK);
      for (; produced < end; produced += Math.min(50, end - produced)) {
        const from = produced;
        await producer.send({
          topic: input,
          messages: Array.from({ length: Math.min(50, end - from) }, (_, k) => ({
            key: `k${(from + k) % 17}`,
            value: String(from + k),
          })),
        });
      }
    };

    const progress = (p: Proc): number =>
      Math.max(
        0,
        ...p.lines
          .map((l) => /^committed (\d+)$/.exec(l)?.[1])
          .filter(Boolean)
          .map(Number),
      );
    const env = { ...process.env, NODE_NO_WARNINGS: '1' };
    const args = [bootstrap, input, output, group, id];
    let done = 0;
    for (let kill = 0; kill < 3; kill++) {
      await produceChunk();
      const app = launch('test/integration/gateway-txn/app.ts', args, env);
      // Killed at a random point once it has committed something (so some kills land mid-transaction).
      const target = 1 + Math.floor(Math.random() * Math.max(1, CHUNK / 2));
      await until(`the app's commits (kill ${kill + 1})`, () => progress(app) >= target, 90_000);
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
      app.child.kill('SIGKILL');
      await app.exited;
      done += progress(app);
    }
    await produceChunk();
    await producer.disconnect();
    expect(produced).toBe(INPUTS);
    const last = launch('test/integration/gateway-txn/app.ts', args, env);
    try {
      await until(
        'every input transformed',
        async () => {
          let n = 0;
          for (let p = 0; p < INPUT_PARTITIONS; p++) n += (await committedValues(output, p)).length;
          return n >= INPUTS;
        },
        120_000,
      );
    } finally {
      last.child.kill('SIGKILL');
      await last.exited;
    }

    const outputs: string[] = [];
    for (let p = 0; p < INPUT_PARTITIONS; p++) outputs.push(...(await committedValues(output, p)));
    const counts = new Map<string, number>();
    for (const v of outputs) counts.set(v, (counts.get(v) ?? 0) + 1);
    const duplicates = [...counts].filter(([, n]) => n > 1).map(([v]) => v);
    const missing = Array.from({ length: INPUTS }, (_, i) => `out-${i}`).filter((v) => !counts.has(v));
    expect({ duplicates, missing, total: outputs.length }).toEqual({
      duplicates: [],
      missing: [],
      total: INPUTS,
    });
    // In input order: a key's inputs sit on one input partition and its outputs on one output partition.
    for (let p = 0; p < INPUT_PARTITIONS; p++) {
      const byKey = new Map<number, number[]>();
      for (const v of await committedValues(output, p)) {
        const n = Number(v.slice('out-'.length));
        byKey.set(n % 17, [...(byKey.get(n % 17) ?? []), n]);
      }
      for (const list of byKey.values()) expect(list).toEqual([...list].sort((a, b) => a - b));
    }
    // Before the last run the killed instances had committed some (their answers may have been lost).
    expect(done).toBeGreaterThan(0);
    // The group's committed offsets are the input's end (the last transaction's sendOffsets).
    const reply = await call(stack.url, 'GET', `/v1/groups/${group}/offsets`);
    expect(reply.status).toBe(200);
    const committed = (reply.json as { offsets: { topic: string; partition: number; offset: number }[] })
      .offsets;
    const ends = await Promise.all(
      Array.from(
        { length: INPUT_PARTITIONS },
        async (_, p) =>
          (await call(stack.url, 'GET', `/v1/topics/${input}/partitions/${p}/offsets?at=latest`)).json
            .offset as number,
      ),
    );
    expect(
      committed
        .filter((o) => o.topic === input)
        .sort((a, b) => a.partition - b.partition)
        .map((o) => o.offset),
    ).toEqual(ends);
  }, 400_000);
});

describe('confluent-kafka-python (librdkafka) transactions through the Kafka gateway', () => {
  it('aborts, commits with a group offset, and is fenced by a second instance', async () => {
    await createTopic('txn-rdk', 2);
    const { stdout } = await run(
      '/usr/bin/python3',
      [
        'test/integration/kafka-clients/confluent_transactions.py',
        bootstrap,
        'txn-rdk',
        'rdk-group',
        `rdk-${randomUUID()}`,
      ],
      { timeout: 120_000 },
    );
    const result = JSON.parse(stdout) as {
      readCommitted: string[];
      readUncommitted: string[];
      committedOffsets: number[];
      zombieError: string | null;
    };
    expect(result.readCommitted).toEqual(['committed-0', 'committed-1', 'fresh', 'last']);
    expect(result.readUncommitted).toEqual([
      'aborted-0',
      'aborted-1',
      'committed-0',
      'committed-1',
      'fresh',
      'last',
      'zombie',
    ]);
    expect(result.committedOffsets).toEqual([7]);
    expect(result.zombieError).toMatch(/FENCED|INVALID_PRODUCER_EPOCH/);
  }, 150_000);
});

describe('the transaction APIs on the wire: hostile and lying requests get Kafka error codes', () => {
  let wire: KafkaWire;
  beforeAll(async () => {
    await createTopic('txn-wire', 1);
    wire = await KafkaWire.open(Number(bootstrap.split(':')[1]));
  });
  afterAll(() => wire?.end());

  /** The connection still serves after each refusal. */
  const stillServes = async () =>
    expect(
      (await wire.request(ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' })).body[
        'errorCode'
      ],
    ).toBe(ERROR.NONE);
  const init = async (transactionalId: string | null, transactionTimeoutMs = 60_000, version = 1) =>
    (await wire.request(InitProducerId, version, { transactionalId, transactionTimeoutMs })).body;
  const addPartitions = async (
    transactionalId: string,
    producerId: number,
    producerEpoch: number,
    topics: Message[],
    version = 1,
  ) => {
    const body = (
      await wire.request(AddPartitionsToTxn, version, {
        v3AndBelowTransactionalId: transactionalId,
        v3AndBelowProducerId: producerId,
        v3AndBelowProducerEpoch: producerEpoch,
        v3AndBelowTopics: topics,
      })
    ).body;
    return (body['resultsByTopicV3AndBelow'] as Message[]).flatMap((t) =>
      (t['resultsByPartition'] as Message[]).map((p) => p['partitionErrorCode']),
    );
  };
  const endTxn = async (transactionalId: string, producerId: number, producerEpoch: number, version = 1) =>
    (await wire.request(EndTxn, version, { transactionalId, producerId, producerEpoch, committed: true }))
      .body['errorCode'];

  it('InitProducerId: a bad transactional.id or timeout is refused', async () => {
    expect((await init(''))['errorCode']).toBe(ERROR.INVALID_REQUEST);
    expect((await init('x'.repeat(250)))['errorCode']).toBe(ERROR.INVALID_REQUEST);
    expect((await init('bad-timeout', 0))['errorCode']).toBe(ERROR.INVALID_TRANSACTION_TIMEOUT);
    expect((await init('bad-timeout', 2_000_000_000))['errorCode']).toBe(ERROR.INVALID_TRANSACTION_TIMEOUT);
    await stillServes();
  });

  it('EndTxn without a transaction, an unknown producer id, wrong epochs', async () => {
    const id = `wire-${randomUUID()}`;
    expect(await endTxn(`never-${randomUUID()}`, 1, 0)).toBe(ERROR.INVALID_PRODUCER_ID_MAPPING);
    const { producerId, producerEpoch } = (await init(id)) as { producerId: number; producerEpoch: number };
    expect(await endTxn(id, producerId, producerEpoch)).toBe(ERROR.INVALID_TXN_STATE);
    expect(await endTxn(id, producerId + 1000, producerEpoch)).toBe(ERROR.INVALID_PRODUCER_ID_MAPPING);
    const topic = [{ name: 'txn-wire', partitions: [0] }];
    expect(await addPartitions(id, producerId + 1000, producerEpoch, topic)).toEqual([
      ERROR.INVALID_PRODUCER_ID_MAPPING,
    ]);
    expect(await addPartitions(id, producerId, producerEpoch + 1, topic)).toEqual([
      ERROR.INVALID_PRODUCER_EPOCH,
    ]);
    // A new instance fences this one: v0-v1 know the fence as INVALID_PRODUCER_EPOCH, v2+ as PRODUCER_FENCED.
    const fresh = (await init(id)) as { producerId: number; producerEpoch: number };
    expect(fresh.producerEpoch).toBeGreaterThan(producerEpoch);
    expect(await addPartitions(id, producerId, producerEpoch, topic, 1)).toEqual([
      ERROR.INVALID_PRODUCER_EPOCH,
    ]);
    expect(await addPartitions(id, producerId, producerEpoch, topic, 3)).toEqual([ERROR.PRODUCER_FENCED]);
    expect(await endTxn(id, producerId, producerEpoch, 3)).toBe(ERROR.PRODUCER_FENCED);
    const offsets = (
      await wire.request(AddOffsetsToTxn, 1, { transactionalId: id, producerId, producerEpoch, groupId: 'g' })
    ).body['errorCode'];
    expect(offsets).toBe(ERROR.INVALID_PRODUCER_EPOCH);
    // TxnOffsetCommit before AddOffsetsToTxn: INVALID_TXN_STATE, per partition.
    const commit = await wire.request(TxnOffsetCommit, 3, {
      transactionalId: id,
      groupId: 'g',
      producerId: fresh.producerId,
      producerEpoch: fresh.producerEpoch,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: 'txn-wire',
          partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: null }],
        },
      ],
    });
    expect(((commit.body['topics'] as Message[])[0]!['partitions'] as Message[])[0]!['errorCode']).toBe(
      ERROR.INVALID_TXN_STATE,
    );
    await stillServes();
  });

  it('unknown topics, negative partitions and huge arrays are refused without storing anything', async () => {
    const id = `huge-${randomUUID()}`;
    const { producerId, producerEpoch } = (await init(id)) as { producerId: number; producerEpoch: number };
    expect(
      await addPartitions(id, producerId, producerEpoch, [{ name: 'no-such-topic', partitions: [0] }]),
    ).toEqual([ERROR.UNKNOWN_TOPIC_OR_PARTITION]);
    expect(
      await addPartitions(id, producerId, producerEpoch, [{ name: 'txn-wire', partitions: [0, -1] }]),
    ).toEqual([ERROR.OPERATION_NOT_ATTEMPTED, ERROR.UNKNOWN_TOPIC_OR_PARTITION]);
    const many = Array.from({ length: 5_000 }, (_, i) => i);
    const codes = await addPartitions(id, producerId, producerEpoch, [
      { name: 'txn-wire', partitions: many },
    ]);
    expect(codes.length).toBe(5_000);
    expect(new Set(codes)).toEqual(new Set([ERROR.INVALID_REQUEST]));
    const offsets = Array.from({ length: 2_000 }, (_, i) => ({
      partitionIndex: i,
      committedOffset: 1,
      committedMetadata: null,
    }));
    const commit = await wire.request(TxnOffsetCommit, 0, {
      transactionalId: id,
      groupId: 'g',
      producerId,
      producerEpoch,
      topics: [{ name: 'txn-wire', partitions: offsets }],
    });
    const commitCodes = ((commit.body['topics'] as Message[])[0]!['partitions'] as Message[]).map(
      (p) => p['errorCode'],
    );
    expect(new Set(commitCodes)).toEqual(new Set([ERROR.INVALID_REQUEST]));
    // Nothing was stored: the transaction never began.
    const described = await call(stack.url, 'GET', `/v1/transactions/${id}`);
    expect([described.json.state, described.json.partitions]).toEqual(['Empty', []]);
    // AddPartitionsToTxn v4+ is the brokers' verification call: UNSUPPORTED_VERSION, as Kafka answers a client.
    const v4 = await wire.request(AddPartitionsToTxn, 4, {
      transactions: [{ transactionalId: id, producerId, producerEpoch, verifyOnly: false, topics: [] }],
    });
    expect(v4.body['errorCode']).toBe(ERROR.UNSUPPORTED_VERSION);
    await stillServes();
  });

  it('read_committed: ListOffsets latest is the LSO, Fetch stops there and lists the aborted transaction', async () => {
    await createTopic('txn-lso', 1);
    const plain = kafka.producer();
    await plain.connect();
    await plain.send({ topic: 'txn-lso', messages: [{ value: 'before' }] });
    await plain.disconnect();
    const producer = transactional(`lso-${randomUUID()}`);
    await producer.connect();
    const txn = await producer.transaction();
    await txn.send({ topic: 'txn-lso', messages: [{ value: 'open-1' }, { value: 'open-2' }] });

    const latest = async (isolationLevel: number) => {
      const body = (
        await wire.request(ListOffsets, 5, {
          replicaId: -1,
          isolationLevel,
          topics: [
            { name: 'txn-lso', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1 }] },
          ],
        })
      ).body;
      return ((body['topics'] as Message[])[0]!['partitions'] as Message[])[0]!['offset'];
    };
    const fetch = async (isolationLevel: number) => {
      const body = (
        await wire.request(Fetch, 11, {
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 20,
          isolationLevel,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [
            {
              topic: 'txn-lso',
              partitions: [
                {
                  partition: 0,
                  currentLeaderEpoch: -1,
                  fetchOffset: 0,
                  logStartOffset: -1,
                  partitionMaxBytes: 1 << 20,
                },
              ],
            },
          ],
          forgottenTopicsData: [],
          rackId: '',
        })
      ).body;
      const p = ((body['responses'] as Message[])[0]!['partitions'] as Message[])[0]!;
      return {
        highWatermark: p['highWatermark'],
        lastStableOffset: p['lastStableOffset'],
        abortedTransactions: p['abortedTransactions'],
        bytes: (p['records'] as Uint8Array | null)?.length ?? 0,
      };
    };
    expect([await latest(0), await latest(1)]).toEqual([3, 1]);
    const open = await fetch(1);
    expect([open.highWatermark, open.lastStableOffset, open.abortedTransactions]).toEqual([3, 1, []]);
    expect((await fetch(0)).bytes).toBeGreaterThan(open.bytes);
    await txn.abort();
    await producer.disconnect();
    // The ABORT marker is offset 3: LSO = HW = 4, and the transaction that began at 1 is listed.
    expect([await latest(0), await latest(1)]).toEqual([4, 4]);
    const ended = await fetch(1);
    expect([ended.highWatermark, ended.lastStableOffset]).toEqual([4, 4]);
    expect((ended.abortedTransactions as Message[]).map((a) => a['firstOffset'])).toEqual([1]);
    expect((await fetch(0)).abortedTransactions).toBeNull();
  });
});
