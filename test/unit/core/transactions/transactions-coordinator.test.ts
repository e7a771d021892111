/**
 * The transaction coordinator's state machine (KIP-98/447/890), one request at a time: each transition
 * (Empty → Ongoing → PrepareCommit/PrepareAbort → CompleteCommit/CompleteAbort), each refusal with its
 * Kafka error code and a message that names the transactional.id and what to do, the limits, retries
 * of a request whose answer was lost, and a coordinator that stopped half way (its markers failed) being
 * rolled forward by whoever touches the id next.
 */
import { describe, expect, it } from 'vitest';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import type { MetadataStore, QueryInput } from '../../../../lib/ports/metadata-store.js';
import { keys } from '../../../../lib/core/keys.js';
import type { ProducerIdAndEpoch } from '../../../../lib/core/transactions/index.js';
import { TransactionCoordinator } from '../../../../lib/core/transactions/index.js';
import { encodeTransaction } from '../../../../lib/core/transactions/state.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { T0, batch, produceCluster } from '../../../support/produce-support.js';

type Outcome<T> = { ok: T } | { code: string; message: string };

const outcome = <T>(p: Promise<T>): Promise<Outcome<T>> =>
  p.then(
    (ok) => ({ ok }),
    (e: unknown) => {
      if (e instanceof SluiceError) return { code: e.code, message: e.message };
      return { code: 'thrown', message: String(e) };
    },
  );

const txnBatch = (values: string[], p: ProducerIdAndEpoch, baseSequence = 0) =>
  batch(values, { ...p, baseSequence, isTransactional: true });

const t0 = { topic: 't', partition: 0 };
const t1 = { topic: 't', partition: 1 };
const u0 = { topic: 'u', partition: 0 };

const setup = async (partitions = 2) => {
  const c = await produceCluster({ partitions });
  await c.sluice.catalog.create({ name: 'u', partitions: 2, replicationFactor: 1, configs: {} });
  const tc = c.sluice.transactions;
  let failPuts = false;
  c.onPut(() => {
    if (failPuts) throw new Error('object store down');
  });
  /** Runs `f` while every object write fails: markers cannot be written, the coordinator stops half way. */
  const withoutObjectWrites = async <T>(f: () => Promise<T>): Promise<Outcome<T>> => {
    failPuts = true;
    try {
      return await outcome(f());
    } finally {
      failPuts = false;
    }
  };
  const fetch = (topic: string, partition: number) =>
    c.sluice.fetcher.fetchRecords(topic, partition, {
      offset: 0,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      isolationLevel: 'read_committed',
    });
  const committed = async (topic: string, partition: number) =>
    (await fetch(topic, partition)).records.map((r) => Buffer.from(r.value!).toString());
  const lso = async (topic: string, partition: number) => (await fetch(topic, partition)).lastStableOffset;
  const produce = (topic: string, partition: number, values: string[], p: ProducerIdAndEpoch, seq = 0) =>
    c.sluice.producer.produceBatches(topic, partition, txnBatch(values, p, seq), 'all');
  /** Writes (puts) of transaction items so far. */
  const txnWrites = () =>
    c.calls.filter((call) => call.op === 'put' && call.key?.pk.startsWith('TXN#')).length;
  return { ...c, tc, withoutObjectWrites, committed, lso, produce, txnWrites };
};

const offsetsOf = (entries: [string, number, number][]) =>
  entries.map(([topic, partition, offset]) => ({ topic, partition, offset, metadata: '' }));

