/**
 * Work started off a request's path (lib/core/log/context.ts BackgroundWork): kept until it settles,
 * failures swallowed, and `settled()` waits for it and for what it started meanwhile.
 */
import { describe, expect, it } from 'vitest';
import { BackgroundWork } from '../../../../lib/core/log/context.js';

const later = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('background work', () => {
  it('is settled once work on timers, and work it started, has finished or failed', async () => {
    const work = new BackgroundWork();
    const done: string[] = [];
    work.start(async () => {
      await later(5);
      done.push('first');
      work.start(async () => {
        await later(5);
        done.push('second');
      });
    });
    work.start(async () => {
      await later(1);
      throw new Error('its own to handle');
    });
    expect(work.size).toBe(2);
    // Waiting must let timers run: a loop of already-resolved waits would never let them.
    await work.settled();
    expect([done, work.size]).toEqual([['first', 'second'], 0]);
    await work.settled();
  });
});
