/**
 * `groups delete-offsets`, after kafka-consumer-groups.sh --delete-offsets --group G --topic T[:P,P]:
 * removes a group's committed offsets for one topic (or some of its partitions) and prints Kafka's
 * TOPIC/PARTITION/STATUS table of every asked partition; a partition the server refused
 * (GROUP_SUBSCRIBED_TO_TOPIC while a member subscribes to the topic, UNKNOWN_TOPIC_OR_PARTITION)
 * makes the exit code 1.
 */
import type { CommandSpec } from '../command.js';
import { Options, UsageError, parseInteger } from '../command.js';
import { plural } from '../format.js';
import { renderTable } from '../table.js';
import { SluiceError } from '../../sdk/errors.js';

/** `T` or `T:0,1` as Kafka's tool takes it. */
export const parseTopicPartitions = (
  text: string,
  command?: CommandSpec,
): { topic: string; partitions?: number[] } => {
  const colon = text.lastIndexOf(':');
  if (colon < 0) return { topic: text };
  const topic = text.slice(0, colon);
  const list = text.slice(colon + 1);
  if (topic === '' || list === '') throw new UsageError(`--topic takes T or T:P,P, got ${text}`, command);
  const partitions = list.split(',').map((p) => parseInteger(p, '--topic partition', {}, command));
  return { topic, partitions: [...new Set(partitions)] };
};

export const deleteOffsets: CommandSpec = {
  words: ['groups', 'delete-offsets'],
  summary: "Delete a group's committed offsets for a topic no member subscribes to.",
  args: [{ name: 'group', required: true, description: 'consumer group id' }],
  options: {
    topic: {
      type: 'string',
      valueName: 'T[:P,P]',
      description: 'the topic, optionally only these partitions',
    },
  },
  examples: [
    'sluice groups delete-offsets billing --topic orders',
    'sluice groups delete-offsets billing --topic orders:0,1',
  ],
  async run(ctx, { args: [group], values }) {
    const text = new Options(values, deleteOffsets).string('topic');
    if (text === undefined) throw new UsageError('give --topic T or --topic T:P,P', deleteOffsets);
    const { topic, partitions } = parseTopicPartitions(text, deleteOffsets);
    const results = await ctx.api.deleteOffsets(group!, topic, partitions);
    const refused = results.filter((r) => r.error !== undefined);
    const first = refused[0]?.error;
    const fail = (): void => {
      if (first) throw new SluiceError(first.code, first.message, { retriable: first.retriable });
    };
    if (ctx.json) {
      await ctx.print(JSON.stringify({ group, results }));
      return fail();
    }
    const table = renderTable(
      [
        { header: 'TOPIC', value: (r) => r.topic },
        { header: 'PARTITION', value: (r) => r.partition },
        { header: 'STATUS', value: (r) => (r.error ? `Error: ${r.error.code}` : 'Successful') },
      ],
      results,
    );
    const ok = results.length - refused.length;
    await ctx.print(
      `${table}\nDeleted the committed offsets of ${plural(ok, 'partition')} of ${topic} for group ${group}` +
        (refused.length > 0 ? `; ${plural(refused.length, 'partition')} refused.` : '.'),
    );
    fail();
  },
};