describe('InitProducerId', () => {
  it('refuses a transaction.timeout.ms that is not an integer from 1 to transaction.max.timeout.ms', async () => {
    const s = await setup();
    for (const bad of [0, -5, 1.5, 900_001]) {
      expect(await outcome(s.tc.initProducerId('app', bad))).toEqual({
        code: 'INVALID_TRANSACTION_TIMEOUT',
        message: `transaction.timeout.ms must be an integer from 1 to transaction.max.timeout.ms=900000, not ${bad}`,
      });
    }
    expect(await s.tc.initProducerId('a', 1)).toEqual({ producerId: 0, producerEpoch: 0 });
    expect(await s.tc.initProducerId('b', 900_000)).toEqual({ producerId: 1, producerEpoch: 0 });
    const small = new TransactionCoordinator(s.sluice.log, s.sluice.groups, { maxTimeoutMs: 5_000 });
    expect(await outcome(small.initProducerId('c', 5_001))).toMatchObject({
      code: 'INVALID_TRANSACTION_TIMEOUT',
      message: expect.stringContaining('transaction.max.timeout.ms=5000, not 5001') as unknown,
    });
  });

  it('refuses a transactional.id that is empty, over 249 characters or holds control characters', async () => {
    const s = await setup();
    const refused = {
      code: 'INVALID_REQUEST',
      message: 'transactional.id must be 1 to 249 characters without control characters',
    };
    for (const bad of ['', 'x'.repeat(250), 'a\u0001b', 'tab\there', '\u001f', 42 as unknown as string]) {
      expect(await outcome(s.tc.initProducerId(bad, 1_000))).toEqual(refused);
      expect(await outcome(s.tc.describe(bad))).toEqual(refused);
    }
    expect(await s.tc.list()).toEqual([]);
    for (const good of ['x'.repeat(249), 'a b', '~'])
      expect((await s.tc.initProducerId(good, 1_000)).producerEpoch).toBe(0);
  });

  it('a new id starts Empty at epoch 0 with nothing in it; each new instance bumps the epoch', async () => {
    const s = await setup();
    expect(await s.tc.initProducerId('app', 60_000)).toEqual({ producerId: 0, producerEpoch: 0 });
    expect(await s.tc.describe('app')).toEqual({
      transactionalId: 'app',
      producerId: 0,
      producerEpoch: 0,
      lastProducerEpoch: -1,
      state: 'Empty',
      partitions: [],
      groups: [],
      pendingOffsets: {},
      transactionTimeoutMs: 60_000,
      transactionStartTimeMs: -1,
      lastUpdateTimeMs: T0,
      // Stored from the start (0 before the first transaction ends), never absent.
      transactionNumber: 0,
      version: 0,
    });
    s.clock.time += 5;
    // No transaction open: one bump, nothing aborted.
    expect(await s.tc.initProducerId('app', 30_000)).toEqual({ producerId: 0, producerEpoch: 1 });
    expect(await s.tc.describe('app')).toMatchObject({
      producerEpoch: 1,
      lastProducerEpoch: 0,
      state: 'Empty',
      partitions: [],
      groups: [],
      transactionTimeoutMs: 30_000,
      transactionStartTimeMs: -1,
      lastUpdateTimeMs: T0 + 5,
    });
    // After a committed transaction too: the commit bumped once, the new instance once more.
    const p = { producerId: 0, producerEpoch: 1 };
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['a'], p);
    expect(await s.tc.endTxn('app', p, true)).toEqual({ producerId: 0, producerEpoch: 2 });
    expect(await s.tc.initProducerId('app', 30_000)).toEqual({ producerId: 0, producerEpoch: 3 });
    const meta = await s.tc.describe('app');
    expect(meta).toMatchObject({
      state: 'Empty',
      lastProducerEpoch: 2,
      partitions: [],
      transactionStartTimeMs: -1,
    });
    expect(meta.endedBy).toBeUndefined();
    expect(await s.committed('t', 0)).toEqual(['a']);
  });

  it('fencing an open transaction aborts it with three writes of the transaction item', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['zombie'], p);
    const before = s.txnWrites();
    expect(await s.tc.initProducerId('app', 60_000)).toEqual({ producerId: 0, producerEpoch: 2 });
    // PrepareAbort, CompleteAbort, then the new epoch: each conditional write holds the first time.
    expect(s.txnWrites() - before).toBe(3);
    expect(await s.lso('t', 0)).toBe(2);
  });

  it('when the epochs run out, the id gets a new producer id at epoch 0 and the old one is fenced', async () => {
    const s = await setup();
    await s.tc.initProducerId('app', 60_000);
    const meta = await s.tc.describe('app');
    await s.store.put(encodeTransaction({ ...meta, producerEpoch: 32_765 }));
    expect(await s.tc.initProducerId('app', 60_000)).toEqual({ producerId: 0, producerEpoch: 32_766 });
    const fresh = await s.tc.initProducerId('app', 60_000);
    expect(fresh).toEqual({ producerId: 1, producerEpoch: 0 });
    expect(await s.tc.describe('app')).toMatchObject({
      producerId: 1,
      producerEpoch: 0,
      lastProducerEpoch: 32_766,
    });
    await s.tc.addPartitions('app', fresh, [t0]);
    expect(await s.tc.verifyPartition(1, 0, 't', 0)).toBe(1);
    expect(await outcome(s.tc.verifyPartition(0, 32_766, 't', 0))).toEqual({
      code: 'INVALID_PRODUCER_EPOCH',
      message: 'producer 0 epoch 32766 is fenced: app is at epoch 0',
    });
  });

  it('two instances starting at once on a new id: one gets epoch 0, the other fences it with epoch 1', async () => {
    const s = await setup();
    const other = new TransactionCoordinator(s.sluice.log, s.sluice.groups);
    const [a, b] = await Promise.all([
      s.tc.initProducerId('app', 60_000),
      other.initProducerId('app', 60_000),
    ]);
    expect([a.producerEpoch, b.producerEpoch].sort()).toEqual([0, 1]);
    expect(a.producerId).toBe(b.producerId);
    expect((await s.tc.describe('app')).producerId).toBe(a.producerId);
  });
});

