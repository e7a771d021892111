/**
 * The commit's conditional update, case by case: what it writes, and why it refuses — fenced leader,
 * fenced or bumped producer epoch, sequences that do not continue (a new producer must start at 0),
 * retried duplicates in the tail and in the producer history, and Idempotency-Keys.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMetadataStore } from '../../../../lib/adapters/memory/metadata-store.js';
import { dataObjectKey, keys } from '../../../../lib/core/keys.js';
import type { CommitInput, ProducerBatchInfo } from '../../../../lib/core/log/commit.js';
import { SequenceGapError, commitBatch } from '../../../../lib/core/log/commit.js';
import { materializeTail } from '../../../../lib/core/log/materialize.js';
import type { TailEntry } from '../../../../lib/core/log/partition-state.js';
import {
  decodePartitionState,
  encodeTailEntry,
  initialPartitionState,
  stateAttr,
} from '../../../../lib/core/log/partition-codec.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { ConditionFailedError } from '../../../../lib/ports/metadata-store.js';
import type { MetadataStore } from '../../../../lib/ports/metadata-store.js';
import { beforeUpdate } from '../../../support/before-update.js';

const TOPIC_ID = 'tid';
const NOW = 1_700_000_000_000;
const key = keys.partitionState(TOPIC_ID, 0);

const entryOf = (n: number, id: string, extra: Partial<TailEntry> = {}): TailEntry => ({
  objectKey: dataObjectKey(TOPIC_ID, id),
  position: 0,
  sizeInBytes: 70 + n,
  offsetCount: n,
  recordCount: n,
  maxTimestamp: NOW,
  firstTimestamp: NOW,
  ...extra,
});

const setup = async () => {
  const store = new MemoryMetadataStore();
  await store.put(initialPartitionState(TOPIC_ID, 't', 0, ['s0']));
  const state = async () => decodePartitionState((await store.get(key))!);
  const commit = (entry: TailEntry, extra: Partial<CommitInput> = {}, on: MetadataStore = store) =>
    commitBatch(on, {
      topicId: TOPIC_ID,
      topic: 't',
      partition: 0,
      replica: { acks: 'all', leader: 's0', leaderEpoch: 0, isr: ['s0'] },
      entry,
      now: NOW,
      ...extra,
    });
  /**
   * A batch of producer 7 with `n` records from sequence `first`, and its tail entry (largest timestamp
   * NOW + first, so each batch's differs).
   */
  const produced = (epoch: number, first: number, n: number, id = `p${epoch}-${first}`) => {
    const producer: ProducerBatchInfo = {
      producerId: 7,
      producerEpoch: epoch,
      firstSequence: first,
      lastSequence: first + n - 1,
    };
    const entry = entryOf(n, id, {
      producerId: 7,
      producerEpoch: epoch,
      baseSequence: first,
      lastSequence: first + n - 1,
      maxTimestamp: NOW + first,
    });
    return { producer, entry, commit: (on?: MetadataStore) => commit(entry, { producer }, on) };
  };
  return { store, state, commit, produced };
};

/** The SluiceError the promise rejects with, as code, message and retriable. */
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => {
      throw new Error('expected the commit to be refused');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SluiceError);
  const { code, message, retriable } = error as SluiceError;
  return { code, message, retriable };
};

