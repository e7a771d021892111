/**
 * `groups reset-offsets`, after kafka-consumer-groups.sh --reset-offsets: shows the plan (each
 * partition's current and new committed offset) and changes nothing unless `--execute` is given.
 * Targets: --to earliest|latest|offset:<n>|<timestamp>, Kafka's --to-earliest, --to-latest,
 * --to-offset N, --to-datetime ISO, or --shift-by N; over --topic T (repeatable) or --all-topics (every
 * topic the group has committed offsets for). Like Kafka, it works only while the group has no members.
 */
import type { CommittedOffset, ResetTarget, TopicDescription } from '../api.js';
import type { CommandSpec, Context } from '../command.js';
import { Options, UsageError, parseInteger, parseTimestamp } from '../command.js';
import { plural } from '../format.js';
import { renderTable } from '../table.js';

/** `--to`: earliest, latest, offset:<n>, or a timestamp (ms, @ms or ISO 8601). */
export const parseResetTarget = (text: string, command?: CommandSpec): ResetTarget => {
  if (text === 'earliest' || text === 'latest') return text;
  if (text.startsWith('offset:')) return { offset: parseInteger(text.slice(7), '--to offset:', {}, command) };
  if (/^@?\d/.test(text)) return parseTimestamp(text.replace(/^@/, ''), '--to', command);
  throw new UsageError(
    `--to must be earliest, latest, offset:<n> or a timestamp, got ${JSON.stringify(text)}`,
    command,
  );
};

interface PlannedOffset {
  topic: string;
  partition: number;
  /** The committed offset now; null when there is none. */
  current: number | null;
  next: number;
}

type Target = ResetTarget | { shiftBy: number };

const clamp = (offset: number, low: number, high: number): number => Math.min(high, Math.max(low, offset));

/** The offset `target` means in one partition (the server clamps `{offset}` to the log the same way). */
const planPartition = async (
  ctx: Context,
  topic: TopicDescription,
  partition: number,
  current: number | null,
  target: Target,
): Promise<number | undefined> => {
  const bounds = topic.partitions.find((p) => p.partition === partition)!;
  const { logStartOffset: low, highWatermark: high } = bounds;
  if (target === 'earliest') return low;
  if (target === 'latest') return high;
  if (typeof target === 'number') {
    // No record at or after the time: the end of the log, as the server resets.
    return (await ctx.api.listOffsets(topic.name, partition, target)).offset ?? high;
  }
  if ('offset' in target) return clamp(target.offset, low, high);
  return current === null ? undefined : clamp(current + target.shiftBy, low, high);
};

const parseTarget = (options: Options, command: CommandSpec): Target => {
  const given: Target[] = [];
  const to = options.string('to');
  if (to !== undefined) given.push(parseResetTarget(to, command));
  if (options.flag('to-earliest')) given.push('earliest');
  if (options.flag('to-latest')) given.push('latest');
  const toOffset = options.string('to-offset');
  if (toOffset !== undefined) given.push({ offset: parseInteger(toOffset, '--to-offset', {}, command) });
  const datetime = options.string('to-datetime');
  if (datetime !== undefined) given.push(parseTimestamp(datetime, '--to-datetime', command));
  const shift = options.string('shift-by');
  if (shift !== undefined)
    given.push({ shiftBy: parseInteger(shift, '--shift-by', { min: Number.MIN_SAFE_INTEGER }, command) });
  if (given.length !== 1) {
    throw new UsageError(
      'give exactly one of --to, --to-earliest, --to-latest, --to-offset, --to-datetime, --shift-by',
      command,
    );
  }
  return given[0]!;
};