describe('AddPartitionsToTxn', () => {
  it('adds each partition once, telling apart partitions of different topics with the same number', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    s.clock.time += 10;
    await s.tc.addPartitions('app', p, [t0, u0]);
    await s.tc.addPartitions('app', p, [t0, t1, u0]);
    const meta = await s.tc.describe('app');
    expect(meta).toMatchObject({
      state: 'Ongoing',
      partitions: [t0, u0, t1],
      groups: [],
      transactionStartTimeMs: T0 + 10,
      transactionNumber: 1,
    });
    expect(await s.tc.verifyPartition(0, 0, 'u', 0)).toBe(1);
    expect(await s.tc.verifyPartition(0, 0, 't', 1)).toBe(1);
  });

  it('adding partitions already in the open transaction writes nothing', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', p, [t0, u0]);
    const before = s.txnWrites();
    await s.tc.addPartitions('app', p, [u0, t0]);
    await s.tc.addPartitions('app', p, []);
    expect(s.txnWrites()).toBe(before);
  });

  it('no partitions, no transaction open: opens one (its timeout runs from now)', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', p, []);
    expect(await s.tc.describe('app')).toMatchObject({
      state: 'Ongoing',
      partitions: [],
      transactionStartTimeMs: T0,
    });
  });

  it('adding to an open transaction keeps its groups, pending offsets and start time', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addOffsets('app', p, 'g');
    const offsets = offsetsOf([['t', 0, 3]]);
    await s.tc.txnOffsetCommit('app', p, { groupId: 'g', memberId: null, generationId: -1, offsets });
    s.clock.time += 100;
    await s.tc.addPartitions('app', p, [t0]);
    expect(await s.tc.describe('app')).toMatchObject({
      state: 'Ongoing',
      partitions: [t0],
      groups: ['g'],
      pendingOffsets: { g: offsets },
      transactionStartTimeMs: T0,
      lastUpdateTimeMs: T0 + 100,
      transactionNumber: 1,
    });
  });

  it('a transaction spans at most 1000 partitions', async () => {
    const s = await setup(1_001);
    const p = await s.tc.initProducerId('app', 60_000);
    const all = Array.from({ length: 1_001 }, (_, partition) => ({ topic: 't', partition }));
    expect(await outcome(s.tc.addPartitions('app', p, all))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'a transaction may span at most 1000 partitions',
    });
    expect((await s.tc.describe('app')).state).toBe('Empty');
    await s.tc.addPartitions('app', p, all.slice(0, 1_000));
    expect((await s.tc.describe('app')).partitions).toHaveLength(1_000);
  });
});

describe('AddOffsetsToTxn', () => {
  it('refuses a group id that is not a non-empty string', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    for (const bad of ['', 7 as unknown as string]) {
      expect(await outcome(s.tc.addOffsets('app', p, bad))).toEqual({
        code: 'INVALID_REQUEST',
        message: 'groupId must be a non-empty string',
      });
    }
    expect((await s.tc.describe('app')).state).toBe('Empty');
  });

  it('opens the transaction; a group added again writes nothing; at most 16 groups', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addOffsets('app', p, 'g0');
    expect(await s.tc.describe('app')).toMatchObject({ state: 'Ongoing', groups: ['g0'], partitions: [] });
    const before = s.txnWrites();
    await s.tc.addOffsets('app', p, 'g0');
    expect(s.txnWrites()).toBe(before);
    for (let g = 1; g < 16; g++) await s.tc.addOffsets('app', p, `g${g}`);
    expect((await s.tc.describe('app')).groups).toHaveLength(16);
    expect(await outcome(s.tc.addOffsets('app', p, 'g16'))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'a transaction may commit offsets of at most 16 groups',
    });
    expect((await s.tc.describe('app')).groups).toHaveLength(16);
  });
});

