/**
 * `consume`, after kafka-console-consumer.sh: prints records of some or all partitions from a starting
 * point, until the end of the log or (`--follow`) by long polls until Ctrl-C; with `--group` as a member
 * of a consumer group that owns what the server assigns and commits what it printed.
 */
import type { Encoding, FetchedRecord, OffsetSpec, TopicDescription } from '../api.js';
import { ENCODINGS } from '../api.js';
import type { CommandSpec, Context } from '../command.js';
import { Options, UsageError, parseInteger, parseTimestamp } from '../command.js';
import { describePartitions, formatDuration, plural } from '../format.js';
import { readPartition } from '../partition-reader.js';
import { consumeInGroup } from './consume-group.js';

export type StartPosition = 'earliest' | 'latest' | { offset: number } | { timestamp: number };

/** `--from`: earliest, latest, an offset, or @ a timestamp (ms or ISO 8601). */
export const parseStartPosition = (text: string, command?: CommandSpec): StartPosition => {
  if (text === 'earliest' || text === 'latest') return text;
  if (text.startsWith('@')) return { timestamp: parseTimestamp(text.slice(1), '--from @', command) };
  if (/^\d+$/.test(text)) return { offset: parseInteger(text, '--from', {}, command) };
  throw new UsageError(
    `--from must be earliest, latest, an offset or @timestamp, got ${JSON.stringify(text)}`,
    command,
  );
};

export type OutputMode = 'json' | 'value' | 'text';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/g;

/** A key or value as text on one line: JSON values serialized, control characters (not tabs) escaped. */
export const textOf = (value: unknown): string => {
  if (value === null || value === undefined) return 'null';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.replace(CONTROL, (c) => JSON.stringify(c).slice(1, -1));
};

