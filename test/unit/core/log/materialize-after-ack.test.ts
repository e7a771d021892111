/**
 * The tail's move off the produce's path (LogOptions.materializeAfterAck, as deployed): the produce
 * that fills the tail is answered before its move has written anything, the move then completes on
 * its own, and a move that fails leaves the next one to take the tail. And the Idempotency-Key's
 * condition across moves: a commit holds one move past the generation its check read, and a key
 * committed and moved while another attempt of its request was between check and commit still
 * answers that attempt from the original.
 */
import { describe, expect, it } from 'vitest';
import { idempotencyHash } from '../../../../lib/core/log/idempotency.js';
import { produceCluster, records } from '../../../support/produce-support.js';
import { T0 } from '../../../support/produce-support.js';

const request = (values: string[], idempotencyKey?: string) => ({
  records: records(values),
  acks: '1' as const,
  ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
});

const isPagePut = (call: { op: string; key?: { sk: string } }) =>
  call.op === 'put' && call.key?.sk.startsWith('B#') === true;

describe('the tail moved after the answer', () => {
  it('answers the produce that fills the tail before its move writes anything, then moves it', async () => {
    const c = await produceCluster({ config: { tailFlushEntries: 2, materializeAfterAck: true } });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let pagePuts = 0;
    c.onMetadata(async (call, run) => {
      if (isPagePut(call)) {
        pagePuts++;
        await gate;
      }
      return run();
    });
    await c.sluice.producer.produce('t', request(['a']));
    // The second commit fills the tail: it is answered while its move waits on the page write.
    expect(await c.sluice.producer.produce('t', request(['b']))).toEqual([
      { partition: 0, offset: 1, timestamp: T0 },
    ]);
    expect(pagePuts).toBe(1);
    expect((await c.state()).tail).toHaveLength(2);
    expect(c.sluice.log.background.size).toBe(1);
    release();
    await c.sluice.log.background.settled();
    const state = await c.state();
    expect([state.tail.length, state.tailBase]).toEqual([0, 2]);
  });

  it('answers the produce when its move fails; the next move takes the whole tail', async () => {
    const c = await produceCluster({ config: { tailFlushEntries: 2, materializeAfterAck: true } });
    let failing = true;
    c.onMetadata(async (call, run) => {
      if (failing && isPagePut(call)) throw new Error('page write failed');
      return run();
    });
    for (const v of ['a', 'b']) await c.sluice.producer.produce('t', request([v]));
    await c.sluice.log.background.settled();
    expect((await c.state()).tail).toHaveLength(2);
    failing = false;
    for (const v of ['c', 'd']) await c.sluice.producer.produce('t', request([v]));
    await c.sluice.log.background.settled();
    const state = await c.state();
    expect([state.tail.length, state.tailBase, state.nextOffset]).toEqual([0, 4, 4]);
  });
});

describe('an Idempotency-Key commit across moves of the tail', () => {
  it('answers from the original when its key was committed and moved between check and commit', async () => {
    const c = await produceCluster({ config: { tailFlushEntries: 1 } });
    let hold: Promise<void> | undefined;
    let release!: () => void;
    let held!: () => void;
    const reached = new Promise<void>((resolve) => (held = resolve));
    let first = true;
    c.onMetadata(async (call, run) => {
      // Hold the first attempt's commit, after its check and its object write.
      if (first && call.op === 'update' && call.key?.sk === 'STATE') {
        first = false;
        hold = new Promise<void>((resolve) => (release = resolve));
        held();
        await hold;
      }
      return run();
    });
    const attempt = c.sluice.producer.produce('t', request(['x'], 'k-1'));
    await reached;
    // Another attempt of the request commits, and its commit moves the tail (and the key's K# item).
    const original = await c.producerWith({}).produce('t', request(['x'], 'k-1'));
    const moved = await c.state();
    expect([
      moved.tail.length,
      moved.idempotencyKeys,
      moved.idempotencyKeysMoved,
      moved.idempotencyKeysGeneration,
    ]).toEqual([0, [idempotencyHash(c.topic.topicId, 'k-1')], 1, 1]);
    release();
    expect(await attempt).toEqual(original);
    expect((await c.state()).nextOffset).toBe(1);
  });

  it('checks again only when two moves changed the key list since its check', async () => {
    const c = await produceCluster({ config: { tailFlushEntries: 1 } });
    let release!: () => void;
    let held!: () => void;
    const reached = new Promise<void>((resolve) => (held = resolve));
    let first = true;
    c.onMetadata(async (call, run) => {
      if (first && call.op === 'update' && call.key?.sk === 'STATE') {
        first = false;
        held();
        await new Promise<void>((resolve) => (release = resolve));
      }
      return run();
    });
    const attempt = c.sluice.producer.produce('t', request(['x'], 'k-2'));
    await reached;
    // Two keyed produces, each moving the tail: the key list's generation moves on twice.
    await c.producerWith({}).produce('t', request(['y'], 'k-3'));
    await c.producerWith({}).produce('t', request(['z'], 'k-4'));
    expect((await c.state()).idempotencyKeysGeneration).toBe(2);
    const commitsBefore = c.commits().length;
    release();
    expect(await attempt).toEqual([{ partition: 0, offset: 2, timestamp: T0 }]);
    // The held commit (already counted) was refused on the generation; checked again, one more commit.
    expect(c.commits().length - commitsBefore).toBe(1);
    expect(c.commits()).toHaveLength(4);
  });
});
