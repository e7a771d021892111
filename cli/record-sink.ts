/**
 * How `consume` prints records: kafka-console-consumer's DefaultMessageFormatter (the value alone
 * unless print.* says more), Sluice's detailed view, or JSON; and the sink that prints them up to
 * --max and remembers, per partition, what it printed (what a group member may commit).
 */
import type { Encoding, FetchedRecord, IsolationLevel } from './api.js';
import type { Context } from './command.js';
import { formatCount, formatRate } from './format.js';
import { ProgressLine } from './progress.js';

/**
 * How records print: `json` (--json), `details` (--details: partition, offset, key and value), or
 * kafka-console-consumer's DefaultMessageFormatter, whose default is the value alone.
 */
export type OutputMode = 'json' | 'details' | KafkaFormat;

/** kafka-console-consumer's DefaultMessageFormatter settings (`--property print.key=true` …). */
export interface KafkaFormat {
  printTimestamp: boolean;
  printPartition: boolean;
  printOffset: boolean;
  printHeaders: boolean;
  printKey: boolean;
  printValue: boolean;
  keySeparator: string;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/g;

/** A key or value as text on one line: JSON values serialized, control characters (not tabs) escaped. */
export const textOf = (value: unknown): string => {
  if (value === null || value === undefined) return 'null';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.replace(CONTROL, (c) => JSON.stringify(c).slice(1, -1));
};

/** One record as a line: JSON, Sluice's detailed view, or kafka-console-consumer's format. */
export const formatRecord = (
  topic: string,
  partition: number,
  record: FetchedRecord,
  mode: OutputMode,
): string => {
  if (mode === 'json') return JSON.stringify({ topic, partition, ...record });
  if (typeof mode === 'object') {
    // Kafka's field order: timestamp, partition, offset, headers, key, value.
    const fields: string[] = [];
    if (mode.printTimestamp) fields.push(`CreateTime:${record.timestamp}`);
    if (mode.printPartition) fields.push(`Partition:${partition}`);
    if (mode.printOffset) fields.push(`Offset:${record.offset}`);
    if (mode.printHeaders)
      fields.push(
        record.headers.length === 0
          ? 'NO_HEADERS'
          : record.headers.map((h) => `${h.key}:${textOf(h.value)}`).join(','),
      );
    if (mode.printKey) fields.push(textOf(record.key));
    if (mode.printValue) fields.push(textOf(record.value));
    return fields.join(mode.keySeparator);
  }
  return `Partition:${partition}\tOffset:${record.offset}\t${textOf(record.key)}\t${textOf(record.value)}`;
};

/** Prints records up to --max and remembers, per partition, the offset after the last one printed. */
export class RecordSink {
  printed = 0;
  readonly positions = new Map<number, number>();

  constructor(
    private readonly ctx: Context,
    private readonly topic: string,
    private readonly mode: OutputMode,
    private readonly max: number,
    /** Aborted by the sink when --max is reached; once aborted (Ctrl-C, a closed pipe), nothing more prints. */
    private readonly stop: AbortController,
    /** --timeout-ms: stop when no record arrives for this long. */
    private readonly idleMs?: number,
  ) {
    this.progress = new ProgressLine(
      ctx.stderr,
      ctx.now,
      ctx.stderr.isTTY === true && ctx.stdout.isTTY !== true && !ctx.quiet,
    );
    this.started = ctx.now();
    this.arm();
  }

  private idle: NodeJS.Timeout | undefined;
  /** On a terminal, while the records go to a file or a pipe: a running count on stderr. */
  private readonly progress: ProgressLine;
  private readonly started: number;

  private arm(): void {
    if (this.idleMs === undefined) return;
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.stop.abort(), this.idleMs);
  }

  close(): void {
    clearTimeout(this.idle);
    this.progress.done();
  }

  async deliver(partition: number, records: FetchedRecord[], nextOffset: number): Promise<boolean> {
    if (records.length > 0) this.arm();
    for (const record of records) {
      if (this.stop.signal.aborted) return false;
      await this.ctx.print(formatRecord(this.topic, partition, record, this.mode));
      this.printed += 1;
      this.positions.set(partition, record.offset + 1);
      this.progress.update(
        () =>
          `${formatCount(this.printed)} records consumed, ${formatRate(this.printed, this.ctx.now() - this.started)}`,
      );
      if (this.printed >= this.max) {
        this.stop.abort();
        return false;
      }
    }
    // Past the records printed, the fetch may have skipped offsets compaction removed.
    this.positions.set(partition, nextOffset);
    return true;
  }
}

/** What reading a topic into the sink takes, as a plain read or as a group member. */
export interface SinkSettings {
  topic: string;
  encoding: Encoding;
  /** Kafka's isolation.level: read_committed reads to the last stable offset, without aborted records. */
  isolationLevel: IsolationLevel;
  follow: boolean;
  sink: RecordSink;
  /** Aborted on Ctrl-C, when --max is reached, or when a partition fails. */
  stop: AbortController;
}
