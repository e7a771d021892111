/**
 * The commit step of a produce (lib/core/log/produce.ts) when its conditional write fails: retries of
 * an Idempotency-Key request that race each other or the materializer, a commit fenced on every
 * attempt, a refusal that is not retried, and when a committer moves the tail to the batch index.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../../../../lib/core/keys.js';
import { idempotencyHash } from '../../../../lib/core/log/idempotency.js';
import { isCommit } from '../../../support/seams.js';
import type { Cluster } from '../../../support/produce-support.js';
import { T0, batch, metricPoints, produceCluster, records } from '../../../support/produce-support.js';
import { stateAttr } from '../../../../lib/core/log/partition-codec.js';

/** Holds the first commit until `release()`; `held` resolves once it is reached. */
const holdFirstCommit = (c: Cluster) => {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const held = new Promise<void>((r) => (reached = r));
  let first = true;
  c.onMetadata(async (call, run) => {
    if (first && isCommit(call)) {
      first = false;
      reached();
      await gate;
    }
    return run();
  });
  return { held, release };
};

/** Changes the partition item directly, as a concurrent writer (materializer, election) would. */
const change = (c: Cluster, set: string, add: number) =>
  c.store.update(keys.partitionState(c.topic.topicId, 0), [{ set, add, initial: 0 }]);

const request = (values: string[], idempotencyKey?: string) => ({
  records: records(values),
  acks: '1' as const,
  ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
});

const answers = (offsets: number[], timestamp: number) =>
  offsets.map((offset) => ({ partition: 0, offset, timestamp }));

describe('an Idempotency-Key retry found before writing', () => {
  it('answers from the partition item without writing an object or committing', async () => {
    const c = await produceCluster({ config: { tailFlushEntries: 100 } });
    const producer = c.sluice.producer;
    await producer.produce('t', request(['a', 'b']));
    await producer.produce('t', request(['c', 'd', 'e']));
    expect(await producer.produce('t', request(['x', 'y'], 'k-1'))).toEqual(answers([5, 6], T0));
    expect((await c.state()).idempotencyKeys).toEqual([idempotencyHash(c.topic.topicId, 'k-1')]);
    const before = { objects: c.objectKeys(), calls: c.calls.length };
    c.clock.time += 1_000;
    expect(await producer.produce('t', request(['x', 'y'], 'k-1'))).toEqual(answers([5, 6], T0));
    expect(c.objectKeys()).toEqual(before.objects);
    // One read of the partition item, no read of the key's own item, no write.
    expect(c.calls.slice(before.calls).map((call) => [call.op, call.key?.sk])).toEqual([['get', 'STATE']]);
  });

  it('finds the first entry of the tail too', async () => {
    const c = await produceCluster({ config: { tailFlushEntries: 100 } });
    expect(await c.sluice.producer.produce('t', request(['x'], 'k-2'))).toEqual(answers([0], T0));
    const objects = c.objectKeys();
    expect(await c.sluice.producer.produce('t', request(['x'], 'k-2'))).toEqual(answers([0], T0));
    expect(c.objectKeys()).toEqual(objects);
    expect(c.commits()).toHaveLength(1);
  });

  it('reads the key’s own item consistently once its entry left the partition item', async () => {
    const c = await produceCluster({ config: { tailFlushEntries: 2 } });
    const producer = c.sluice.producer;
    expect(await producer.produce('t', request(['x'], 'k-3'))).toEqual(answers([0], T0));
    for (let i = 0; i < 3; i++) await producer.produce('t', request([`v${i}`]));
    expect((await c.state()).tail).toEqual([]);
    const from = c.calls.length;
    expect(await producer.produce('t', request(['x'], 'k-3'))).toEqual(answers([0], T0));
    const reads = c.calls.slice(from).filter((call) => call.op === 'get' && call.key?.sk !== 'STATE');
    expect(reads.map((call) => call.consistent)).toEqual([true]);
  });
});

