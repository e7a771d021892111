/**
 * Issue 10, classes 7b and 7c: producer ids come from POST /v1/producers, the partition item's
 * producer map stays bounded however many producers write, and a client cannot exhaust offsets.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';

import { decodePartitionState } from '../../../../lib/core/log/partition-codec.js';
import { producersToExpire } from '../../../../lib/core/log/producer-bounds.js';
import { encodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import { editHeader } from '../../../support/batch-surgery.js';
import { memorySluice } from '../../../support/log-support.js';

const BATCH = { 'content-type': 'application/vnd.kafka.record-batch' };
const batch = (value: string, producerId = -1, baseSequence = -1, producerEpoch = -1) =>
  encodeRecordBatch([{ key: null, value: new Uint8Array(Buffer.from(value)), timestamp: 1 }], {
    producerId,
    producerEpoch,
    baseSequence,
  });

const setup = async () => {
  const s = memorySluice({ tailFlushEntries: 4 });
  expect((await s.http('POST', '/v1/topics', { name: 't', partitions: 1 })).status).toBe(201);
  const topic = await s.sluice.catalog.get('t');
  const item = async () => (await s.store.get(keys.partitionState(topic.topicId, 0)))!;
  const send = (body: Uint8Array) => s.http('POST', '/v1/topics/t/partitions/0/batches', body, BATCH);
  return { ...s, item, send };
};

describe('producer ids', () => {
  it('refuses a producer id that POST /v1/producers never issued, writing nothing', async () => {
    const s = await setup();
    const { producerId } = (await s.http('POST', '/v1/producers')).body;
    expect(producerId).toBe(0);
    for (const invented of [1, 123_456, Number.MAX_SAFE_INTEGER]) {
      const reply = await s.send(batch('x', invented, 0, 0));
      expect([reply.status, reply.body.error.code]).toEqual([400, 'UNKNOWN_PRODUCER_ID']);
    }
    const state = decodePartitionState(await s.item());
    expect([state.nextOffset, Object.keys(state.producers)]).toEqual([0, []]);
    expect((await s.send(batch('ok', producerId, 0, 0))).body).toMatchObject({
      baseOffset: 0,
      lastOffset: 0,
    });
  });

  it('keeps at most maxProducersPerPartition (+ one flush) producers in the partition item, 3x as many writing', async () => {
    const s = await setup();
    const cap = 40;
    s.sluice.log.maxProducersPerPartition = cap; // the default, 1000, behaves alike but takes 10 s here
    let largest = 0;
    for (let i = 0; i < 3 * cap; i++) {
      const { producerId, producerEpoch } = (await s.http('POST', '/v1/producers')).body;
      s.clock.time += 1;
      const reply = await s.send(batch(`v${i}`, producerId, 0, producerEpoch));
      expect(reply.body.baseOffset).toBe(i);
      largest = Math.max(largest, Object.keys(decodePartitionState(await s.item()).producers).length);
    }
    expect(largest).toBeGreaterThan(cap);
    expect(largest).toBeLessThanOrEqual(cap + 4);
    const state = decodePartitionState(await s.item());
    // The most recent producers keep their state; the oldest lost it.
    expect(state.producers[String(3 * cap - 1)]).toBeDefined();
    expect(state.producers['0']).toBeUndefined();
    expect(Object.keys(state.producers)).toHaveLength(cap);
    // The partition stays writable, by new and by kept producers.
    expect((await s.send(batch('plain'))).body.baseOffset).toBe(3 * cap);
    expect((await s.send(batch('next', 3 * cap - 1, 1, 0))).body.baseOffset).toBe(3 * cap + 1);
  });
});

describe('offsets', () => {
  it('advance by exactly the records of each batch, whatever lastOffsetDelta claims', async () => {
    const s = await setup();
    const lying = editHeader(batch('x'), { lastOffsetDelta: 0x7fffffff });
    expect((await s.send(lying)).body.error.code).toBe('INVALID_RECORD');
    const three = encodeRecordBatch(
      ['a', 'b', 'c'].map((v) => ({ key: null, value: new Uint8Array(Buffer.from(v)), timestamp: 1 })),
    );
    expect((await s.send(three)).body).toMatchObject({ baseOffset: 0, lastOffset: 2 });
    expect(decodePartitionState(await s.item()).nextOffset).toBe(3);
  });
});

describe('producersToExpire', () => {
  const state = (n: number, tailProducers: number[] = []) => ({
    producers: Object.fromEntries(
      Array.from({ length: n }, (_, i) => [
        String(i),
        { producerEpoch: 0, lastSequence: 0, lastTimestamp: 1000 + i },
      ]),
    ),
    tail: tailProducers.map((p) => ({
      objectKey: 'x',
      position: 0,
      sizeInBytes: 1,
      offsetCount: 1,
      recordCount: 1,
      maxTimestamp: 1,
      firstTimestamp: 1,
      producerId: p,
    })),
    ongoingTransactions: {},
  });
  it('keeps the 1,000 most recently active of 1,500 producers by default', () => {
    const expired = producersToExpire(state(1500), 2000, 86_400_000);
    expect(expired).toEqual(Array.from({ length: 500 }, (_, i) => String(i)));
  });
  it('expires the idle first and never a producer with batches in the tail', () => {
    // 1 and 2 are idle (t 1001, 1002 older than now - 10); 0 has a batch in the tail; of 0, 3, 4, 5
    // three may stay, so the least recent other than 0 goes too.
    expect(producersToExpire(state(6, [0]), 1013, 10, 3)).toEqual(['1', '2', '3']);
    expect(producersToExpire(state(6, [0]), 1013, 10, 4)).toEqual(['1', '2']);
    expect(producersToExpire(state(6, [0]), 1000, 86_400_000, 3)).toEqual(['1', '2', '3']);
  });
  it('expires none below the limit, and of producers last active at once the lowest ids first', () => {
    expect(producersToExpire(state(6), 1000, 86_400_000, 8)).toEqual([]);
    expect(producersToExpire(state(6), 1000, 86_400_000, 6)).toEqual([]);
    // Ids past 2^32 are not array indices: the map keeps them in insertion order, the sort by id does not.
    const pr = {
      '5000000001': { producerEpoch: 0, lastSequence: 0, lastTimestamp: 7 },
      '5000000000': { producerEpoch: 0, lastSequence: 0, lastTimestamp: 7 },
      '12': { producerEpoch: 0, lastSequence: 0, lastTimestamp: 8 },
    };
    expect(
      producersToExpire({ producers: pr, tail: [], ongoingTransactions: {} }, 10, 86_400_000, 1),
    ).toEqual(['5000000000', '5000000001']);
  });
});