describe('TxnOffsetCommit', () => {
  const commit = (
    s: Awaited<ReturnType<typeof setup>>,
    p: ProducerIdAndEpoch,
    groupId: string,
    entries: [string, number, number][],
  ) =>
    s.tc.txnOffsetCommit('app', p, {
      groupId,
      memberId: null,
      generationId: -1,
      offsets: offsetsOf(entries),
    });

  it('refuses offsets that are not offsets or of partitions that do not exist, and keeps nothing', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addOffsets('app', p, 'g');
    expect(await outcome(commit(s, p, 'g', [['t', 0, -1]]))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'offset -1 for t-0 is not an offset',
    });
    expect(await outcome(commit(s, p, 'g', [['u', 1, 1.5]]))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'offset 1.5 for u-1 is not an offset',
    });
    expect(await outcome(commit(s, p, 'g', [['t', 5, 1]]))).toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
    expect((await s.tc.describe('app')).pendingOffsets).toEqual({});
    await commit(s, p, 'g', [['t', 0, 0]]);
    expect((await s.tc.describe('app')).pendingOffsets).toEqual({ g: offsetsOf([['t', 0, 0]]) });
  });

  it('needs the group added to the open transaction first (INVALID_TXN_STATE)', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    const refused = {
      code: 'INVALID_TXN_STATE',
      message: "group g is not in app's transaction; call AddOffsetsToTxn first",
    };
    expect(await outcome(commit(s, p, 'g', [['t', 0, 1]]))).toEqual(refused);
    await s.tc.addPartitions('app', p, [t0]);
    expect(await outcome(commit(s, p, 'g', [['t', 0, 1]]))).toEqual(refused);
    await s.tc.addOffsets('app', p, 'other');
    expect(await outcome(commit(s, p, 'g', [['t', 0, 1]]))).toEqual(refused);
    expect((await s.tc.describe('app')).pendingOffsets).toEqual({});
  });

  it('a partition committed again keeps the later offset; same partition numbers of two topics are two offsets', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addOffsets('app', p, 'g');
    await commit(s, p, 'g', [['t', 0, 5]]);
    await commit(s, p, 'g', [['u', 0, 7]]);
    await commit(s, p, 'g', [
      ['t', 0, 6],
      ['t', 1, 1],
    ]);
    const expected = offsetsOf([
      ['t', 0, 6],
      ['u', 0, 7],
      ['t', 1, 1],
    ]);
    expect((await s.tc.describe('app')).pendingOffsets).toEqual({ g: expected });
    expect((await s.sluice.groups.fetchOffsets('g')).offsets).toEqual([]);
    await s.tc.endTxn('app', p, true);
    const got = (await s.sluice.groups.fetchOffsets('g')).offsets;
    expect(got.map((o) => [o.topic, o.partition, o.offset]).sort()).toEqual([
      ['t', 0, 6],
      ['t', 1, 1],
      ['u', 0, 7],
    ]);
  });

  it('a transaction commits at most 1000 offsets over all its groups', async () => {
    const s = await setup(1_001);
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addOffsets('app', p, 'a');
    await s.tc.addOffsets('app', p, 'b');
    const range = (from: number, n: number) =>
      Array.from({ length: n }, (_, i): [string, number, number] => ['t', from + i, 1]);
    await commit(s, p, 'a', range(0, 600));
    await commit(s, p, 'b', range(0, 400));
    // Committing the same partitions again replaces, so still 1000.
    await commit(s, p, 'b', range(0, 400));
    expect(await outcome(commit(s, p, 'b', range(400, 1)))).toEqual({
      code: 'INVALID_REQUEST',
      message: 'a transaction may commit at most 1000 offsets',
    });
    const pending = (await s.tc.describe('app')).pendingOffsets;
    expect([pending['a']!.length, pending['b']!.length]).toEqual([600, 400]);
  });
});

