/**
 * A clock that moves only when told. `sleep` registers a timer; `advance` moves time forward and fires
 * due timers one at a time, in due order (ties in registration order), letting each continuation run at
 * its own instant before the next fires — so code that sleeps observes the time it woke at.
 */
import type { Clock } from '../../ports/clock.js';

interface Timer {
  due: number;
  seq: number;
  resolve: () => void;
}

/** Lets every queued microtask (and whatever they chain) run. */
export const macrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ManualClock implements Clock {
  private current: number;
  private timers: Timer[] = [];
  private seq = 0;

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.timers.push({ due: this.current + Math.max(0, ms), seq: this.seq++, resolve });
      this.timers.sort((a, b) => a.due - b.due || a.seq - b.seq);
    });
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.timers.length;
  }

  /** When the next timer fires, if any. */
  nextDue(): number | undefined {
    return this.timers[0]?.due;
  }

  /** Moves time forward by ms, firing every timer due on the way in order. */
  async advance(ms: number): Promise<void> {
    const target = this.current + Math.max(0, ms);
    for (let timer = this.timers[0]; timer && timer.due <= target; timer = this.timers[0]) {
      this.timers.shift();
      this.current = Math.max(this.current, timer.due);
      timer.resolve();
      await macrotask();
    }
    this.current = target;
  }

  /** Jumps to the next timer and fires it (and any due at the same instant); false when none is pending. */
  async runNext(): Promise<boolean> {
    const due = this.nextDue();
    if (due === undefined) return false;
    await this.advance(due - this.current);
    return true;
  }
}

/**
 * Runs `work` to completion under a manual clock: lets microtasks settle, and whenever everything is
 * waiting on a timer, jumps to the next one. Throws if work is stuck with no timer to fire.
 */
export const drive = async <T>(clock: ManualClock, work: Promise<T>): Promise<T> => {
  let settled = false;
  const tracked = work.finally(() => {
    settled = true;
  });
  // Keep an unobserved rejection from surfacing before we await it below.
  tracked.catch(() => undefined);
  let idle = 0;
  while (!settled) {
    await macrotask();
    if (settled) break;
    if (await clock.runNext()) idle = 0;
    else if (++idle > 1000) throw new Error('drive: work is stuck with no pending timer');
  }
  return tracked;
};
