import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../../protocol/errors.js';
import { SequenceGapError } from '../../../../lib/core/log/commit.js';
import { commitInSequence } from '../../../../lib/core/log/sequence-wait.js';

const recordingClock = () => {
  const pauses: number[] = [];
  return { pauses, sleep: async (ms: number) => void pauses.push(ms) };
};

/** A commit that fails with `errors` in turn, then succeeds with the attempt number. */
const commitFailing = (errors: Error[]) => {
  let attempts = 0;
  return {
    get attempts() {
      return attempts;
    },
    commit: async () => {
      const error = errors[attempts++];
      if (error) throw error;
      return attempts;
    },
  };
};

const gap = () => new SequenceGapError('sequence 100 on t-0; expected 0');

describe('a commit ahead of its producer sequence', () => {
  it('commits once the batches before it have, pausing 2, 4, 8 ms between tries', async () => {
    const clock = recordingClock();
    const c = commitFailing([gap(), gap(), gap()]);
    expect(await commitInSequence(clock, 100, c.commit)).toBe(4);
    expect(clock.pauses).toEqual([2, 4, 8]);
  });

  it('answers the gap once its budget is spent: pauses double up to 16 ms and never pass the budget', async () => {
    const clock = recordingClock();
    const c = commitFailing(Array.from({ length: 20 }, gap));
    const error = await commitInSequence(clock, 100, c.commit).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SequenceGapError);
    expect((error as SluiceError).code).toBe('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(clock.pauses).toEqual([2, 4, 8, 16, 16, 16, 16, 16]);
    expect(c.attempts).toBe(9);
  });

  it('pauses up to its budget exactly: 2 + 4 + 8 ms fit a 14 ms budget, a fourth pause does not', async () => {
    const clock = recordingClock();
    const c = commitFailing(Array.from({ length: 5 }, gap));
    await expect(commitInSequence(clock, 14, c.commit)).rejects.toBeInstanceOf(SequenceGapError);
    expect([clock.pauses, c.attempts]).toEqual([[2, 4, 8], 4]);
    const fits = recordingClock();
    expect(await commitInSequence(fits, 14, commitFailing([gap(), gap(), gap()]).commit)).toBe(4);
    expect(fits.pauses).toEqual([2, 4, 8]);
  });

  it('with no budget (Kafka broker behaviour) answers the first gap at once', async () => {
    const clock = recordingClock();
    const c = commitFailing([gap()]);
    await expect(commitInSequence(clock, 0, c.commit)).rejects.toBeInstanceOf(SequenceGapError);
    expect([clock.pauses, c.attempts]).toEqual([[], 1]);
  });

  it('passes any other error through on the first try: a sequence already passed is no gap', async () => {
    const clock = recordingClock();
    const behind = new SluiceError('OUT_OF_ORDER_SEQUENCE_NUMBER', 'sequence 0 on t-0; expected 100');
    const c = commitFailing([behind]);
    expect(await commitInSequence(clock, 100, c.commit).catch((e: unknown) => e)).toBe(behind);
    expect([clock.pauses, c.attempts]).toEqual([[], 1]);
  });
});