describe('EndTxn', () => {
  it('a commit writes each partition item once: its marker, nothing more', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', p, [t0, t1]);
    await s.produce('t', 0, ['a'], p);
    const updates = () => s.calls.filter((c) => c.op === 'update' && c.key?.sk === 'STATE').length;
    const before = updates();
    await s.tc.endTxn('app', p, true);
    expect(updates() - before).toBe(2);
    expect(await s.committed('t', 0)).toEqual(['a']);
  });

  it('with no transaction open: INVALID_TXN_STATE naming the id and what was asked', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    expect(await outcome(s.tc.endTxn('app', p, true))).toEqual({
      code: 'INVALID_TXN_STATE',
      message: 'app has no open transaction to commit',
    });
    expect(await outcome(s.tc.endTxn('app', p, false))).toEqual({
      code: 'INVALID_TXN_STATE',
      message: 'app has no open transaction to abort',
    });
    await s.tc.addPartitions('app', p, [t0]);
    const next = await s.tc.endTxn('app', p, true);
    // With the new epoch EndTxn answered, nothing is open.
    expect(await outcome(s.tc.endTxn('app', next, true))).toEqual({
      code: 'INVALID_TXN_STATE',
      message: 'app has no open transaction to commit',
    });
    expect((await s.tc.describe('app')).state).toBe('CompleteCommit');
  });

  it('retried after its answer was lost: the same answer; the other outcome is INVALID_TXN_STATE', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['a'], p);
    const next = await s.tc.endTxn('app', p, true);
    expect(next).toEqual({ producerId: 0, producerEpoch: 1 });
    expect(await s.tc.endTxn('app', p, true)).toEqual(next);
    expect(await outcome(s.tc.endTxn('app', p, false))).toEqual({
      code: 'INVALID_TXN_STATE',
      message: "app's transaction was already CompleteCommit",
    });
    await s.tc.addPartitions('app', next, [t0]);
    await s.produce('t', 0, ['b'], next);
    const third = await s.tc.endTxn('app', next, false);
    expect(third).toEqual({ producerId: 0, producerEpoch: 2 });
    expect(await s.tc.endTxn('app', next, false)).toEqual(third);
    expect(await outcome(s.tc.endTxn('app', next, true))).toEqual({
      code: 'INVALID_TXN_STATE',
      message: "app's transaction was already CompleteAbort",
    });
    expect(await s.committed('t', 0)).toEqual(['a']);
    expect(await s.lso('t', 0)).toBe(4);
  });

  it('refuses an epoch behind (PRODUCER_FENCED) or ahead (INVALID_PRODUCER_EPOCH) of the id’s, and a foreign producer id', async () => {
    const s = await setup();
    await s.tc.initProducerId('app', 60_000);
    const p = await s.tc.initProducerId('app', 60_000);
    expect(await outcome(s.tc.addPartitions('app', { producerId: 0, producerEpoch: 0 }, [t0]))).toEqual({
      code: 'PRODUCER_FENCED',
      message: 'the producer of app is fenced: epoch 0 is fenced by epoch 1',
    });
    expect(await outcome(s.tc.addOffsets('app', { producerId: 0, producerEpoch: 2 }, 'g'))).toEqual({
      code: 'INVALID_PRODUCER_EPOCH',
      message: "epoch 2 is ahead of app's epoch 1",
    });
    const mapping = {
      code: 'INVALID_PRODUCER_ID_MAPPING',
      message: "producer id 7 is not app's; call InitProducerId",
    };
    expect(await outcome(s.tc.addOffsets('app', { producerId: 7, producerEpoch: 1 }, 'g'))).toEqual(mapping);
    expect(await outcome(s.tc.endTxn('app', { producerId: 7, producerEpoch: 1 }, true))).toEqual(mapping);
    expect(await outcome(s.tc.addPartitions('nobody', p, [t0]))).toEqual({
      code: 'INVALID_PRODUCER_ID_MAPPING',
      message: "producer id 0 is not nobody's; call InitProducerId",
    });
    expect(
      await outcome(
        s.tc.txnOffsetCommit('nobody', p, { groupId: 'g', memberId: null, generationId: -1, offsets: [] }),
      ),
    ).toMatchObject({ code: 'INVALID_PRODUCER_ID_MAPPING' });
    expect((await s.tc.describe('app')).state).toBe('Empty');
  });

  it('a transaction ends on time at exactly transaction.timeout.ms, and is aborted one ms later', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 1_000);
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['on-time'], p);
    s.clock.time += 1_000;
    const next = await s.tc.endTxn('app', p, true);
    await s.tc.addPartitions('app', next, [t0]);
    await s.produce('t', 0, ['late'], next);
    s.clock.time += 1_001;
    expect(await outcome(s.tc.endTxn('app', next, true))).toEqual({
      code: 'PRODUCER_FENCED',
      message:
        'the producer of app is fenced: its transaction ran past transaction.timeout.ms and was aborted',
    });
    expect(await s.tc.describe('app')).toMatchObject({
      state: 'CompleteAbort',
      endedBy: 'timeout',
      producerEpoch: 2,
    });
    expect(await s.committed('t', 0)).toEqual(['on-time']);
    expect(await s.lso('t', 0)).toBe(4);
  });

  it('after the timeout aborted it, the producer is fenced whether it commits or aborts', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 1_000);
    await s.tc.addPartitions('app', p, [t0]);
    s.clock.time += 1_001;
    expect(await s.tc.expire()).toEqual({ aborted: 1, completed: 0 });
    for (const commit of [false, true])
      expect(await outcome(s.tc.endTxn('app', p, commit))).toMatchObject({ code: 'PRODUCER_FENCED' });
    // The same holds once a new instance fenced the producer.
    const q = await s.tc.initProducerId('app', 1_000);
    await s.tc.addPartitions('app', q, [t0]);
    await s.tc.initProducerId('app', 1_000);
    expect(await outcome(s.tc.endTxn('app', q, false))).toMatchObject({ code: 'PRODUCER_FENCED' });
  });

  it('AddPartitionsToTxn or AddOffsetsToTxn past the timeout: the transaction is aborted, the producer fenced', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 1_000);
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['slow'], p);
    s.clock.time += 1_001;
    expect(await outcome(s.tc.addPartitions('app', p, [t1]))).toEqual({
      code: 'PRODUCER_FENCED',
      message:
        'the producer of app is fenced: its transaction ran past transaction.timeout.ms and was aborted',
    });
    expect(await s.tc.describe('app')).toMatchObject({
      state: 'CompleteAbort',
      endedBy: 'timeout',
      partitions: [],
    });
    expect(await s.lso('t', 0)).toBe(2);
    const q = await s.tc.initProducerId('app', 1_000);
    await s.tc.addPartitions('app', q, [t0]);
    s.clock.time += 1_001;
    expect(await outcome(s.tc.addOffsets('app', q, 'g'))).toMatchObject({ code: 'PRODUCER_FENCED' });
    expect((await s.tc.describe('app')).state).toBe('CompleteAbort');
  });
});

