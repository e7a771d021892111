/**
 * The coordinator's one compare-and-set retry loop, exactly: which errors start an attempt over, the
 * backoff windows (base, doubling, the lost attempt's duration, the cap), the attempt bound and the
 * retriable error past it.
 */
import { describe, expect, it } from 'vitest';
import { isConflict, retryOnConflict, StaleRead } from '../../../../lib/core/groups/cas-retry.js';
import { SluiceError } from '../../../../protocol/errors.js';
import { ConditionFailedError, TransactionCanceledError } from '../../../../lib/ports/metadata-store.js';

/** A clock that only moves when slept on, or when an attempt says it took `ms`. */
const clock = () => {
  const c = { time: 1_000, sleeps: [] as number[] };
  return {
    c,
    clock: {
      now: () => c.time,
      sleep: async (ms: number) => {
        c.sleeps.push(ms);
        c.time += ms;
      },
    },
  };
};

describe('a conflict', () => {
  it('is a failed condition, a stale read, or a cancelled transaction that conflicted', () => {
    expect(isConflict(new ConditionFailedError(undefined))).toBe(true);
    expect(isConflict(new StaleRead('moved'))).toBe(true);
    expect(isConflict(new TransactionCanceledError(['None', 'ConditionalCheckFailed']))).toBe(true);
    expect(isConflict(new TransactionCanceledError(['TransactionConflict']))).toBe(true);
    expect(isConflict(new TransactionCanceledError(['None', 'Other']))).toBe(false);
    expect(isConflict(new SluiceError('KAFKA_STORAGE_ERROR', 'down', { retriable: true }))).toBe(false);
    expect(isConflict(new Error('x'))).toBe(false);
    expect(new StaleRead('why')).toMatchObject({ name: 'StaleRead', message: 'why' });
  });
});

describe('retryOnConflict', () => {
  it('returns the first attempt that does not conflict, after full-jitter exponential backoff', async () => {
    const { c, clock: k } = clock();
    let n = 0;
    const result = await retryOnConflict('the join', { clock: k, random: () => 0.5 }, async () => {
      if (++n < 4) throw new ConditionFailedError(undefined);
      return 'done';
    });
    expect(result).toBe('done');
    expect(n).toBe(4);
    // Windows 20, 40, 80 ms (base 20 doubling), each drawn at 0.5.
    expect(c.sleeps).toEqual([10, 20, 40]);
  });

  it('gives up after 8 attempts with a retriable COORDINATOR_NOT_AVAILABLE naming what conflicted', async () => {
    const { c, clock: k } = clock();
    let n = 0;
    const last = new StaleRead('again');
    const error = await retryOnConflict('the commit', { clock: k, random: () => 1 }, async () => {
      n++;
      throw last;
    }).catch((e: unknown) => e);
    expect(n).toBe(8);
    expect(c.sleeps).toEqual([20, 40, 80, 160, 320, 640, 1280]);
    expect(error).toBeInstanceOf(SluiceError);
    expect(error).toMatchObject({
      code: 'COORDINATOR_NOT_AVAILABLE',
      message: 'the commit kept conflicting with concurrent changes; retry',
      retriable: true,
      cause: last,
    });
  });

  it('caps the window at maxDelayMs, starts it at a slow attempt’s duration, and honours the options', async () => {
    const { c, clock: k } = clock();
    let n = 0;
    const error = await retryOnConflict(
      'x',
      {
        clock: k,
        random: () => 1,
        attempts: 5,
        baseDelayMs: 10,
        maxDelayMs: 100,
        exhaustedCode: 'NOT_LEADER_OR_FOLLOWER',
      },
      async () => {
        n++;
        // The second attempt takes 30 ms: its window starts from 30, not from the base 10.
        if (n === 2) c.time += 30;
        throw new ConditionFailedError(undefined);
      },
    ).catch((e: unknown) => e);
    expect(n).toBe(5);
    expect(c.sleeps).toEqual([10, 60, 40, 80]);
    expect(error).toMatchObject({ code: 'NOT_LEADER_OR_FOLLOWER' });
    const capped = clock();
    await retryOnConflict(
      'y',
      { clock: capped.clock, random: () => 1, attempts: 4, maxDelayMs: 50 },
      async () => {
        throw new ConditionFailedError(undefined);
      },
    ).catch(() => undefined);
    expect(capped.c.sleeps).toEqual([20, 40, 50]);
  });

  it('passes any other error on at once, without a retry', async () => {
    const { c, clock: k } = clock();
    let n = 0;
    const failure = new SluiceError('KAFKA_STORAGE_ERROR', 'down', { retriable: true });
    await expect(
      retryOnConflict('z', { clock: k, random: () => 1 }, async () => {
        n++;
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect([n, c.sleeps]).toEqual([1, []]);
  });
});
