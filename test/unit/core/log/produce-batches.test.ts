/**
 * A binary produce (RecordBatch v2 bytes, as a Kafka producer sends them) through
 * Producer.produceBatches: the checks of a request's batches against each other and against the
 * producer ids issued, what its tail entry records, and what it answers, a retry included.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { encodeRecordBatch } from '../../../../protocol/record-batch/index.js';
import { T0, batch, bytes, concat, metricPoints, produceCluster } from '../../../support/produce-support.js';

const idempotent = (producerId: number, baseSequence: number, producerEpoch = 0) => ({
  producerId,
  producerEpoch,
  baseSequence,
});

describe('a binary produce', () => {
  it('refuses an empty body as CORRUPT_MESSAGE, writing nothing', async () => {
    const c = await produceCluster();
    await expect(c.sluice.producer.produceBatches('t', 0, new Uint8Array(), '1')).rejects.toMatchObject({
      code: 'CORRUPT_MESSAGE',
      message: 'the body holds no RecordBatch',
    });
    expect(c.objectKeys()).toEqual({ s0: [] });
    expect(c.commits()).toHaveLength(0);
  });

  it('refuses a batch over max.message.bytes, writing nothing', async () => {
    const c = await produceCluster({ configs: { 'max.message.bytes': '100' } });
    const big = batch(['x'.repeat(60)]);
    await expect(c.sluice.producer.produceBatches('t', 0, big, '1')).rejects.toMatchObject({
      code: 'MESSAGE_TOO_LARGE',
      message: `batch 0 is ${big.length} bytes; the topic allows max.message.bytes=100`,
    });
    expect(c.objectKeys()).toEqual({ s0: [] });
  });

  it('refuses a keyless record in any batch of a compacted topic, naming the batch', async () => {
    const c = await produceCluster({ configs: { 'cleanup.policy': 'compact' } });
    const noKey = encodeRecordBatch([{ key: null, value: bytes('y'), timestamp: T0 }]);
    await expect(
      c.sluice.producer.produceBatches('t', 0, concat(batch(['x']), noKey), '1'),
    ).rejects.toMatchObject({
      code: 'INVALID_RECORD',
      message: 'compacted topic t cannot accept a record without a key (batch 1 has none)',
    });
    expect(c.commits()).toHaveLength(0);
  });

  it('records the span, record count, first and largest timestamps of all its batches', async () => {
    const c = await produceCluster();
    const body = concat(batch(['a', 'b'], {}, 2_000), batch(['c', 'd', 'e'], {}, 1_000));
    expect(await c.sluice.producer.produceBatches('t', 0, body, '1')).toEqual({
      baseOffset: 0,
      lastOffset: 4,
      logAppendTime: -1,
      logStartOffset: 0,
    });
    const [entry] = (await c.state()).tail;
    expect(entry).toEqual({
      objectKey: expect.any(String),
      position: 0,
      sizeInBytes: body.length,
      offsetCount: 5,
      recordCount: 5,
      maxTimestamp: 2_001,
      firstTimestamp: 1_000,
    });
  });

  it('keeps a batch stamped at the epoch (timestamp 0) at 0', async () => {
    const c = await produceCluster();
    await c.sluice.producer.produceBatches('t', 0, batch(['a'], {}, 0), '1');
    const [entry] = (await c.state()).tail;
    expect([entry!.maxTimestamp, entry!.firstTimestamp]).toEqual([0, 0]);
  });

  it('answers a retried idempotent batch on a LogAppendTime topic as the original was', async () => {
    const c = await produceCluster({ configs: { 'message.timestamp.type': 'LogAppendTime' } });
    const producer = c.sluice.producer;
    const { producerId } = await producer.initProducerId();
    const body = concat(
      batch(['a', 'b'], idempotent(producerId, 0)),
      batch(['c'], idempotent(producerId, 2)),
    );
    const first = await producer.produceBatches('t', 0, body, '1');
    expect(first).toEqual({ baseOffset: 0, lastOffset: 2, logAppendTime: T0, logStartOffset: 0 });
    const [entry] = (await c.state()).tail;
    expect([
      entry!.maxTimestamp,
      entry!.firstTimestamp,
      entry!.producerId,
      entry!.producerEpoch,
      entry!.baseSequence,
      entry!.lastSequence,
    ]).toEqual([T0, T0, producerId, 0, 0, 2]);
    c.clock.time += 7_000;
    expect(await producer.produceBatches('t', 0, body, '1')).toEqual(first);
    const next = await producer.produceBatches('t', 0, batch(['d'], idempotent(producerId, 3)), '1');
    expect(next).toEqual({ baseOffset: 3, lastOffset: 3, logAppendTime: T0 + 7_000, logStartOffset: 0 });
    expect((await c.state()).nextOffset).toBe(4);
  });

  it('counts its records and body bytes in MessagesInPerSec and BytesInPerSec once, not for a retry', async () => {
    // Kills the mutants of countIn and of the `committed` test before it (a retry is a duplicate).
    const c = await produceCluster();
    const m = metricPoints();
    const producer = c.producerWith({ telemetry: m.telemetry });
    const { producerId } = await producer.initProducerId();
    const body = concat(
      batch(['a', 'b'], idempotent(producerId, 0)),
      batch(['c'], idempotent(producerId, 2)),
    );
    const counted = [
      ['MessagesInPerSec', 3, { topic: 't' }],
      ['BytesInPerSec', body.length, { topic: 't' }],
    ];
    await producer.produceBatches('t', 0, body, '1');
    expect(m.points).toEqual(counted);
    await producer.produceBatches('t', 0, body, '1');
    expect(m.points).toEqual(counted);
    expect((await c.state()).nextOffset).toBe(3);
  });

  it('refuses a transactional batch as INVALID_TXN_STATE on an appender with no transaction coordinator', async () => {
    // LogAppender's default verifier: kills the mutants of its code and message.
    const c = await produceCluster();
    const producer = c.producerWith({});
    const { producerId } = await producer.initProducerId();
    const body = batch(['a'], { ...idempotent(producerId, 0), isTransactional: true });
    await expect(producer.produceBatches('t', 0, body, '1')).rejects.toMatchObject({
      code: 'INVALID_TXN_STATE',
      message: 'this deployment has no transaction coordinator',
    });
    expect((await c.state()).nextOffset).toBe(0);
  });

  describe('batches of one request', () => {
    const refusals: [string, (pid: number) => Uint8Array[], string, string][] = [
      [
        'an idempotent batch after a plain one',
        (pid) => [batch(['a']), batch(['b'], idempotent(pid, 0))],
        'INVALID_RECORD',
        'batches of one request must all be idempotent or all not',
      ],
      [
        'a plain batch after an idempotent one',
        (pid) => [batch(['a'], idempotent(pid, 0)), batch(['b'])],
        'INVALID_RECORD',
        'batches of one request must all be idempotent or all not',
      ],
      [
        'a producer id without a sequence',
        (pid) => [batch(['a'], { producerId: pid, producerEpoch: 0 })],
        'INVALID_RECORD',
        'batch 0 has producerId 0 but no sequence or epoch',
      ],
      [
        'a producer id without an epoch',
        (pid) => [batch(['a'], idempotent(pid, 0)), batch(['b'], { producerId: pid, baseSequence: 1 })],
        'INVALID_RECORD',
        'batch 1 has producerId 0 but no sequence or epoch',
      ],
      [
        'two producer ids',
        (pid) => [batch(['a'], idempotent(pid, 0)), batch(['b'], idempotent(pid + 1, 1))],
        'INVALID_RECORD',
        'batches of one request must come from one producer id and epoch',
      ],
      [
        'two epochs of one producer',
        (pid) => [batch(['a'], idempotent(pid, 0)), batch(['b'], idempotent(pid, 1, 1))],
        'INVALID_RECORD',
        'batches of one request must come from one producer id and epoch',
      ],
      [
        'a sequence gap between them',
        (pid) => [batch(['a', 'b'], idempotent(pid, 0)), batch(['c'], idempotent(pid, 3))],
        'OUT_OF_ORDER_SEQUENCE_NUMBER',
        'batch 1 starts at sequence 3; expected 2',
      ],
      [
        'a transactional batch after a plain idempotent one',
        (pid) => [
          batch(['a'], idempotent(pid, 0)),
          batch(['b'], { ...idempotent(pid, 1), isTransactional: true }),
        ],
        'INVALID_RECORD',
        'batches of one request must all be transactional or all not',
      ],
      [
        'a plain idempotent batch after a transactional one',
        (pid) => [
          batch(['a'], { ...idempotent(pid, 0), isTransactional: true }),
          batch(['b'], idempotent(pid, 1)),
        ],
        'INVALID_RECORD',
        'batches of one request must all be transactional or all not',
      ],
      [
        'a repeated sequence',
        (pid) => [batch(['a', 'b'], idempotent(pid, 0)), batch(['c'], idempotent(pid, 1))],
        'OUT_OF_ORDER_SEQUENCE_NUMBER',
        'batch 1 starts at sequence 1; expected 2',
      ],
    ];
    it.each(refusals)('are refused with %s', async (_, parts, code, message) => {
      const c = await produceCluster();
      const { producerId } = await c.sluice.producer.initProducerId();
      await c.sluice.producer.initProducerId();
      await expect(
        c.sluice.producer.produceBatches('t', 0, concat(...parts(producerId)), '1'),
      ).rejects.toMatchObject({ code, message });
      expect(c.objectKeys()).toEqual({ s0: [] });
      expect(c.commits()).toHaveLength(0);
    });

    it('commit as one entry with the producer’s first and last sequence when they chain', async () => {
      const c = await produceCluster();
      const { producerId } = await c.sluice.producer.initProducerId();
      const body = concat(
        batch(['a'], idempotent(producerId, 0)),
        batch(['b', 'c'], idempotent(producerId, 1)),
        batch(['d'], idempotent(producerId, 3)),
      );
      expect(await c.sluice.producer.produceBatches('t', 0, body, '1')).toMatchObject({
        baseOffset: 0,
        lastOffset: 3,
      });
      const state = await c.state();
      expect(
        state.tail.map((e) => [e.offsetCount, e.producerId, e.producerEpoch, e.baseSequence, e.lastSequence]),
      ).toEqual([[4, producerId, 0, 0, 3]]);
      expect(state.producers[String(producerId)]).toEqual({
        producerEpoch: 0,
        lastSequence: 3,
        lastTimestamp: T0,
      });
    });
  });

  it('refuses a producer id never issued, reading the id counter once per id this instance has not seen', async () => {
    const c = await produceCluster();
    const producer = c.sluice.producer;
    expect(await producer.initProducerId()).toEqual({ producerId: 0, producerEpoch: 0 });
    expect(await producer.initProducerId()).toEqual({ producerId: 1, producerEpoch: 0 });
    const counterReads = () =>
      c.calls
        .filter((call) => call.op === 'get' && call.key?.pk === keys.producerIds.pk)
        .map((call) => call.consistent);
    await producer.produceBatches('t', 0, batch(['a'], idempotent(0, 0)), '1');
    await producer.produceBatches('t', 0, batch(['b'], idempotent(1, 0)), '1');
    await producer.produceBatches('t', 0, batch(['c'], idempotent(0, 1)), '1');
    expect(counterReads()).toEqual([true]);
    await expect(producer.produceBatches('t', 0, batch(['d'], idempotent(2, 0)), '1')).rejects.toMatchObject({
      code: 'UNKNOWN_PRODUCER_ID',
      message: 'producer id 2 was never issued; get one from POST /v1/producers',
    });
    expect(counterReads()).toEqual([true, true]);
    // Issued since: the next read sees it.
    await producer.initProducerId();
    expect(await producer.produceBatches('t', 0, batch(['d'], idempotent(2, 0)), '1')).toMatchObject({
      baseOffset: 3,
    });
    expect((await c.state()).nextOffset).toBe(4);
  });
});