describe('a coordinator that stopped half way (its markers failed)', () => {
  const stuckCommit = async (transactionVersion: 1 | 2 = 2) => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', p, [t0, u0]);
    await s.tc.addOffsets('app', p, 'g');
    await s.tc.txnOffsetCommit('app', p, {
      groupId: 'g',
      memberId: null,
      generationId: -1,
      offsets: offsetsOf([['t', 0, 1]]),
    });
    await s.produce('t', 0, ['a'], p);
    await s.produce('u', 0, ['b'], p);
    expect(await s.withoutObjectWrites(() => s.tc.endTxn('app', p, true, transactionVersion))).toEqual({
      code: 'thrown',
      message: 'Error: object store down',
    });
    return { s, p };
  };

  it('leaves the decision (PrepareCommit, bumped epoch) and no marker', async () => {
    const { s } = await stuckCommit();
    expect(await s.tc.describe('app')).toMatchObject({
      state: 'PrepareCommit',
      endedBy: 'client',
      producerEpoch: 1,
      lastProducerEpoch: 0,
      partitions: [t0, u0],
      pendingOffsets: { g: offsetsOf([['t', 0, 1]]) },
    });
    expect(await s.committed('t', 0)).toEqual([]);
    expect(await s.lso('t', 0)).toBe(0);
  });

  it('EndTxn retried at the old epoch finishes the commit', async () => {
    const { s, p } = await stuckCommit();
    expect(await s.tc.endTxn('app', p, true)).toEqual({ producerId: 0, producerEpoch: 1 });
    expect(await s.committed('t', 0)).toEqual(['a']);
    expect(await s.committed('u', 0)).toEqual(['b']);
    expect((await s.sluice.groups.fetchOffsets('g')).offsets.map((o) => o.offset)).toEqual([1]);
    const meta = await s.tc.describe('app');
    expect(meta).toMatchObject({
      state: 'CompleteCommit',
      partitions: [],
      groups: [],
      transactionStartTimeMs: -1,
    });
    expect(meta.pendingOffsets).toEqual({});
  });

  it('a request at the new epoch finishes it and answers CONCURRENT_TRANSACTIONS', async () => {
    const { s } = await stuckCommit();
    const next = { producerId: 0, producerEpoch: 1 };
    // The transaction is ending: its partitions take no batch and its offsets can no longer change.
    expect(await outcome(s.tc.verifyPartition(0, 1, 't', 0))).toMatchObject({ code: 'INVALID_TXN_STATE' });
    expect(
      await outcome(
        s.tc.txnOffsetCommit('app', next, {
          groupId: 'g',
          memberId: null,
          generationId: -1,
          offsets: offsetsOf([['t', 0, 9]]),
        }),
      ),
    ).toMatchObject({ code: 'INVALID_TXN_STATE' });
    expect(await outcome(s.tc.endTxn('app', next, true))).toEqual({
      code: 'CONCURRENT_TRANSACTIONS',
      message: "app's previous transaction was still ending; retry",
    });
    expect((await s.tc.describe('app')).state).toBe('CompleteCommit');
    expect(await s.committed('t', 0)).toEqual(['a']);
    expect((await s.sluice.groups.fetchOffsets('g')).offsets.map((o) => o.offset)).toEqual([1]);
  });

  it('under transaction version 1 the next AddPartitionsToTxn finishes it and answers CONCURRENT_TRANSACTIONS', async () => {
    const { s, p } = await stuckCommit(1);
    expect((await s.tc.describe('app')).producerEpoch).toBe(0);
    expect(await outcome(s.tc.addPartitions('app', p, [t1]))).toEqual({
      code: 'CONCURRENT_TRANSACTIONS',
      message: "app's previous transaction was still ending; retry",
    });
    expect((await s.tc.describe('app')).state).toBe('CompleteCommit');
    expect(await s.committed('u', 0)).toEqual(['b']);
    await s.tc.addPartitions('app', p, [t1]);
    expect(await s.tc.describe('app')).toMatchObject({
      state: 'Ongoing',
      partitions: [t1],
      transactionNumber: 2,
    });
  });

  it('InitProducerId of a new instance finishes the commit (not an abort) before fencing', async () => {
    const { s } = await stuckCommit();
    expect(await s.tc.initProducerId('app', 60_000)).toEqual({ producerId: 0, producerEpoch: 2 });
    expect(await s.committed('t', 0)).toEqual(['a']);
    expect(await s.committed('u', 0)).toEqual(['b']);
  });

  it('the maintenance sweep finishes it and counts it completed', async () => {
    const { s } = await stuckCommit();
    expect(await s.tc.expire()).toEqual({ aborted: 0, completed: 1 });
    expect(await s.committed('t', 0)).toEqual(['a']);
    expect((await s.tc.describe('app')).state).toBe('CompleteCommit');
  });

  it('an abort stopped half way drops its pending offsets and is finished by the next InitProducerId', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addOffsets('app', p, 'g');
    await s.tc.txnOffsetCommit('app', p, {
      groupId: 'g',
      memberId: null,
      generationId: -1,
      offsets: offsetsOf([['t', 0, 1]]),
    });
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['x'], p);
    expect(await s.withoutObjectWrites(() => s.tc.endTxn('app', p, false))).toMatchObject({ code: 'thrown' });
    const meta = await s.tc.describe('app');
    expect(meta).toMatchObject({ state: 'PrepareAbort', endedBy: 'client', partitions: [t0] });
    // Kafka drops an aborted transaction's offsets with the decision.
    expect(meta.pendingOffsets).toEqual({});
    expect(await s.tc.initProducerId('app', 60_000)).toEqual({ producerId: 0, producerEpoch: 2 });
    expect(await s.lso('t', 0)).toBe(2);
    expect(await s.committed('t', 0)).toEqual([]);
    expect((await s.sluice.groups.fetchOffsets('g')).offsets).toEqual([]);
  });

  it('a fencing InitProducerId stopped half way leaves PrepareAbort; the next one finishes the abort', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['zombie'], p);
    expect(await s.withoutObjectWrites(() => s.tc.initProducerId('app', 60_000))).toMatchObject({
      code: 'thrown',
    });
    expect(await s.tc.describe('app')).toMatchObject({
      state: 'PrepareAbort',
      endedBy: 'fence',
      producerEpoch: 1,
    });
    expect(await s.lso('t', 0)).toBe(0);
    expect(await s.tc.initProducerId('app', 60_000)).toEqual({ producerId: 0, producerEpoch: 2 });
    expect(await s.lso('t', 0)).toBe(2);
  });

  it('a timeout abort stopped half way leaves PrepareAbort (by timeout); the sweep finishes it', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 1_000);
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['slow'], p);
    s.clock.time += 1_001;
    expect(await s.withoutObjectWrites(() => s.tc.endTxn('app', p, true))).toMatchObject({ code: 'thrown' });
    expect(await s.tc.describe('app')).toMatchObject({ state: 'PrepareAbort', endedBy: 'timeout' });
    expect(await s.tc.expire()).toEqual({ aborted: 0, completed: 1 });
    expect(await s.lso('t', 0)).toBe(2);
    expect(await s.committed('t', 0)).toEqual([]);
  });

  it('AddPartitionsToTxn past the timeout, stopped half way, leaves PrepareAbort; the next request finishes it', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 1_000);
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['slow'], p);
    s.clock.time += 1_001;
    expect(await s.withoutObjectWrites(() => s.tc.addPartitions('app', p, [t1]))).toMatchObject({
      code: 'thrown',
    });
    // Kills openable() preparing the timeout abort under another state name ('PrepareAbort' → "").
    expect(await s.tc.describe('app')).toMatchObject({
      state: 'PrepareAbort',
      endedBy: 'timeout',
      producerEpoch: 1,
      partitions: [t0],
    });
    expect(await outcome(s.tc.addPartitions('app', { producerId: 0, producerEpoch: 1 }, [t0]))).toMatchObject(
      {
        code: 'CONCURRENT_TRANSACTIONS',
      },
    );
    expect((await s.tc.describe('app')).state).toBe('CompleteAbort');
    expect(await s.lso('t', 0)).toBe(2);
    expect(await s.committed('t', 0)).toEqual([]);
  });
});

