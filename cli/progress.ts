/** A status line on stderr at most once a second: rewritten in place on a terminal, appended otherwise. */
import type { Output } from './io.js';

export class ProgressLine {
  private lastShown: number;
  private shown = false;

  constructor(
    private readonly out: Output,
    private readonly now: () => number,
    private readonly enabled: boolean,
    private readonly intervalMs = 1_000,
  ) {
    this.lastShown = now();
  }

  /** Shows `text()` when the interval has passed since the last line. */
  update(text: () => string): void {
    if (!this.enabled || this.now() - this.lastShown < this.intervalMs) return;
    this.lastShown = this.now();
    this.shown = true;
    void this.out.write(this.out.isTTY ? `\r\x1b[2K${text()}` : `${text()}\n`);
  }

  /** Clears the terminal line, so the summary starts clean. */
  done(): void {
    if (this.enabled && this.shown && this.out.isTTY) void this.out.write('\r\x1b[2K');
  }
}
