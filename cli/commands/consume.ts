/**
 * `consume`, after kafka-console-consumer.sh: prints records of some or all partitions from a starting
 * point, until the end of the log or (`--follow`) by long polls until Ctrl-C; with `--group` as a member
 * of a consumer group that owns what the server assigns and commits what it printed.
 */
import type { IsolationLevel, OffsetSpec, TopicDescription } from '../api.js';
import { ENCODINGS } from '../api.js';
import type { CommandSpec, Context } from '../command.js';
import type { Values } from '../command.js';
import { Options, UsageError, parseInteger, parseTimestamp, propertyMap } from '../command.js';
import { describePartitions, formatDuration, plural } from '../format.js';
import type { KafkaFormat, OutputMode, SinkSettings } from '../record-sink.js';
import { RecordSink } from '../record-sink.js';
import type { GroupSettings } from './consume-group.js';
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

const PRINT_PROPERTIES = [
  'print.timestamp',
  'print.partition',
  'print.offset',
  'print.headers',
  'print.key',
  'print.value',
  'key.separator',
] as const;

/**
 * The `--property` settings as kafka-console-consumer reads them: every print.* is false unless set
 * to true, but print.value, which is true unless set to false; no property at all prints the value alone.
 */
export const kafkaFormat = (props: Map<string, string>): KafkaFormat => {
  const on = (name: string): boolean => props.get(name)?.trim().toLowerCase() === 'true';
  return {
    printTimestamp: on('print.timestamp'),
    printPartition: on('print.partition'),
    printOffset: on('print.offset'),
    printHeaders: on('print.headers'),
    printKey: on('print.key'),
    printValue: props.get('print.value')?.trim().toLowerCase() !== 'false',
    keySeparator: props.get('key.separator') ?? '\t',
  };
};

/** What a plain read and a group member share; the plain read also has its starting point. */
export interface ConsumeSettings extends SinkSettings {
  from: StartPosition;
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

/**
 * Without a group: the chosen partitions from --from, all in one fetch per poll (Kafka's Fetch), each
 * left out of the poll once it reached the end of the log unless following.
 */
const consumeAssigned = async (
  ctx: Context,
  settings: ConsumeSettings,
  chosen: number | 'all',
): Promise<void> => {
  const { topic, encoding, follow, from, sink, stop, isolationLevel } = settings;
  const description = await ctx.api.describeTopic(topic);
  const count = description.partitions.length;
  if (chosen !== 'all' && chosen >= count) {
    throw new UsageError(`${topic} has ${plural(count, 'partition')}; there is no partition ${chosen}`);
  }
  const partitions = chosen === 'all' ? Array.from({ length: count }, (_, i) => i) : [chosen];
  const starts = await Promise.all(partitions.map((p) => resolveStart(ctx, description, p, from)));
  if (follow)
    ctx.note(
      `Following ${topic} ${describePartitions(partitions)} from ${describeFrom(from)}; Ctrl-C stops.`,
    );
  await ctx.api.readPartitions({
    topic,
    partitions: partitions.map((partition, i) => ({ partition, offset: starts[i] ?? 0 })),
    follow,
    encoding,
    isolationLevel,
    signal: stop.signal,
    deliver: (partition, records, next) => sink.deliver(partition, records, next),
  });
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
    'isolation-level': {
      type: 'string',
      valueName: 'L',
      description:
        'read_uncommitted (default) | read_committed: stop at the last stable offset, leave out aborted transactions',
    },
    details: {
      type: 'boolean',
      description: 'print partition, offset, key and value on each line (default: the value alone, as Kafka)',
    },
    'value-only': { type: 'boolean', description: 'print only values: the default, kept for old scripts' },
    'commit-interval-ms': {
      type: 'string',
      valueName: 'MS',
      description: 'with --group, commit this often (default 5000) and on exit',
    },
    'from-beginning': { type: 'boolean', description: 'kafka-console-consumer: same as --from earliest' },
    'max-messages': { type: 'string', valueName: 'N', description: 'kafka-console-consumer: same as --max' },
    'timeout-ms': {
      type: 'string',
      valueName: 'MS',
      description: 'exit when no record has arrived for MS (implies --follow)',
    },
    property: {
      type: 'string',
      multiple: true,
      valueName: 'K=V',
      description: `the record format: ${PRINT_PROPERTIES.join(', ')} (=true; key.separator=S)`,
    },
    'consumer-property': {
      type: 'string',
      multiple: true,
      valueName: 'K=V',
      description:
        'auto.offset.reset=earliest|latest: where a group without committed offsets starts; isolation.level=L as --isolation-level',
    },
  },
  examples: [
    'sluice consume orders --from earliest --max 10',
    'sluice consume orders --property print.partition=true --property print.key=true',
    'sluice consume orders --details',
    'sluice consume orders --partition 2 --from @2024-05-01T00:00:00Z',
    'sluice consume orders --group billing --follow',
    'sluice consume orders --from-beginning --isolation-level read_committed',
  ],
  async run(ctx, { args: [topic], values }) {
    const options = new Options(withConsumerAliases(values), consume);
    const partitionText = options.string('partition') ?? 'all';
    const group = options.string('group');
    const fromText = options.string('from');
    // A group without committed offsets starts at auto.offset.reset, Kafka's default `latest`; a
    // plain read of partitions starts at the beginning.
    const from =
      fromText === undefined
        ? group === undefined
          ? 'earliest'
          : 'latest'
        : parseStartPosition(fromText, consume);
    const max = options.int('max', { min: 1 }) ?? Number.POSITIVE_INFINITY;
    const encoding = options.choice('encoding', ENCODINGS) ?? 'utf8';
    const isolationLevel = options.choice('isolation-level', ISOLATION_LEVELS) ?? 'read_uncommitted';
    const timeoutMs = options.int('timeout-ms', { min: 1 });
    const follow = options.flag('follow') || timeoutMs !== undefined;
    const commitIntervalMs = options.int('commit-interval-ms', { min: 100 }) ?? 5_000;
    const format = kafkaFormat(propertyMap(values['property'], '--property', PRINT_PROPERTIES, consume));
    if (options.flag('details') && (options.flag('value-only') || values['property'] !== undefined)) {
      throw new UsageError('--details prints its own fields: leave out --value-only and --property', consume);
    }
    const mode: OutputMode = ctx.json ? 'json' : options.flag('details') ? 'details' : format;
    let member: GroupSettings | undefined;
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
      member = { groupId: group, reset: from, commitIntervalMs };
    }

