/**
 * A retried produce answered as its original was: the same offsets and, on a LogAppendTime topic, the
 * original's append time (Kafka answers a duplicate from the batch's metadata, not the retry's clock),
 * whether the original is still in the partition item's tail or has moved to the producer history
 * (binary batches) or the K# item (JSON with an Idempotency-Key).
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import type { ClusterOptions } from '../../../support/produce-support.js';
import { T0, batch, concat, produceCluster, records } from '../../../support/produce-support.js';

const LOG_APPEND = { 'message.timestamp.type': 'LogAppendTime' };
const CREATE = { 'message.timestamp.type': 'CreateTime' };
const IN_TAIL: ClusterOptions['config'] = {};
/** Every commit moves its entry out of the tail (into the batch index, the history, the K# items). */
const MATERIALIZED: ClusterOptions['config'] = { tailFlushEntries: 1 };
const RETRY_DELAY_MS = 7_000;

/**
 * A cluster where one plain batch (offsets 0-1) was followed by an idempotent request of two batches
 * (sequences 0-2, offsets 2-4) at T0; `original` is that request's answer, and the clock has moved on.
 */
const afterIdempotentBatches = async (configs: Record<string, string>, config: ClusterOptions['config']) => {
  const c = await produceCluster({ configs, ...(config ? { config } : {}) });
  const producer = c.sluice.producer;
  await producer.produceBatches('t', 0, batch(['x', 'y']), '1');
  const { producerId } = await producer.initProducerId();
  const pid = { producerId, producerEpoch: 0 };
  const body = concat(
    batch(['a', 'b'], { ...pid, baseSequence: 0 }),
    batch(['c'], { ...pid, baseSequence: 2 }),
  );
  const original = await producer.produceBatches('t', 0, body, '1');
  c.clock.time += RETRY_DELAY_MS;
  const retry = () => producer.produceBatches('t', 0, body, '1');
  const history = () =>
    c.store.dump().filter((i) => i.sk.startsWith(keys.producerBatchesPrefix(producerId, 0)));
  return { c, original, retry, history };
};

describe('a retried idempotent batch', () => {
  it.each([
    ['in the tail', IN_TAIL, 2, []],
    ['in the producer history', MATERIALIZED, 0, [[['0|2|2'], [T0]]]],
  ])(
    '%s, answers the original offsets and append time on a LogAppendTime topic',
    async (_where, config, tailLength, history) => {
      const s = await afterIdempotentBatches(LOG_APPEND, config);
      const answer = { baseOffset: 2, lastOffset: 4, logAppendTime: T0, logStartOffset: 0 };
      expect(s.original).toEqual(answer);
      expect((await s.c.state()).tail).toHaveLength(tailLength);
      // The history item: the batch's sequences and offset in `b`, its append time in `t`.
      expect(s.history().map((i) => [i['b'], i['t']])).toEqual(history);
      expect(await s.retry()).toEqual(answer);
      expect((await s.c.state()).nextOffset).toBe(5);
    },
  );

  it.each([
    ['in the tail', IN_TAIL],
    ['in the producer history', MATERIALIZED],
  ])('%s, answers -1 for the append time on a CreateTime topic', async (_where, config) => {
    const s = await afterIdempotentBatches(CREATE, config);
    const answer = { baseOffset: 2, lastOffset: 4, logAppendTime: -1, logStartOffset: 0 };
    expect(s.original).toEqual(answer);
    expect(await s.retry()).toEqual(answer);
  });
});

describe('a retried JSON produce with an Idempotency-Key on a LogAppendTime topic', () => {
  /** Two records at offsets 1-2 at T0 after one without a key at 0; the clock has moved on. */
  const afterKeyedRequest = async (config: ClusterOptions['config']) => {
    const c = await produceCluster({ configs: LOG_APPEND, ...(config ? { config } : {}) });
    await c.sluice.producer.produce('t', { records: records(['x']), acks: '1' });
    const sent = [5_000, 3_000].map((timestamp, i) => ({ ...records([`v${i}`])[0]!, timestamp }));
    const request = { records: sent, acks: '1' as const, idempotencyKey: 'order-1' };
    const original = await c.sluice.producer.produce('t', request);
    c.clock.time += RETRY_DELAY_MS;
    const retry = () => c.sluice.producer.produce('t', request);
    const keyItems = () => c.store.dump().filter((i) => i.sk.startsWith('K#'));
    return { c, original, retry, keyItems };
  };
  const ANSWER = [
    { partition: 0, offset: 1, timestamp: T0 },
    { partition: 0, offset: 2, timestamp: T0 },
  ];

  it.each([
    ['in the tail', IN_TAIL, 0],
    ['in its K# item', MATERIALIZED, 1],
  ])('%s, answers the original offsets and append time', async (_where, config, keyItems) => {
    const s = await afterKeyedRequest(config);
    expect(s.original).toEqual(ANSWER);
    expect(s.keyItems()).toHaveLength(keyItems);
    expect(await s.retry()).toEqual(ANSWER);
    expect((await s.c.state()).nextOffset).toBe(3);
  });
});
