/**
 * A transactional batch's commit (KIP-98, KIP-890): the transaction's first offset is recorded once and
 * kept by later batches; a refused commit is explained by the verification guard (a verified batch of
 * a transaction whose marker the partition holds is INVALID_TXN_STATE, an unverified one of a
 * transaction not open here answers `unverified`) only when that is why it failed, never for a batch
 * refused for its sequence.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import type { CommitInput, ProducerBatchInfo } from '../../../../lib/core/log/commit.js';
import { commitBatch } from '../../../../lib/core/log/commit.js';
import {
  decodePartitionState,
  initialPartitionState,
  stateAttr,
} from '../../../../lib/core/log/partition-codec.js';

const TOPIC_ID = 'tid';
const NOW = 1_700_000_000_000;
const key = keys.partitionState(TOPIC_ID, 0);

const setup = async () => {
  const store = new MemoryMetadataStore();
  await store.put(initialPartitionState(TOPIC_ID, 't', 0, ['s0']));
  const state = async () => decodePartitionState((await store.get(key))!);
  /** Producer 7, epoch 0: `n` records from sequence `first`. */
  const commit = (first: number, n: number, extra: Partial<CommitInput> = {}) => {
    const producer: ProducerBatchInfo = {
      producerId: 7,
      producerEpoch: 0,
      firstSequence: first,
      lastSequence: first + n - 1,
    };
    return commitBatch(store, {
      topicId: TOPIC_ID,
      topic: 't',
      partition: 0,
      replica: { acks: 'all', leader: 's0', leaderEpoch: 0, isr: ['s0'] },
      entry: {
        objectKey: dataObjectKey(TOPIC_ID, `b${first}`),
        position: 0,
        sizeInBytes: 70 + n,
        offsetCount: n,
        recordCount: n,
        maxTimestamp: NOW,
        firstTimestamp: NOW,
        producerId: 7,
        producerEpoch: 0,
        baseSequence: first,
        lastSequence: first + n - 1,
      },
      producer,
      now: NOW,
      ...extra,
    });
  };
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      (outcome) => ({ outcome }),
      (error: { code?: string; message?: string }) => ({ code: error.code, message: error.message }),
    );
  return { store, state, commit, refusal };
};

describe('a transactional commit', () => {
  it('records the first offset of the transaction once: a later batch of it keeps it', async () => {
    const s = await setup();
    await s.commit(0, 3); // not transactional: offsets 0..2
    expect(await s.commit(3, 2, { transactional: { verified: true, transactionNumber: 1 } })).toMatchObject({
      kind: 'committed',
      baseOffset: 3,
    });
    expect(await s.commit(5, 4, { transactional: { verified: false } })).toMatchObject({
      kind: 'committed',
      baseOffset: 5,
    });
    expect((await s.state()).ongoingTransactions).toEqual({ 7: 3 });
  });

  it('refuses a verified batch of a transaction the partition already marked, saying so', async () => {
    const s = await setup();
    await s.store.update(key, [{ set: [stateAttr.lastMarkedTransactions, '7'], value: 2 }]);
    expect(
      await s.refusal(s.commit(0, 1, { transactional: { verified: true, transactionNumber: 2 } })),
    ).toEqual({
      code: 'INVALID_TXN_STATE',
      message: "producer 7's transaction ended on t-0 before this batch arrived",
    });
  });

  it('explains a verified batch refused for its sequence by the sequence, under an older marker', async () => {
    const s = await setup();
    await s.store.update(key, [{ set: [stateAttr.lastMarkedTransactions, '7'], value: 1 }]);
    expect(
      await s.refusal(s.commit(5, 1, { transactional: { verified: true, transactionNumber: 2 } })),
    ).toMatchObject({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
  });

  it('explains a plain batch of a producer that once had a transaction here by its sequence', async () => {
    const s = await setup();
    await s.store.update(key, [{ set: [stateAttr.lastMarkedTransactions, '7'], value: 1 }]);
    expect(await s.refusal(s.commit(5, 1))).toMatchObject({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
  });

  it('answers unverified for an unverified batch only when its transaction is not open here', async () => {
    const s = await setup();
    expect(await s.commit(0, 1, { transactional: { verified: false } })).toEqual({ kind: 'unverified' });
    expect(await s.commit(0, 1, { transactional: { verified: true, transactionNumber: 1 } })).toMatchObject({
      kind: 'committed',
    });
    // Open now: a batch out of sequence is refused for its sequence, not sent to verify again.
    expect(await s.refusal(s.commit(5, 1, { transactional: { verified: false } }))).toMatchObject({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
    });
  });
});
