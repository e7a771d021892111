/**
 * Transaction version 1: clients whose EndTxn is v0-v4 (kafkajs, librdkafka) keep one epoch for every
 * transaction and continue their sequences across them. Markers still go into every partition, once.
 */
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../../protocol/errors.js';
import { controlTypeOf, readBatchHeader } from '../../../../protocol/record-batch/index.js';
import { writeMarker } from '../../../../lib/core/transactions/markers.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';
import { batch, produceCluster } from '../../../support/produce-support.js';

const txnBatch = (values: string[], producerId: number, producerEpoch: number, baseSequence: number) =>
  batch(values, { producerId, producerEpoch, baseSequence, isTransactional: true });

const setup = async () => {
  const c = await produceCluster({ partitions: 2 });
  const { sluice } = c;
  const tc = sluice.transactions;
  const batches = async (partition: number, isolationLevel: 'read_committed' | 'read_uncommitted') =>
    sluice.fetcher.fetchBatches('t', partition, {
      offset: 0,
      maxBytes: 1 << 20,
      maxWaitMs: 0,
      isolationLevel,
    });
  const values = async (partition: number, isolationLevel: 'read_committed' | 'read_uncommitted') =>
    (
      await sluice.fetcher.fetchRecords('t', partition, {
        offset: 0,
        maxBytes: 1 << 20,
        maxWaitMs: 0,
        isolationLevel,
      })
    ).records.map((r) => Buffer.from(r.value!).toString());
  const code = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: unknown) => (e instanceof SluiceError ? e.code : String(e)),
    );
  return { ...c, tc, batches, values, code };
};