describe('a commit', () => {
  it('takes the next offsets, appends its entry to the tail and returns the image after it', async () => {
    const s = await setup();
    const a = entryOf(3, 'a');
    const b = entryOf(2, 'b');
    const first = await s.commit(a);
    expect(first).toEqual({ kind: 'committed', baseOffset: 0, logStartOffset: 0, state: await s.state() });
    await s.store.update(key, [{ set: 'logStartOffset', value: 1 }]);
    const second = await s.commit(b);
    const state = await s.state();
    expect(second).toEqual({ kind: 'committed', baseOffset: 3, logStartOffset: 1, state });
    const item = (await s.store.get(key))!;
    expect(item['tail']).toEqual([encodeTailEntry(a, TOPIC_ID), encodeTailEntry(b, TOPIC_ID)]);
    expect([
      state.nextOffset,
      state.tailBase,
      state.tail.length,
      state.producers,
      state.idempotencyKeys,
    ]).toEqual([5, 0, 2, {}, []]);
  });

  it('is fenced by a newer leader epoch and writes nothing', async () => {
    const s = await setup();
    await s.store.update(key, [{ set: 'leaderEpoch', value: 2 }]);
    const before = await s.store.get(key);
    expect(
      await refusal(
        s.commit(entryOf(1, 'a'), { replica: { acks: 'all', leader: 's0', leaderEpoch: 1, isr: ['s0'] } }),
      ),
    ).toEqual({
      code: 'FENCED_LEADER_EPOCH',
      message: 'partition t-0 is at leader epoch 2, this write started under 1',
      retriable: true,
    });
    expect(await s.store.get(key)).toEqual(before);
  });

  it('is fenced by an ISR that changed since the write began, naming both, and writes nothing', async () => {
    const s = await setup();
    await s.store.update(key, [
      { set: 'isr', value: ['s0', 's1'] },
      { set: [stateAttr.logEndOffsets, 's1'], value: 0 },
    ]);
    const before = await s.store.get(key);
    expect(await refusal(s.commit(entryOf(1, 'a')))).toEqual({
      code: 'FENCED_LEADER_EPOCH',
      message: 'partition t-0 changed its ISR to [s0, s1] since this write went to [s0]',
      retriable: true,
    });
    expect(await s.store.get(key)).toEqual(before);
    // And a shrink: the writer still counts a store the ISR dropped.
    expect(
      await refusal(
        s.commit(entryOf(1, 'a'), {
          replica: { acks: 'all', leader: 's0', leaderEpoch: 0, isr: ['s0', 's1', 's2'] },
        }),
      ),
    ).toMatchObject({
      message: 'partition t-0 changed its ISR to [s0, s1] since this write went to [s0, s1, s2]',
    });
  });

  it('refuses a damaged item whose leader LEO is not the log end as a storage error', async () => {
    const s = await setup();
    await s.store.update(key, [{ set: [stateAttr.logEndOffsets, 's0'], value: 5 }]);
    const before = await s.store.get(key);
    expect(await refusal(s.commit(entryOf(1, 'a')))).toEqual({
      code: 'KAFKA_STORAGE_ERROR',
      message: 'the leader s0 of t-0 has LEO 5 but the log ends at 0',
      retriable: true,
    });
    expect(await s.store.get(key)).toEqual(before);
    await s.store.update(key, [{ remove: [stateAttr.logEndOffsets, 's0'] }]);
    expect(await refusal(s.commit(entryOf(1, 'a')))).toMatchObject({
      message: 'the leader s0 of t-0 has LEO none but the log ends at 0',
    });
    expect(decodePartitionState((await s.store.get(key))!)).toMatchObject({ nextOffset: 0, tail: [] });
  });

  it('refuses a partition that does not exist', async () => {
    const s = await setup();
    await s.store.delete(key);
    expect(await refusal(s.commit(entryOf(1, 'a')))).toEqual({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: 'partition t-0 does not exist',
      retriable: false,
    });
    expect(await s.store.get(key)).toBeUndefined();
  });

  it('passes on a store failure that is not a failed condition', async () => {
    const s = await setup();
    const failing = beforeUpdate(s.store, async () => {
      throw new SluiceError('KAFKA_STORAGE_ERROR', 'unavailable', { retriable: true });
    });
    expect(await refusal(s.commit(entryOf(1, 'a'), {}, failing))).toEqual({
      code: 'KAFKA_STORAGE_ERROR',
      message: 'unavailable',
      retriable: true,
    });
  });
});