describe('Idempotency-Key attempts that race to the commit', () => {
  const setup = async (tailFlushEntries = 100) => {
    const c = await produceCluster({ config: { tailFlushEntries } });
    const { held, release } = holdFirstCommit(c);
    return { c, held, release };
  };

  it('answers the later commit with the first one’s offsets and timestamps', async () => {
    const { c, held, release } = await setup();
    const first = c.sluice.producer.produce('t', request(['a', 'b'], 'k-4'));
    await held;
    c.clock.time += 5_000;
    // Another instance's attempt of the same request commits first, at its own clock.
    const second = await c.producerWith({}).produce('t', request(['a', 'b'], 'k-4'));
    expect(second).toEqual(answers([0, 1], T0 + 5_000));
    release();
    expect(await first).toEqual(second);
    expect((await c.state()).nextOffset).toBe(2);
    expect(c.commits()).toHaveLength(2);
  });

  it('counts the records in MessagesInPerSec once: the later commit, a duplicate, appends nothing', async () => {
    // Kills the mutant that counts every outcome of a JSON produce's commit, a duplicate's too.
    const { c, held, release } = await setup();
    const [late, early] = [metricPoints(), metricPoints()];
    const first = c.producerWith({ telemetry: late.telemetry }).produce('t', request(['a', 'b'], 'k-8'));
    await held;
    await c.producerWith({ telemetry: early.telemetry }).produce('t', request(['a', 'b'], 'k-8'));
    release();
    expect(await first).toEqual(answers([0, 1], T0));
    expect(c.commits()).toHaveLength(2);
    const [entry] = (await c.state()).tail;
    expect(early.points).toEqual([
      ['MessagesInPerSec', 2, { topic: 't' }],
      ['BytesInPerSec', entry!.sizeInBytes, { topic: 't' }],
    ]);
    expect(late.points).toEqual([]);
  });

  it('refuses the held attempt when the key committed another request meanwhile', async () => {
    const { c, held, release } = await setup();
    const first = c.sluice.producer.produce('t', request(['a', 'b'], 'k-5'));
    await held;
    await c.producerWith({}).produce('t', request(['other'], 'k-5'));
    release();
    await expect(first).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      message:
        'this Idempotency-Key was used for a different request on t-0; use a new key for a new request',
    });
    expect((await c.state()).nextOffset).toBe(1);
  });

  it('looks again when the key list was trimmed meanwhile and answers from the key’s own item', async () => {
    const { c, held, release } = await setup(1);
    const first = c.sluice.producer.produce('t', request(['a', 'b'], 'k-6'));
    await held;
    c.clock.time += 5_000;
    const second = await c.producerWith({}).produce('t', request(['a', 'b'], 'k-6'));
    // The committer moved the tail out of the partition item; the key stays listed one pass longer.
    const state = await c.state();
    expect([
      state.tail.length,
      state.idempotencyKeys.length,
      state.idempotencyKeysMoved,
      state.idempotencyKeysGeneration,
    ]).toEqual([0, 1, 1, 1]);
    release();
    expect(await first).toEqual(second);
    expect((await c.state()).nextOffset).toBe(2);
  });

  it('commits with the new key generation when another key was trimmed meanwhile', async () => {
    const { c, held, release } = await setup(1);
    const first = c.sluice.producer.produce('t', request(['a', 'b'], 'k-7'));
    await held;
    expect(await c.producerWith({}).produce('t', request(['c'], 'k-8'))).toEqual(answers([0], T0));
    release();
    expect(await first).toEqual(answers([1, 2], T0));
    expect((await c.state()).nextOffset).toBe(3);
    // The held commit holds one pass past its check's generation: it commits at once, as k-8 did.
    expect(c.commits()).toHaveLength(2);
  });

  it('gives up with REQUEST_TIMED_OUT after 6 commits when the key list changes twice before each', async () => {
    const c = await produceCluster();
    c.onMetadata(async (call, run) => {
      if (isCommit(call)) await change(c, stateAttr.idempotencyKeysGeneration, 2);
      return run();
    });
    await expect(c.sluice.producer.produce('t', request(['a'], 'k-9'))).rejects.toMatchObject({
      code: 'REQUEST_TIMED_OUT',
      message: 'commit on t-0 kept racing; retry',
    });
    expect(c.commits()).toHaveLength(6);
    expect((await c.state()).nextOffset).toBe(0);
  });
});

