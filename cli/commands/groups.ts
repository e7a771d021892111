/** `groups list | describe | delete | reset-offsets | delete-offsets`, after kafka-consumer-groups.sh. */
import type { GroupDescription } from '../api.js';
import type { CommandSpec } from '../command.js';
import { formatCount, formatPartitions } from '../format.js';
import { renderFields, renderTable } from '../table.js';
import { deleteOffsets } from './delete-offsets.js';
import { resetOffsets } from './reset-offsets.js';

const GROUP_ARG = { name: 'group', required: true, description: 'consumer group id' } as const;

const assignmentText = (tps: { topic: string; partitions: number[] }[]): string =>
  tps.length === 0 ? '-' : tps.map((tp) => `${tp.topic}:${formatPartitions(tp.partitions)}`).join(' ');

/** The describe output: a header, the members table and the lag table (as kafka-consumer-groups --describe). */
export const renderGroup = (group: GroupDescription): string => {
  const header = renderFields([
    ['Group', group.groupId],
    ['State', group.state],
    ['GroupEpoch', group.groupEpoch],
    ['Assignor', group.assignor],
  ]);
  const members =
    group.members.length === 0
      ? 'No active members.'
      : renderTable(
          [
            { header: 'MEMBER ID', value: (m) => m.memberId },
            { header: 'INSTANCE ID', value: (m) => m.instanceId },
            { header: 'EPOCH', value: (m) => m.memberEpoch },
            { header: 'TOPICS', value: (m) => m.subscribedTopics.join(',') },
            { header: 'ASSIGNMENT', value: (m) => assignmentText(m.assignment.topicPartitions) },
          ],
          group.members,
        );
  const owner = (topic: string, partition: number): string | undefined =>
    group.members.find((m) =>
      m.assignment.topicPartitions.some((tp) => tp.topic === topic && tp.partitions.includes(partition)),
    )?.memberId;
  const offsets = [...group.offsets].sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
  );
  const lag =
    offsets.length === 0
      ? 'No committed offsets.'
      : renderTable(
          [
            { header: 'TOPIC', value: (o) => o.topic },
            { header: 'PARTITION', value: (o) => o.partition },
            { header: 'COMMITTED', value: (o) => o.committedOffset },
            { header: 'HIGH WATERMARK', value: (o) => o.highWatermark },
            { header: 'LAG', value: (o) => o.lag },
            { header: 'MEMBER', value: (o) => owner(o.topic, o.partition) },
          ],
          offsets,
        ) + `\nTotal lag: ${formatCount(offsets.reduce((sum, o) => sum + (o.lag ?? 0), 0))}`;
  return `${header}\n\n${members}\n\n${lag}`;
};

const list: CommandSpec = {
  words: ['groups', 'list'],
  summary: 'List the consumer groups with their state and member count.',
  args: [],
  options: {},
  async run(ctx) {
    const groups = (await ctx.api.listGroups()).sort((a, b) => (a.groupId < b.groupId ? -1 : 1));
    if (ctx.json) return void (await ctx.print(JSON.stringify({ groups })));
    if (groups.length === 0) return void ctx.note('No consumer groups.');
    await ctx.print(
      renderTable(
        [
          { header: 'GROUP', value: (g) => g.groupId },
          { header: 'STATE', value: (g) => g.state },
          { header: 'MEMBERS', value: (g) => g.members },
        ],
        groups,
      ),
    );
  },
};

const describe: CommandSpec = {
  words: ['groups', 'describe'],
  summary: "Show a group's members and, per partition, its committed offset, high watermark and lag.",
  args: [GROUP_ARG],
  options: {},
  async run(ctx, { args: [groupId] }) {
    const group = await ctx.api.describeGroup(groupId!);
    await ctx.print(ctx.json ? JSON.stringify(group) : renderGroup(group));
  },
};

const remove: CommandSpec = {
  words: ['groups', 'delete'],
  summary: 'Delete a group without members, with its committed offsets.',
  args: [GROUP_ARG],
  options: {},
  async run(ctx, { args: [groupId] }) {
    await ctx.api.deleteGroup(groupId!);
    await ctx.print(
      ctx.json ? JSON.stringify({ deleted: true, group: groupId }) : `Deleted group ${groupId}.`,
    );
  },
};

export const groupCommands: readonly CommandSpec[] = [list, describe, remove, resetOffsets, deleteOffsets];