describe('the producer’s first batch in a partition (KIP-890 verification)', () => {
  it('answers the transaction number; refuses unknown producers, wrong epochs and partitions not added', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    expect(await outcome(s.tc.verifyPartition(99, 0, 't', 0))).toEqual({
      code: 'INVALID_TXN_STATE',
      message: 'producer id 99 has no transactional.id; transactional batches need one',
    });
    expect(await outcome(s.tc.verifyPartition(0, 0, 't', 0))).toEqual({
      code: 'INVALID_TXN_STATE',
      message: "t-0 is not in app's open transaction; call AddPartitionsToTxn first",
    });
    await s.tc.addPartitions('app', p, [t0]);
    expect(await s.tc.verifyPartition(0, 0, 't', 0)).toBe(1);
    expect(await outcome(s.tc.verifyPartition(0, 0, 'u', 0))).toEqual({
      code: 'INVALID_TXN_STATE',
      message: "u-0 is not in app's open transaction; call AddPartitionsToTxn first",
    });
    expect(await outcome(s.tc.verifyPartition(0, 0, 't', 1))).toMatchObject({ code: 'INVALID_TXN_STATE' });
    expect(await outcome(s.tc.verifyPartition(0, 1, 't', 0))).toEqual({
      code: 'INVALID_PRODUCER_EPOCH',
      message: "producer 0 epoch 1 is ahead of the coordinator's 0",
    });
    const next = await s.tc.endTxn('app', p, false);
    expect(await outcome(s.tc.verifyPartition(0, 0, 't', 0))).toEqual({
      code: 'INVALID_PRODUCER_EPOCH',
      message: 'producer 0 epoch 0 is fenced: app is at epoch 1',
    });
    await s.tc.addPartitions('app', next, [t0]);
    expect(await s.tc.verifyPartition(0, 1, 't', 0)).toBe(2);
  });

  it('another instance finds the producer’s transactional.id in the store, once', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', p, [t0]);
    const other = new TransactionCoordinator(s.sluice.log, s.sluice.groups);
    const ownerReads = () =>
      s.calls.filter((c) => c.op === 'get' && c.key?.pk === keys.transactionalProducer(0).pk).length;
    expect(await other.verifyPartition(0, 0, 't', 0)).toBe(1);
    expect(await other.verifyPartition(0, 0, 't', 0)).toBe(1);
    expect(ownerReads()).toBe(1);
    expect(
      s.calls.filter((c) => c.op === 'get' && c.key?.pk.startsWith('TXN')).every((c) => c.consistent),
    ).toBe(true);
    expect(await outcome(other.verifyPartition(5, 0, 't', 0))).toMatchObject({ code: 'INVALID_TXN_STATE' });
  });
});