describe('a fenced commit', () => {
  it('is tried 6 times in all when fenced on each, then answers the last fencing', async () => {
    const c = await produceCluster();
    // Each commit meets a newer leader epoch, gone again before the next attempt reads it.
    c.onMetadata(async (call, run) => {
      if (!isCommit(call)) return run();
      await change(c, 'leaderEpoch', 1);
      try {
        return await run();
      } finally {
        await change(c, 'leaderEpoch', -1);
      }
    });
    await expect(c.sluice.producer.produce('t', request(['a']))).rejects.toMatchObject({
      code: 'FENCED_LEADER_EPOCH',
      message: 'partition t-0 is at leader epoch 1, this write started under 0',
    });
    expect(c.commits()).toHaveLength(6);
    expect(Object.values(c.objectKeys()).flat()).toHaveLength(1);
  });

  it('writes again under each new epoch and answers the last fencing at the sixth attempt', async () => {
    const c = await produceCluster();
    c.onMetadata(async (call, run) => {
      if (isCommit(call)) await change(c, 'leaderEpoch', 1);
      return run();
    });
    await expect(c.sluice.producer.produce('t', request(['a']))).rejects.toMatchObject({
      code: 'FENCED_LEADER_EPOCH',
      message: 'partition t-0 is at leader epoch 5, this write started under 4',
    });
    // Attempt 1 commits the first object; attempts 2-5 write it again under the epoch they read.
    expect(c.commits()).toHaveLength(5);
    expect(Object.values(c.objectKeys()).flat()).toHaveLength(5);
    expect((await c.state()).nextOffset).toBe(0);
  });
  it('names the leadership it moved to when it moves at the sixth attempt after five key-list races', async () => {
    const c = await produceCluster({ stores: 3, replicationFactor: 3 });
    let commits = 0;
    c.onMetadata(async (call, run) => {
      if (!isCommit(call)) return run();
      await change(c, stateAttr.idempotencyKeysGeneration, 2);
      try {
        return await run();
      } finally {
        if (++commits === 5) await change(c, 'leaderEpoch', 1);
      }
    });
    const sent = { ...request(['a'], 'k-10'), acks: 'all' as const };
    await expect(c.sluice.producer.produce('t', sent)).rejects.toMatchObject({
      code: 'FENCED_LEADER_EPOCH',
      message:
        't-0 moved to leader epoch 1, ISR [s0, s1, s2] while this write went to [s0, s1, s2] under epoch 0',
    });
    expect(c.commits()).toHaveLength(5);
  });
});

describe('a refused commit', () => {
  it('is not tried again when the refusal is not a fencing', async () => {
    const c = await produceCluster();
    const { producerId } = await c.sluice.producer.initProducerId();
    const ahead = batch(['a'], { producerId, producerEpoch: 0, baseSequence: 5 });
    await expect(c.sluice.producer.produceBatches('t', 0, ahead, '1')).rejects.toMatchObject({
      code: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      message: `producer ${producerId} epoch 0 sent sequence 5 on t-0; expected 0`,
    });
    expect(c.commits()).toHaveLength(1);
  });
});

describe('the committer that moves the tail', () => {
  it('is the one whose commit makes the tail a multiple of tailFlushEntries', async () => {
    const c = await produceCluster({ config: { tailFlushEntries: 3 } });
    const lengths: number[] = [];
    for (let i = 0; i < 7; i++) {
      await c.sluice.producer.produce('t', request([`v${i}`]));
      lengths.push((await c.state()).tail.length);
    }
    expect(lengths).toEqual([1, 2, 0, 1, 2, 0, 1]);
  });
});
