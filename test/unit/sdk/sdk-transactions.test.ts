/**
 * The SDK's transactional producer and read_committed consumer against the real routes and core
 * (in-process, memory stores): Kafka's commit/abort visibility, fencing as a fatal error, abortable
 * errors, offsets committed with the transaction, a commit whose answer was lost, and misuse.
 */
import { describe, expect, it } from 'vitest';
import { partitionForKey } from '../../../protocol/partitioner.js';
import { SluiceClient } from '../../../sdk/client.js';
import { SluiceError } from '../../../sdk/errors.js';
import type { Consumer } from '../../../sdk/consumer.js';
import type { FetchLike } from '../../../sdk/transport.js';
import { routerFetch } from '../../support/router-fetch.js';
import { memorySluice } from '../../support/log-support.js';

const setup = async (partitions = 2, wrap: (f: FetchLike) => FetchLike = (f) => f) => {
  const s = memorySluice();
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions })).status).toBe(201);
  const fetch = wrap(routerFetch(s.sluice.router()));
  const client = new SluiceClient({
    url: 'http://sluice.invalid',
    fetch,
    retry: { retries: 3, initialRetryTimeMs: 1, sleep: async () => undefined },
  });
  return { ...s, client };
};

/** Every record value of every partition a consumer reads now (no wait). */
const readAll = async (consumer: Consumer, partitions = 2) => {
  const answers = await consumer.fetchMany(
    Array.from({ length: partitions }, (_, partition) => ({ topic: 't', partition, offset: 0 })),
  );
  return answers.flatMap((a) => {
    if ('error' in a) throw a.error;
    return a.records.map((r) => `${a.partition}:${Buffer.from(r.value!).toString()}`);
  });
};

const caught = async (p: Promise<unknown> | (() => unknown)): Promise<SluiceError> => {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (error) {
    if (error instanceof SluiceError) return error;
    throw error;
  }
  throw new Error('expected a SluiceError');
};