describe('the maintenance sweep and the listing', () => {
  it('aborts only open transactions past their timeout', async () => {
    const s = await setup();
    await s.tc.initProducerId('empty', 1_000);
    const c = await s.tc.initProducerId('committed', 1_000);
    await s.tc.addPartitions('committed', c, [t0]);
    await s.tc.endTxn('committed', c, true);
    const young = await s.tc.initProducerId('young', 60_000);
    await s.tc.addPartitions('young', young, [t1]);
    const old = await s.tc.initProducerId('old', 1_000);
    await s.tc.addPartitions('old', old, [u0]);
    s.clock.time += 1_001;
    expect(await s.tc.expire()).toEqual({ aborted: 1, completed: 0 });
    const states = Object.fromEntries(
      (await s.tc.list()).map((m) => [m.transactionalId, [m.state, m.producerEpoch, m.endedBy ?? null]]),
    );
    expect(states).toEqual({
      committed: ['CompleteCommit', 1, 'client'],
      empty: ['Empty', 0, null],
      old: ['CompleteAbort', 1, 'timeout'],
      young: ['Ongoing', 0, null],
    });
    expect(await s.tc.expire()).toEqual({ aborted: 0, completed: 0 });
  });

  it('one id whose abort keeps failing does not stop the sweep; the next sweep finishes it', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 1_000);
    await s.tc.addPartitions('app', p, [t0]);
    await s.produce('t', 0, ['slow'], p);
    s.clock.time += 1_001;
    expect(await s.withoutObjectWrites(() => s.tc.expire())).toEqual({ ok: { aborted: 0, completed: 0 } });
    expect(await s.tc.describe('app')).toMatchObject({ state: 'PrepareAbort', endedBy: 'timeout' });
    expect(await s.tc.expire()).toEqual({ aborted: 0, completed: 1 });
    expect(await s.lso('t', 0)).toBe(2);
  });

  it('lists every id of every shard, page by page, with consistent reads, sorted by id', async () => {
    const s = await setup();
    const queries: QueryInput[] = [];
    const inner = s.sluice.log.store;
    const paged = new Proxy(inner, {
      get(target, name) {
        if (name === 'query')
          return (input: QueryInput) => {
            queries.push(input);
            return target.query({ ...input, limit: 2 });
          };
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as MetadataStore;
    const tc = new TransactionCoordinator({ ...s.sluice.log, store: paged }, s.sluice.groups);
    const ids = Array.from({ length: 40 }, (_, i) => `id-${String.fromCharCode(122 - (i % 26))}${i}`);
    for (const id of ids) await tc.initProducerId(id, 1_000);
    const listed = (await tc.list()).map((m) => m.transactionalId);
    expect(listed).toEqual([...ids].sort());
    expect(queries.every((q) => q.consistent === true)).toBe(true);
    expect(new Set(queries.map((q) => q.pk)).size).toBe(16);
    expect(queries.filter((q) => q.cursor === undefined)).toHaveLength(16);
  });

  it('describe of an unknown id is NOT_FOUND', async () => {
    const s = await setup();
    expect(await outcome(s.tc.describe('ghost'))).toEqual({
      code: 'NOT_FOUND',
      message: 'transactional.id ghost does not exist',
    });
  });
});

describe('a transaction item that keeps changing under the coordinator', () => {
  it('each request gives up after its retries with COORDINATOR_NOT_AVAILABLE naming it', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addOffsets('app', p, 'g');
    s.onMetadata(async (call, run) => {
      if (call.op === 'put' && call.key?.pk.startsWith('TXN#')) throw new ConditionFailedError(undefined);
      return run();
    });
    const request = { groupId: 'g', memberId: null, generationId: -1, offsets: offsetsOf([['t', 0, 1]]) };
    const cases: [string, () => Promise<unknown>][] = [
      ['InitProducerId', () => s.tc.initProducerId('app', 60_000)],
      ['AddPartitionsToTxn', () => s.tc.addPartitions('app', p, [t0])],
      ['AddOffsetsToTxn', () => s.tc.addOffsets('app', p, 'h')],
      ['TxnOffsetCommit', () => s.tc.txnOffsetCommit('app', p, request)],
      ['EndTxn', () => s.tc.endTxn('app', p, true)],
    ];
    for (const [what, run] of cases) {
      expect(await outcome(run())).toEqual({
        code: 'COORDINATOR_NOT_AVAILABLE',
        message: `${what} kept conflicting with concurrent changes; retry`,
      });
    }
  });
});