    const stop = new AbortController();
    const onInterrupt = (): void => stop.abort();
    ctx.signal.addEventListener('abort', onInterrupt, { once: true });
    if (ctx.signal.aborted) stop.abort();
    const sink = new RecordSink(ctx, topic!, mode, max, stop, timeoutMs);
    const settings: ConsumeSettings = {
      topic: topic!,
      encoding,
      isolationLevel,
      follow,
      from,
      sink,
      stop,
    };
    const started = ctx.now();
    try {
      if (member !== undefined) {
        await consumeInGroup(ctx, settings, member);
      } else {
        const chosen =
          partitionText === 'all' ? 'all' : parseInteger(partitionText, '--partition', {}, consume);
        await consumeAssigned(ctx, settings, chosen);
      }
    } finally {
      ctx.signal.removeEventListener('abort', onInterrupt);
      sink.close();
    }
    ctx.note(`Consumed ${plural(sink.printed, 'record')} in ${formatDuration(ctx.now() - started)}.`);
  },
};

/** Kafka's console-consumer spellings as this command's own options (an explicit option wins). */
const withConsumerAliases = (values: Values): Values => {
  const out: Values = { ...values };
  const consumer = propertyMap(
    values['consumer-property'],
    '--consumer-property',
    CONSUMER_SETTINGS,
    consume,
  );
  if (consumer.has('session.timeout.ms')) {
    // KIP-848 moved the session timeout to the group coordinator (group.consumer.session.timeout.ms).
    throw new UsageError(
      'session.timeout.ms is not a consumer setting under KIP-848: the server sets the session timeout (45 s)',
      consume,
    );
  }
  const reset = consumer.get('auto.offset.reset');
  if (reset !== undefined && reset !== 'earliest' && reset !== 'latest')
    throw new UsageError(
      `auto.offset.reset must be earliest or latest, got ${JSON.stringify(reset)}`,
      consume,
    );
  if (values['from-beginning'] === true) {
    if (values['from'] !== undefined) throw new UsageError('--from-beginning and --from conflict', consume);
    out['from'] = 'earliest';
  } else if (reset !== undefined && out['from'] === undefined) out['from'] = reset;
  if (out['max'] === undefined && values['max-messages'] !== undefined) out['max'] = values['max-messages'];
  const isolation = consumer.get('isolation.level');
  if (isolation !== undefined && out['isolation-level'] === undefined) out['isolation-level'] = isolation;
  return out;
};

const CONSUMER_SETTINGS = ['auto.offset.reset', 'isolation.level', 'session.timeout.ms'] as const;
const ISOLATION_LEVELS: readonly IsolationLevel[] = ['read_uncommitted', 'read_committed'];
