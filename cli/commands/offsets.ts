/** `offsets`, after kafka-get-offsets.sh: ListOffsets for one or every partition of a topic. */
import type { ListOffsetsResult, OffsetSpec } from '../api.js';
import type { CommandSpec } from '../command.js';
import { Options, parseInteger, parseTimestamp } from '../command.js';
import { formatTimestamp } from '../format.js';
import { renderTable } from '../table.js';

export const parseOffsetSpec = (text: string, command?: CommandSpec): OffsetSpec =>
  text === 'earliest' || text === 'latest' ? text : parseTimestamp(text.replace(/^@/, ''), '--at', command);

export const offsets: CommandSpec = {
  words: ['offsets'],
  summary: 'Look up offsets: the log start (earliest), the high watermark (latest), or the first at a time.',
  args: [
    { name: 'topic', required: true, description: 'topic' },
    { name: 'partition', required: false, description: 'partition number (default: every partition)' },
  ],
  options: {
    at: {
      type: 'string',
      valueName: 'AT',
      description:
        'earliest | latest (default) | a timestamp (ms or ISO 8601): the first offset at or after it',
    },
  },
  examples: ['sluice offsets orders 0 --at earliest', 'sluice offsets orders --at 2024-05-01T00:00:00Z'],
  async run(ctx, { args: [topic, partitionText], values }) {
    const at = parseOffsetSpec(new Options(values, offsets).string('at') ?? 'latest', offsets);
    const partitions =
      partitionText === undefined
        ? (await ctx.api.describeTopic(topic!)).partitions.map((p) => p.partition)
        : [parseInteger(partitionText, '<partition>', {}, offsets)];
    const found = await Promise.all(
      partitions.map(async (partition) => ({
        partition,
        ...(await ctx.api.listOffsets(topic!, partition, at)),
      })),
    );
    if (ctx.json) return void (await ctx.print(JSON.stringify({ topic, at, offsets: found })));
    const byTime = typeof at === 'number';
    await ctx.print(
      renderTable(
        [
          { header: 'TOPIC', value: () => topic },
          { header: 'PARTITION', value: (o) => o.partition },
          { header: 'OFFSET', value: (o) => o.offset },
          ...(byTime
            ? [
                {
                  header: 'TIMESTAMP',
                  value: (o: ListOffsetsResult) =>
                    o.offset === null || o.timestamp === null ? null : formatTimestamp(o.timestamp),
                },
              ]
            : []),
        ],
        found,
      ),
    );
    if (byTime && found.some((o) => o.offset === null)) {
      ctx.note(`"-": no record at or after ${formatTimestamp(at)} in that partition.`);
    }
  },
};