describe('the SDK transactional producer', () => {
  it('makes a transaction visible to read_committed readers only when it commits, on every partition', async () => {
    const { client } = await setup();
    const producer = client.producer({ transactionalId: 'app' });
    const committed = client.consumer({ isolationLevel: 'read_committed' });
    const uncommitted = client.consumer();
    await producer.initTransactions();
    expect(producer.transactionState).toBe('READY');
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ value: 'a' }, { value: 'b' }]);
    await producer.sendBatch('t', 1, [{ value: 'c' }]);
    // Open: read_committed stops at the LSO (the transaction's first offset); read_uncommitted sees it.
    expect(await readAll(committed)).toEqual([]);
    const [open] = await committed.fetchMany([{ topic: 't', partition: 0, offset: 0 }]);
    expect(open).toMatchObject({ lastStableOffset: 0, highWatermark: 2 });
    expect(await readAll(uncommitted)).toEqual(['0:a', '0:b', '1:c']);
    await producer.commitTransaction();
    expect(producer.transactionState).toBe('READY');
    expect(await readAll(committed)).toEqual(['0:a', '0:b', '1:c']);
    // The COMMIT markers are in the log (offset 2 of partition 0) and are never records, in either level.
    expect(await readAll(uncommitted)).toEqual(['0:a', '0:b', '1:c']);
    const [after] = await committed.fetchMany([{ topic: 't', partition: 0, offset: 0 }]);
    expect(after).toMatchObject({ lastStableOffset: 3, highWatermark: 3, nextOffset: 3 });
    // The next transaction runs under the epoch EndTxn answered (KIP-890), its sequences from 0.
    const epoch = producer.producerIdentity!.producerEpoch;
    expect(epoch).toBe(1);
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ value: 'd' }]);
    await producer.commitTransaction();
    expect(await readAll(committed)).toEqual(['0:a', '0:b', '0:d', '1:c']);
  });

  it('adds the partitions of concurrent first sends in one AddPartitionsToTxn, as Kafka batches them', async () => {
    const calls: string[] = [];
    const spy =
      (inner: FetchLike): FetchLike =>
      async (input, init) => {
        const url = new URL(String(input));
        if (url.pathname.startsWith('/v1/transactions/')) calls.push(`${url.pathname} ${String(init.body)}`);
        return inner(input, init);
      };
    const { client } = await setup(4, spy);
    const producer = client.producer({ transactionalId: 'app' });
    await producer.initTransactions();
    producer.beginTransaction();
    await Promise.all([0, 1, 2, 3].map((p) => producer.sendBatch('t', p, [{ value: `v${p}` }])));
    await producer.sendBatch('t', 2, [{ value: 'again' }]);
    const adds = calls.filter((c) => c.startsWith('/v1/transactions/app/partitions'));
    expect(adds).toHaveLength(1);
    expect(JSON.parse(adds[0]!.split(' ').slice(1).join(' ')).topics).toEqual([
      { topic: 't', partitions: [0, 1, 2, 3] },
    ]);
    await producer.commitTransaction();
    expect(await readAll(client.consumer({ isolationLevel: 'read_committed' }), 4)).toEqual([
      '0:v0',
      '1:v1',
      '2:v2',
      '2:again',
      '3:v3',
    ]);
  });

  it('drops an aborted transaction for read_committed readers, across partitions, and goes on', async () => {
    const { client } = await setup();
    const producer = client.producer({ transactionalId: 'app' });
    const committed = client.consumer({ isolationLevel: 'read_committed' });
    await producer.initTransactions();
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ value: 'x' }]);
    await producer.sendBatch('t', 1, [{ value: 'y' }]);
    await producer.abortTransaction();
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ value: 'z' }]);
    await producer.commitTransaction();
    expect(await readAll(committed)).toEqual(['0:z']);
    expect(await readAll(client.consumer())).toEqual(['0:x', '0:z', '1:y']);
  });

  it('partitions send() as Kafka does inside a transaction and writes transactional batches', async () => {
    const { client, http } = await setup(3);
    const producer = client.producer({ transactionalId: 'app' });
    await producer.initTransactions();
    producer.beginTransaction();
    const results = await producer.send({
      topic: 't',
      messages: [
        { key: 'k1', value: 'v1' },
        { key: 'k2', value: 'v2' },
        { key: 'k1', value: 'v3' },
        { value: 'v4', partition: 2 },
      ],
    });
    // Keyed records on the Java client's partition for the key, the pinned one where pinned.
    const k = (key: string) => partitionForKey(new TextEncoder().encode(key), 3);
    expect(results.map((r) => r.partition)).toEqual([k('k1'), k('k2'), k('k1'), 2]);
    // Each result carries its record's CreateTime, stamped when it was sent.
    expect(results.every((r) => 'timestamp' in r && r.timestamp > 1_600_000_000_000)).toBe(true);
    const k1 = results.filter((_, i) => i === 0 || i === 2).map((r) => ('offset' in r ? r.offset : -1));
    expect(k1[1]).toBe(k1[0]! + 1);
    const described = await http('GET', '/v1/transactions/app');
    expect(described.body.state).toBe('Ongoing');
    await producer.abortTransaction();
    expect(await readAll(client.consumer({ isolationLevel: 'read_committed' }), 3)).toEqual([]);
    expect((await readAll(client.consumer(), 3)).sort()).toEqual(
      [`${k('k1')}:v1`, `${k('k2')}:v2`, `${k('k1')}:v3`, '2:v4'].sort(),
    );
  });

  it('is fenced for good by a newer instance of its transactional.id, which aborts what it left open', async () => {
    const { client } = await setup();
    const zombie = client.producer({ transactionalId: 'app' });
    await zombie.initTransactions();
    zombie.beginTransaction();
    await zombie.sendBatch('t', 0, [{ value: 'zombie' }]);
    const successor = client.producer({ transactionalId: 'app' });
    await successor.initTransactions();
    // The zombie's batch to a partition already in its transaction: refused, fatally.
    const late = await caught(zombie.sendBatch('t', 0, [{ value: 'late' }]));
    expect(late.code).toBe('INVALID_PRODUCER_EPOCH');
    const commit = await caught(zombie.commitTransaction());
    expect(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH']).toContain(commit.code);
    expect(zombie.transactionState).toBe('FATAL_ERROR');
    // Every later call fails with the fatal error, abort included.
    expect((await caught(zombie.abortTransaction())).code).toBe(commit.code);
    expect((await caught(() => zombie.beginTransaction())).code).toBe(commit.code);
    successor.beginTransaction();
    await successor.sendBatch('t', 1, [{ value: 'successor' }]);
    await successor.commitTransaction();
    expect(await readAll(client.consumer({ isolationLevel: 'read_committed' }))).toEqual(['1:successor']);
  });

  it('leaves a transaction whose send failed only abortable, then runs the next one', async () => {
    const { client } = await setup();
    const producer = client.producer({ transactionalId: 'app' });
    await producer.initTransactions();
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ value: 'kept-out' }]);
    const failed = await caught(producer.sendBatch('t', 9, [{ value: 'nowhere' }]));
    expect(failed.code).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(producer.transactionState).toBe('ABORTABLE_ERROR');
    expect((await caught(producer.commitTransaction())).code).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect((await caught(producer.sendBatch('t', 0, [{ value: 'more' }]))).code).toBe(
      'UNKNOWN_TOPIC_OR_PARTITION',
    );
    await producer.abortTransaction();
    expect(producer.transactionState).toBe('READY');
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ value: 'next' }]);
    await producer.commitTransaction();
    expect(await readAll(client.consumer({ isolationLevel: 'read_committed' }))).toEqual(['0:next']);
  });

  it("commits a group's offsets with the transaction, and only if it commits", async () => {
    const { client, http } = await setup();
    const producer = client.producer({ transactionalId: 'app' });
    await producer.initTransactions();
    const offsets = async () =>
      ((await http('GET', '/v1/groups/g/offsets')).body.offsets ?? []) as {
        partition: number;
        offset: number;
      }[];
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ value: 'out-1' }]);
    await producer.sendOffsetsToTransaction([{ topic: 't', partition: 1, offset: 7 }], 'g');
    await producer.abortTransaction();
    expect(await offsets()).toEqual([]);
    producer.beginTransaction();
    await producer.sendOffsetsToTransaction([{ topic: 't', partition: 1, offset: 5 }], 'g');
    expect(await offsets()).toEqual([]);
    await producer.commitTransaction();
    expect((await offsets()).map((o) => [o.partition, o.offset])).toEqual([[1, 5]]);
  });

  it('fences the offset commit of a member the group no longer knows (KIP-447), as an abortable error', async () => {
    const { client } = await setup();
    const producer = client.producer({ transactionalId: 'app' });
    await producer.initTransactions();
    producer.beginTransaction();
    const error = await caught(
      producer.sendOffsetsToTransaction([{ topic: 't', partition: 0, offset: 1 }], {
        groupId: 'g',
        memberId: 'gone',
        generationId: 3,
      }),
    );
    expect(error.code).toBe('UNKNOWN_MEMBER_ID');
    expect(producer.transactionState).toBe('ABORTABLE_ERROR');
    await producer.abortTransaction();
    expect(producer.transactionState).toBe('READY');
  });

  it('commits once when the answer of its EndTxn was lost and the call is retried', async () => {
    let drop = 1;
    const lossy =
      (inner: FetchLike): FetchLike =>
      async (input, init) => {
        const answer = await inner(input, init);
        if (String(input).endsWith('/end') && drop-- > 0)
          throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
        return answer;
      };
    const { client, http } = await setup(2, lossy);
    const producer = client.producer({ transactionalId: 'app' });
    await producer.initTransactions();
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ value: 'once' }]);
    await producer.commitTransaction();
    expect(drop).toBe(-1);
    expect(producer.producerIdentity!.producerEpoch).toBe(1);
    expect((await http('GET', '/v1/transactions/app')).body).toMatchObject({
      state: 'CompleteCommit',
      producerEpoch: 1,
    });
    expect(await readAll(client.consumer({ isolationLevel: 'read_committed' }))).toEqual(['0:once']);
  });

  it('refuses misuse with Kafka error codes and sends nothing', async () => {
    const { client, http } = await setup();
    const producer = client.producer({ transactionalId: 'app' });
    expect((await caught(() => producer.beginTransaction())).code).toBe('INVALID_TXN_STATE');
    expect((await caught(producer.sendBatch('t', 0, [{ value: 'v' }]))).code).toBe('INVALID_TXN_STATE');
    await producer.initTransactions();
    expect((await caught(producer.initTransactions())).code).toBe('INVALID_TXN_STATE');
    expect((await caught(producer.sendBatch('t', 0, [{ value: 'v' }]))).code).toBe('INVALID_TXN_STATE');
    expect((await caught(producer.commitTransaction())).code).toBe('INVALID_TXN_STATE');
    producer.beginTransaction();
    expect((await caught(() => producer.beginTransaction())).code).toBe('INVALID_TXN_STATE');
    // A transaction that wrote nothing ends without a coordinator call.
    await producer.commitTransaction();
    expect(producer.transactionState).toBe('READY');
    expect((await caught(() => client.producer().beginTransaction())).code).toBe('INVALID_TXN_STATE');
    expect((await caught(() => client.producer({ transactionalId: 'x', idempotent: false }))).code).toBe(
      'INVALID_CONFIG',
    );
    expect((await caught(() => client.producer({ transactionalId: 'x', acks: '1' }))).code).toBe(
      'INVALID_CONFIG',
    );
    const timeout = client.producer({ transactionalId: 'y', transactionTimeoutMs: 10 ** 9 });
    expect((await caught(timeout.initTransactions())).code).toBe('INVALID_TRANSACTION_TIMEOUT');
    expect(timeout.transactionState).toBe('FATAL_ERROR');
    const hw = await http('GET', '/v1/topics/t/partitions/0/offsets?at=latest');
    expect(hw.body.offset).toBe(0);
  });
});