/** One record as a line: JSON, the value alone, or kafka-console-consumer's print.partition/offset/key. */
export const formatRecord = (
  topic: string,
  partition: number,
  record: FetchedRecord,
  mode: OutputMode,
): string => {
  if (mode === 'json') return JSON.stringify({ topic, partition, ...record });
  if (mode === 'value') return textOf(record.value);
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
  ) {}

  async deliver(partition: number, records: FetchedRecord[], nextOffset: number): Promise<boolean> {
    for (const record of records) {
      if (this.stop.signal.aborted) return false;
      await this.ctx.print(formatRecord(this.topic, partition, record, this.mode));
      this.printed += 1;
      this.positions.set(partition, record.offset + 1);
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

export interface ConsumeSettings {
  topic: string;
  encoding: Encoding;
  follow: boolean;
  from: StartPosition;
  sink: RecordSink;
  /** Aborted on Ctrl-C, when --max is reached, or when a partition fails. */
  stop: AbortController;
}

/** The offset `from` means in one partition of `topic`. */
export const resolveStart = async (
  ctx: Context,
  topic: TopicDescription,
  partition: number,
  from: StartPosition,
): Promise<number> => {
  const bounds = topic.partitions.find((p) => p.partition === partition);
  if (from === 'earliest' && bounds) return bounds.logStartOffset;
  if (from === 'latest' && bounds) return bounds.highWatermark;
  if (typeof from === 'object' && 'offset' in from) return from.offset;
  const at: OffsetSpec = typeof from === 'string' ? from : from.timestamp;
  const found = await ctx.api.listOffsets(topic.name, partition, at);
  // No record at or after the timestamp: start at the end, as Kafka's offsetsForTimes users do.
  return found.offset ?? (await ctx.api.listOffsets(topic.name, partition, 'latest')).offset ?? 0;
};

const describeFrom = (from: StartPosition): string =>
  typeof from === 'string' ? from : 'offset' in from ? `offset ${from.offset}` : `@${from.timestamp}`;

/** Without a group: the chosen partitions from --from; one after another, or all at once when following. */
const consumeAssigned = async (
  ctx: Context,
  settings: ConsumeSettings,
  chosen: number | 'all',
): Promise<void> => {
  const { topic, encoding, follow, from, sink, stop } = settings;
  const description = await ctx.api.describeTopic(topic);
  const count = description.partitions.length;
  if (chosen !== 'all' && chosen >= count) {
    throw new UsageError(`${topic} has ${plural(count, 'partition')}; there is no partition ${chosen}`);
  }
  const partitions = chosen === 'all' ? Array.from({ length: count }, (_, i) => i) : [chosen];
  const starts = await Promise.all(partitions.map((p) => resolveStart(ctx, description, p, from)));
  const read = (p: number, offset: number): Promise<unknown> =>
    readPartition({
      api: ctx.api,
      topic,
      partition: p,
      offset,
      follow,
      encoding,
      signal: stop.signal,
      deliver: (records, next) => sink.deliver(p, records, next),
    });
  if (follow) {
    ctx.note(
      `Following ${topic} ${describePartitions(partitions)} from ${describeFrom(from)}; Ctrl-C stops.`,
    );
    // One failing partition stops the others, or their long polls would keep the process alive.
    await Promise.all(
      partitions.map((p, i) =>
        read(p, starts[i] ?? 0).catch((error: unknown) => {
          stop.abort();
          throw error;
        }),
      ),
    );
    return;
  }
  for (const [i, p] of partitions.entries()) {
    if (stop.signal.aborted) break;
    await read(p, starts[i] ?? 0);
  }
};

export const consume: CommandSpec = {
  words: ['consume'],
  summary: 'Print records of a topic, to the end of the log or (--follow) as they arrive.',
  args: [{ name: 'topic', required: true, description: 'topic to read' }],
  options: {
    partition: { type: 'string', valueName: 'P', description: 'a partition number, or all (default all)' },
    from: {
      type: 'string',
      valueName: 'POS',
      description: 'earliest (default) | latest | an offset | @timestamp (ms or ISO 8601)',
    },
    max: { type: 'string', valueName: 'N', description: 'stop after N records' },
    follow: {
      type: 'boolean',
      short: 'f',
      description: 'keep waiting for new records (long poll) until Ctrl-C',
    },
    group: {
      type: 'string',
      valueName: 'G',
      description: 'consume as a member of group G: its assigned partitions, from committed offsets',
    },
    encoding: {
      type: 'string',
      valueName: 'E',
      description: 'utf8 (default) | base64 | json: how values print',
    },
    'value-only': { type: 'boolean', description: 'print only values (what `produce` reads back)' },
    'commit-interval-ms': {
      type: 'string',
      valueName: 'MS',
      description: 'with --group, commit this often (default 5000) and on exit',
    },
  },
  examples: [
    'sluice consume orders --from earliest --max 10',
    'sluice consume orders --partition 2 --from @2024-05-01T00:00:00Z',
    'sluice consume orders --group billing --follow',
  ],
  async run(ctx, { args: [topic], values }) {
    const options = new Options(values, consume);
    const partitionText = options.string('partition') ?? 'all';
    const group = options.string('group');
    const fromText = options.string('from');
    const from = fromText === undefined ? 'earliest' : parseStartPosition(fromText, consume);
    const max = options.int('max', { min: 1 }) ?? Number.POSITIVE_INFINITY;
    const encoding = options.choice('encoding', ENCODINGS) ?? 'utf8';
    const follow = options.flag('follow');
    const commitIntervalMs = options.int('commit-interval-ms', { min: 100 }) ?? 5_000;
    const mode: OutputMode = ctx.json ? 'json' : options.flag('value-only') ? 'value' : 'text';
    if (group !== undefined) {
      if (options.string('partition') !== undefined) {
        throw new UsageError('--partition does not go with --group: the group assigns partitions', consume);
      }
      if (typeof from !== 'string') {
        throw new UsageError(
          'with --group, --from is earliest or latest: where to start without a committed offset',
          consume,
        );
      }
    }

    const stop = new AbortController();
    const onInterrupt = (): void => stop.abort();
    ctx.signal.addEventListener('abort', onInterrupt, { once: true });
    if (ctx.signal.aborted) stop.abort();
    const sink = new RecordSink(ctx, topic!, mode, max, stop);
    const settings: ConsumeSettings = {
      topic: topic!,
      encoding,
      follow,
      from,
      sink,
      stop,
    };
    const started = ctx.now();
    try {
      if (group !== undefined) {
        await consumeInGroup(ctx, settings, {
          groupId: group,
          reset: from as 'earliest' | 'latest',
          commitIntervalMs,
        });
      } else {
        const chosen =
          partitionText === 'all' ? 'all' : parseInteger(partitionText, '--partition', {}, consume);
        await consumeAssigned(ctx, settings, chosen);
      }
    } finally {
      ctx.signal.removeEventListener('abort', onInterrupt);
    }
    ctx.note(`Consumed ${plural(sink.printed, 'record')} in ${formatDuration(ctx.now() - started)}.`);
  },
};