export const resetOffsets: CommandSpec = {
  words: ['groups', 'reset-offsets'],
  summary: 'Plan, and with --execute apply, new committed offsets for a group without members.',
  args: [{ name: 'group', required: true, description: 'consumer group id' }],
  options: {
    topic: { type: 'string', multiple: true, valueName: 'T', description: 'a topic whose offsets move' },
    'all-topics': { type: 'boolean', description: 'every topic the group has committed offsets for' },
    to: {
      type: 'string',
      valueName: 'POS',
      description: 'earliest | latest | offset:<n> | a timestamp (ms or ISO 8601)',
    },
    'to-earliest': { type: 'boolean', description: "each partition's log start" },
    'to-latest': { type: 'boolean', description: "each partition's high watermark" },
    'to-offset': { type: 'string', valueName: 'N', description: 'offset N (clamped to the log)' },
    'to-datetime': {
      type: 'string',
      valueName: 'ISO',
      description: 'the first offset at or after this time (e.g. 2024-05-01T00:00:00Z)',
    },
    'shift-by': {
      type: 'string',
      valueName: 'N',
      description: 'the committed offset plus N (negative moves back)',
    },
    execute: { type: 'boolean', description: 'apply the plan (without it nothing changes: a dry run)' },
    'dry-run': { type: 'boolean', description: 'only show the plan (the default)' },
  },
  examples: [
    'sluice groups reset-offsets billing --topic orders --to-earliest',
    'sluice groups reset-offsets billing --all-topics --shift-by -100 --execute',
    'sluice groups reset-offsets billing --topic orders --to-datetime 2024-05-01T00:00:00Z --execute',
  ],
  async run(ctx, { args: [group], values }) {
    const options = new Options(values, resetOffsets);
    const target = parseTarget(options, resetOffsets);
    const execute = options.flag('execute');
    if (execute && options.flag('dry-run'))
      throw new UsageError('--execute and --dry-run conflict', resetOffsets);
    const named = options.list('topic');
    const committed = await ctx.api.committedOffsets(group!);
    if (options.flag('all-topics') === named.length > 0)
      throw new UsageError('give --topic T (repeatable) or --all-topics', resetOffsets);
    const topics = named.length > 0 ? named : [...new Set(committed.map((o) => o.topic))].sort();
    const currentOf = (topic: string, partition: number): number | null =>
      committed.find((o) => o.topic === topic && o.partition === partition)?.offset ?? null;

    const plan: PlannedOffset[] = [];
    for (const name of topics) {
      const topic = await ctx.api.describeTopic(name);
      for (const { partition } of topic.partitions) {
        const current = currentOf(name, partition);
        const next = await planPartition(ctx, topic, partition, current, target);
        if (next !== undefined) plan.push({ topic: name, partition, current, next });
      }
    }

    let applied: CommittedOffset[] | undefined;
    if (execute) applied = await apply(ctx, group!, topics, target, plan);
    const rows = applied
      ? applied.map((o) => ({ ...o, current: currentOf(o.topic, o.partition), next: o.offset }))
      : plan;
    if (ctx.json) {
      return void (await ctx.print(JSON.stringify({ group, executed: execute, offsets: rows })));
    }
    const table = renderTable(
      [
        { header: 'TOPIC', value: (o) => o.topic },
        { header: 'PARTITION', value: (o) => o.partition },
        { header: 'CURRENT OFFSET', value: (o) => o.current ?? '-' },
        { header: 'NEW OFFSET', value: (o) => o.next },
      ],
      rows,
    );
    await ctx.print(
      `${execute ? 'Reset' : 'Would reset'} ${plural(rows.length, 'partition')} for group ${group}:\n${table}`,
    );
    if (!execute) ctx.note('Dry run: nothing changed. Add --execute to apply.');
  },
};

/** Applies the plan: through the reset route (atomic per topic), or for --shift-by as a simple commit. */
const apply = async (
  ctx: Context,
  group: string,
  topics: string[],
  target: Target,
  plan: PlannedOffset[],
): Promise<CommittedOffset[]> => {
  if (typeof target === 'object' && 'shiftBy' in target) {
    // Without a member id the commit is accepted only while the group has no members, as a reset is.
    const results = await ctx.api.commitOffsets(
      group,
      plan.map((p) => ({ topic: p.topic, partition: p.partition, offset: p.next })),
    );
    const failed = results.find((r) => r.error);
    if (failed?.error) throw new UsageError(`${failed.topic}-${failed.partition}: ${failed.error.message}`);
    return plan.map((p) => ({ topic: p.topic, partition: p.partition, offset: p.next, metadata: '' }));
  }
  const out: CommittedOffset[] = [];
  for (const topic of topics) out.push(...(await ctx.api.resetOffsets(group, topic, target)));
  return out.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
};