describe('the SDK consumer with isolationLevel', () => {
  it('refuses a read_committed answer without its aborted transactions', async () => {
    const strip =
      (inner: FetchLike): FetchLike =>
      async (input, init) => {
        const answer = await inner(input, init);
        if (!String(input).endsWith('/v1/fetch')) return answer;
        const body = (await answer.json()) as { partitions: Record<string, unknown>[] };
        for (const p of body.partitions) delete p['abortedTransactions'];
        return new Response(JSON.stringify(body), { status: 200, headers: answer.headers });
      };
    const { client } = await setup(2, strip);
    const error = await caught(
      client
        .consumer({ isolationLevel: 'read_committed' })
        .fetchMany([{ topic: 't', partition: 0, offset: 0 }]),
    );
    expect(error.code).toBe('UNKNOWN_SERVER_ERROR');
  });

  it('asks POST /v1/fetch for read_committed, and the edge refuses an unknown level', async () => {
    const { http } = await setup();
    const bad = await http('POST', '/v1/fetch', {
      partitions: [{ topic: 't', partition: 0, offset: 0 }],
      isolationLevel: 'serializable',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_REQUEST');
    const numeric = await http('POST', '/v1/fetch', {
      partitions: [{ topic: 't', partition: 0, offset: 0 }],
      isolationLevel: 1,
    });
    expect(numeric.status).toBe(400);
    const good = await http('POST', '/v1/fetch', {
      partitions: [{ topic: 't', partition: 0, offset: 0 }],
      isolationLevel: 'read_committed',
    });
    expect(good.body.partitions[0]).toMatchObject({ lastStableOffset: 0, abortedTransactions: [] });
    const plain = await http('POST', '/v1/fetch', { partitions: [{ topic: 't', partition: 0, offset: 0 }] });
    expect(plain.body.partitions[0].lastStableOffset).toBeUndefined();
  });

  it('reads an aborted transaction through the single-partition fetch as well', async () => {
    const { client } = await setup();
    const producer = client.producer({ transactionalId: 'app' });
    await producer.initTransactions();
    producer.beginTransaction();
    await producer.sendBatch('t', 0, [{ value: 'gone' }]);
    await producer.abortTransaction();
    await client.producer().sendBatch('t', 0, [{ value: 'plain' }]);
    const committed = await client.consumer({ isolationLevel: 'read_committed' }).fetch('t', 0, 0);
    expect(committed.records.map((r) => Buffer.from(r.value!).toString())).toEqual(['plain']);
    expect(committed).toMatchObject({ lastStableOffset: 3, nextOffset: 3 });
    const all = await client.consumer().fetch('t', 0, 0);
    expect(all.records.map((r) => Buffer.from(r.value!).toString())).toEqual(['gone', 'plain']);
  });
});
