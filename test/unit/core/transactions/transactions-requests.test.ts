/**
 * Requests per transaction: DynamoDB calls and S3 PUTs of one transaction writing one batch into each
 * of N partitions and committing (InitProducerId and the first transaction excluded: caches warm).
 * Pins the counts docs/design.md quotes, so a change that adds a request per partition shows here.
 */
import { describe, expect, it } from 'vitest';
import { batch, produceCluster } from '../../../support/produce-support.js';

const measure = async (n: number) => {
  const c = await produceCluster({ partitions: n });
  let puts = 0;
  c.onPut(() => void puts++);
  const tc = c.sluice.transactions;
  let p = await tc.initProducerId('app', 60_000);
  const partitions = Array.from({ length: n }, (_, partition) => ({ topic: 't', partition }));
  const run = async () => {
    await tc.addPartitions('app', p, partitions);
    for (const { partition } of partitions)
      await c.sluice.producer.produceBatches(
        't',
        partition,
        batch(['v'], {
          producerId: p.producerId,
          producerEpoch: p.producerEpoch,
          baseSequence: 0,
          isTransactional: true,
        }),
        'all',
      );
    p = await tc.endTxn('app', p, true);
  };
  await run();
  const calls = c.calls.length;
  puts = 0;
  await run();
  return { dynamodb: c.calls.length - calls, s3Puts: puts };
};

describe('requests per transaction', () => {
  it('is 5 + 6N DynamoDB requests and 2N S3 PUTs for N partitions', async () => {
    const figures: Record<number, { dynamodb: number; s3Puts: number }> = {};
    for (const n of [1, 4, 16]) figures[n] = await measure(n);
    console.log('requests per transaction', JSON.stringify(figures));
    expect(figures).toEqual({
      1: { dynamodb: 11, s3Puts: 2 },
      4: { dynamodb: 29, s3Puts: 8 },
      16: { dynamodb: 101, s3Puts: 32 },
    });
  });
});
