/** What `produce` wrote: records per partition and their offset range, plus the first failure. */
import type { BatchOutcome } from '../sdk/record-accumulator.js';
import { SluiceError } from '../sdk/errors.js';
import { formatDuration, formatRate, plural } from './format.js';
import { renderTable } from './table.js';

interface PartitionTally {
  partition: number;
  records: number;
  firstOffset: number;
  lastOffset: number;
}

export class ProduceSummary {
  readonly partitions = new Map<number, PartitionTally>();
  records = 0;
  requests = 0;
  failed = 0;
  firstError: SluiceError | undefined;
  /** The append index of the first record that was not written. */
  firstFailedIndex: number | undefined;

  /** Counts one batch's answer: its records written at baseOffset..lastOffset, or all failed. */
  add(outcome: BatchOutcome): void {
    this.requests += 1;
    const count = outcome.indices.length;
    if ('error' in outcome) {
      this.failed += count;
      const first = outcome.indices[0];
      if (first !== undefined && (this.firstFailedIndex === undefined || first < this.firstFailedIndex))
        this.firstFailedIndex = first;
      this.firstError ??=
        outcome.error instanceof SluiceError
          ? outcome.error
          : new SluiceError('UNKNOWN_SERVER_ERROR', String(outcome.error), { retriable: false });
      return;
    }
    this.records += count;
    const tally = this.partitions.get(outcome.partition);
    if (!tally) {
      this.partitions.set(outcome.partition, {
        partition: outcome.partition,
        records: count,
        firstOffset: outcome.baseOffset,
        lastOffset: outcome.lastOffset,
      });
    } else {
      tally.records += count;
      tally.firstOffset = Math.min(tally.firstOffset, outcome.baseOffset);
      tally.lastOffset = Math.max(tally.lastOffset, outcome.lastOffset);
    }
  }

  sorted(): PartitionTally[] {
    return [...this.partitions.values()].sort((a, b) => a.partition - b.partition);
  }

  render(topic: string, elapsedMs: number): string {
    const head =
      `Produced ${plural(this.records, 'record')} to ${topic} in ${plural(this.requests, 'request')} ` +
      `(${formatDuration(elapsedMs)}, ${formatRate(this.records, elapsedMs)})` +
      (this.failed > 0 ? `; ${plural(this.failed, 'record')} failed.` : '.');
    if (this.partitions.size === 0) return head;
    const table = renderTable(
      [
        { header: 'PARTITION', value: (t) => t.partition },
        { header: 'RECORDS', value: (t) => t.records },
        { header: 'FIRST OFFSET', value: (t) => t.firstOffset },
        { header: 'LAST OFFSET', value: (t) => t.lastOffset },
      ],
      this.sorted(),
    );
    return `${head}\n${table}`;
  }

  toJSON(topic: string, elapsedMs: number): unknown {
    return {
      topic,
      records: this.records,
      failed: this.failed,
      requests: this.requests,
      elapsedMs: Math.round(elapsedMs),
      partitions: this.sorted(),
    };
  }
}