describe('transactions under transaction version 1 (no epoch bump at EndTxn)', () => {
  it('three transactions at one epoch: sequences go on, each ends with its own marker', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('v1', 60_000);
    const tp = { topic: 't', partition: 0 };
    await s.tc.addPartitions('v1', p, [tp]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['a', 'b'], p.producerId, 0, 0), 'all');
    expect(await s.tc.endTxn('v1', p, true, 1)).toEqual(p);
    await s.tc.addPartitions('v1', p, [tp]);
    // The sequence continues from the first transaction's (2), as Kafka keeps it within an epoch.
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['c'], p.producerId, 0, 2), 'all');
    expect(await s.tc.endTxn('v1', p, false, 1)).toEqual(p);
    await s.tc.addPartitions('v1', p, [tp]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['d'], p.producerId, 0, 3), 'all');
    expect(await s.tc.endTxn('v1', p, true, 1)).toEqual(p);

    expect(await s.values(0, 'read_uncommitted')).toEqual(['a', 'b', 'c', 'd']);
    expect(await s.values(0, 'read_committed')).toEqual(['a', 'b', 'd']);
    const f = await s.batches(0, 'read_committed');
    const controls = f.batches
      .map((b) => ({ b, h: readBatchHeader(b, 0) }))
      .filter(({ h }) => h.isControl)
      .map(({ b, h }) => [h.baseOffset, controlTypeOf(b, h), h.producerEpoch]);
    expect(controls).toEqual([
      [2, 'COMMIT', 0],
      [4, 'ABORT', 0],
      [6, 'COMMIT', 0],
    ]);
    expect([f.highWatermark, f.lastStableOffset]).toEqual([7, 7]);
    expect(f.abortedTransactions).toEqual([{ producerId: p.producerId, firstOffset: 3 }]);
  });

  it('a marker written again (a coordinator that crashed half way) is not written twice', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('v1', 60_000);
    await s.tc.addPartitions('v1', p, [{ topic: 't', partition: 0 }]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['a'], p.producerId, 0, 0), 'all');
    await s.tc.endTxn('v1', p, true, 1);
    const marker = {
      type: 'COMMIT' as const,
      producerId: p.producerId,
      producerEpoch: 0,
      transactionNumber: 1,
    };
    expect(await writeMarker(s.sluice.log, { topic: 't', partition: 0 }, marker)).toBe('already');
    // Even once the next transaction is open in the partition, the stale marker must not close it.
    await s.tc.addPartitions('v1', p, [{ topic: 't', partition: 0 }]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['b'], p.producerId, 0, 1), 'all');
    expect(await writeMarker(s.sluice.log, { topic: 't', partition: 0 }, marker)).toBe('already');
    expect(await s.values(0, 'read_committed')).toEqual(['a']);
    expect((await s.batches(0, 'read_committed')).lastStableOffset).toBe(2);
  });

  it('a partition added but never written gets its marker, and the producer starts there at sequence 0', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('v1', 60_000);
    await s.tc.addPartitions('v1', p, [
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['a'], p.producerId, 0, 0), 'all');
    await s.tc.endTxn('v1', p, true, 1);
    expect((await s.batches(1, 'read_uncommitted')).highWatermark).toBe(1);
    await s.tc.addPartitions('v1', p, [{ topic: 't', partition: 1 }]);
    await s.sluice.producer.produceBatches('t', 1, txnBatch(['b'], p.producerId, 0, 0), 'all');
    await s.tc.endTxn('v1', p, true, 1);
    expect(await s.values(1, 'read_committed')).toEqual(['b']);
  });

  it('EndTxn retried after its answer was lost answers the same; the other outcome is INVALID_TXN_STATE', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('v1', 60_000);
    await s.tc.addPartitions('v1', p, [{ topic: 't', partition: 0 }]);
    await s.tc.endTxn('v1', p, true, 1);
    expect(await s.tc.endTxn('v1', p, true, 1)).toEqual(p);
    expect(await s.code(s.tc.endTxn('v1', p, false, 1))).toBe('INVALID_TXN_STATE');
  });

  it('a new instance still fences the old one (InitProducerId bumps the epoch)', async () => {
    const s = await setup();
    const old = await s.tc.initProducerId('v1', 60_000);
    await s.tc.addPartitions('v1', old, [{ topic: 't', partition: 0 }]);
    await s.sluice.producer.produceBatches('t', 0, txnBatch(['zombie'], old.producerId, 0, 0), 'all');
    const fresh = await s.tc.initProducerId('v1', 60_000);
    expect(fresh.producerEpoch).toBeGreaterThan(old.producerEpoch);
    expect(await s.code(s.tc.endTxn('v1', old, true, 1))).toBe('PRODUCER_FENCED');
    expect(
      await s.code(s.sluice.producer.produceBatches('t', 0, txnBatch(['late'], old.producerId, 0, 1), 'all')),
    ).toBe('INVALID_PRODUCER_EPOCH');
    expect(await s.values(0, 'read_committed')).toEqual([]);
  });

  it('a late first batch, verified while its transaction was open, cannot land after the transaction ended', async () => {
    const s = await setup();
    const p = await s.tc.initProducerId('v1', 60_000);
    await s.tc.addPartitions('v1', p, [{ topic: 't', partition: 0 }]);
    let ended = false;
    // The batch's commit (after its verification) is held back until the transaction has ended here.
    s.onMetadata(async (call, run) => {
      const verifiedCommit =
        call.op === 'update' &&
        !ended &&
        JSON.stringify(call.options?.condition ?? {}).includes(`"${stateAttr.lastMarkedTransactions}"`);
      if (verifiedCommit) {
        ended = true;
        s.onMetadata((_c, r) => r());
        await s.tc.endTxn('v1', p, false, 1);
      }
      return run();
    });
    expect(
      await s.code(s.sluice.producer.produceBatches('t', 0, txnBatch(['late'], p.producerId, 0, 0), 'all')),
    ).toBe('INVALID_TXN_STATE');
    expect(ended).toBe(true);
    // Nothing is left open: the LSO is the high watermark and read_committed sees nothing.
    const f = await s.batches(0, 'read_committed');
    expect(f.lastStableOffset).toBe(f.highWatermark);
    expect((await s.state(0)).ongoingTransactions).toEqual({});
    expect(await s.values(0, 'read_uncommitted')).toEqual([]);
  });
});
