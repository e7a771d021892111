/**
 * Window specifications with Kafka Streams' names and arithmetic: time windows are [start, end)
 * aligned to the epoch, session windows are [start, end] with both ends inclusive, and a grace period
 * is how long after a window's end out-of-order records are still accepted (by stream time).
 */
import { SluiceError } from '../protocol/errors.js';

export interface Window {
  start: number;
  end: number;
}

/** A key of a windowed aggregation: the record key and the window it counts in. */
export interface Windowed<K> {
  key: K;
  window: Window;
}

export class TimeWindows {
  private constructor(
    readonly sizeMs: number,
    readonly advanceMs: number,
    readonly graceMs: number,
  ) {
    requirePositive('window size', sizeMs);
    requirePositive('advance', advanceMs);
    requireNonNegative('grace', graceMs);
    if (advanceMs > sizeMs) throw invalid(`advance ${advanceMs} ms must not exceed the size ${sizeMs} ms`);
  }

  /** Tumbling windows of `sizeMs` that accept no late record. */
  static ofSizeWithNoGrace(sizeMs: number): TimeWindows {
    return new TimeWindows(sizeMs, sizeMs, 0);
  }

  static ofSizeAndGrace(sizeMs: number, graceMs: number): TimeWindows {
    return new TimeWindows(sizeMs, sizeMs, graceMs);
  }

  /** Hopping windows: a new window every `advanceMs`. */
  advanceBy(advanceMs: number): TimeWindows {
    return new TimeWindows(this.sizeMs, advanceMs, this.graceMs);
  }

  /** The windows a record at `timestamp` falls in, by start time (Kafka's `windowsFor`). */
  windowsFor(timestamp: number): Window[] {
    const windows: Window[] = [];
    let start =
      Math.floor(Math.max(0, timestamp - this.sizeMs + this.advanceMs) / this.advanceMs) * this.advanceMs;
    for (; start <= timestamp; start += this.advanceMs) windows.push({ start, end: start + this.sizeMs });
    return windows;
  }
}

export class SessionWindows {
  private constructor(
    readonly inactivityGapMs: number,
    readonly graceMs: number,
  ) {
    requirePositive('inactivity gap', inactivityGapMs);
    requireNonNegative('grace', graceMs);
  }

  static ofInactivityGapWithNoGrace(inactivityGapMs: number): SessionWindows {
    return new SessionWindows(inactivityGapMs, 0);
  }

  static ofInactivityGapAndGrace(inactivityGapMs: number, graceMs: number): SessionWindows {
    return new SessionWindows(inactivityGapMs, graceMs);
  }
}

/** How far apart in time two records of a stream–stream join may be: [t - before, t + after]. */
export class JoinWindows {
  private constructor(
    readonly beforeMs: number,
    readonly afterMs: number,
    readonly graceMs: number,
  ) {
    requireNonNegative('before', beforeMs);
    requireNonNegative('after', afterMs);
    requireNonNegative('grace', graceMs);
  }

  static ofTimeDifferenceWithNoGrace(timeDifferenceMs: number): JoinWindows {
    return new JoinWindows(timeDifferenceMs, timeDifferenceMs, 0);
  }

  static ofTimeDifferenceAndGrace(timeDifferenceMs: number, graceMs: number): JoinWindows {
    return new JoinWindows(timeDifferenceMs, timeDifferenceMs, graceMs);
  }

  before(beforeMs: number): JoinWindows {
    return new JoinWindows(beforeMs, this.afterMs, this.graceMs);
  }

  after(afterMs: number): JoinWindows {
    return new JoinWindows(this.beforeMs, afterMs, this.graceMs);
  }
}

const invalid = (message: string): SluiceError => new SluiceError('INVALID_CONFIG', message);

const requirePositive = (name: string, ms: number): void => {
  if (!Number.isSafeInteger(ms) || ms <= 0)
    throw invalid(`${name} must be a positive whole number of ms, not ${ms}`);
};

const requireNonNegative = (name: string, ms: number): void => {
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw invalid(`${name} must be a whole number of ms ≥ 0, not ${ms}`);
};