describe('an idempotent producer’s commit', () => {
  it('starts a new producer at sequence 0 and continues from its last sequence', async () => {
    const s = await setup();
    expect(await s.produced(0, 0, 3).commit()).toMatchObject({ kind: 'committed', baseOffset: 0 });
    expect((await s.state()).producers).toEqual({
      '7': { producerEpoch: 0, lastSequence: 2, lastTimestamp: NOW },
    });
    expect(await s.produced(0, 3, 2).commit()).toMatchObject({ kind: 'committed', baseOffset: 3 });
    expect((await s.state()).producers).toEqual({
      '7': { producerEpoch: 0, lastSequence: 4, lastTimestamp: NOW },
    });
  });

  it('refuses a new producer whose first batch does not start at sequence 0', async () => {
    const s = await setup();
    expect(await refusal(s.produced(0, 5, 1).commit())).toEqual({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      message: 'producer 7 epoch 0 sent sequence 5 on t-0; expected 0',
      retriable: false,
    });
    const state = await s.state();
    expect([state.nextOffset, state.tail, state.producers]).toEqual([0, [], {}]);
  });

  it('refuses a gap in the sequence and says which sequence was expected', async () => {
    const s = await setup();
    await s.produced(0, 0, 3).commit();
    expect(await refusal(s.produced(0, 4, 1).commit())).toEqual({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      message: 'producer 7 epoch 0 sent sequence 4 on t-0; expected 3',
      retriable: false,
    });
    // Ahead of the sequence is a gap the batches before may still fill (sequence-wait.ts waits on it);
    // behind it is not.
    expect(
      await s
        .produced(0, 4, 1)
        .commit()
        .catch((e: unknown) => e),
    ).toMatchObject({ name: 'SequenceGapError', code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
    const behind = await s
      .produced(0, 1, 1, 'behind')
      .commit()
      .catch((e: unknown) => e);
    expect([behind instanceof SequenceGapError, (behind as SluiceError).code]).toEqual([
      false,
      'OUT_OF_ORDER_SEQUENCE_NUMBER',
    ]);
    // Restarting at 0 under the same epoch is no new producer: the sequence must go on.
    expect(await refusal(s.produced(0, 0, 1, 'again').commit())).toMatchObject({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      message: 'producer 7 epoch 0 sent sequence 0 on t-0; expected 3',
    });
    expect((await s.state()).nextOffset).toBe(3);
  });

  it('answers a retried batch from the tail with its original offset and entry, writing nothing', async () => {
    const s = await setup();
    await s.commit(entryOf(2, 'other'));
    const first = s.produced(0, 0, 3);
    await first.commit();
    await s.produced(0, 3, 1).commit();
    const before = await s.store.get(key);
    expect(await first.commit()).toEqual({
      kind: 'duplicate',
      baseOffset: 2,
      entry: first.entry,
      maxTimestamp: NOW,
      logStartOffset: 0,
    });
    expect(await s.store.get(key)).toEqual(before);
    // The same first sequence with a different last one is no retry of that batch.
    expect(await refusal(s.produced(0, 0, 2, 'shorter').commit())).toMatchObject({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      message: 'producer 7 epoch 0 sent sequence 0 on t-0; expected 4',
    });
  });

  it('answers a retried batch that has left the tail from the producer history', async () => {
    const s = await setup();
    await s.commit(entryOf(2, 'other'));
    const first = s.produced(0, 0, 3);
    await first.commit();
    await s.produced(0, 3, 1).commit();
    expect(await materializeTail(s.store, TOPIC_ID, 0, { now: NOW, producerExpirationMs: 60_000 })).toBe(3);
    expect((await s.state()).tail).toEqual([]);
    expect(await first.commit()).toEqual({
      kind: 'duplicate',
      baseOffset: 2,
      entry: undefined,
      maxTimestamp: NOW,
      logStartOffset: 0,
    });
    expect(await s.produced(0, 3, 1).commit()).toEqual({
      kind: 'duplicate',
      baseOffset: 5,
      entry: undefined,
      maxTimestamp: NOW + 3,
      logStartOffset: 0,
    });
    expect(await refusal(s.produced(0, 1, 2, 'inside').commit())).toMatchObject({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      message: 'producer 7 epoch 0 sent sequence 1 on t-0; expected 4',
    });
  });

  it('does not answer from an expired incarnation’s history: only sequences up to the current one are retries', async () => {
    const s = await setup();
    const expire = async () => {
      const later = (await s.state()).producers['7']!.lastTimestamp + 60_001;
      await materializeTail(s.store, TOPIC_ID, 0, { now: NOW, producerExpirationMs: 60_000 });
      await materializeTail(s.store, TOPIC_ID, 0, { now: later, producerExpirationMs: 60_000 });
      expect((await s.state()).producers).toEqual({});
    };
    // Epoch 1 writes sequences 0..5 at offsets 0..5, is materialized, and expires.
    await s.produced(1, 0, 3).commit();
    const oldB = s.produced(1, 3, 3);
    await oldB.commit();
    await expire();
    // Starting again under epoch 0, it reaches sequence 5; the old epoch-1 batch 3..5 is no retry.
    await s.produced(0, 0, 3).commit();
    await s.produced(0, 3, 3).commit();
    expect(await refusal(oldB.commit())).toEqual({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      message: 'producer 7 epoch 1 sent sequence 3 on t-0; expected 0',
      retriable: false,
    });
    await expire();
    // Again under epoch 0 from sequence 0: epoch 0's batch 3..5 from before is history, and now a gap.
    await s.produced(0, 0, 1, 'again').commit();
    expect(await refusal(s.produced(0, 3, 3, 'gap').commit())).toEqual({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      message: 'producer 7 epoch 0 sent sequence 3 on t-0; expected 1',
      retriable: false,
    });
  });

  it('fences an older epoch of the producer', async () => {
    const s = await setup();
    await s.produced(3, 0, 2).commit();
    const before = await s.store.get(key);
    expect(await refusal(s.produced(2, 2, 1).commit())).toEqual({
      code: 'INVALID_PRODUCER_EPOCH',
      message: 'producer 7 epoch 2 is fenced by epoch 3 on t-0',
      retriable: false,
    });
    expect(await refusal(s.produced(2, 0, 1).commit())).toMatchObject({ code: 'INVALID_PRODUCER_EPOCH' });
    expect(await s.store.get(key)).toEqual(before);
  });

  it('takes a bumped epoch from sequence 0 only', async () => {
    const s = await setup();
    await s.produced(3, 0, 5).commit();
    expect(await refusal(s.produced(4, 5, 1).commit())).toEqual({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      message: 'producer 7 epoch 4 sent sequence 5 on t-0; expected 0',
      retriable: false,
    });
    expect(await s.produced(4, 0, 2).commit()).toMatchObject({ kind: 'committed', baseOffset: 5 });
    expect((await s.state()).producers).toEqual({
      '7': { producerEpoch: 4, lastSequence: 1, lastTimestamp: NOW },
    });
    // The old epoch is fenced now, even where its sequence would have continued.
    expect(await refusal(s.produced(3, 5, 1).commit())).toMatchObject({ code: 'INVALID_PRODUCER_EPOCH' });
  });

  it('keeps the producers of a partition apart', async () => {
    const s = await setup();
    await s.produced(0, 0, 2).commit();
    const other = { producerId: 8, producerEpoch: 0, firstSequence: 0, lastSequence: 0 };
    expect(
      await s.commit(entryOf(1, 'q', { producerId: 8, producerEpoch: 0, baseSequence: 0, lastSequence: 0 }), {
        producer: other,
      }),
    ).toMatchObject({
      kind: 'committed',
      baseOffset: 2,
    });
    expect((await s.state()).producers).toEqual({
      '7': { producerEpoch: 0, lastSequence: 1, lastTimestamp: NOW },
      '8': { producerEpoch: 0, lastSequence: 0, lastTimestamp: NOW },
    });
  });
});

describe('finding the retried batch in the tail', () => {
  it('matches producer id, epoch, first and last sequence, wherever the batch sits', async () => {
    const s = await setup();
    // Producer 8's batch with the same epoch and sequences comes first in the tail.
    const other = { producerId: 8, producerEpoch: 0, firstSequence: 0, lastSequence: 2 };
    await s.commit(
      entryOf(3, 'eight', { producerId: 8, producerEpoch: 0, baseSequence: 0, lastSequence: 2 }),
      { producer: other },
    );
    const first = s.produced(0, 0, 3);
    const second = s.produced(0, 3, 3);
    await first.commit();
    await second.commit();
    expect(await first.commit()).toMatchObject({ kind: 'duplicate', baseOffset: 3, entry: first.entry });
    expect(await second.commit()).toMatchObject({ kind: 'duplicate', baseOffset: 6, entry: second.entry });
    // Sequences 1..2 end where the first batch ends but are no batch that was written.
    expect(await refusal(s.produced(0, 1, 2, 'middle').commit())).toMatchObject({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      message: 'producer 7 epoch 0 sent sequence 1 on t-0; expected 6',
    });
    // The first entry of the tail is found too.
    expect(
      await s.commit(
        entryOf(3, 'eight', { producerId: 8, producerEpoch: 0, baseSequence: 0, lastSequence: 2 }),
        { producer: other },
      ),
    ).toMatchObject({ kind: 'duplicate', baseOffset: 0 });
  });

  it('tells a retry of the new epoch from the old epoch’s batch with the same sequences', async () => {
    const s = await setup();
    const old = s.produced(0, 0, 2);
    await old.commit();
    const bumped = s.produced(1, 0, 2);
    expect(await bumped.commit()).toMatchObject({ kind: 'committed', baseOffset: 2 });
    expect(await bumped.commit()).toEqual({
      kind: 'duplicate',
      baseOffset: 2,
      entry: bumped.entry,
      maxTimestamp: NOW,
      logStartOffset: 0,
    });
  });

  it('is a retriable server error when the store fails a condition that the image says held', async () => {
    const s = await setup();
    const image = (await s.store.get(key))!;
    const lying = beforeUpdate(s.store, async () => {
      throw new ConditionFailedError(image);
    });
    expect(await refusal(s.commit(entryOf(1, 'a'), {}, lying))).toEqual({
      code: 'UNKNOWN_SERVER_ERROR',
      message: 'commit on t-0 failed a condition that should have held',
      retriable: true,
    });
    // A key the image does not list is no duplicate, even if a tail entry carries it.
    await s.commit(entryOf(1, 'k', { idempotencyMark: 'h9' }));
    const unlisted = (await s.store.get(key))!;
    expect(decodePartitionState(unlisted).idempotencyKeys).toEqual([]);
    const lyingAgain = beforeUpdate(s.store, async () => {
      throw new ConditionFailedError(unlisted);
    });
    expect(
      await refusal(
        s.commit(
          entryOf(1, 'k2', { idempotencyMark: 'h9' }),
          { idempotency: { hash: 'h9', generation: 0 } },
          lyingAgain,
        ),
      ),
    ).toMatchObject({ code: 'UNKNOWN_SERVER_ERROR' });
  });
});

describe('a commit with an Idempotency-Key', () => {
  const keyed = (hash: string, generation = 0) => ({ idempotency: { hash, generation } });

  it('records the key and answers its replay with the original offset and entry', async () => {
    const s = await setup();
    const a = entryOf(2, 'a', { idempotencyMark: 'h1' });
    expect(await s.commit(a, keyed('h1'))).toMatchObject({ kind: 'committed', baseOffset: 0 });
    expect(await s.commit(entryOf(1, 'b', { idempotencyMark: 'h2' }), keyed('h2'))).toMatchObject({
      baseOffset: 2,
    });
    expect((await s.state()).idempotencyKeys).toEqual(['h1', 'h2']);
    const before = await s.store.get(key);
    expect(await s.commit(entryOf(2, 'a2', { idempotencyMark: 'h1' }), keyed('h1'))).toEqual({
      kind: 'duplicate',
      baseOffset: 0,
      entry: a,
      maxTimestamp: NOW,
      logStartOffset: 0,
    });
    expect(await s.store.get(key)).toEqual(before);
    // The replayed key's own entry, not the first one in the tail.
    expect(await s.commit(entryOf(1, 'b2', { idempotencyMark: 'h2' }), keyed('h2'))).toMatchObject({
      kind: 'duplicate',
      baseOffset: 2,
    });
  });

  it('finds the keyed entry behind entries that carry no key', async () => {
    const s = await setup();
    await s.commit(entryOf(2, 'plain'));
    const keyedEntry = entryOf(1, 'a', { idempotencyMark: 'h1' });
    expect(await s.commit(keyedEntry, keyed('h1'))).toMatchObject({ kind: 'committed', baseOffset: 2 });
    expect(await s.commit(entryOf(1, 'a2', { idempotencyMark: 'h1' }), keyed('h1'))).toEqual({
      kind: 'duplicate',
      baseOffset: 2,
      entry: keyedEntry,
      maxTimestamp: NOW,
      logStartOffset: 0,
    });
  });

  it('holds one pass past the generation its check read, and asks to check again after two', async () => {
    const s = await setup();
    await s.store.update(key, [{ set: stateAttr.idempotencyKeysGeneration, value: 2 }]);
    const before = await s.store.get(key);
    expect(await s.commit(entryOf(1, 'a', { idempotencyMark: 'h1' }), keyed('h1', 0))).toEqual({
      kind: 'retry',
    });
    expect(await s.store.get(key)).toEqual(before);
    // One pass past the check: the keys that pass removed were in their K# items when the check read.
    expect(await s.commit(entryOf(1, 'a', { idempotencyMark: 'h1' }), keyed('h1', 1))).toMatchObject({
      kind: 'committed',
    });
    expect(await s.commit(entryOf(1, 'b', { idempotencyMark: 'h2' }), keyed('h2', 2))).toMatchObject({
      kind: 'committed',
    });
  });

  it('of an idempotent producer asks to check again when only the key list moved, not OUT_OF_ORDER', async () => {
    const s = await setup();
    await s.produced(0, 0, 2).commit();
    await s.store.update(key, [{ set: stateAttr.idempotencyKeysGeneration, value: 2 }]);
    const before = await s.store.get(key);
    // The sequence continues (2 after 1): only the trimmed key list failed the condition.
    const next = s.produced(0, 2, 1, 'keyed');
    const entry = { ...next.entry, idempotencyMark: 'h1' };
    expect(await s.commit(entry, { producer: next.producer, ...keyed('h1', 0) })).toEqual({ kind: 'retry' });
    expect(await s.store.get(key)).toEqual(before);
    expect(await s.commit(entry, { producer: next.producer, ...keyed('h1', 1) })).toMatchObject({
      kind: 'committed',
      baseOffset: 2,
    });
    expect((await s.state()).producers['7']).toMatchObject({ producerEpoch: 0, lastSequence: 2 });
  });

  it('asks to check again when the key is listed but its entry has left the tail (its K# item answers)', async () => {
    const s = await setup();
    await s.store.update(key, [
      { set: stateAttr.idempotencyKeys, value: ['h1'] },
      { set: stateAttr.idempotencyKeysMoved, value: 1 },
    ]);
    const before = await s.store.get(key);
    expect(await s.commit(entryOf(1, 'a', { idempotencyMark: 'h1' }), keyed('h1'))).toEqual({
      kind: 'retry',
    });
    expect(await s.store.get(key)).toEqual(before);
  });
});
