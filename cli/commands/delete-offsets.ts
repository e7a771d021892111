/**
 * `groups delete-offsets`, after kafka-consumer-groups.sh --delete-offsets --group G --topic T[:P,P]:
 * removes a group's committed offsets for one topic (or some of its partitions). The server refuses
 * with GROUP_SUBSCRIBED_TO_TOPIC while a member of the group subscribes to the topic.
 */
import type { CommandSpec } from '../command.js';
import { Options, UsageError, parseInteger } from '../command.js';
import { plural } from '../format.js';

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
    if (ctx.json) {
      await ctx.print(JSON.stringify({ group, results }));
      return;
    }
    const lines = results.map((r) => `Deleted the committed offset of ${r.topic}/${r.partition}.`);
    lines.push(`Deleted ${plural(results.length, 'committed offset')} of group ${group} for topic ${topic}.`);
    await ctx.print(lines.join('\n'));
  },
};
