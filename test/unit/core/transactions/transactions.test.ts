import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../../protocol/errors.js';
import { controlTypeOf, readBatchHeader } from '../../../../protocol/record-batch/index.js';
import { batch, produceCluster } from '../../../support/produce-support.js';

const txnBatch = (values: string[], producerId: number, producerEpoch: number, baseSequence: number) =>
  batch(values, { producerId, producerEpoch, baseSequence, isTransactional: true });

const setup = async () => {
  const c = await produceCluster({ partitions: 2 });
  const { sluice } = c;
  const tc = sluice.transactions;
  const fetch = async (partition: number, isolationLevel: 'read_committed' | 'read_uncommitted') =>
    sluice.fetcher.fetchRecords('t', partition, {
      offset: 0,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      isolationLevel,
    });
  const values = async (partition: number, isolationLevel: 'read_committed' | 'read_uncommitted') =>
    (await fetch(partition, isolationLevel)).records.map((r) => Buffer.from(r.value!).toString());
  const code = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: unknown) => (e instanceof SluiceError ? e.code : String(e)),
    );
  return { ...c, tc, fetch, values, code };
};

describe('transactions', () => {
  it('commit: records on two partitions appear to read_committed only at the COMMIT markers', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    expect(p).toEqual({ producerId: 0, producerEpoch: 0 });
    await s.tc.addPartitions('app', p, [
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['a', 'b'], 0, 0, 0), 'all');
    await s.sluice.producer.produceBatches('t', 1, txnBatch(['c'], 0, 0, 0), 'all');
    expect(await s.values(0, 'read_uncommitted')).toEqual(['a', 'b']);
    expect(await s.values(0, 'read_committed')).toEqual([]);
    expect((await s.fetch(0, 'read_committed')).lastStableOffset).toBe(0);
    expect((await s.sluice.fetcher.listOffsets('t', 0, 'latest', 'read_committed')).offset).toBe(0);
    const next = await s.tc.endTxn('app', p, true);
    expect(next).toEqual({ producerId: 0, producerEpoch: 1 });
    expect(await s.values(0, 'read_committed')).toEqual(['a', 'b']);
    expect(await s.values(1, 'read_committed')).toEqual(['c']);
    // The marker is a control batch at offset 2 (COMMIT); LSO = HW = 3.
    const f = await s.sluice.fetcher.fetchBatches('t', 0, {
      offset: 0,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      isolationLevel: 'read_committed',
    });
    expect(f.batches.length).toBe(2);
    const marker = f.batches[1]!;
    const header = readBatchHeader(marker, 0);
    expect([header.baseOffset, header.isControl, header.isTransactional, header.producerEpoch]).toEqual([
      2,
      true,
      true,
      1,
    ]);
    expect(controlTypeOf(marker, header)).toBe('COMMIT');
    expect([f.highWatermark, f.lastStableOffset, f.abortedTransactions]).toEqual([3, 3, []]);
    expect((await s.tc.describe('app')).state).toBe('CompleteCommit');
  });

  it('abort: read_committed never sees the records; the aborted list names the transaction', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.sluice.producer.produceBatches('t', 0, batch(['plain'], {}), 'all');
    await s.tc.addPartitions('app', p, [{ topic: 't', partition: 0 }]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['x', 'y'], 0, 0, 0), 'all');
    const next = await s.tc.endTxn('app', p, false);
    await s.tc.addPartitions('app', next, [{ topic: 't', partition: 0 }]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['z'], 0, 1, 0), 'all');
    await s.tc.endTxn('app', next, true);
    expect(await s.values(0, 'read_uncommitted')).toEqual(['plain', 'x', 'y', 'z']);
    expect(await s.values(0, 'read_committed')).toEqual(['plain', 'z']);
    const f = await s.sluice.fetcher.fetchBatches('t', 0, {
      offset: 0,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      isolationLevel: 'read_committed',
    });
    expect(f.abortedTransactions).toEqual([{ producerId: 0, firstOffset: 1 }]);
    // A fetch from past the ABORT marker (offset 3) gets no aborted transaction.
    const later = await s.sluice.fetcher.fetchBatches('t', 0, {
      offset: 4,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      isolationLevel: 'read_committed',
    });
    expect(later.abortedTransactions).toEqual([]);
  });

  it('InitProducerId fences the previous instance and aborts what it left open', async () => {
    const s = await setup();
    const old = await s.tc.initProducerId('app', 60_000);
    await s.tc.addPartitions('app', old, [{ topic: 't', partition: 0 }]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['zombie'], 0, 0, 0), 'all');
    const fresh = await s.tc.initProducerId('app', 60_000);
    expect(fresh).toEqual({ producerId: 0, producerEpoch: 2 });
    expect(await s.values(0, 'read_committed')).toEqual([]);
    expect((await s.fetch(0, 'read_committed')).lastStableOffset).toBe(2);
    expect(await s.code(s.sluice.producer.produceBatches('t', 0, txnBatch(['late'], 0, 0, 1), 'all'))).toBe(
      'INVALID_PRODUCER_EPOCH',
    );
    expect(
      await s.code(s.sluice.producer.produceBatches('t', 1, txnBatch(['elsewhere'], 0, 0, 0), 'all')),
    ).toBe('INVALID_PRODUCER_EPOCH');
    expect(await s.code(s.tc.endTxn('app', old, true))).toBe('PRODUCER_FENCED');
    expect(await s.code(s.tc.addPartitions('app', old, [{ topic: 't', partition: 1 }]))).toBe(
      'PRODUCER_FENCED',
    );
    expect((await s.state(1)).nextOffset).toBe(0);
  });

  it('refuses a transactional batch for a partition not added (KIP-890) and writes nothing', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    expect(await s.code(s.sluice.producer.produceBatches('t', 0, txnBatch(['a'], 0, 0, 0), 'all'))).toBe(
      'INVALID_TXN_STATE',
    );
    await s.tc.addPartitions('app', p, [{ topic: 't', partition: 1 }]);
    expect(await s.code(s.sluice.producer.produceBatches('t', 0, txnBatch(['a'], 0, 0, 0), 'all'))).toBe(
      'INVALID_TXN_STATE',
    );
    expect((await s.state(0)).nextOffset).toBe(0);
    expect(await s.code(s.tc.endTxn('app', { producerId: 7, producerEpoch: 0 }, true))).toBe(
      'INVALID_PRODUCER_ID_MAPPING',
    );
  });

  it('maintenance aborts a transaction past transaction.timeout.ms and fences its producer', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 1_000);
    await s.tc.addPartitions('app', p, [{ topic: 't', partition: 0 }]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['slow'], 0, 0, 0), 'all');
    s.clock.time += 1_001;
    expect(await s.tc.expire()).toEqual({ aborted: 1, completed: 0 });
    expect((await s.tc.describe('app')).state).toBe('CompleteAbort');
    expect((await s.fetch(0, 'read_committed')).lastStableOffset).toBe(2);
    expect(await s.code(s.tc.endTxn('app', p, true))).toBe('PRODUCER_FENCED');
    expect(await s.code(s.tc.initProducerId('app', 900_001))).toBe('INVALID_TRANSACTION_TIMEOUT');
  });

  it('offsets committed in a transaction become the group offsets only at commit', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('app', 60_000);
    await s.tc.addOffsets('app', p, 'g');
    const offsets = [{ topic: 't', partition: 0, offset: 5, metadata: '' }];
    await s.tc.txnOffsetCommit('app', p, { groupId: 'g', memberId: null, generationId: -1, offsets });
    expect((await s.sluice.groups.fetchOffsets('g')).offsets).toEqual([]);
    const next = await s.tc.endTxn('app', p, true);
    expect((await s.sluice.groups.fetchOffsets('g')).offsets).toEqual(offsets);
    await s.tc.addOffsets('app', next, 'g');
    await s.tc.txnOffsetCommit('app', next, {
      groupId: 'g',
      memberId: null,
      generationId: -1,
      offsets: [{ ...offsets[0]!, offset: 9 }],
    });
    await s.tc.endTxn('app', next, false);
    expect((await s.sluice.groups.fetchOffsets('g')).offsets).toEqual(offsets);
    expect(
      await s.code(
        s.tc.txnOffsetCommit(
          'app',
          { producerId: 0, producerEpoch: 2 },
          { groupId: 'g', memberId: 'nobody', generationId: 3, offsets },
        ),
      ),
    ).toBe('UNKNOWN_MEMBER_ID');
  });
});
