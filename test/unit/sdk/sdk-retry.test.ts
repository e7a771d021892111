import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../sdk/errors.js';
import { createRetrier, nonIdempotent } from '../../../sdk/retry.js';

const retriable = (code = 'REQUEST_TIMED_OUT') =>
  new SluiceError(code, 'try again', { retriable: true, status: 504 });
const definite = () => new SluiceError('INVALID_REQUEST', 'no', { retriable: false, status: 400 });

/** A retrier whose sleeps are recorded instead of waited. */
const recording = (options: Parameters<typeof createRetrier>[0], random = () => 0.5) => {
  const sleeps: number[] = [];
  const retry = createRetrier(options, { sleep: async (ms) => void sleeps.push(ms), random });
  return { retry, sleeps };
};

describe('createRetrier', () => {
  it('backs off exponentially from the initial delay up to the cap', async () => {
    const { retry, sleeps } = recording({
      retries: 6,
      initialRetryTimeMs: 100,
      multiplier: 2,
      maxRetryTimeMs: 1_000,
    });
    let attempts = 0;
    const result = await retry(async () => {
      attempts++;
      if (attempts < 7) throw retriable();
      return 'ok';
    });
    expect(result).toBe('ok');
    expect(attempts).toBe(7);
    // random 0.5 is the jitter's midpoint: the nominal delays.
    expect(sleeps).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('draws each delay within ±jitter of its nominal value', async () => {
    const low = recording({ retries: 2, initialRetryTimeMs: 1_000, jitter: 0.2 }, () => 0);
    const high = recording({ retries: 2, initialRetryTimeMs: 1_000, jitter: 0.2 }, () => 0.999_999);
    for (const { retry } of [low, high]) {
      await expect(retry(async () => Promise.reject(retriable()))).rejects.toThrow('try again');
    }
    expect(low.sleeps).toEqual([800, 1_600]);
    expect(high.sleeps).toEqual([1_200, 2_400]);
  });

  it('gives up after the configured retries with the last error', async () => {
    const { retry, sleeps } = recording({ retries: 2 });
    let attempts = 0;
    const outcome = retry(async (_bail, attempt) => {
      attempts++;
      throw retriable(`ATTEMPT_${attempt}`);
    });
    await expect(outcome).rejects.toMatchObject({ code: 'ATTEMPT_2' });
    expect(attempts).toBe(3);
    expect(sleeps).toHaveLength(2);
  });

  it('does not retry an error that is not retriable', async () => {
    const { retry, sleeps } = recording({ retries: 5 });
    let attempts = 0;
    await expect(
      retry(async () => {
        attempts++;
        throw definite();
      }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect(attempts).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('does not retry plain errors (bugs, not outages)', async () => {
    const { retry } = recording({ retries: 5 });
    let attempts = 0;
    await expect(
      retry(async () => {
        attempts++;
        throw new TypeError('boom');
      }),
    ).rejects.toThrow(TypeError);
    expect(attempts).toBe(1);
  });

  it('stops at once when the operation bails, even with a retriable error', async () => {
    const { retry, sleeps } = recording({ retries: 5 });
    let attempts = 0;
    const outcome = retry(async (bail) => {
      attempts++;
      if (attempts === 2) bail(retriable('BAILED_WITH'));
      throw retriable();
    });
    await expect(outcome).rejects.toMatchObject({ code: 'BAILED_WITH' });
    expect(attempts).toBe(2);
    expect(sleeps).toHaveLength(1);
  });

  it('makes a single attempt with retries: 0', async () => {
    const { retry } = recording({ retries: 0 });
    let attempts = 0;
    await expect(retry(async () => (attempts++, Promise.reject(retriable())))).rejects.toThrow();
    expect(attempts).toBe(1);
  });

  it('stamps on the error it gives up with how many times the operation ran', async () => {
    const { retry } = recording({ retries: 2 });
    await expect(retry(async () => Promise.reject(retriable()))).rejects.toMatchObject({ attempts: 3 });
    await expect(retry(async () => Promise.reject(definite()))).rejects.toMatchObject({ attempts: 1 });
    let bailed = 0;
    const outcome = retry(async (bail) =>
      ++bailed === 2 ? bail(retriable('B')) : Promise.reject(retriable()),
    );
    await expect(outcome).rejects.toMatchObject({ code: 'B', attempts: 2 });
  });

  it('retries a refused connection unless told not to (nothing listens: a person should hear at once)', async () => {
    const refused = () =>
      new SluiceError('NETWORK_EXCEPTION', 'ECONNREFUSED', { retriable: true, details: { refused: true } });
    const patient = recording({ retries: 2 });
    let calls = 0;
    await expect(patient.retry(async () => (calls++, Promise.reject(refused())))).rejects.toThrow();
    expect(calls).toBe(3);
    const impatient = recording({ retries: 2, retryRefused: false });
    calls = 0;
    await expect(impatient.retry(async () => (calls++, Promise.reject(refused())))).rejects.toMatchObject({
      code: 'NETWORK_EXCEPTION',
      attempts: 1,
    });
    expect(calls).toBe(1);
    expect(impatient.sleeps).toEqual([]);
    // Any other retriable failure is still retried.
    calls = 0;
    await expect(impatient.retry(async () => (calls++, Promise.reject(retriable())))).rejects.toThrow();
    expect(calls).toBe(3);
  });

  describe('nonIdempotent', () => {
    const failing = (make: () => SluiceError) => {
      let calls = 0;
      const operation = nonIdempotent(async () => {
        calls++;
        throw make();
      });
      return { operation, calls: () => calls };
    };

    it('is retried after a retriable answer that changed nothing (4xx)', async () => {
      const { retry } = recording({ retries: 2 });
      const throttled = failing(
        () => new SluiceError('THROTTLING_QUOTA_EXCEEDED', 'slow down', { retriable: true, status: 429 }),
      );
      await expect(retry(throttled.operation)).rejects.toMatchObject({ attempts: 3 });
      expect(throttled.calls()).toBe(3);
    });

    it('is not retried after a timeout, a lost connection or a 5xx: it may have taken effect', async () => {
      const { retry, sleeps } = recording({ retries: 5 });
      for (const make of [
        () => retriable(), // 504
        () => new SluiceError('NOT_ENOUGH_REPLICAS', 'down', { retriable: true, status: 503 }),
        () => new SluiceError('NETWORK_EXCEPTION', 'reset', { retriable: true }),
      ]) {
        const once = failing(make);
        await expect(retry(once.operation)).rejects.toMatchObject({ attempts: 1 });
        expect(once.calls()).toBe(1);
      }
      expect(sleeps).toEqual([]);
    });

    it('is retried after a refused connection: the request never reached a server', async () => {
      const { retry } = recording({ retries: 1 });
      const refused = failing(
        () =>
          new SluiceError('NETWORK_EXCEPTION', 'ECONNREFUSED', {
            retriable: true,
            details: { refused: true },
          }),
      );
      await expect(retry(refused.operation)).rejects.toMatchObject({ attempts: 2 });
    });

    it('passes a success through', async () => {
      const { retry } = recording({});
      expect(await retry(nonIdempotent(async () => 'made'))).toBe('made');
    });
  });
});
